"""Every HDF5 filter as a numcodecs codec, decoded (and where cheap encoded)
by purehdf's Rust codecs: registered on ``import purehdf``.

Ids are ``purehdf_<name>`` (``purehdf_blosc2``, ``purehdf_bitshuffle``,
``purehdf_lz4`` for HDF5's LZ4 framing, ``purehdf_lzf``, ``purehdf_szip``,
``purehdf_nbit``, ``purehdf_scaleoffset``, ``purehdf_fletcher32`` (verifies,
then trims the checksum), ``purehdf_deflate``, ``purehdf_shuffle``,
``purehdf_zstd``, ``purehdf_bzip2``, ``purehdf_blosc``). Each takes the
filter's stored ``cd_values``, the ``element_size`` and the decoded
``chunk_bytes`` of a chunk, as ``h5 manifest`` writes them. Where zarr 3 is
installed they are also registered as zarr 3 codecs named
``numcodecs.purehdf_<name>``.
"""

from . import _native

FILTERS = {
    "deflate": 1, "shuffle": 2, "fletcher32": 3, "szip": 4, "nbit": 5, "scaleoffset": 6,
    "bzip2": 307, "lzf": 32000, "blosc": 32001, "lz4": 32004, "bitshuffle": 32008,
    "zstd": 32015, "blosc2": 32026,
}

CODECS = {}

try:
    import numpy as _np
    from numcodecs.abc import Codec as _Codec
    from numcodecs.compat import ensure_contiguous_ndarray, ndarray_copy
    from numcodecs.registry import register_codec as _register_codec
except ImportError:  # numcodecs absent: nothing to register
    _Codec = None


def _bytes_of(buf):
    if isinstance(buf, bytes):
        return buf
    arr = ensure_contiguous_ndarray(buf)
    return arr.view(_np.uint8).reshape(-1).tobytes() if arr.size else b""


if _Codec is not None:
    class HDF5Filter(_Codec):
        """One HDF5 filter stage (``filter_id`` with its ``cd_values``) as a codec."""

        codec_id = None
        filter_id = None

        def __init__(self, cd_values=(), element_size=1, chunk_bytes=0, filter_id=None,
                     sign_extend=None, big_endian=False):
            if filter_id is not None and self.filter_id is not None \
                    and int(filter_id) != self.filter_id:
                raise ValueError(f"{self.codec_id} is filter {self.filter_id}, not {filter_id}")
            self.cd_values = [int(v) for v in cd_values]
            self.element_size = int(element_size)
            self.chunk_bytes = int(chunk_bytes)
            # n-bit over signed integers of `sign_extend` significant bits
            self.sign_extend = None if sign_extend is None else int(sign_extend)
            self.big_endian = bool(big_endian)

        def get_config(self):
            c = {"id": self.codec_id, "filter_id": self.filter_id,
                 "cd_values": list(self.cd_values), "element_size": self.element_size,
                 "chunk_bytes": self.chunk_bytes}
            if self.sign_extend is not None:
                c.update(sign_extend=self.sign_extend, big_endian=self.big_endian)
            return c

        def decode(self, buf, out=None):
            n = self.chunk_bytes
            if out is not None and not n:
                n = ensure_contiguous_ndarray(out).nbytes
            dec = _native.filter_decode(self.filter_id, self.cd_values, self.element_size,
                                        n, _bytes_of(buf))
            if self.sign_extend is not None and self.element_size in (1, 2, 4, 8):
                dt = _np.dtype("%si%d" % (">" if self.big_endian else "<", self.element_size))
                a = _np.frombuffer(dec, dtype=dt).astype(dt.newbyteorder("="))
                shift = self.element_size * 8 - self.sign_extend
                dec = ((a << shift) >> shift).astype(dt).tobytes()
            if out is not None:
                return ndarray_copy(_np.frombuffer(dec, dtype=_np.uint8), out)
            return dec

        def encode(self, buf):
            return _native.filter_encode(self.filter_id, self.cd_values, self.element_size,
                                         _bytes_of(buf))

        def __repr__(self):
            return (f"{type(self).__name__}(cd_values={self.cd_values}, "
                    f"element_size={self.element_size}, chunk_bytes={self.chunk_bytes})")

    for _name, _fid in FILTERS.items():
        _cls = type(f"PurehdfCodec_{_name}", (HDF5Filter,),
                    {"codec_id": f"purehdf_{_name}", "filter_id": _fid,
                     "__doc__": f"HDF5 filter {_fid} ({_name}) through purehdf's codec."})
        CODECS[_name] = _cls
        _register_codec(_cls)


def _register_zarr3():
    """Register each codec as a zarr 3 bytes-to-bytes codec (``numcodecs.<id>``)."""
    try:
        from zarr.codecs.numcodecs._codecs import _NumcodecsBytesBytesCodec
        from zarr.registry import register_codec
    except ImportError:
        return
    for name in CODECS:
        cls = type(f"Zarr3Purehdf_{name}", (_NumcodecsBytesBytesCodec,), {},
                   codec_name=f"purehdf_{name}")
        register_codec(f"numcodecs.purehdf_{name}", cls)


if CODECS:
    try:
        _register_zarr3()
    except Exception:  # noqa: BLE001  (zarr internals changed: v2 metadata still works)
        pass


def get(filter_id, cd_values=(), element_size=1, chunk_bytes=0):
    """The codec of HDF5 filter ``filter_id``."""
    for name, fid in FILTERS.items():
        if fid == int(filter_id):
            return CODECS[name](cd_values, element_size, chunk_bytes)
    raise ValueError(f"no codec for HDF5 filter {filter_id}")
