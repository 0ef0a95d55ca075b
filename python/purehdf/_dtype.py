"""numpy dtypes from the extension's type descriptors (as h5py shows HDF5
types), and descriptors from numpy dtypes (for writing)."""

import numpy as np


class Reference:
    """An object reference: the address of an object header in its file
    (``bool(ref)`` is False for a null reference). ``file[ref]`` opens it."""

    __slots__ = ("address",)

    def __init__(self, address=None):
        self.address = address

    def __bool__(self):
        return self.address is not None

    def __eq__(self, other):
        return isinstance(other, Reference) and other.address == self.address

    def __hash__(self):
        return hash(("ref", self.address))

    def __repr__(self):
        return "<HDF5 object reference%s>" % ("" if self else " (null)")


class RegionReference:
    """A dataset region reference, kept as its stored bytes."""

    __slots__ = ("raw",)

    def __init__(self, raw=b""):
        self.raw = bytes(raw)

    def __bool__(self):
        return any(self.raw)

    def __eq__(self, other):
        return isinstance(other, RegionReference) and other.raw == self.raw

    def __hash__(self):
        return hash(("regref", self.raw))

    def __repr__(self):
        return "<HDF5 region reference>"


def string_dtype(encoding="utf-8", length=None):
    """h5py's ``string_dtype``: variable-length (``length=None``) or fixed."""
    if length is None:
        return np.dtype("O", metadata={"vlen": str if encoding == "utf-8" else bytes})
    return np.dtype("S%d" % length, metadata={"h5py_encoding": encoding})


def vlen_dtype(basetype):
    """h5py's ``vlen_dtype``: a variable-length sequence of ``basetype``."""
    return np.dtype("O", metadata={"vlen": np.dtype(basetype)})


def enum_dtype(values_dict, basetype=np.uint8):
    """h5py's ``enum_dtype``: an integer type with named values."""
    return np.dtype(basetype, metadata={"enum": dict(values_dict)})


ref_dtype = np.dtype("O", metadata={"ref": Reference})
regionref_dtype = np.dtype("O", metadata={"ref": RegionReference})


def check_string_dtype(dt):
    """(encoding, length) of a string dtype, else None (as h5py)."""
    md = dt.metadata or {}
    vlen = md.get("vlen")
    if vlen is str:
        return ("utf-8", None)
    if vlen is bytes:
        return ("ascii", None)
    if dt.kind == "S":
        return (md.get("h5py_encoding", "ascii"), dt.itemsize)
    return None


def to_dtype(desc):
    """The numpy dtype of a descriptor; TypeError when numpy has none."""
    k = desc[0]
    if k == "num":
        return np.dtype(desc[1])
    if k == "bool":
        return np.dtype(bool)
    if k == "enum":
        return np.dtype(desc[1], metadata={"enum": dict(desc[2])})
    if k == "S":
        if desc[3]:
            return np.dtype("S%d" % desc[1], metadata={"h5py_encoding": "utf-8"})
        return np.dtype("S%d" % desc[1])
    if k == "vstr":
        return np.dtype("O", metadata={"vlen": str if desc[1] else bytes})
    if k == "vlen":
        return np.dtype("O", metadata={"vlen": to_dtype(desc[1])})
    if k == "ref":
        if desc[1] == "object":
            return ref_dtype
        if desc[1] == "region":
            return regionref_dtype
        raise TypeError("no numpy dtype for this reference type")
    if k == "opaque":
        return np.dtype("V%d" % desc[1])
    if k == "compound":
        names = [m[0] for m in desc[2]]
        return np.dtype({"names": names, "formats": [to_dtype(m[2]) for m in desc[2]],
                         "offsets": [m[1] for m in desc[2]], "itemsize": desc[1]})
    if k == "array":
        return np.dtype((to_dtype(desc[1]), tuple(desc[2])))
    raise TypeError("no numpy dtype for HDF5 type %s" % (desc[1],))


def from_dtype(dt):
    """The descriptor of a numpy dtype (for writing); TypeError when HDF5
    has no type for it here."""
    dt = np.dtype(dt)
    md = dt.metadata or {}
    if dt.names is not None:
        return ("compound", dt.itemsize,
                [(n, dt.fields[n][1], from_dtype(dt.fields[n][0])) for n in dt.names])
    if dt.subdtype is not None:
        base, shape = dt.subdtype
        return ("array", from_dtype(base), list(shape))
    if dt.kind == "O":
        vlen = md.get("vlen")
        if vlen is str or vlen is bytes:
            return ("vstr", vlen is str)
        raise TypeError("cannot write objects of dtype %r" % (dt,))
    if "enum" in md:
        return ("enum", dt.str, sorted(md["enum"].items(), key=lambda kv: kv[1]))
    if dt.kind == "b":
        return ("bool",)
    if dt.kind == "S":
        return ("S", dt.itemsize, 1, md.get("h5py_encoding") == "utf-8")
    if dt.kind == "U":
        return ("vstr", True)
    if dt.kind == "V":
        return ("opaque", dt.itemsize, "")
    if dt.kind in "iuf" or (dt.kind == "c" and dt.itemsize in (8, 16)):
        return ("num", dt.str)
    raise TypeError("no HDF5 type for numpy dtype %r" % (dt,))
