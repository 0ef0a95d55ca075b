"""h5py-shaped reading classes over the extension: File, Group, Dataset,
Datatype, AttributeManager, links, and pickling by location."""

import os
import posixpath
import threading

import numpy as np

from . import _native
from ._dtype import Reference, RegionReference, to_dtype
from ._selection import resolve


class Empty:
    """A value with a null dataspace (h5py's ``Empty``)."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.shape = None
        self.size = None

    def __eq__(self, other):
        return isinstance(other, Empty) and self.dtype == other.dtype

    def __repr__(self):
        return "Empty(dtype=%r)" % (self.dtype,)


class HardLink:
    """A hard link (what ``get(name, getlink=True)`` returns for one)."""

    def __repr__(self):
        return "<HardLink>"


class SoftLink:
    """A soft link to ``path``."""

    def __init__(self, path):
        self.path = str(path)

    def __repr__(self):
        return "<SoftLink to %r>" % self.path


class ExternalLink:
    """A link to ``path`` in the file ``filename``."""

    def __init__(self, filename, path):
        self.filename = str(filename)
        self.path = str(path)

    def __repr__(self):
        return "<ExternalLink to %r in file %r>" % (self.path, self.filename)


class UserDefinedLink:
    """A link of a user-defined class the library cannot follow."""

    def __repr__(self):
        return "<UserDefinedLink>"


def _maker(fobj):
    """The callback the extension uses to build Python values."""

    def make(kind, payload, desc=None):
        if kind == "plain":
            return np.frombuffer(payload, dtype=to_dtype(desc))[0].copy()
        if kind == "vlen":
            return np.frombuffer(payload, dtype=to_dtype(desc)).copy()
        if kind == "vlist":
            out = np.empty(len(payload), dtype=to_dtype(desc))
            for i, v in enumerate(payload):
                out[i] = v
            return out
        if kind == "olist":
            dt = to_dtype(desc)
            base, shape = dt.subdtype
            out = np.empty(len(payload), dtype=base)
            for i, v in enumerate(payload):
                out[i] = v
            return out.reshape(shape)
        if kind == "ref":
            return Reference(payload)
        if kind == "regref":
            return RegionReference(payload)
        raise ValueError(kind)

    return make


def _to_array(vals, dtype, shape):
    """numpy array from the extension's values ``("arr", uint8 array)`` (a
    fresh array the extension filled: viewed, not copied), ``("buf",
    bytearray)`` or ``("obj", list)`` (an array dtype's dimensions are
    appended to ``shape``, as numpy does)."""
    kind, v = vals
    if kind == "arr":
        if dtype.subdtype is not None:
            base, sub = dtype.subdtype
            return v.view(base).reshape(tuple(shape) + sub)
        return v.view(dtype).reshape(shape)
    if kind == "buf":
        if dtype.subdtype is not None:
            base, sub = dtype.subdtype
            return np.frombuffer(v, dtype=base).reshape(tuple(shape) + sub)
        return np.frombuffer(v, dtype=dtype).reshape(shape)
    if dtype.subdtype is not None:
        base, sub = dtype.subdtype
        out = np.empty((len(v),) + sub, dtype=base)
        for i, x in enumerate(v):
            out[i] = x
        return out.reshape(tuple(shape) + sub)
    out = np.empty(len(v), dtype=dtype)
    for i, x in enumerate(v):
        out[i] = x
    return out.reshape(shape)


def _join(parent, name):
    if name.startswith("/"):
        return posixpath.normpath(name) if name != "/" else "/"
    p = parent.rstrip("/") + "/" + name
    return posixpath.normpath(p)


class _Hops(threading.local):
    """External links followed on the way to the current object (libhdf5
    stops at 16, as here)."""

    n = 0


_HOPS = _Hops()


class _Bound:
    """An object of an open file: the file and the path it was opened by."""

    def __init__(self, file, path):
        self._file = file
        self._path = path

    @property
    def file(self):
        return self._file

    @property
    def name(self):
        return self._path

    @property
    def _n(self):
        return self._file._native_file()

    @property
    def attrs(self):
        return AttributeManager(self)

    @property
    def id(self):
        return self._n.address(self._path)

    def __eq__(self, other):
        return (isinstance(other, _Bound) and other._file._native_file() is self._n
                and other.id == self.id)

    def __hash__(self):
        return hash(self.id)

    @property
    def ref(self):
        return Reference(self.id)

    @property
    def parent(self):
        return self._file[posixpath.dirname(self._path) or "/"]

    def __reduce__(self):
        return (_reopen, (self._file._location(), self._path))


def _reopen(location, path):
    f = File(location)
    return f if path == "/" else f[path]


class Datatype(_Bound):
    """A committed (named) datatype."""

    @property
    def dtype(self):
        return to_dtype(self._n.datatype(self._path))

    def __repr__(self):
        return '<HDF5 named type "%s" (dtype %s)>' % (
            posixpath.basename(self._path), self.dtype.str)


class Group(_Bound):
    """A group: a mapping of names to groups, datasets and datatypes."""

    def _links(self):
        return self._n.links(self._path)

    def keys(self):
        return [l[0] for l in self._links()]

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self._links())

    def __contains__(self, name):
        """Whether the link exists (as h5py: a dangling soft link or an
        external link to a missing file counts; the groups on the way must
        exist)."""
        if isinstance(name, bytes):
            name = name.decode("utf-8", "surrogateescape")
        if not isinstance(name, str):
            return False
        path = _join(self._path, name)
        if path == "/":
            return True
        parent, base = posixpath.split(path)
        try:
            if self._n.kind(parent or "/") != "group":
                return False
            self._n.link(parent or "/", base)
            return True
        except (KeyError, OSError, ValueError, TypeError):
            return False

    def values(self):
        return [self[k] for k in self.keys()]

    def items(self):
        return [(k, self[k]) for k in self.keys()]

    def _open(self, path):
        n = self._n
        try:
            kind = n.kind(path)
        except (KeyError, OSError) as e:
            # a path through an external link: followed here, as h5py does
            ext = self._external(path)
            if ext is not None:
                return ext
            if not isinstance(e, KeyError):
                raise
            raise KeyError("Unable to synchronously open object (object '%s' doesn't exist)"
                           % posixpath.basename(path)) from None
        if kind == "group":
            return Group(self._file, path)
        if kind == "dataset":
            return Dataset(self._file, path)
        return Datatype(self._file, path)

    def _external(self, path):
        parent, base = posixpath.split(path)
        try:
            link = self._n.link(parent or "/", base)
        except (KeyError, TypeError, OSError):
            if parent in ("", "/"):
                return None
            try:
                pobj = self._open(parent)
            except KeyError:
                return None
            if isinstance(pobj, Group) and pobj.file is not self._file:
                return pobj[base]
            return None
        if link[1] == "soft":
            return self._open(_join(parent or "/", link[2]))
        if link[1] != "external":
            return None
        fname = link[2]
        here = self._file.filename
        if here and not os.path.isabs(fname):
            fname = os.path.join(os.path.dirname(here), fname)
        if _HOPS.n >= 16:
            raise KeyError("too many links (external link loop?) at %r" % path)
        _HOPS.n += 1
        try:
            return File(fname)[link[3]]
        except (OSError, KeyError, ValueError) as e:
            # as h5py: an external link that cannot be followed is a missing name
            raise KeyError("Unable to open external link %r in %r: %s"
                           % (link[3], link[2], e)) from None
        finally:
            _HOPS.n -= 1

    def __getitem__(self, name):
        if isinstance(name, Reference):
            if not name:
                raise ValueError("Invalid HDF5 object reference")
            path = self._n.path_of(name.address)
            if path is None:
                kind = self._n.kind_at(name.address)
                raise KeyError("object at %#x (%s) has no path" % (name.address, kind))
            return self._file[path]
        if not isinstance(name, (str, bytes)):
            raise TypeError("Accessing a group is done with bytes or str, not %s"
                            % type(name))
        if isinstance(name, bytes):
            name = name.decode("utf-8", "surrogateescape")
        return self._open(_join(self._path, name))

    def get(self, name, default=None, getclass=False, getlink=False):
        if getlink:
            parent, base = posixpath.split(_join(self._path, name))
            try:
                link = self._n.link(parent or "/", base)
            except KeyError:
                return default
            kind = link[1]
            if kind == "hard":
                return HardLink if getclass else HardLink()
            if kind == "soft":
                return SoftLink if getclass else SoftLink(link[2])
            if kind == "external":
                return ExternalLink if getclass else ExternalLink(link[2], link[3])
            return UserDefinedLink if getclass else UserDefinedLink()
        try:
            obj = self[name]
        except (KeyError, OSError):
            return default
        return type(obj) if getclass else obj

    def visit(self, func):
        for rel, _kind in self._n.visit(self._path):
            r = func(rel)
            if r is not None:
                return r
        return None

    def visititems(self, func):
        for rel, _kind in self._n.visit(self._path):
            r = func(rel, self[rel])
            if r is not None:
                return r
        return None

    def __repr__(self):
        return '<HDF5 group "%s" (%d members)>' % (self._path, len(self))

    # writing: in place when the file was opened with "r+" or "a"
    def create_group(self, name, *a, **k):
        from . import _edit
        return _edit.create_group(self, name)

    def create_dataset(self, name, *a, **k):
        if getattr(self._file, "_editor", None) is not None:
            from ._edit import UnsupportedError
            raise UnsupportedError("creating datasets in an edited file is not supported yet")
        raise ValueError("file is read-only (open with mode 'w' or 'x' to write)")

    def __delitem__(self, name):
        from . import _edit
        _edit.delete(self, name)

    def __setitem__(self, name, obj):
        from . import _edit
        _edit.link(self, name, obj)

    def move(self, source, dest):
        """Move the link ``source`` to ``dest`` (an edited file)."""
        from . import _edit
        _edit.move(self, source, dest)


def _filters(raw):
    """h5py's filter properties from ``(id, flags, cd_values)`` triples."""
    out = {}
    for fid, _flags, cd in raw:
        if fid == 1:
            out["gzip"] = cd[0] if cd else 4
        elif fid == 2:
            out["shuffle"] = ()
        elif fid == 3:
            out["fletcher32"] = ()
        elif fid == 4:
            mask = cd[0] if cd else 0
            out["szip"] = ("ec" if mask & 4 else "nn", cd[1] if len(cd) > 1 else 0)
        elif fid == 6:
            out["scaleoffset"] = cd[1] if len(cd) > 1 else None
        elif fid == 32000:
            out["lzf"] = None
        else:
            out[str(fid)] = tuple(cd)
    return out


class Dataset(_Bound):
    """A dataset: numpy-style reads with h5py's properties."""

    def __init__(self, file, path, _astype=None, _asstr=None):
        super().__init__(file, path)
        self._astype = _astype
        self._asstr = _asstr

    def _ds(self):
        return self._file._dataset(self._path)

    def refresh(self):
        """Re-read the dataset's shape and chunks from the file (a file
        opened with ``swmr=True`` that a writer appends to), as h5py's."""
        fresh, _changed = _native.dataset_refresh(self._ds())
        self._file._cache[("ds", self._path)] = fresh
        for k in ("info", "extent"):
            self._file._cache.pop((k, self._path), None)

    def _info(self):
        return self._file._info(self._path)

    @property
    def dtype(self):
        return to_dtype(self._info()["dtype"])

    @property
    def shape(self):
        i = self._info()
        return None if i["null"] else tuple(int(x) for x in i["shape"])

    @property
    def ndim(self):
        s = self.shape
        return 0 if s is None else len(s)

    @property
    def size(self):
        s = self.shape
        return None if s is None else int(np.prod(s, dtype=np.int64))

    @property
    def nbytes(self):
        s = self.size
        return 0 if s is None else s * self.dtype.itemsize

    @property
    def chunks(self):
        c = self._info()["chunks"]
        return None if c is None else tuple(int(x) for x in c)

    @property
    def maxshape(self):
        i = self._info()
        if i["null"]:
            return None
        if not i["maxshape"]:
            return tuple(int(x) for x in i["shape"])
        return tuple(None if m is None or m >= 2**64 - 1 else int(m) for m in i["maxshape"])

    @property
    def _filters(self):
        return _filters(self._info()["filters"])

    @property
    def compression(self):
        f = self._filters
        for x in ("gzip", "lzf", "szip"):
            if x in f:
                return x
        if any(k not in ("shuffle", "fletcher32", "scaleoffset") for k in f):
            return "unknown"
        return None

    @property
    def compression_opts(self):
        c = self.compression
        return self._filters.get(c)

    @property
    def shuffle(self):
        return "shuffle" in self._filters

    @property
    def fletcher32(self):
        return "fletcher32" in self._filters

    @property
    def scaleoffset(self):
        return self._filters.get("scaleoffset")

    @property
    def fillvalue(self):
        i = self._info()
        dt = self.dtype
        if i["fill"] is None:
            return np.zeros((1,), dtype=dt)[0]
        return _to_array(i["fill"], dt, (1,))[0]

    @property
    def is_virtual(self):
        return self._info()["layout"] == "virtual"

    def __len__(self):
        s = self.shape
        if not s:
            raise TypeError("Attempt to take len() of scalar dataset")
        return s[0]

    def len(self):
        return len(self)

    def __iter__(self):
        s = self.shape
        if not s:
            raise TypeError("Can't iterate over a scalar dataset")
        for i in range(s[0]):
            yield self[i]

    def astype(self, dtype):
        return Dataset(self._file, self._path, _astype=np.dtype(dtype), _asstr=self._asstr)

    def asstr(self, encoding=None, errors="strict"):
        return Dataset(self._file, self._path, _astype=self._astype,
                       _asstr=(encoding, errors))

    def fields(self, names):
        ds = self

        class _Fields:
            def __getitem__(self, key):
                return ds._read(key, names)

        return _Fields()

    def __setitem__(self, args, value):
        from . import _edit
        _edit.write(self, args, value)

    def resize(self, size, axis=None):
        """Change the extent of a chunked dataset of a file opened ``"r+"``
        or ``"a"`` (h5py's ``Dataset.resize``)."""
        from . import _edit
        _edit.resize(self, size, axis)

    def __getitem__(self, args):
        if not isinstance(args, tuple):
            args = (args,)
        names = [a for a in args if isinstance(a, str)]
        args = tuple(a for a in args if not isinstance(a, str))
        if len(names) == 1:
            names = names[0]
        elif not names:
            names = None
        return self._read(args, names)

    def _read(self, args, names):
        info = self._info()
        dt = to_dtype(info["dtype"])
        if info["null"]:
            if args in ((), (Ellipsis,)):
                return Empty(dt)
            raise ValueError("Empty datasets cannot be sliced")
        shape = tuple(int(x) for x in info["shape"])
        if args == () and shape == ():
            plan = resolve((), shape)
            scalar = True
        else:
            if args == ():
                args = (Ellipsis,)
            plan = resolve(args, shape)
            scalar = plan.scalar
        vals = self._ds().read(plan.start, plan.count, plan.step, self._file._make)
        arr = _to_array(vals, dt, plan.box_shape())
        arr = plan.apply(arr, dt.subdtype[1] if dt.subdtype is not None else ())
        if names is not None:
            if dt.names is None:
                raise ValueError("Field names only allowed for compound types")
            for n in [names] if isinstance(names, str) else names:
                if n not in dt.names:
                    raise ValueError("Field %s does not appear in this type." % n)
            if isinstance(names, str):
                arr = np.ascontiguousarray(arr[names])
            else:
                import numpy.lib.recfunctions as rfn
                arr = rfn.repack_fields(arr[list(names)])
        if self._asstr is not None:
            enc, err = self._asstr
            enc = enc or "utf-8"
            flat = [b.decode(enc, err) if isinstance(b, bytes) else b for b in arr.flat]
            arr = np.array(flat, dtype=object).reshape(arr.shape)
        elif self._astype is not None:
            arr = arr.astype(self._astype)
        if scalar:
            return arr[()]
        return arr

    def __array__(self, dtype=None, copy=None):
        arr = self[()]
        arr = np.asarray(arr)
        return arr if dtype is None else arr.astype(dtype)

    def read_direct(self, dest, source_sel=None, dest_sel=None):
        """Read ``self[source_sel]`` into ``dest[dest_sel]``."""
        data = self[() if source_sel is None else source_sel]
        if dest_sel is None:
            dest[...] = data
        else:
            dest[dest_sel] = data

    def iter_chunks(self, sel=None):
        """Slices of each chunk (clipped to ``sel``), in C order, as h5py."""
        chunks = self.chunks
        shape = self.shape
        if chunks is None:
            raise TypeError("Dataset is not chunked")
        if sel is None:
            box = [(0, s) for s in shape]
        else:
            plan = resolve(sel, shape)
            if any(s != 1 for s in plan.step):
                raise TypeError("iter_chunks needs a unit-stride selection")
            box = [(a, a + c) for a, c in zip(plan.start, plan.count)]
        if any(a >= b for a, b in box):
            return
        ranges = []
        for (a, b), c in zip(box, chunks):
            r = []
            k = (a // c) * c
            while k < b:
                r.append(slice(max(a, k), min(b, k + c), 1))
                k += c
            ranges.append(r)
        import itertools
        for t in itertools.product(*ranges):
            yield tuple(t)

    def __repr__(self):
        s = self.shape
        return '<HDF5 dataset "%s": shape %s, type "%s">' % (
            posixpath.basename(self._path), s, self.dtype.str)


class AttributeManager:
    """An object's attributes as a mapping of names to numpy values."""

    def __init__(self, parent):
        self._parent = parent

    def _names(self):
        return self._parent._n.attr_names(self._parent._path)

    def keys(self):
        return list(self._names())

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self._names())

    def __contains__(self, name):
        return name in self._names()

    def values(self):
        return [self[k] for k in self.keys()]

    def items(self):
        return [(k, self[k]) for k in self.keys()]

    def get(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            return default

    def get_id(self, name):
        raise NotImplementedError

    def __getitem__(self, name):
        p = self._parent
        if name not in self._names():
            raise KeyError("Unable to synchronously open attribute (can't locate attribute: '%s')"
                           % name)
        desc, shape, vals = p._n.attr(p._path, name, p._file._make)
        dt = to_dtype(desc)
        if shape is None:
            return Empty(dt)
        shape = tuple(int(x) for x in shape)
        arr = _to_array(vals, dt, shape)
        md = dt.metadata or {}
        if md.get("vlen") in (str, bytes):
            flat = [b.decode("utf-8", "surrogateescape") if isinstance(b, bytes) else b
                    for b in arr.flat]
            arr = np.array(flat, dtype=dt).reshape(shape) if flat else arr
        if arr.ndim == 0:
            return arr[()]
        return arr

    def __setitem__(self, name, value):
        from . import _edit
        _edit.set_attr(self._parent, name, value)

    def create(self, name, data=None, shape=None, dtype=None):
        """Create or replace attribute ``name`` (an edited file)."""
        from . import _edit
        if shape is not None:
            data = np.asarray(data, dtype=dtype).reshape(shape)
        _edit.set_attr(self._parent, name, data, dtype)

    def __delitem__(self, name):
        from . import _edit
        _edit.del_attr(self._parent, name)

    def __repr__(self):
        return "<Attributes of HDF5 object at %s>" % self._parent._path


class File(Group):
    """An HDF5 file: ``File(path | bytes)`` to read; ``File(path, "w" | "x")``
    to write (the file appears, whole, when closed)."""

    def __new__(cls, name, mode="r", **kwds):
        if mode in ("w", "x", "w-"):
            from ._write import WriteFile
            return WriteFile(name, mode, **kwds)
        return super().__new__(cls)

    def __init__(self, name, mode="r", **kwds):
        if mode not in ("r", "r+", "a"):
            raise ValueError("Invalid mode %r: purehdf reads ('r'), edits ('r+', 'a') or "
                             "writes new files ('w', 'x')" % (mode,))
        self._make = _maker(self)
        self._cache = {}
        self._editor = None
        self.mode = "r" if mode == "r" else "r+"
        if mode != "r":
            from . import _edit
            _edit.open_rw(self, name, mode)
        elif isinstance(name, (bytes, bytearray, memoryview)):
            self._bytes = bytes(name)
            self.filename = None
            self._native = _native.NativeFile(self._bytes)
        else:
            if hasattr(name, "read") and not isinstance(name, (str, os.PathLike)):
                self._bytes = name.read()
                self.filename = None
                self._native = _native.NativeFile(self._bytes)
            else:
                path = os.fspath(name)
                if isinstance(path, bytes):
                    path = os.fsdecode(path)
                self._bytes = None
                self.filename = path
                if _is_url(path):
                    self._native = _open_url(path)
                elif not os.path.exists(path):
                    raise FileNotFoundError(
                        "Unable to synchronously open file (unable to open file: name = '%s')"
                        % path)
                elif os.path.isdir(path):
                    raise IsADirectoryError("Unable to open %r: is a directory" % path)
                elif kwds.get("swmr"):
                    self._native = _native.open_swmr(path)
                else:
                    self._native = _native.NativeFile(path)
        self.swmr_mode = bool(kwds.get("swmr")) and mode == "r"
        super().__init__(self, "/")

    def _native_file(self):
        n = self._native
        if n is None:
            raise ValueError("Invalid file (the file is closed)")
        return n

    def _dataset(self, path):
        key = ("ds", path)
        d = self._cache.get(key)
        if d is None:
            d = self._native_file().dataset(path)
            self._cache[key] = d
        return d

    def _info(self, path):
        key = ("info", path)
        i = self._cache.get(key)
        if i is None:
            i = self._dataset(path).info(self._make)
            self._cache[key] = i
        return i

    def _location(self):
        return self.filename if self.filename is not None else self._bytes

    def close(self):
        if getattr(self, "_editor", None) is not None:
            from . import _edit
            _edit.close(self)
        self._native = None
        self._cache = {}

    @property
    def id(self):
        return self._native_file().address("/")

    def __bool__(self):
        return self._native is not None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __reduce__(self):
        return (_reopen, (self._location(), "/"))

    def __repr__(self):
        if self._native is None:
            return "<Closed HDF5 file>"
        return '<HDF5 file "%s" (mode %s)>' % (os.path.basename(self.filename or "<bytes>"),
                                               self.mode)


_SCHEMES = ("s3://", "gs://", "az://", "abfs://", "abfss://", "http://", "https://")


def _is_url(path):
    """Whether ``path`` names an object by URL rather than a local file."""
    return path.startswith(_SCHEMES)


def _open_url(url, medh5=False):
    """The extension handle of the object at ``url`` (ranged, cached reads)."""
    fn = getattr(_native, "medh5_open_url" if medh5 else "open_url", None)
    if fn is None:
        raise NotImplementedError("this purehdf wheel was built without URL support "
                                  "(the extension's `remote` feature)")
    return fn(url)


def _wrap_native(native, filename):
    """A read-only :class:`File` over an already open extension handle."""
    f = object.__new__(File)
    f._make = _maker(f)
    f._cache = {}
    f.mode = "r"
    f._bytes = None
    f.filename = filename
    f._native = native
    Group.__init__(f, f, "/")
    return f
