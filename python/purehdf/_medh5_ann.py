"""Grids and annotations of a medh5 sample, shaped as the reference
``medh5`` package's: ``Sample.grids[id]`` and ``annotations[id]`` with
``dense``, ``labelmap``, ``voxel_counts`` and ``class_bboxes`` computed by the
library (``purehdf_medh5``: label decoding, the sampling index's per-class
statistics)."""

import warnings

import numpy as np

from . import _native

MEDH5Error = _native.Medh5Error

VOXEL_KINDS = ("labelmap", "layers", "bitmask", "instances", "probmap", "mask")


def _plain(v):
    """An attribute value as plain Python (tuples for arrays, str for bytes)."""
    if isinstance(v, bytes):
        return v.decode("utf-8")
    if isinstance(v, np.ndarray):
        return tuple(_plain(x) for x in v.tolist()) if v.ndim == 1 else v
    if isinstance(v, np.generic):
        return v.item()
    return v


class Grid:
    """A grid (``grids/<id>``): its shape, spacing, origin and direction."""

    def __init__(self, grid_id, attrs, timepoint=None):
        self.grid_id = grid_id
        self._attrs = {k: _plain(v) for k, v in attrs.items()}
        tp = self._attrs.get("timepoint")
        self.timepoint = tp if tp is not None else timepoint

    def attrs(self):
        return dict(self._attrs)

    @property
    def shape(self):
        return tuple(int(x) for x in self._attrs["shape"])

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def axis_kinds(self):
        return tuple(self._attrs.get("axis_kinds", ("spatial",) * self.ndim))

    @property
    def axis_names(self):
        names = self._attrs.get("axis_names")
        return None if names is None else tuple(names)

    @property
    def spatial_axes(self):
        return tuple(i for i, k in enumerate(self.axis_kinds) if k == "spatial")

    @property
    def spatial_shape(self):
        return tuple(self.shape[i] for i in self.spatial_axes)

    @property
    def n_spatial(self):
        return len(self.spatial_axes)

    @property
    def n_voxels(self):
        return int(np.prod(self.spatial_shape, dtype=np.int64))

    @property
    def spacing(self):
        return tuple(float(x) for x in self._attrs["spacing"])

    @property
    def origin(self):
        o = self._attrs.get("origin")
        return (0.0,) * self.n_spatial if o is None else tuple(float(x) for x in o)

    @property
    def direction(self):
        d = self._attrs.get("direction")
        return np.eye(self.n_spatial) if d is None else np.asarray(d, dtype=np.float64)

    @property
    def coord_system(self):
        return self._attrs.get("coord_system")

    @property
    def units(self):
        return self._attrs.get("units")

    @property
    def frame_uid(self):
        return self._attrs.get("frame_uid")

    @property
    def affine(self):
        n = self.n_spatial
        a = np.eye(n + 1)
        a[:n, :n] = self.direction * np.asarray(self.spacing)[None, :]
        a[:n, n] = self.origin
        return a

    @property
    def patch_hint(self):
        h = self._attrs.get("patch_hint")
        return None if h is None else tuple(int(x) for x in np.atleast_1d(h))

    @property
    def chunk_hint(self):
        h = self._attrs.get("chunk_hint")
        return None if h is None else tuple(int(x) for x in np.atleast_1d(h))

    def index_to_world(self, indices):
        """Voxel indices (``(..., S)``) to world coordinates."""
        i = np.asarray(indices, dtype=np.float64)
        m = self.direction * np.asarray(self.spacing)[None, :]
        return i @ m.T + np.asarray(self.origin)

    def world_to_index(self, points):
        """World coordinates (``(..., S)``) to continuous voxel indices."""
        p = np.asarray(points, dtype=np.float64) - np.asarray(self.origin)
        m = self.direction * np.asarray(self.spacing)[None, :]
        return np.linalg.solve(m, p.reshape(-1, p.shape[-1]).T).T.reshape(p.shape)

    @property
    def physical_size(self):
        return tuple(n * s for n, s in zip(self.spatial_shape, self.spacing))

    def __repr__(self):
        return "Grid(%r, shape=%s, spacing=%s)" % (self.grid_id, self.shape, self.spacing)


def _roi_box(roi, spatial):
    """``(start, count)`` of a tuple of step-1 slices over the spatial axes
    (negative bounds count from the end; bounds clipped), or ``(None, None)``."""
    if roi is None:
        return None, None
    roi = tuple(roi)
    if len(roi) != len(spatial):
        raise ValueError("roi has %d slices for %d spatial axes" % (len(roi), len(spatial)))
    start, count = [], []
    for s, n in zip(roi, spatial):
        if not isinstance(s, slice):
            raise ValueError("roi takes slices, not %r" % (s,))
        if s.step not in (None, 1):
            raise ValueError("roi slices take no step (got %r)" % (s.step,))
        a, b, _ = s.indices(n)
        b = max(a, b)
        start.append(a)
        count.append(b - a)
    return start, count


class Annotation:
    """An annotation (``annotations/<id>``): its header attributes."""

    def __init__(self, sample, ann_id):
        self._sample = sample
        self.id = ann_id
        self._group = sample._file["annotations/" + ann_id]
        self._attrs = {k: _plain(v) for k, v in self._group.attrs.items()}

    @property
    def ann_id(self):
        return self.id

    @property
    def kind(self):
        return str(self._attrs.get("kind"))

    @property
    def closure(self):
        return str(self._attrs.get("closure", "explicit"))

    @property
    def prov(self):
        p = self._attrs.get("prov")
        return None if p is None else str(p)

    @property
    def label_set(self):
        return self._sample.label_set

    def _label_classes(self, ids):
        ls = self.label_set
        return tuple(c for c in (ls.get(i) if ls is not None else None for i in ids)
                     if c is not None)

    @property
    def classes(self):
        """The label-set classes of ``class_ids``."""
        return self._label_classes(self.class_ids)

    @property
    def annotated_classes(self):
        return self._label_classes(self.annotated_class_ids)

    def class_key(self, class_id):
        """The label-set key of ``class_id``."""
        ls = self.label_set
        c = None if ls is None else ls.get(int(class_id))
        if c is None:
            raise KeyError(class_id)
        return c.key

    @property
    def has_ignore_region(self):
        """Whether an ignore region is declared (in band or a sibling mask)."""
        if self._attrs.get("ignore_mask") is not None:
            return True
        if self.kind not in ("labelmap", "layers"):
            return False
        return bool(self._sample.ignore_region(self.id).any())

    @property
    def class_ids(self):
        c = self._attrs.get("class_ids", ())
        return tuple(int(x) for x in (c if isinstance(c, tuple) else (c,)))

    @property
    def annotated_class_ids(self):
        c = self._attrs.get("annotated_class_ids")
        if c is None:
            return self.class_ids
        return tuple(int(x) for x in (c if isinstance(c, tuple) else (c,)))

    @property
    def ignore_id(self):
        return int(self._attrs.get("ignore_id", 65535))

    @property
    def grid_id(self):
        g = self._attrs.get("grid")
        return None if g is None else str(g)

    @property
    def grid(self):
        return self._sample.grids[self.grid_id]

    @property
    def task(self):
        return self._attrs.get("task")

    @property
    def timepoints(self):
        """The timepoints this annotation covers: declared, or its grid's."""
        from ._medh5_views import annotation_timepoints
        return annotation_timepoints(self)

    def resolve_class(self, key):
        """A class id from an id or a label-set key."""
        if isinstance(key, (int, np.integer)):
            return int(key)
        ls = (self._sample.document.get("label_set") or {}).get("classes", ())
        for c in ls:
            if c.get("key") == key:
                return int(c["id"])
        raise MEDH5Error("annotation %r has no class %r" % (self.id, key))

    def resolve_classes(self, keys):
        if keys is None:
            return self.class_ids
        return tuple(self.resolve_class(k) for k in keys)

    def __repr__(self):
        return "Annotation(%r, kind=%r)" % (self.id, self.kind)


class VoxelAnnotation(Annotation):
    """A voxel annotation: the uniform read contract of the voxel encodings."""

    @property
    def spatial_shape(self):
        # the library's answer (its grid's spatial axes), without reading the
        # sample document; the grid's for an annotation the library skips
        for ann_id, _kind, _cids, spatial in self._sample._voxel_annotations():
            if ann_id == self.id:
                return tuple(int(n) for n in spatial)
        return tuple(self.grid.spatial_shape)

    def _decode(self, roi, priority):
        start, count = _roi_box(roi, self.spatial_shape)
        buf, shape, lost = _native.medh5_labelmap(self._sample._native, self.id, start, count,
                                                   [int(p) for p in priority])
        return np.frombuffer(buf, dtype="<u2").reshape(shape), lost

    def labelmap(self, roi=None, priority=None, *, dtype=np.uint16):
        """One integer volume; ``priority`` is ordered highest precedence
        first, classes it omits are painted first; the ignore region reads as
        ``ignore_id``."""
        dtype = np.dtype(dtype)
        if dtype == np.bool_ or dtype.kind not in "iu":
            raise ValueError("labelmap() needs an integer dtype, not %s" % dtype)
        order = [] if priority is None else list(self.resolve_classes(priority))
        vol, lost = self._decode(roi, order)
        if lost and priority is None:
            warnings.warn("annotation %r: %d voxels hold more than one class; the later "
                          "class in class_ids order was kept (pass priority=)" % (self.id, lost),
                          stacklevel=2)
        if dtype != np.uint16:
            hi = int(vol.max()) if vol.size else 0
            if hi > np.iinfo(dtype).max:
                raise ValueError("label %d does not fit in %s" % (hi, dtype))
            vol = vol.astype(dtype)
        return np.array(vol)

    def dense(self, classes=None, roi=None):
        """``(C, *roi)`` boolean planes, one per class."""
        ids = self.resolve_classes(classes)
        shape = _roi_box(roi, self.spatial_shape)[1] or list(self.spatial_shape)
        if self.kind == "mask":
            start, count = _roi_box(roi, self.spatial_shape)
            data = self._group["data"]
            key = () if start is None else tuple(slice(a, a + c) for a, c in zip(start, count))
            return np.asarray(data[key] if key else data[()], dtype=bool)[None]
        out = np.zeros((len(ids),) + tuple(shape), dtype=bool)
        if not ids:
            return out
        if self.kind == "labelmap":
            vol, _ = self._decode(roi, [])
            for i, c in enumerate(ids):
                out[i] = vol == c
            return out
        if self.kind in ("layers", "bitmask"):
            # class membership straight from the stored planes (the ignore
            # region, in band or in a sibling mask, is no class's)
            start, count = _roi_box(roi, self.spatial_shape)
            box = () if start is None else tuple(slice(a, a + c) for a, c in zip(start, count))
            data = self._group["data"][(slice(None),) + box]
            if self.kind == "layers":
                rows = np.asarray(self._group["layer_class_ids"][()]).reshape(data.shape[0], -1)
                for i, c in enumerate(ids):
                    for layer in np.nonzero((rows == c).any(axis=1))[0]:
                        out[i] |= data[layer] == c
            else:
                bits = [int(b) for b in np.asarray(self._group["bit_class_ids"][()]).reshape(-1)]
                for i, c in enumerate(ids):
                    if c in bits:
                        pos = bits.index(c)
                        plane = data[pos // 64].astype(np.uint64)
                        out[i] = (plane >> np.uint64(pos % 64)) & np.uint64(1) != 0
            return out
        for i, c in enumerate(ids):
            if c in self.class_ids:
                vol, _ = self._decode(roi, [c])
                out[i] = vol == c
        return out

    def _stats(self):
        st = getattr(self, "_stats_cache", None)
        if st is None:
            cids, counts, boxes, spatial = _native.medh5_class_stats(self._sample._native, self.id)
            counts = np.frombuffer(counts, dtype="<i8")
            boxes = np.frombuffer(boxes, dtype="<f4").reshape(len(cids), len(spatial), 2)
            st = self._stats_cache = (list(cids), counts, boxes)
        return st

    def voxel_counts(self, classes=None):
        cids, counts, _ = self._stats()
        out = {}
        for c in self.resolve_classes(classes):
            out[c] = int(counts[cids.index(c)]) if c in cids else 0
        return out

    def class_bboxes(self, classes=None):
        """Each class's box at voxel edges, ``None`` for an absent class."""
        cids, counts, boxes = self._stats()
        out = {}
        for c in self.resolve_classes(classes):
            k = cids.index(c) if c in cids else None
            out[c] = None if k is None or counts[k] == 0 else np.array(boxes[k])
        return out


def open_annotation(sample, ann_id):
    """The annotation object for ``annotations/<ann_id>``."""
    kind = sample._file["annotations/" + ann_id].attrs.get("kind")
    kind = _plain(kind)
    return VoxelAnnotation(sample, ann_id) if kind in VOXEL_KINDS else Annotation(sample, ann_id)


def read_grids(sample):
    """Every grid of the sample by id, with §3.7's implicit timepoint."""
    f = sample._file
    if "grids" not in f:
        return {}
    tps = sample.document.get("timepoints") or []
    only = tps[0].get("id") if len(tps) == 1 else None
    return {g: Grid(g, f["grids/" + g].attrs, only) for g in sorted(f["grids"].keys())}
