"""Dump medh5 files as JSON (h5py): every object's attributes and every
dataset's dtype, shape and SHA-256 of its bytes, the root attributes and the
parsed /meta document. Usage: python medh5_dump.py FILE... > out.json
(a JSON object keyed by file)."""
import hashlib, json, sys

import h5py
import hdf5plugin  # noqa: F401
import numpy as np


def value(v):
    if isinstance(v, bytes):
        return v.decode('utf-8', 'replace')
    if isinstance(v, np.ndarray):
        return [value(x) for x in v.tolist()] if v.dtype.kind == 'O' else v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


def dump(fn):
    out = {'objects': {}, 'root': {}, 'meta': None}
    with h5py.File(fn, 'r') as f:
        out['root'] = {k: value(f.attrs[k]) for k in f.attrs}

        def visit(name, o):
            d = {'attrs': {k: value(o.attrs[k]) for k in o.attrs}}
            if isinstance(o, h5py.Dataset):
                if name == 'meta':
                    out['meta'] = json.loads(o[()].decode())
                    return
                a = o[()]
                d['dtype'] = str(o.dtype)
                d['shape'] = list(o.shape)
                d['chunks'] = list(o.chunks) if o.chunks else None
                if o.dtype.kind == 'O':
                    raw = json.dumps(value(np.asarray(a))).encode()
                else:
                    raw = np.ascontiguousarray(a).tobytes()
                d['sha256'] = hashlib.sha256(raw).hexdigest()
            out['objects'][name] = d
        f.visititems(visit)
    return out


print(json.dumps({fn: dump(fn) for fn in sys.argv[1:]}))
