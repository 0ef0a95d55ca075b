"""The medh5 sample API, shaped as the reference ``medh5`` package's:
``open`` → :class:`Sample` with ``identity``, ``content_id``, ``profiles``,
``images[id].read(roi)``, ``verify()`` and ``compute_content_id()``, so a
read-only script written for the reference runs with only its import
changed (``from purehdf import medh5``)."""

import json
import os
from dataclasses import dataclass, field

import numpy as np

from . import _native
from ._hl import Dataset, _is_url, _open_url, _wrap_native
from ._medh5_ann import (Annotation, Grid, VoxelAnnotation, _roi_box, open_annotation,
                         read_grids)
from ._medh5_data import PatchDataset
from ._medh5_errors import (MEDH5FileError, MEDH5FileNotFoundError, MEDH5IntegrityError,
                            MEDH5IOError, MEDH5IsADirectoryError, MEDH5PermissionError,
                            MEDH5SchemaError, MEDH5ValidationError, MEDH5VersionError)
from ._medh5_views import AnnotationCollection, ImageCollection, Timeline, TimepointView
from ._medh5_inference import grid_patches
from ._medh5_sampling import Patch, PatchSampler
from ._medh5_write import LabelClass, LabelSet, SampleWriter, amend, create

MEDH5Error = _native.Medh5Error

PROFILES = ("core", "seg", "det", "cls", "reg", "curation", "multiscale", "training",
            "longitudinal", "clinical")
FORMAT_VERSION = "1.2"

# ``from purehdf.medh5.sampling import ...`` / ``.errors`` as the reference's
# submodules (this module is a file, so they are registered by name)
import sys as _sys  # noqa: E402
from . import _medh5_errors as errors  # noqa: E402
from . import _medh5_sampling as sampling  # noqa: E402
_sys.modules.setdefault(__name__ + ".sampling", sampling)
_sys.modules.setdefault(__name__ + ".errors", errors)

__all__ = ["Annotation", "AnnotationCollection", "Collection", "Grid", "Identity", "Image",
           "FORMAT_VERSION", "ImageCollection", "LabelClass", "LabelSet", "MEDH5Error", "MEDH5FileError",
           "MEDH5FileNotFoundError", "MEDH5IOError", "MEDH5IntegrityError",
           "MEDH5IsADirectoryError", "MEDH5PermissionError", "MEDH5SchemaError",
           "MEDH5ValidationError", "MEDH5VersionError", "PROFILES", "Patch", "PatchDataset",
           "PatchSampler", "Sample", "SampleWriter", "Timeline", "Timepoint", "TimepointView",
           "VerifyResult", "VoxelAnnotation", "amend", "create", "get_threads", "grid_patches", "open",
           "open_collection", "open_sample", "pack", "recompress", "set_threads"]


@dataclass(frozen=True)
class Identity:
    """The ``identity`` member of the sample document (who the sample is about)."""

    sample_id: str = None
    subject_id: str = None
    sex: str = None
    laterality: str = None
    bodypart: str = None
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, d):
        known = {k: d[k] for k in ("sample_id", "subject_id", "sex", "laterality", "bodypart")
                 if k in d}
        extra = {k: v for k, v in d.items() if k not in known}
        return cls(extra=extra, **known)

    def to_json(self):
        out = {k: getattr(self, k) for k in ("sample_id", "subject_id", "sex", "laterality",
                                             "bodypart") if getattr(self, k) is not None}
        out.update(self.extra)
        return out


@dataclass(frozen=True)
class Timepoint:
    """One entry of the document's ``timepoints``."""

    id: str
    index: int = 0
    label: str = None
    date: str = None
    days_from_baseline: float = None
    study_uid: str = None
    series_uids: dict = field(default_factory=dict)
    subject_age_years: float = None
    description: str = None

    @classmethod
    def from_json(cls, d):
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})

    def to_json(self):
        """The record as JSON (``id``, ``index`` and the fields that are set)."""
        out = {"id": self.id, "index": self.index}
        for k in ("label", "date", "days_from_baseline", "study_uid", "series_uids",
                  "subject_age_years", "description"):
            v = getattr(self, k)
            if v is not None and v != {}:
                out[k] = v
        return out


@dataclass(frozen=True)
class VerifyResult:
    """Outcome of a verification pass (the reference's fields)."""

    checked: tuple = ()
    mismatched: tuple = ()
    undigested: tuple = ()
    malformed: tuple = ()
    content_id_declared: str = None
    content_id_computed: str = None
    stale_index: tuple = ()
    unattested: tuple = ()
    unverifiable: tuple = ()
    _ok: bool = field(default=True, repr=False, compare=False)
    _content_id_ok: bool = field(default=None, repr=False, compare=False)

    @property
    def ok(self):
        return bool(self._ok)

    @property
    def content_id_ok(self):
        return self._content_id_ok

    def summary(self):
        return {"ok": self.ok, "content_id_ok": self.content_id_ok,
                "checked": len(self.checked), "mismatched": list(self.mismatched),
                "undigested": list(self.undigested), "malformed": list(self.malformed),
                "unattested": list(self.unattested), "stale_index": list(self.stale_index),
                "unverifiable": list(self.unverifiable)}


def _saturate(arr, dtype):
    """``arr`` as ``dtype``, saturating out-of-range values (NaN → 0) and
    truncating floats toward zero, as the reference's ``read(dtype=)``."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        a = np.asarray(arr)
        if a.dtype.kind == "f":
            a = np.nan_to_num(np.trunc(a), nan=0.0, posinf=info.max, neginf=info.min)
            return np.clip(a, info.min, info.max).astype(dtype)
        return np.clip(a, info.min, info.max).astype(dtype)
    return np.asarray(arr).astype(dtype)


class Image:
    """One stored image: geometry attributes and region reads."""

    def __init__(self, sample, image_id):
        self._sample = sample
        self.image_id = image_id
        self._ds = sample._file["images/" + image_id]
        if not isinstance(self._ds, Dataset):
            self._ds = self._ds["0"] if "0" in self._ds else self._ds

    @property
    def dataset(self):
        return self._ds

    @property
    def attrs(self):
        return {k: (v.item() if isinstance(v, np.generic) else v)
                for k, v in self._ds.attrs.items()}

    def _attr(self, name, default=None):
        v = self._ds.attrs.get(name, default)
        return v.item() if isinstance(v, np.generic) else v

    @property
    def grid_id(self):
        return str(self._attr("grid"))

    @property
    def modality(self):
        return str(self._attr("modality"))

    @property
    def value_type(self):
        return str(self._attr("value_type"))

    @property
    def digest(self):
        return self._attr("digest")

    @property
    def shape(self):
        return tuple(self._ds.shape)

    @property
    def dtype(self):
        return self._ds.dtype

    @property
    def nbytes(self):
        return int(self._ds.size) * self._ds.dtype.itemsize

    @property
    def chunks(self):
        return self._ds.chunks

    @property
    def rescale(self):
        return (float(self._attr("rescale_slope", 1.0)), float(self._attr("rescale_intercept", 0.0)))

    @property
    def is_rescaled(self):
        return "rescale_slope" in self._ds.attrs or "rescale_intercept" in self._ds.attrs

    def read(self, roi=None, *, physical=False, dtype=None):
        """The image, or the region ``roi`` (every axis, or the spatial axes
        only; ``...`` as in numpy)."""
        if roi is None or roi is Ellipsis:
            key = ()
        else:
            key = tuple(roi) if isinstance(roi, (tuple, list)) else (roi,)
            if Ellipsis not in key and len(key) < len(self.shape):
                key = (Ellipsis,) + key
        arr = self._ds[key] if key else self._ds[()]
        arr = np.asarray(arr)
        if physical and self.is_rescaled:
            slope, icpt = self.rescale
            arr = arr.astype(np.float32 if dtype is None else dtype) * slope + icpt
            return arr if dtype is None else _saturate(arr, dtype)
        if dtype is not None:
            return _saturate(arr, dtype)
        return arr

    @property
    def grid(self):
        return self._sample.grids[self.grid_id]

    @property
    def timepoint(self):
        return self.grid.timepoint

    @property
    def channel_names(self):
        c = self._attr("channel_names")
        return None if c is None else tuple(str(x) for x in np.atleast_1d(c))

    @property
    def value_units(self):
        v = self._attr("value_units")
        return None if v is None else str(v)

    @property
    def valid_mask(self):
        v = self._attr("valid_mask")
        return None if v is None else str(v)

    @property
    def prov(self):
        v = self._attr("prov")
        return None if v is None else str(v)

    @property
    def window(self):
        """``(centres, widths)`` of the display window presets, or ``None``."""
        c, w = self._attr("window_center"), self._attr("window_width")
        if c is None or w is None:
            return None
        return (tuple(float(x) for x in np.atleast_1d(c)),
                tuple(float(x) for x in np.atleast_1d(w)))

    def __repr__(self):
        return "Image(%r, shape=%s, dtype=%s)" % (self.image_id, self.shape, self.dtype)


class Sample:
    """An open medh5 sample (read-only)."""

    def __init__(self, path, _native_handle=None, _reduce=None):
        self.path = os.fspath(path)
        if _native_handle is not None:
            self._native = _native_handle
        elif _is_url(self.path):
            self._native = _open_url(self.path, medh5=True)
        else:
            self._native = _native.medh5_open(self.path)
        self._file = _wrap_native(self._native, self.path)
        self._reduce = _reduce
        self._document = None
        self._images = None
        self._grids = None
        self._annotations = None
        self._voxel = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Release the file. Safe to call twice."""
        if self._file is not None:
            self._file.close()
        self._file = None

    @property
    def is_open(self):
        return self._file is not None

    def __reduce__(self):
        return self._reduce or (Sample, (self.path,))

    @property
    def root(self):
        return self._file

    @property
    def document(self):
        if self._document is None:
            raw = self._file["meta"][()]
            if isinstance(raw, bytes):
                raw = raw.decode("utf-8")
            self._document = json.loads(raw)
        return self._document

    @property
    def identity(self):
        return Identity.from_json(self.document.get("identity", {}))

    @property
    def version(self):
        return str(self._file.attrs["medh5_version"])

    @property
    def kind(self):
        return str(self._file.attrs.get("medh5_kind", "sample"))

    @property
    def profiles(self):
        p = self._file.attrs.get("medh5_profiles")
        if p is None:
            return frozenset()
        if isinstance(p, (str, bytes)):
            p = [p]
        return frozenset(x.decode() if isinstance(x, bytes) else str(x) for x in p)

    @property
    def content_id(self):
        c = self._file.attrs.get("content_id")
        return None if c is None else str(c)

    @property
    def images(self):
        if self._images is None:
            ids = list(self._file["images"].keys()) if "images" in self._file else []
            self._images = ImageCollection((i, Image(self, i)) for i in ids)
        return self._images

    @property
    def grids(self):
        """The sample's grids by id, with the implicit timepoint resolved."""
        if self._grids is None:
            self._grids = read_grids(self)
        return self._grids

    @property
    def annotations(self):
        """The sample's annotations by id (voxel ones read ``dense``,
        ``labelmap``, ``voxel_counts``, ``class_bboxes``)."""
        if self._annotations is None:
            ids = sorted(self._file["annotations"].keys()) if "annotations" in self._file else []
            self._annotations = AnnotationCollection((i, open_annotation(self, i)) for i in ids)
        return self._annotations

    @property
    def fresh_indices(self):
        """Sampling-index entries whose ``source_digest`` still matches their
        annotation; a stale entry is ignored by the sampler, not trusted."""
        return frozenset(n for n, fresh in _native.medh5_index_entries(self._native) if fresh)

    def _voxel_annotations(self):
        if self._voxel is None:
            self._voxel = _native.medh5_voxel_annotations(self._native)
        return self._voxel

    def _digested(self):
        out = []

        def visit(name, obj):
            if isinstance(obj, Dataset) and name != "meta" and not name.startswith("index/"):
                if "digest" in obj.attrs:
                    out.append(name)
        self._file.visititems(visit)
        return out

    def verify(self, partial=None):
        """Recompute the digests (all, or the ``partial`` dataset paths) and
        the ``content_id``."""
        part = None if partial is None else [str(p) for p in partial]
        r = _native.medh5_verify(self._native, self.path, part)
        skip = set(r["malformed"]) | set(r["unverifiable"])
        checked = [p for p in self._digested() if p not in skip]
        if part is not None:
            want = {p.strip("/") for p in part}
            checked = [p for p in checked if p in want]
        computed = None
        if part is None:
            try:
                computed = self.compute_content_id()
            except MEDH5Error:
                computed = None
        srt = lambda xs: tuple(sorted(xs))  # noqa: E731
        return VerifyResult(checked=srt(checked), mismatched=srt(r["mismatched"]),
                            undigested=srt(r["undigested"]), malformed=srt(r["malformed"]),
                            content_id_declared=self.content_id,
                            content_id_computed=computed,
                            stale_index=srt(r["stale_index"]),
                            unattested=srt(r["unattested"]),
                            unverifiable=srt(r["unverifiable"]),
                            _ok=r["ok"], _content_id_ok=r["content_id_ok"])

    @property
    def label_set(self):
        """The document's label set, or ``None``."""
        d = self.document.get("label_set")
        return None if d is None else LabelSet.from_json(d)

    @property
    def timepoints(self):
        """The timepoints in chronological order (``.ids`` their ids)."""
        tps = sorted(self.document.get("timepoints") or [], key=lambda t: t.get("index", 0))
        return Timeline(Timepoint.from_json(t) for t in tps)

    @property
    def is_longitudinal(self):
        return len(self.timepoints) >= 2

    def at(self, timepoint):
        """A timepoint-scoped view of the whole sample (by id or position)."""
        return TimepointView(self, self.timepoints[timepoint])

    def valid_region(self, image_id, roi=None):
        """Where an image holds data (§4.4): its ``valid_mask``, or everywhere."""
        im = self.images[image_id]
        m = im.valid_mask
        if m is not None:
            return self.annotations[m].dense(roi=roi)[0]
        spatial = im.grid.spatial_shape
        shape = _roi_box(roi, spatial)[1] or list(spatial)
        return np.ones(tuple(shape), dtype=bool)

    def ignore_region(self, ann_id, roi=None):
        """The §7.7 ignore region of a voxel annotation: in band
        (``labelmap``, ``layers``) and/or the sibling mask its header's
        ``ignore_mask`` names; all ``False`` where none is declared."""
        a = self.annotations[ann_id]
        spatial = a.spatial_shape
        shape = _roi_box(roi, spatial)[1] or list(spatial)
        out = np.zeros(tuple(shape), dtype=bool)
        if a.kind in ("labelmap", "layers"):
            vol, _ = a._decode(roi, [])
            out |= vol == a.ignore_id
        m = a._attrs.get("ignore_mask")
        if m is not None:
            out |= self.annotations[str(m)].dense(roi=roi)[0]
        return out

    def compute_content_id(self):
        """The ``content_id`` recomputed from the stored digests."""
        return str(_native.medh5_compute_content_id(self._native))

    def __repr__(self):
        return "Sample(%r)" % self.path


def open(path, mode="r"):  # noqa: A001
    """Open a ``.medh5`` sample, read-only."""
    if mode != "r":
        raise MEDH5Error("open() is read-only, not %r" % (mode,))
    return Sample(path)


open_sample = open


class Collection:
    """An open ``.medh5c`` collection: a read-only mapping of sample key to
    :class:`Sample` (members read from the shard's own file)."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._native = _native.medh5_open(self.path)
        self._keys = [k for k, _ in _native.medh5_members(self._native)]
        self._samples = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Close the shard and every member read from it."""
        for s in self._samples.values():
            s.close()
        self._samples.clear()
        self._native = None

    def __iter__(self):
        return iter(self._keys)

    def __len__(self):
        return len(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        return list(self._keys)

    def __getitem__(self, key):
        if self._native is None:
            raise MEDH5Error("the collection is closed")
        s = self._samples.get(key)
        if s is None or not s.is_open:
            h = _native.medh5_member(self._native, key)
            s = self._samples[key] = Sample("%s::%s" % (self.path, key), h,
                                            (_open_member, (self.path, key)))
        return s

    def get(self, key, default=None):
        return self[key] if key in self._keys else default

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def values(self):
        return [self[k] for k in self._keys]

    def subject_ids(self):
        return {k: self[k].identity.subject_id for k in self._keys}

    def __repr__(self):
        return "Collection(%r, %d samples)" % (self.path, len(self._keys))


def _open_member(path, key):
    return Collection(path)[key]


def open_collection(path):
    """Open a ``.medh5c`` collection, read-only."""
    return Collection(path)


def pack(sources, out, *, keys=None):
    """Copy sample files into one collection shard; chunks move as raw bytes,
    every ``content_id`` unchanged. Returns the output path."""
    import pathlib
    _native.medh5_pack([os.fspath(s) for s in sources], os.fspath(out),
                       [] if keys is None else [str(k) for k in keys])
    return pathlib.Path(out)


def recompress(path, profile, *, out=None, rechunk=False):
    """Rewrite ``path`` (or write ``out``) with every bulk dataset re-encoded
    under ``profile``; the result as ``medh5 recompress --json`` reports it."""
    return json.loads(_native.medh5_recompress(os.fspath(path), str(profile),
                                               None if out is None else os.fspath(out),
                                               bool(rechunk)))


_THREADS = None


def set_threads(n):
    """Let one call use up to ``n`` threads (``0`` is refused, as the
    reference refuses it)."""
    n = int(n)
    if n < 1:
        raise ValueError("set_threads: n must be a positive integer, not %d" % n)
    global _THREADS
    _native.set_threads(n)
    _THREADS = n


def get_threads():
    """How many threads one call may use: what :func:`set_threads` set, else
    ``MEDH5_THREADS``, else every core (purehdf's default; the reference's
    is 1)."""
    if _THREADS is not None:
        return _THREADS
    env = os.environ.get("MEDH5_THREADS")
    if env is not None:
        if not env.strip().isdigit() or int(env) < 1:
            raise ValueError("MEDH5_THREADS=%r is not a positive integer" % env)
        return int(env)
    return os.cpu_count() or 1
