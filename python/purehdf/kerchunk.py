"""HDF5 as virtual Zarr: kerchunk references and VirtualiZarr manifests built
by purehdf (``h5 manifest``), with every HDF5 filter decodable through
``purehdf.codecs``.

- ``refs(path_or_url)``: kerchunk reference-filesystem dict (version 1, Zarr
  format 2), readable through fsspec's ``ReferenceFileSystem`` and zarr.
- ``open_zarr(refs)``: the zarr group those references describe, after
  ``check_source`` confirmed the file is the one indexed.
- ``check_source(refs)``: raise ``SourceChangedError`` when the file's size
  (ETag for objects, modification time for local files) changed since.
- ``Parser()``: a parser for ``virtualizarr.open_virtual_dataset``.
"""

import json
import os

from . import _native
from . import codecs as _codecs  # noqa: F401  (registers the codecs)


class SourceChangedError(OSError):
    """The indexed file changed after its manifest was built."""


def refs(path_or_url, codecs="standard"):
    """The kerchunk references (a dict) of a file or object URL.

    ``codecs="standard"`` names numcodecs' own codecs where numcodecs has the
    filter's format (zlib, shuffle, fletcher32, zstd, bz2, blosc) and
    ``purehdf_*`` codecs for the rest; ``"purehdf"`` names ours for all.
    Datasets that cannot be served are listed in ``refs["purehdf"]["refused"]``.
    """
    return json.loads(_native.manifest_json(os.fspath(path_or_url), "kerchunk", codecs))


def zarr_v3(path_or_url, codecs="standard"):
    """Zarr format 3 metadata and chunk manifests (``h5 manifest --format zarr-v3``)."""
    return json.loads(_native.manifest_json(os.fspath(path_or_url), "zarr-v3", codecs))


def _local_path(url):
    if url.startswith("file://"):
        return url[len("file://"):]
    return url if "://" not in url else None


def check_source(manifest):
    """Raise ``SourceChangedError`` when the indexed file is no longer the same
    (size, and modification time for local files or ETag for remote objects)."""
    info = manifest.get("purehdf")
    if not info:
        raise ValueError("not a purehdf manifest (no 'purehdf' key)")
    path = _local_path(info["source"])
    if path is not None:
        st = os.stat(path)
        now = {"size": st.st_size, "mtime_ns": str(st.st_mtime_ns)}
    else:
        import fsspec
        fs, p = fsspec.core.url_to_fs(info["source"])
        meta = fs.info(p)
        etag = meta.get("ETag") or meta.get("etag")
        now = {"size": meta.get("size"), "etag": etag.strip('"') if etag else None}
    for key, value in now.items():
        was = info.get(key)
        if key == "etag" and was:
            was = was.strip('"')
        if was is not None and value is not None and was != value:
            raise SourceChangedError(
                f"{info['source']} changed since it was indexed: {key} {was} -> {value}")
    return True


def mapper(manifest, check=True, **storage_options):
    """An fsspec mapper over the references (checked first unless ``check=False``)."""
    import fsspec
    if check:
        check_source(manifest)
    fs = fsspec.filesystem("reference", fo=manifest, **storage_options)
    return fs.get_mapper("")


def open_zarr(manifest, check=True, **storage_options):
    """The zarr group of the references (read-only)."""
    import zarr
    if check:
        check_source(manifest)
    import fsspec
    fs = fsspec.filesystem("reference", fo=manifest, asynchronous=True, **storage_options)
    from zarr.storage import FsspecStore
    store = FsspecStore(fs, read_only=True, path="")
    return zarr.open_group(store, mode="r", zarr_format=2)


class Parser:
    """A VirtualiZarr parser (``open_virtual_dataset(url, registry, parser=Parser())``):
    the file indexed by purehdf, every filter a codec. Arrays whose chunks
    must be inlined (compact data, vlen strings) and dtypes zarr 3 cannot
    hold are left out (listed in ``self.refused`` after a call)."""

    def __init__(self, group=None, drop_variables=(), codecs="standard"):
        self.group = group
        self.drop_variables = set(drop_variables or ())
        self.codecs = codecs
        self.refused = {}

    def __call__(self, url, registry):
        from virtualizarr.manifests import (ChunkManifest, ManifestArray, ManifestGroup,
                                            ManifestStore)
        from zarr.core.metadata import ArrayV3Metadata

        path = _local_path(url)
        m = zarr_v3(path if path is not None else url, self.codecs)
        self.refused = dict(m["purehdf"]["refused"])
        source_url = url if "://" in url else "file://" + os.path.abspath(url)
        tree = {"arrays": {}, "groups": {}, "attributes": {}}

        def node(path):
            n = tree
            for part in [p for p in path.split("/") if p]:
                n = n["groups"].setdefault(part, {"arrays": {}, "groups": {}, "attributes": {}})
            return n

        for gpath, meta in m["groups"].items():
            node(gpath)["attributes"] = meta.get("attributes", {})
        for apath, arr in m["arrays"].items():
            parent, _, name = apath.rpartition("/")
            if name in self.drop_variables:
                continue
            entries = {}
            inline = False
            for key, e in arr["manifest"].items():
                if "data" in e:
                    inline = True
                    break
                entries[key] = {"path": source_url, "offset": e["offset"], "length": e["length"]}
            if inline:
                self.refused[apath] = "inlined chunks (compact data or vlen strings)"
                continue
            meta = ArrayV3Metadata.from_dict(arr["metadata"])
            if entries:
                manifest = ChunkManifest(entries=entries)
            else:
                grid = tuple(-(-s // c) for s, c in zip(meta.shape, meta.chunk_grid.chunk_shape))
                manifest = ChunkManifest(entries={}, shape=grid)
            node(parent)["arrays"][name] = ManifestArray(metadata=meta, chunkmanifest=manifest)

        def build(n):
            return ManifestGroup(arrays=n["arrays"],
                                 groups={k: build(v) for k, v in n["groups"].items()},
                                 attributes=n["attributes"])

        root = tree
        if self.group:
            root = node(self.group)
        return ManifestStore(group=build(root), registry=registry)

