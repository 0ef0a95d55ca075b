"""purehdf: HDF5 (and the medh5 container) in pure Rust, shaped like h5py.

``purehdf.File(path | bytes)`` reads every file libhdf5 writes;
``purehdf.File(path, "w")`` writes new files libhdf5 reads. No libhdf5, no
C libraries. ``purehdf.medh5`` is the medh5 sample API.
"""

import os as _os

from . import _native
from ._dtype import (Reference, RegionReference, check_string_dtype, enum_dtype,
                     ref_dtype, regionref_dtype, string_dtype, vlen_dtype)
from . import codecs, kerchunk  # numcodecs codecs of every HDF5 filter, virtual Zarr
from ._hl import (AttributeManager, Dataset, Datatype, Empty, ExternalLink, File, Group,
                  HardLink, SoftLink, UserDefinedLink)

CorruptFileError = _native.CorruptFileError
UnsupportedError = _native.UnsupportedError
LimitError = _native.LimitError

__version__ = "0.1.0"


def _after_fork_in_child():
    # The parent's decoding threads do not exist in a forked child: decode
    # inline there (data loaders and process pools fork).
    try:
        _native.set_threads(1)
    except Exception:  # noqa: BLE001
        pass


if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_after_fork_in_child)


def set_threads(n):
    """Use ``n`` threads for decoding and encoding (0: the default, from
    ``MEDH5_THREADS`` / ``RAYON_NUM_THREADS``, then every core). Set it before
    the first read."""
    _native.set_threads(int(n))


def __getattr__(name):
    if name == "medh5":
        import importlib
        return importlib.import_module(".medh5", __name__)
    raise AttributeError(name)


__all__ = [
    "AttributeManager", "CorruptFileError", "Dataset", "Datatype", "Empty", "ExternalLink",
    "File", "Group", "HardLink", "LimitError", "Reference", "RegionReference", "SoftLink",
    "UnsupportedError", "UserDefinedLink", "check_string_dtype", "enum_dtype", "ref_dtype",
    "regionref_dtype", "set_threads", "string_dtype", "vlen_dtype",
]
