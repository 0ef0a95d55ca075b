"""h5py-style keys (integers, slices with steps, ``...``, ``()``, index
lists and boolean masks) as one strided box plus what to do after reading."""

import numbers

import numpy as np


class Plan:
    """A resolved key: the box to read (``start``, ``count``, ``step`` per
    axis), the shape numpy returns, and fancy indexing applied afterwards."""

    __slots__ = ("start", "count", "step", "shape", "post", "scalar")

    def __init__(self):
        self.start, self.count, self.step, self.shape, self.post = [], [], [], [], []
        self.scalar = False

    def apply(self, arr, extra=()):
        """``arr`` (the box's values) shaped and indexed as numpy would;
        ``extra`` are an array dtype's trailing dimensions."""
        arr = arr.reshape(self.box_shape() + tuple(extra))
        for axis, idx in self.post:
            arr = np.take(arr, idx, axis=axis)
        return arr.reshape(self.shape + tuple(extra))

    def box_shape(self):
        return tuple(int(c) for c in self.count)


def _index(i, n, axis):
    i = int(i)
    if i < 0:
        i += n
    if not 0 <= i < n:
        raise IndexError("Index (%d) out of range for (0-%d)" % (i, n - 1))
    return i


def resolve(key, shape):
    """A :class:`Plan` for ``key`` on a dataset of ``shape`` (a tuple)."""
    if not isinstance(key, tuple):
        key = (key,)
    rank = len(shape)
    if any(k is None for k in key):
        raise TypeError("new axes (None) are not supported in a selection")
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise ValueError("Only one ellipsis may be used.")
    if n_ell:
        i = next(j for j, k in enumerate(key) if k is Ellipsis)
        fill = rank - (len(key) - 1)
        if fill < 0:
            raise ValueError("too many indices for a dataset of rank %d" % rank)
        key = key[:i] + (slice(None),) * fill + key[i + 1:]
    if len(key) > rank:
        raise ValueError("too many indices (%d) for a dataset of rank %d" % (len(key), rank))
    key = key + (slice(None),) * (rank - len(key))
    p = Plan()
    out_axis = 0
    for axis, (k, n) in enumerate(zip(key, shape)):
        if isinstance(k, (bool, np.bool_)):
            raise TypeError("boolean index on axis %d" % axis)
        if isinstance(k, numbers.Integral):
            i = _index(k, n, axis)
            p.start.append(i)
            p.count.append(1)
            p.step.append(1)
            continue
        if isinstance(k, slice):
            for part in (k.start, k.stop, k.step):
                if part is not None and not isinstance(part, numbers.Integral):
                    raise TypeError("slice indices must be integers or None")
            if k.step is not None and k.step < 1:
                raise ValueError("Step must be >= 1 (got %d)" % k.step)
            a, b, s = k.indices(n)
            c = len(range(a, b, s))
            p.start.append(a if c else 0)
            p.count.append(c)
            p.step.append(s)
            p.shape.append(c)
            out_axis += 1
            continue
        arr = np.asarray(k)
        if arr.dtype.kind == "b":
            if arr.shape != (n,):
                raise TypeError("boolean mask of shape %s on an axis of length %d"
                                % (arr.shape, n))
            arr = np.nonzero(arr)[0]
        if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
            raise TypeError("Illegal index on axis %d: %r" % (axis, k))
        idx = np.array([_index(i, n, axis) for i in arr.tolist()], dtype=np.int64)
        if idx.size > 1 and np.any(np.diff(idx) <= 0):
            raise TypeError("Indexing elements must be in increasing order")
        if idx.size == 0:
            p.start.append(0)
            p.count.append(0)
            p.step.append(1)
        else:
            lo, hi = int(idx[0]), int(idx[-1])
            p.start.append(lo)
            p.count.append(hi - lo + 1)
            p.step.append(1)
            p.post.append((axis, idx - lo))
        p.shape.append(int(idx.size))
        out_axis += 1
    # post-indexing works on the box (every axis kept), then drops indexed axes
    p.scalar = rank > 0 and not p.shape and len(p.post) == 0 and all(
        isinstance(k, numbers.Integral) for k in key)
    p.shape = tuple(p.shape)
    return p
