"""Mutated copies of medh5 samples, for the verify/fix agreement tests.

    python medh5_mutate.py SRC DST flip OBJECT      one flipped bit in OBJECT's first chunks
                                                    (or its contiguous bytes), chosen so the
                                                    data still decodes but reads differently;
                                                    when no sampled flip does, one element
                                                    changed through h5py (chunk re-encoded)
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


# Positions tried per chunk, and chunks tried: a bound, so that a codec whose
# every flip fails to decode (a checksummed stream) cannot make this run for
# hours (seed 2 of medh5_random_samples.py tried every byte of a chunk, three
# h5py opens per byte).
FLIP_POSITIONS = 96
FLIP_CHUNKS = 8


def _poke(fn, at, value):
    with open(fn, 'r+b') as fh:
        fh.seek(at)
        fh.write(bytes([value]))


def flip(src, dst, obj):
    copy(src, dst)
    with h5py.File(dst, 'r') as f:
        ds = f[obj]
        if ds.chunks:
            n = ds.id.get_num_chunks()
            extents = []
            for c in range(min(n, FLIP_CHUNKS)):
                info = ds.id.get_chunk_info(c)
                extents.append((info.byte_offset, info.size))
        else:
            extents = [(ds.id.get_offset(), ds.id.get_storage_size())]
    orig = _read(dst, obj)
    data = open(dst, 'rb').read()
    for start, size in extents:
        # evenly spread over the extent, the second half first (past headers)
        order = list(range(size // 2, size)) + list(range(0, size // 2))
        step = max(1, len(order) // FLIP_POSITIONS)
        for k in order[::step][:FLIP_POSITIONS]:
            for bit in (0x01, 0x10, 0x80):
                _poke(dst, start + k, data[start + k] ^ bit)
                new = _read(dst, obj)
                if new is not None and not np.array_equal(new, orig, equal_nan=new.dtype.kind == 'f'):
                    return start + k
                _poke(dst, start + k, data[start + k])
    # No sampled flip decodes (deflate streams mostly refuse one): change one
    # element through h5py instead, which re-encodes its chunk with the same
    # filters; the stored digests then no longer match, as after a flip.
    with h5py.File(dst, 'r+') as f:
        ds = f[obj]
        at = (0,) * ds.ndim
        v = ds[at]
        if ds.dtype.kind == 'f' or v < np.iinfo(ds.dtype).max:
            ds[at] = v + 1
        else:
            ds[at] = v - 1
    new = _read(dst, obj)
    if new is None or np.array_equal(new, orig, equal_nan=new.dtype.kind == 'f'):
        raise SystemExit(f'no single-bit flip or edit changes {obj}')
    return -1


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
