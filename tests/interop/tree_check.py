"""Describe HDF5 files the way a user sees them, for before/after comparisons of
`h5 recompress` (h5py + hdf5plugin, and h5dump when installed).

Usage: tree_check.py ROOT REL... ; prints one JSON object {rel: description}.
A description holds, per object in visit order: kind, link kind, dtype, shape,
fill value, attributes (dtype and value), SHA-256 of the decoded data, and the
object's identity (hard links: the first path reaching it); plus `h5dump`'s
exit code and the SHA-256 of its text output. h5dump renders a second hard
link as `HARDLINK` only when the object header has a reference count above 1;
the blocks of those alias names are dropped from the text before hashing (the
h5py part checks hard-link identity by object address).
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

import h5py
import hdf5plugin
import numpy as np


def val(v):
    if isinstance(v, h5py.Empty):
        return {"empty": str(v.dtype)}
    a = np.asarray(v)
    if a.dtype.kind == "O":
        return [x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)
                for x in a.ravel().tolist()]
    return {"dtype": a.dtype.str, "sha": hashlib.sha256(a.tobytes()).hexdigest()}


def attrs(obj):
    out = {}
    for k in sorted(obj.attrs.keys()):
        aid = obj.attrs.get_id(k)
        out[k] = {"type": str(aid.get_type().__class__.__name__), "size": aid.get_type().get_size(),
                  "cset": getattr(aid.get_type(), "get_cset", lambda: None)(),
                  "value": val(obj.attrs[k])}
    return out


def describe(path):
    objs = []
    seen = {}
    aliases = []
    with h5py.File(path, "r") as f:
        def visit(g, prefix):
            for name in sorted(g.keys()):
                p = f"{prefix}/{name}"
                link = g.get(name, getlink=True)
                if isinstance(link, h5py.SoftLink):
                    objs.append({"path": p, "soft": link.path})
                    continue
                if isinstance(link, h5py.ExternalLink):
                    objs.append({"path": p, "external": [link.filename, link.path]})
                    continue
                o = g[name]
                # h5py hashes an object id by file and object address
                key = hash(o.id)
                if key in seen:
                    objs.append({"path": p, "same_as": seen[key]})
                    aliases.append(name)
                    continue
                seen[key] = p
                rec = {"path": p, "attrs": attrs(o)}
                if isinstance(o, h5py.Group):
                    rec["kind"] = "group"
                    objs.append(rec)
                    visit(o, p)
                    continue
                rec.update(kind="dataset", dtype=o.dtype.str, shape=list(o.shape) if o.shape else o.shape)
                if o.is_virtual:
                    rec["virtual"] = True
                try:
                    fv = o.fillvalue
                    rec["fill"] = val(fv) if fv is not None else None
                except Exception as e:  # noqa: BLE001
                    rec["fill"] = f"error {e}"
                try:
                    rec["data"] = val(o[()])
                except Exception as e:  # noqa: BLE001
                    rec["data"] = f"unreadable: {type(e).__name__}"
                objs.append(rec)
        objs.append({"path": "/", "attrs": attrs(f)})
        visit(f, "")
    return objs, aliases


def drop_blocks(text, names):
    lines = text.splitlines()
    out, skip = [], None
    for ln in lines:
        if skip is not None:
            if ln.startswith(skip + "}"):
                skip = None
            continue
        m = re.match(r'^(\s*)DATASET "([^"]*)" \{$', ln)
        if m and m.group(2) in names:
            skip = m.group(1)
            continue
        out.append(ln)
    return "\n".join(out)


def main():
    root = sys.argv[1]
    res = {}
    h5dump = shutil.which("h5dump")
    env = dict(os.environ)
    env.setdefault("HDF5_PLUGIN_PATH", hdf5plugin.PLUGIN_PATH)
    for rel in sys.argv[2:]:
        objs, aliases = describe(os.path.join(root, rel))
        d = {"h5py": objs}
        if h5dump:
            r = subprocess.run([h5dump, rel], cwd=root, capture_output=True, text=True,
                               errors="replace", env=env)
            text = drop_blocks(r.stdout, set(aliases))
            d["h5dump_rc"] = r.returncode
            d["h5dump_sha"] = hashlib.sha256(text.encode()).hexdigest()
        res[rel] = d
    print(json.dumps(res))


if __name__ == "__main__":
    main()
