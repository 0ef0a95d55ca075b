"""Mutated copies of medh5 samples, for the verify/fix agreement tests.

    python medh5_mutate.py SRC DST flip OBJECT      one flipped bit in OBJECT's first chunk
                                                    (or its contiguous bytes), chosen so the
                                                    data still decodes but reads differently
    python medh5_mutate.py SRC DST attr OBJECT NAME VALUE   set a (string) attribute
    python medh5_mutate.py SRC DST cid              a stale root content_id
"""
import os, shutil, sys

import h5py
import hdf5plugin  # noqa: F401  (filters for reading chunks)
import numpy as np


def _read(fn, obj):
    try:
        with h5py.File(fn, 'r') as f:
            return f[obj][()]
    except Exception:
        return None


def copy(src, dst):
    if os.path.abspath(src) != os.path.abspath(dst):
        shutil.copy(src, dst)
    os.chmod(dst, 0o644)


def flip(src, dst, obj):
    copy(src, dst)
    with h5py.File(dst, 'r') as f:
        ds = f[obj]
        if ds.chunks:
            info = ds.id.get_chunk_info(0)
            start, size = info.byte_offset, info.size
        else:
            start, size = ds.id.get_offset(), ds.id.get_storage_size()
    orig = _read(dst, obj)
    data = bytearray(open(dst, 'rb').read())
    for k in list(range(size // 2, size)) + list(range(0, size // 2)):
        for bit in (0x01, 0x10, 0x80):
            b = bytearray(data)
            b[start + k] ^= bit
            open(dst, 'wb').write(b)
            new = _read(dst, obj)
            if new is not None and not np.array_equal(new, orig, equal_nan=new.dtype.kind == 'f'):
                return start + k
    open(dst, 'wb').write(data)
    raise SystemExit(f'no single-bit flip changes {obj}')


def attr(src, dst, obj, name, value):
    copy(src, dst)
    with h5py.File(dst, 'r+') as f:
        f[obj].attrs[name] = value


def stale_cid(src, dst):
    copy(src, dst)
    with h5py.File(dst, 'r+') as f:
        f.attrs['content_id'] = 'sha256:' + '0' * 64


if __name__ == '__main__':
    src, dst, kind = sys.argv[1:4]
    if kind == 'flip':
        flip(src, dst, sys.argv[4])
    elif kind == 'attr':
        attr(src, dst, *sys.argv[4:7])
    elif kind == 'cid':
        stale_cid(src, dst)
    else:
        raise SystemExit(f'unknown mutation {kind}')
