"""``File(path, "r+" | "a")``: in-place edits through the library's editor
(``File::open_rw``), h5py-shaped — ``attrs[name] = value``,
``del attrs[name]``, ``del f[name]``, ``f.move(a, b)``,
``f.create_group(name)``, ``f[name] = SoftLink(...)`` and ``ds[box] = array``
for compact and contiguous datasets. Each edit is committed when it returns."""

import os
import posixpath

import numpy as np

from . import _native
from ._dtype import from_dtype

UnsupportedError = _native.UnsupportedError


def open_rw(f, name, mode):
    """Set up the :class:`File` ``f`` for editing ``name`` (created empty
    under mode ``"a"`` when absent)."""
    path = os.fspath(name)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not os.path.exists(path):
        if mode != "a":
            raise FileNotFoundError(
                "Unable to synchronously open file (unable to open file: name = '%s')" % path)
        from ._write import WriteFile
        WriteFile(path, "w").close()
    f._bytes = None
    f.filename = path
    f._editor = _native.NativeEditor(path)
    f._native = f._editor.file()


def _editor(node):
    f = node._file
    ed = getattr(f, "_editor", None)
    if ed is None or f._native is None:
        raise ValueError("file is read-only (open with mode 'r+', 'a', 'w' or 'x' to write)")
    return f, ed


def _refresh(f):
    f._native = f._editor.file()
    f._cache = {}


def _abs(node, name):
    return name if name.startswith("/") else posixpath.join(node._path, name)


def set_attr(node, name, value, dtype=None):
    """``attrs[name] = value`` on a node of an editable file."""
    from ._hl import Empty
    from ._write import _payload, _value_dtype
    f, ed = _editor(node)
    if isinstance(value, Empty):
        ed.set_attr(node._path, name, from_dtype(value.dtype), None, b"")
    else:
        if dtype is not None:
            dt = np.dtype(dtype)
            arr = np.asarray(value, dtype=dt)
        else:
            arr, dt = _value_dtype(value)
        ed.set_attr(node._path, name, from_dtype(dt), list(arr.shape), _payload(arr, dt))
    _refresh(f)


def del_attr(node, name):
    f, ed = _editor(node)
    if name not in node.attrs:
        raise KeyError("Unable to delete attribute (can't locate attribute: '%s')" % name)
    ed.delete_attr(node._path, name)
    _refresh(f)


def delete(node, name):
    """``del group[name]``."""
    f, ed = _editor(node)
    if name not in node:
        raise KeyError("Couldn't delete link (callback link pointer is NULL (specified link "
                       "may be '.' or not exist))")
    ed.delete(_abs(node, name))
    _refresh(f)


def move(node, source, dest):
    """``group.move(source, dest)``."""
    f, ed = _editor(node)
    ed.rename(_abs(node, source), _abs(node, dest))
    _refresh(f)


def create_group(node, name):
    f, ed = _editor(node)
    path = _abs(node, name)
    ed.create_group(path)
    _refresh(f)
    return node[name]


def link(node, name, obj):
    """``group[name] = SoftLink(...) | existing object``."""
    from ._hl import SoftLink, _Bound
    f, ed = _editor(node)
    if isinstance(obj, SoftLink):
        ed.soft_link(obj.path, _abs(node, name))
    elif isinstance(obj, _Bound) and obj._file is f:
        ed.hard_link(obj._path, _abs(node, name))
    else:
        raise TypeError("an edited file takes soft links and hard links to its own objects "
                        "(create datasets with h5py-style writes into a new file)")
    _refresh(f)


def _box(key, shape):
    """``(start, count, result shape)`` of a basic selection (ints and
    step-1 slices), or TypeError."""
    if not isinstance(key, tuple):
        key = (key,)
    if any(k is Ellipsis for k in key):
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (len(shape) - len(key) + 1) + key[i + 1:]
    key = key + (slice(None),) * (len(shape) - len(key))
    if len(key) != len(shape):
        raise TypeError("too many indices for a %d-dimensional dataset" % len(shape))
    start, count, out = [], [], []
    for k, n in zip(key, shape):
        if isinstance(k, (int, np.integer)):
            k = int(k) + (n if k < 0 else 0)
            if not 0 <= k < n:
                raise IndexError("index out of range")
            start.append(k)
            count.append(1)
        elif isinstance(k, slice):
            a, b, step = k.indices(n)
            if step != 1:
                raise TypeError("writes take step-1 slices")
            start.append(a)
            count.append(max(0, b - a))
            out.append(max(0, b - a))
        else:
            raise TypeError("writes take integers and slices, not %r" % (k,))
    return start, count, tuple(out)


def write(ds, key, value):
    """``ds[key] = value`` on a compact, contiguous or chunked dataset."""
    f, ed = _editor(ds)
    shape = ds.shape or ()
    start, count, out = _box(key, shape)
    dt = ds.dtype
    if dt.hasobject:
        raise TypeError("in-place writes take fixed-size numeric data")
    # the dataset's numpy dtype is its stored type (byte order included)
    arr = np.ascontiguousarray(np.broadcast_to(np.asarray(value, dtype=dt), out), dtype=dt)
    ed.write_slab(ds._path, start, count, arr.tobytes())
    _refresh(f)


def resize(ds, size, axis=None):
    """``ds.resize(size[, axis])`` as h5py spells it."""
    f, ed = _editor(ds)
    if ds.chunks is None:
        raise TypeError("Only chunked datasets can be resized")
    if axis is not None:
        shape = list(ds.shape)
        shape[axis] = int(size)
    else:
        shape = [int(n) for n in (size if isinstance(size, (tuple, list)) else (size,))]
    ed.resize(ds._path, shape)
    _refresh(f)


def close(f):
    ed = getattr(f, "_editor", None)
    if ed is not None:
        ed.close()
        f._editor = None
