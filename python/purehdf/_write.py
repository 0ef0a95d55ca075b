"""h5py-shaped writing: ``File(path, "w" | "x")`` builds groups, datasets
(held as numpy arrays, so slice assignment works before close) and
attributes, and the extension writes the file atomically on close."""

import math
import os
import posixpath

import numpy as np

from . import _native
from ._dtype import check_string_dtype, from_dtype
from ._hl import Empty, ExternalLink, SoftLink

CHUNK_BASE, CHUNK_MIN, CHUNK_MAX = 16 * 1024, 8 * 1024, 1024 * 1024


def guess_chunk(shape, typesize):
    """h5py's chunk guess for a dataset of ``shape`` (PyTables' rule)."""
    shape = tuple(x if x != 0 else 1024 for x in shape)
    chunks = np.array(shape, dtype="=f8")
    dset_size = float(np.prod(chunks)) * typesize
    target = CHUNK_BASE * (2 ** np.log10(dset_size / (1024.0 * 1024)))
    target = min(max(target, CHUNK_MIN), CHUNK_MAX)
    idx = 0
    while True:
        nbytes = float(np.prod(chunks)) * typesize
        if (nbytes < target or abs(nbytes - target) / target < 0.5) and nbytes < CHUNK_MAX:
            break
        if np.prod(chunks) == 1:
            break
        chunks[idx % len(shape)] = math.ceil(chunks[idx % len(shape)] / 2.0)
        idx += 1
    return tuple(int(x) for x in chunks)


def _pipeline(dtype, compression, compression_opts, shuffle, fletcher32):
    """``(name, options)`` filter stages in h5py's order: shuffle, the
    compressor, Fletcher-32."""
    out = []
    if shuffle:
        out.append(("shuffle", []))
    if compression is not None:
        c = compression
        if isinstance(c, int) and not isinstance(c, bool):
            if 0 <= c <= 9:
                c, compression_opts = "gzip", c
            else:
                raise ValueError("unknown compression filter id %d" % c)
        opts = compression_opts
        if c == "gzip":
            level = 4 if opts is None else int(opts)
            if not 0 <= level <= 9:
                raise ValueError("GZIP setting must be an integer from 0-9, not %r" % opts)
            out.append(("gzip", [level]))
        elif c == "lzf":
            if opts is not None:
                raise ValueError("LZF compression filter accepts no options")
            out.append(("lzf", []))
        elif c == "blosc2":
            o = dict(opts or {})
            codes = {"blosclz": 0, "lz4": 1, "lz4hc": 2, "zlib": 4, "zstd": 5}
            out.append(("blosc2", [codes[o.get("cname", "lz4")], int(o.get("clevel", 5)),
                                   int(o.get("shuffle", 1))]))
        elif c in ("lz4", "zstd", "bzip2", "bitshuffle"):
            out.append((c, [] if opts is None else [int(opts)]))
        else:
            raise ValueError("Compression filter %r is unavailable" % (c,))
    if fletcher32:
        out.append(("fletcher32", []))
    return out


def _payload(arr, dtype):
    """What the extension stores for ``arr`` of ``dtype``: bytes, or a list
    of strings for variable-length strings."""
    if check_string_dtype(dtype) is not None and dtype.kind == "O":
        return [x if isinstance(x, (str, bytes)) else str(x) for x in arr.reshape(-1)]
    if dtype.hasobject:
        raise TypeError("cannot write objects of dtype %r" % (dtype,))
    return np.ascontiguousarray(arr, dtype=dtype).tobytes()


def _value_dtype(value):
    """numpy array and dtype of an attribute value as h5py stores it."""
    if isinstance(value, str):
        dt = np.dtype("O", metadata={"vlen": str})
        return np.array(value, dtype=dt), dt
    if isinstance(value, bytes):
        arr = np.array(value)
        return arr, arr.dtype
    arr = np.asarray(value)
    if arr.dtype.kind == "U":
        dt = np.dtype("O", metadata={"vlen": str})
        return np.array(arr.tolist(), dtype=dt).reshape(arr.shape), dt
    if arr.dtype.kind == "O":
        if all(isinstance(x, str) for x in arr.reshape(-1)):
            dt = np.dtype("O", metadata={"vlen": str})
            return arr.astype(dt), dt
        raise TypeError("cannot store objects in an attribute")
    return arr, arr.dtype


class _WAttrs:
    """Attributes of an object being written (a dict until close)."""

    def __init__(self, node):
        self._d = node

    def __setitem__(self, name, value):
        self.create(name, value)

    def create(self, name, data=None, shape=None, dtype=None):
        if isinstance(data, Empty):
            self._d._attrs[name] = (None, data.dtype)
            return
        if dtype is not None:
            dt = np.dtype(dtype)
            if check_string_dtype(dt) is not None and dt.kind == "O":
                arr = np.array(data, dtype=dt)
            else:
                arr = np.asarray(data, dtype=dt)
        else:
            arr, dt = _value_dtype(data)
        if shape is not None:
            arr = arr.reshape(shape)
        self._d._attrs[name] = (arr, dt)

    def __getitem__(self, name):
        arr, dt = self._d._attrs[name]
        if arr is None:
            return Empty(dt)
        return arr[()] if arr.ndim == 0 else arr

    def __delitem__(self, name):
        del self._d._attrs[name]

    def __contains__(self, name):
        return name in self._d._attrs

    def __iter__(self):
        return iter(list(self._d._attrs))

    def __len__(self):
        return len(self._d._attrs)

    def keys(self):
        return list(self._d._attrs)

    def items(self):
        return [(k, self[k]) for k in self._d._attrs]


class WDataset:
    """A dataset being written: its values live in a numpy array until close."""

    def __init__(self, file, path, data, dtype, chunks, maxshape, pipeline, fill):
        self.file, self.name = file, path
        self._data, self.dtype = data, dtype
        self.chunks, self.maxshape = chunks, maxshape
        self._pipeline, self._fill = pipeline, fill
        self._attrs = {}
        self._written = data is not None

    @property
    def attrs(self):
        return _WAttrs(self)

    @property
    def shape(self):
        return None if self._data is None else self._data.shape

    @property
    def ndim(self):
        return 0 if self._data is None else self._data.ndim

    @property
    def size(self):
        return None if self._data is None else self._data.size

    @property
    def compression(self):
        for n, _ in self._pipeline:
            if n in ("gzip", "lzf"):
                return n
        return None

    @property
    def fillvalue(self):
        return self._fillvalue_array()[0]

    def _fillvalue_array(self):
        if self._fill is None:
            return np.zeros(1, dtype=self.dtype)
        return np.array([self._fill], dtype=self.dtype)

    def __len__(self):
        if not self.shape:
            raise TypeError("Attempt to take len() of scalar dataset")
        return self.shape[0]

    def __getitem__(self, key):
        if self._data is None:
            return Empty(self.dtype)
        return self._data[key]

    def __setitem__(self, key, value):
        if self._data is None:
            raise TypeError("cannot write into a dataset with a null dataspace")
        self._data[key] = value
        self._written = True

    def resize(self, size, axis=None):
        if self.chunks is None:
            raise TypeError("Only chunked datasets can be resized")
        if axis is not None:
            new = list(self.shape)
            new[axis] = size
            size = tuple(new)
        size = tuple(int(s) for s in (size if isinstance(size, tuple) else (size,)))
        for s, m in zip(size, self.maxshape):
            if m is not None and s > m:
                raise ValueError("Unable to set extend dataset (dimension cannot exceed the "
                                 "existing maximal size)")
        new = np.full(size, self._fillvalue_array()[0], dtype=self.dtype)
        common = tuple(slice(0, min(a, b)) for a, b in zip(size, self.shape))
        new[common] = self._data[common]
        self._data = new

    def __repr__(self):
        return '<HDF5 dataset "%s": shape %s, type "%s" (being written)>' % (
            posixpath.basename(self.name), self.shape, self.dtype.str)


class WGroup:
    """A group being written."""

    def __init__(self, file, path):
        self.file, self.name = file, path
        self._members = {}
        self._attrs = {}

    @property
    def attrs(self):
        return _WAttrs(self)

    def _parent_of(self, name):
        parts = [p for p in name.split("/") if p]
        if not parts:
            raise ValueError("empty name")
        g = self.file if name.startswith("/") else self
        for p in parts[:-1]:
            nxt = g._members.get(p)
            if nxt is None:
                nxt = g.create_group(p)
            if not isinstance(nxt, WGroup):
                raise TypeError("%s is not a group" % p)
            g = nxt
        return g, parts[-1]

    def _add(self, name, obj_factory):
        g, base = self._parent_of(name)
        if base in g._members:
            raise ValueError("Unable to synchronously create (name already exists): %r" % name)
        obj = obj_factory(g.name.rstrip("/") + "/" + base)
        g._members[base] = obj
        return obj

    def create_group(self, name, track_order=None):
        return self._add(name, lambda p: WGroup(self.file, p))

    def require_group(self, name):
        return self[name] if name in self else self.create_group(name)

    def create_dataset(self, name, shape=None, dtype=None, data=None, chunks=None,
                       maxshape=None, compression=None, compression_opts=None,
                       shuffle=None, fletcher32=None, fillvalue=None, scaleoffset=None,
                       track_order=None, **kwds):
        if kwds:
            raise TypeError("unsupported keywords: %s" % ", ".join(sorted(kwds)))
        if scaleoffset is not None:
            raise ValueError("scaleoffset is not supported for writing")
        if isinstance(data, Empty):
            dtype, data, shape = data.dtype, None, None
            arr = None
        elif data is not None:
            if isinstance(data, str) or (dtype is not None and check_string_dtype(
                    np.dtype(dtype)) is not None and np.dtype(dtype).kind == "O"):
                dt = np.dtype(dtype) if dtype is not None else np.dtype(
                    "O", metadata={"vlen": str})
                arr = np.array(data, dtype=dt)
            else:
                arr = np.asarray(data)
                if arr.dtype.kind == "U":
                    dt = np.dtype("O", metadata={"vlen": str})
                    arr = np.array(arr.tolist(), dtype=dt).reshape(arr.shape)
                if dtype is not None:
                    arr = arr.astype(np.dtype(dtype))
            if shape is not None and tuple(shape) != arr.shape:
                if int(np.prod(shape)) != arr.size:
                    raise ValueError("Shape tuple is incompatible with data")
                arr = arr.reshape(shape)
            dtype = arr.dtype
            arr = np.array(arr, dtype=dtype, copy=True)
        else:
            if shape is None:
                raise TypeError("One of data, shape or dtype must be specified")
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            dtype = np.dtype("f4" if dtype is None else dtype)
            arr = None
        dtype = np.dtype(dtype)
        from_dtype(dtype)  # refuse types HDF5 has no counterpart for here
        fill = None
        if fillvalue is not None:
            fill = np.array(fillvalue, dtype=dtype)[()]
        if arr is None and shape is not None:
            if dtype.kind == "O":
                arr = np.empty(shape, dtype=dtype)
                arr[...] = "" if fill is None else fill
            else:
                arr = np.zeros(shape, dtype=dtype)
                if fill is not None:
                    arr[...] = fill
            written = False
        else:
            written = arr is not None
        shape = None if arr is None else arr.shape
        filtered = compression is not None or shuffle or fletcher32
        if maxshape is not None:
            maxshape = tuple(maxshape) if isinstance(maxshape, (tuple, list)) else (maxshape,)
            if len(maxshape) != len(shape):
                raise ValueError("Dimensionality of maxshape and shape must match")
        if chunks is True or (chunks is None and (filtered or (
                maxshape is not None and tuple(maxshape) != tuple(shape)))):
            if not shape:
                raise TypeError("Chunks not allowed for scalar datasets")
            chunks = guess_chunk(shape, dtype.itemsize)
        elif chunks is False:
            chunks = None
        if chunks is not None:
            chunks = tuple(int(c) for c in chunks)
            if not shape or len(chunks) != len(shape):
                raise ValueError("Chunk shape must have the dataset's rank")
            if any(c < 1 for c in chunks):
                raise ValueError("All chunk dimensions must be positive")
            for c, s, m in zip(chunks, shape, maxshape or shape):
                if m is not None and c > m:
                    raise ValueError("Chunk shape must not be greater than data shape in "
                                     "any dimension. %s is not compatible with %s"
                                     % (chunks, shape))
        elif filtered:
            raise ValueError("filters need chunked storage")
        if maxshape is None and chunks is not None:
            maxshape = shape
        pipeline = _pipeline(dtype, compression, compression_opts, shuffle, fletcher32)
        ds = self._add(name, lambda p: WDataset(self.file, p, arr, dtype, chunks,
                                                 maxshape, pipeline, fill))
        ds._written = written
        return ds

    def __setitem__(self, name, obj):
        g, base = self._parent_of(name)
        if base in g._members:
            raise ValueError("name already exists: %r" % name)
        if isinstance(obj, (SoftLink, ExternalLink, WGroup, WDataset)):
            g._members[base] = obj
        else:
            g.create_dataset(base, data=obj)

    def __getitem__(self, name):
        g, base = self._parent_of(name)
        if base not in g._members:
            raise KeyError("object %r doesn't exist" % name)
        return g._members[base]

    def __contains__(self, name):
        try:
            self[name]
            return True
        except (KeyError, TypeError, ValueError):
            return False

    def keys(self):
        return sorted(self._members)

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self._members)

    def __repr__(self):
        return '<HDF5 group "%s" (%d members, being written)>' % (self.name, len(self))


class WriteFile(WGroup):
    """A file being written: it appears at its path, whole, on ``close``
    (or at the end of a ``with`` block); an exception inside the block
    leaves the path untouched."""

    def __init__(self, name, mode="w", **kwds):
        path = os.fspath(name)
        if mode in ("x", "w-") and os.path.exists(path):
            raise FileExistsError("Unable to synchronously create file (file exists): %r"
                                  % path)
        super().__init__(self, "/")
        self.filename = path
        self.mode = "r+"
        self._native = _native.NativeWriter(path)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self._abort()
        else:
            self.close()

    def _abort(self):
        if self._native is not None:
            self._native.abort()
            self._native = None

    def __bool__(self):
        return self._native is not None

    def flush(self):
        pass

    def close(self):
        """Write everything and put the file at its path atomically."""
        if self._native is None:
            return
        w = self._native
        try:
            self._emit(w, 0, self)
            w.commit()
        except BaseException:
            self._abort()
            raise
        self._native = None

    def _emit_attrs(self, w, obj_id, node):
        for name, (arr, dt) in node._attrs.items():
            desc = from_dtype(dt)
            if arr is None:
                w.set_attr(obj_id, name, desc, None, b"")
            else:
                w.set_attr(obj_id, name, desc, list(arr.shape), _payload(arr, dt))

    def _emit(self, w, gid, group):
        self._emit_attrs(w, gid, group)
        for name in sorted(group._members):
            obj = group._members[name]
            if isinstance(obj, SoftLink):
                w.soft_link(gid, name, obj.path)
            elif isinstance(obj, ExternalLink):
                w.external_link(gid, name, obj.filename, obj.path)
            elif isinstance(obj, WGroup):
                if obj is group or getattr(obj, "_id", None) is not None and obj._emitted:
                    w.hard_link(gid, name, obj._id)
                    continue
                sub = w.create_group(gid, name)
                obj._id, obj._emitted = sub, True
                self._emit(w, sub, obj)
            else:
                self._emit_dataset(w, gid, name, obj)

    def _emit_dataset(self, w, gid, name, ds):
        desc = from_dtype(ds.dtype)
        fill = None
        if ds._fill is not None:
            fill = _payload(np.array([ds._fill], dtype=ds.dtype), ds.dtype)
            if isinstance(fill, list):
                fill = None
        if ds._data is None:
            shape, data = None, None
        else:
            shape = list(ds._data.shape)
            data = _payload(ds._data, ds.dtype) if (ds._written or ds.chunks is None) else None
        maxshape = None
        if ds.maxshape is not None:
            maxshape = [None if m is None else int(m) for m in ds.maxshape]
        did = w.create_dataset(gid, name, desc, shape, maxshape,
                               None if ds.chunks is None else list(ds.chunks),
                               ds._pipeline, fill, data)
        self._emit_attrs(w, did, ds)

    def __repr__(self):
        return '<HDF5 file "%s" (being written)>' % os.path.basename(self.filename)
