"""Random structural edits of valid medh5 samples, for the CLI parity test
(tests/medh5_cli_parity.rs): each output is a copy of one input with one to
three edits made through h5py, the kind of file a careless or hostile writer
leaves behind while every byte stays well-formed HDF5:

  soft links (that resolve, that dangle) and hard-link aliases placed in or
  out of the attested groups; external links, external raw-data storage and
  virtual datasets (a MEDH5 file must hold its own bytes); `meta` removed,
  made a group or a number; `digest_algo` changed; undigested datasets added;
  `medh5_version` removed or bumped; a digest edited.

    python medh5_edits.py OUTDIR SEED N SAMPLE...

Writes OUTDIR/edit-SEED-K.medh5 for K < N and prints one line per file: its
name and the edits made. Deterministic for a seed and inputs.
"""
import os
import random
import shutil
import sys

import h5py
import numpy as np

out_dir, seed, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
samples = sorted(sys.argv[4:])
rng = random.Random(seed)
os.makedirs(out_dir, exist_ok=True)


def objects(f):
    """(path, is_group) of every object reached by hard links."""
    found = []
    f.visit_links(lambda p: found.append(p))
    out = []
    for p in found:
        link = f.get(p, getlink=True)
        if isinstance(link, h5py.HardLink):
            out.append((p, isinstance(f[p], h5py.Group)))
    return out


def group_for(f, rng):
    tops = [g for g in ("images", "grids", "annotations", "transforms", "clinical", "extra")]
    top = rng.choice(tops)
    try:
        if top in f and isinstance(f[top], h5py.Group):
            return f[top]
        return f.require_group("extra")
    except (KeyError, TypeError, ValueError):
        # a dangling link or a dataset where the group would be
        return f.require_group(fresh(f, rng, "extra"))


def fresh(g, rng, stem):
    while True:
        name = f"{stem}{rng.randrange(1000)}"
        if name not in g:
            return name


def edit(f, rng, here):
    objs = objects(f)
    kind = rng.choice([
        "soft", "soft_dangling", "hard_alias", "external_link", "efl", "vds",
        "meta_gone", "meta_group", "meta_number", "digest_algo", "undigested",
        "version", "digest_edit", "profiles_drop",
    ])
    g = group_for(f, rng)
    if kind == "soft" and objs:
        target = rng.choice(objs)[0]
        g[fresh(g, rng, "s")] = h5py.SoftLink("/" + target)
    elif kind == "soft_dangling":
        g[fresh(g, rng, "d")] = h5py.SoftLink("/nowhere/" + str(rng.randrange(9)))
    elif kind == "hard_alias" and objs:
        target = rng.choice(objs)[0]
        g[fresh(g, rng, "h")] = f[target]
    elif kind == "external_link":
        g[fresh(g, rng, "x")] = h5py.ExternalLink("other.h5", "/a")
    elif kind == "efl":
        raw = os.path.join(here, "raw.bin")
        with open(raw, "wb") as r:
            r.write(bytes(64))
        g.create_dataset(fresh(g, rng, "e"), shape=(16,), dtype="i4", external=[("raw.bin", 0, 64)])
    elif kind == "vds":
        src = os.path.join(here, "src.h5")
        with h5py.File(src, "w") as s:
            s["a"] = np.arange(4)
        lay = h5py.VirtualLayout(shape=(4,), dtype="i8")
        lay[:] = h5py.VirtualSource("src.h5", "a", shape=(4,))
        g.create_virtual_dataset(fresh(g, rng, "v"), lay)
    elif kind in ("meta_gone", "meta_group", "meta_number") and "meta" in f:
        del f["meta"]
        if kind == "meta_group":
            f.create_group("meta")
        elif kind == "meta_number":
            f["meta"] = np.int64(rng.randrange(100))
    elif kind == "digest_algo":
        f.attrs["digest_algo"] = rng.choice(["md5", "blake3", "SHA256", "sha512", "blake2b", "sha256"])
    elif kind == "undigested":
        g.create_dataset(fresh(g, rng, "u"), data=np.arange(rng.randrange(1, 9), dtype="u2"))
    elif kind == "version":
        if rng.random() < 0.5:
            if "medh5_version" in f.attrs:
                del f.attrs["medh5_version"]
        else:
            f.attrs["medh5_version"] = rng.choice(["0.9", "2.0", "1.9", "1.0"])
    elif kind == "digest_edit":
        with_digest = [p for p, grp in objs if not grp and "digest" in f[p].attrs]
        if with_digest:
            p = rng.choice(with_digest)
            d = str(f[p].attrs["digest"])
            f[p].attrs["digest"] = d[:-1] + ("0" if d[-1:] != "0" else "1")
    elif kind == "profiles_drop" and "medh5_profiles" in f.attrs:
        profiles = [str(p) for p in f.attrs["medh5_profiles"]]
        if len(profiles) > 1:
            profiles.remove(rng.choice(profiles))
            f.attrs["medh5_profiles"] = np.array(profiles, dtype=h5py.string_dtype())
    else:
        return None
    return kind


for k in range(n):
    src = rng.choice(samples)
    dst = os.path.join(out_dir, f"edit-{seed}-{k}.medh5")
    shutil.copyfile(src, dst)
    done = []
    with h5py.File(dst, "a") as f:
        for _ in range(rng.randrange(1, 4)):
            try:
                e = edit(f, rng, out_dir)
            except (KeyError, TypeError, ValueError, OSError) as err:
                # an invalid input sample can refuse an edit (a dangling
                # `images`, say): that edit is skipped
                e = f"refused:{type(err).__name__}"
            if e:
                done.append(e)
    print(os.path.basename(dst), os.path.basename(src), ",".join(done))
