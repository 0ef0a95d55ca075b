"""Print, as JSON, what h5py reads from a medh5 file: for every dataset its dtype,
shape and the SHA-256 of its C-order bytes (vlen strings: of their UTF-8 text,
joined by NUL)."""
import hashlib, json, sys

import h5py
import hdf5plugin  # noqa: F401  (registers Blosc2, Zstd, LZ4 ... filters)
import numpy as np

out = {}
with h5py.File(sys.argv[1], "r") as f:
    def visit(name, obj):
        if not isinstance(obj, h5py.Dataset):
            return
        if h5py.check_string_dtype(obj.dtype) is not None:
            vals = obj.asstr()[()]
            vals = [vals] if isinstance(vals, str) else list(np.asarray(vals).ravel())
            data = b"\0".join(v.encode("utf-8") for v in vals)
        else:
            data = np.ascontiguousarray(obj[()]).tobytes()
        out["/" + name] = {"dtype": obj.dtype.str, "shape": list(obj.shape),
                           "sha256": hashlib.sha256(data).hexdigest()}
    f.visititems(visit)
print(json.dumps(out))
