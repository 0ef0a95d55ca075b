"""The medh5 writers, shaped as the reference's: ``create(path, ...)`` and
``amend(path)`` return a :class:`SampleWriter` (a context manager, or call
``commit()``) whose ``add_grid`` / ``add_image`` / ``add_segmentation`` /
``add_mask`` / ``identity`` / ``label_set`` calls collect a manifest and
its arrays; ``commit`` hands them to the library's writer
(``purehdf_medh5::create``, or ``amend::Amend`` copy-on-write). The
encoding, chunking, codecs, digests and ``content_id`` are the library's."""

import copy
import json
import os

import numpy as np

from . import _native
from ._medh5_errors import MEDH5ValidationError

_DESCR = {"b1": "|b1", "i1": "|i1", "u1": "|u1"}
_CODECS = ("balanced", "training", "archive", "portable")


class LabelClass:
    """One semantic class of a label set (§5.2)."""

    def __init__(self, id, key, name, parents=None, category=None, color=None,  # noqa: A002
                 codes=None, laterality=None, properties=None):
        self.id = int(id)
        self.key = str(key)
        self.name = str(name)
        self.parents = list(parents or [])
        self.category = category
        self.color = None if color is None else [int(c) for c in color]
        self.codes = list(codes or [])
        self.laterality = laterality
        self.properties = properties

    def to_json(self):
        out = {"id": self.id, "key": self.key, "name": self.name}
        if self.parents:
            out["parents"] = list(self.parents)
        for k in ("category", "color", "laterality"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        if self.codes:
            out["codes"] = list(self.codes)
        if self.properties:
            out["properties"] = dict(self.properties)
        return out

    @classmethod
    def from_json(cls, d):
        return cls(d["id"], d["key"], d.get("name", d["key"]), d.get("parents"),
                   d.get("category"), d.get("color"), d.get("codes"), d.get("laterality"),
                   d.get("properties"))

    def __repr__(self):
        return "LabelClass(%d, %r, %r)" % (self.id, self.key, self.name)


class LabelSet:
    """A controlled vocabulary (§5.1): ``ls[2]`` and ``ls["liver"]`` give a class."""

    def __init__(self, id, classes=None, *, version="1.0.0", relations=None,  # noqa: A002
                 skeletons=None, form="inline", uri=None, sha256=None):
        self.id = str(id)
        self.classes = list(classes or [])
        self.version = str(version)
        self.relations = list(relations or [])
        self.skeletons = list(skeletons or [])
        self.form = form
        self.uri = uri
        self.sha256 = sha256

    def __getitem__(self, k):
        for c in self.classes:
            if (isinstance(k, str) and c.key == k) or (not isinstance(k, str) and c.id == k):
                return c
        raise KeyError(k)

    def get(self, k, default=None):
        try:
            return self[k]
        except KeyError:
            return default

    def keys(self):
        return [c.key for c in self.classes]

    def ids(self):
        return [c.id for c in self.classes]

    def to_json(self):
        """The document's ``label_set`` member (its ``sha256`` is the writer's)."""
        out = {"id": self.id, "version": self.version, "form": self.form}
        if self.form == "ref":
            out.update(uri=self.uri, sha256=self.sha256)
            return out
        out["classes"] = [c.to_json() for c in self.classes]
        if self.relations:
            out["relations"] = [dict(r) if isinstance(r, dict) else
                                {"subject": r[0], "predicate": r[1], "object": r[2]}
                                for r in self.relations]
        if self.skeletons:
            out["skeletons"] = list(self.skeletons)
        return out

    @classmethod
    def from_json(cls, d):
        return cls(d["id"], [LabelClass.from_json(c) for c in d.get("classes", [])],
                   version=d.get("version", "1.0.0"), relations=d.get("relations"),
                   skeletons=d.get("skeletons"), form=d.get("form", "inline"),
                   uri=d.get("uri"), sha256=d.get("sha256"))

    def __repr__(self):
        return "LabelSet(%r, %d classes)" % (self.id, len(self.classes))


def _array(arr):
    a = np.ascontiguousarray(arr)
    if a.dtype.kind not in "biuf" or a.dtype.itemsize > 8:
        raise TypeError("unsupported array dtype %s" % a.dtype)
    a = a.astype(a.dtype.newbyteorder("<"), copy=False)
    d = a.dtype.str
    return _DESCR.get(d[1:], d), [int(n) for n in a.shape], a


def _seq(v):
    return None if v is None else [float(x) for x in np.asarray(v, dtype=float).ravel()]


class SampleWriter:
    """Builder for one sample; ``commit`` validates and writes it atomically."""

    def __init__(self, path, document, *, codec="balanced", profiles=None, amend=False,
                 grids=None):
        if codec not in _CODECS:
            raise ValueError("unknown codec profile %r" % (codec,))
        self._path = os.fspath(path)
        self._doc = document
        self._codec = codec
        self._profiles = sorted(set(profiles or ()))
        self._amend = amend
        self._grids = dict(grids or {})
        self._new_grids = {}
        self._images = {}
        self._annotations = {}
        self._arrays = {}
        self._removed = []
        self._closed = False
        self._content_id = None

    # -- state ---------------------------------------------------------
    @property
    def path(self):
        return self._path

    @property
    def codec(self):
        return self._codec

    @property
    def closed(self):
        return self._closed

    @property
    def document(self):
        return self._doc

    @property
    def grids(self):
        return dict(self._grids)

    def _open(self):
        if self._closed:
            raise _native.Medh5Error("the writer is closed")

    def _put(self, name, arr):
        descr, shape, a = _array(arr)
        self._arrays[name] = (name, descr, shape, a)
        return shape

    # -- document ------------------------------------------------------
    def identity(self, **fields):
        """Merge fields into the identity (``sample_id``, ``subject_id``, ...)."""
        self._open()
        ident = self._doc.setdefault("identity", {})
        for k, v in fields.items():
            if v is None:
                ident.pop(k, None)
            else:
                ident[k] = v
        return dict(ident)

    def label_set(self, label_set):
        """Set the label set (a :class:`LabelSet` or its JSON dict)."""
        self._open()
        ls = label_set if isinstance(label_set, LabelSet) else LabelSet.from_json(label_set)
        d = ls.to_json()
        self._doc["label_set"] = d
        return ls

    def extra(self, namespace, value):
        """Set a namespaced extension member of the document."""
        self._open()
        self._doc.setdefault("extra", {})[str(namespace)] = value

    def deidentification(self, **fields):
        self._open()
        self._doc.setdefault("deidentification", {}).update(fields)

    def cohort(self, **fields):
        self._open()
        self._doc.setdefault("cohort", {}).update(fields)

    def add_timepoint(self, timepoint_id, **fields):
        """Declare a timepoint (``date``, ``label``, ``days_from_baseline``,
        ...); the first one replaces a fresh sample's implicit ``tp0``."""
        self._open()
        from .medh5 import Timepoint
        tps = self._doc.setdefault("timepoints", [])
        if getattr(self, "_implicit_tp0", False):
            tps.clear()
            self._implicit_tp0 = False
        tid = str(timepoint_id)
        if any(t.get("id") == tid for t in tps):
            raise MEDH5ValidationError("timepoint %r is declared twice" % tid)
        rec = {"id": tid, "index": int(fields.pop("index", len(tps)))}
        rec.update((k, v) for k, v in fields.items() if v is not None)
        tps.append(rec)
        return Timepoint.from_json(rec)

    def acquisition(self, image_id, **params):
        """Merge acquisition parameters for one image; returns them all."""
        self._open()
        acq = self._doc.setdefault("acquisition", {}).setdefault(image_id, {})
        acq.update(params)
        return acq

    # -- objects -------------------------------------------------------
    def add_grid(self, grid_id, *, shape, spacing, origin=None, direction=None,
                 axis_names=None, axis_kinds=None, coord_system="LPS", units="mm",
                 timepoint=None, frame_uid=None, patch_hint=None, chunk_hint=None,
                 time_values=None, time_units=None):
        """Declare a grid (geometry lives here and nowhere else)."""
        self._open()
        if grid_id in self._grids:
            raise _native.Medh5Error("E003: grid %r exists" % (grid_id,))
        if axis_kinds is not None and any(k != "spatial" for k in axis_kinds):
            raise NotImplementedError("non-spatial grid axes are not bound yet")
        if time_values is not None or time_units is not None:
            raise NotImplementedError("time axes are not bound yet")
        g = {"shape": [int(n) for n in shape], "spacing": _seq(spacing),
             "coord_system": coord_system, "units": units}
        if origin is not None:
            g["origin"] = _seq(origin)
        if direction is not None:
            g["direction"] = _seq(direction)
        if axis_names is not None:
            g["axis_names"] = [str(n) for n in axis_names]
        for k, v in (("timepoint", timepoint), ("frame_uid", frame_uid)):
            if v is not None:
                g[k] = str(v)
        for k, v in (("patch_hint", patch_hint), ("chunk_hint", chunk_hint)):
            if v is not None:
                g[k] = [int(n) for n in v]
        self._grids[grid_id] = g
        self._new_grids[grid_id] = g
        return g

    def add_image(self, image_id, data, *, grid, modality, value_type="intensity",
                  value_units=None, channel_names=None, rescale_slope=None,
                  rescale_intercept=None, window_center=None, window_width=None,
                  valid_mask=None, prov=None, codec=None):
        """Write one image, chunked for its grid."""
        self._open()
        self._check_codec(codec)
        if image_id in self._images:
            raise _native.Medh5Error("E003: image %r exists" % (image_id,))
        if grid not in self._grids:
            raise _native.Medh5Error("E101: unknown grid %r" % (grid,))
        key = "image:" + image_id
        self._put(key, data)
        im = {"grid": grid, "npy": key, "modality": str(modality), "value_type": value_type}
        for k, v in (("value_units", value_units), ("valid_mask", valid_mask), ("prov", prov)):
            if v is not None:
                im[k] = str(v)
        for k, v in (("rescale_slope", rescale_slope), ("rescale_intercept", rescale_intercept)):
            if v is not None:
                im[k] = float(v)
        for k, v in (("window_center", window_center), ("window_width", window_width)):
            if v is not None:
                im[k] = _seq(v)
        if channel_names is not None:
            im["channel_names"] = [str(c) for c in channel_names]
        self._images[image_id] = im

    def _check_codec(self, codec):
        if codec is not None and codec != self._codec:
            raise NotImplementedError("a per-dataset codec other than the writer's is not bound")

    def _classes(self):
        ls = self._doc.get("label_set") or {}
        return {c["key"]: c["id"] for c in ls.get("classes", [])}, \
               {c["id"]: c["key"] for c in ls.get("classes", [])}

    def _key(self, cls):
        by_key, by_id = self._classes()
        if isinstance(cls, str):
            if cls not in by_key:
                raise _native.Medh5Error("E302: class %r is not in the label set" % (cls,))
            return cls
        cid = int(cls)
        if cid not in by_id:
            raise _native.Medh5Error("E302: class id %d is not in the label set" % cid)
        return by_id[cid]

    def add_segmentation(self, ann_id, *, grid, masks=None, probabilities=None,
                         instances=None, labelmap=None, label_values=None, ignore_value=None,
                         encoding="auto", threshold=None, annotated_classes=None,
                         closure="explicit", ignore=None, ignore_mask=None, timepoints=None,
                         prov=None, quality=None, derived_from=None, task="segmentation",
                         codec=None):
        """Write a voxel annotation: ``labelmap`` (+ ``label_values``),
        ``masks`` (class → bool array) or ``probabilities`` (class → float
        array). Returns the chosen ``kind``."""
        self._open()
        self._check_codec(codec)
        unsupported = dict(instances=instances, ignore_value=ignore_value,
                           annotated_classes=annotated_classes, ignore=ignore,
                           ignore_mask=ignore_mask, timepoints=timepoints, prov=prov,
                           quality=quality, derived_from=derived_from)
        bad = [k for k, v in unsupported.items() if v is not None]
        if bad or closure != "explicit" or task != "segmentation":
            raise NotImplementedError("add_segmentation: %s not bound yet"
                                      % ", ".join(bad or ["closure/task"]))
        if grid not in self._grids:
            raise _native.Medh5Error("E101: unknown grid %r" % (grid,))
        if ann_id in self._annotations:
            raise _native.Medh5Error("E003: annotation %r exists" % (ann_id,))
        given = [x is not None for x in (masks, probabilities, labelmap)]
        if sum(given) != 1:
            raise ValueError("give exactly one of masks, probabilities, labelmap")
        pre = "ann:%s:" % ann_id
        a = {"grid": grid}
        if labelmap is not None:
            if encoding not in ("auto", "labelmap"):
                raise NotImplementedError("labelmap input is written as a labelmap")
            lm = np.asarray(labelmap)
            if label_values is None:
                vals = [int(v) for v in np.unique(lm) if v != 0]
                label_values = {v: v for v in vals}
            a["encoding"] = "labelmap"
            a["npy"] = pre + "data"
            a["label_values"] = {str(int(v)): self._key(c) for v, c in label_values.items()}
            self._put(a["npy"], lm)
        elif masks is not None:
            ms = {self._key(c): np.asarray(m).astype(bool) for c, m in dict(masks).items()}
            if encoding == "auto":
                total = sum(m.astype(np.uint16) for m in ms.values()) if ms else 0
                encoding = "labelmap" if np.all(np.asarray(total) <= 1) else "layers"
            if encoding not in ("labelmap", "layers", "bitmask"):
                raise NotImplementedError("encoding %r from masks is not bound" % (encoding,))
            a["encoding"] = encoding
            a["masks"] = {}
            for k, m in ms.items():
                a["masks"][k] = pre + k
                self._put(pre + k, m)
        else:
            if encoding not in ("auto", "probmap"):
                raise NotImplementedError("probabilities are written as a probmap")
            a["encoding"] = "probmap"
            a["probabilities"] = {}
            for c, p in dict(probabilities).items():
                k = self._key(c)
                a["probabilities"][k] = pre + k
                self._put(pre + k, np.asarray(p, dtype=np.float32))
            if threshold is not None:
                a["threshold"] = float(threshold)
        self._annotations[ann_id] = a
        return a["encoding"]

    def add_mask(self, ann_id, mask, *, grid, task="other", prov=None, codec=None):
        """Write a boolean ``mask`` annotation (FOV, ignore region)."""
        self._open()
        self._check_codec(codec)
        if task != "other" or prov is not None:
            raise NotImplementedError("add_mask: task/prov not bound yet")
        m = np.asarray(mask)
        if m.dtype.kind == "f" and not np.all((m == 0) | (m == 1)):
            raise _native.Medh5Error("E411: a floating-point mask holds a value other than 0 and 1")
        if grid not in self._grids:
            raise _native.Medh5Error("E101: unknown grid %r" % (grid,))
        key = "ann:%s:mask" % ann_id
        self._put(key, m.astype(bool))
        self._annotations[ann_id] = {"grid": grid, "encoding": "mask", "masks": {"mask": key}}

    def remove_image(self, image_id):
        """Drop an image (amend)."""
        self._remove("images", image_id)

    def remove_annotation(self, ann_id):
        """Drop an annotation (amend)."""
        self._remove("annotations", ann_id)

    def _remove(self, group, oid):
        self._open()
        if not self._amend:
            d = self._images if group == "images" else self._annotations
            if d.pop(oid, None) is None:
                raise KeyError(oid)
            return
        self._removed.append("%s/%s" % (group, oid))

    # -- commit --------------------------------------------------------
    def _manifest(self):
        m = {"document": self._doc, "profile": self._codec, "profiles": self._profiles,
             "grids": self._grids, "images": self._images,
             "annotations": self._annotations}
        return json.dumps(m)

    def commit(self, *, digests=True):
        """Validate, write and atomically replace; returns the ``content_id``."""
        if self._closed:
            return None
        if not digests:
            raise NotImplementedError("commit(digests=False) is not bound")
        if self._amend and self._new_grids:
            raise NotImplementedError("adding a grid in amend() is not bound yet")
        if self._amend and any(g.pop("unsupported", False) for g in self._grids.values()):
            raise NotImplementedError("amend() of a sample with non-spatial grid axes "
                                      "is not bound yet")
        arrays = [(n, d, s, a.tobytes()) for n, d, s, a in self._arrays.values()]
        if self._amend:
            cid = _native.medh5_amend(self._path, self._manifest(), arrays, self._removed)
        else:
            cid = _native.medh5_create(self._path, self._manifest(), arrays)
        self._closed = True
        self._arrays.clear()
        self._content_id = cid
        return cid

    def abort(self):
        """Discard the in-progress sample, leaving any existing file untouched."""
        self._closed = True
        self._arrays.clear()

    def __enter__(self):
        return self

    def __exit__(self, exc_type=None, _exc=None, _tb=None):
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    def __repr__(self):
        return "SampleWriter(%r)" % self._path


def create(path, *, sample_id=None, subject_id=None, codec="balanced", profiles=None):
    """Create a new sample; use as a context manager, or call ``commit()``."""
    ident = {}
    if sample_id is not None:
        ident["sample_id"] = str(sample_id)
    if subject_id is not None:
        ident["subject_id"] = str(subject_id)
    doc = {"identity": ident, "timepoints": [{"id": "tp0", "index": 0}]}
    w = SampleWriter(path, doc, codec=codec, profiles=profiles)
    w._implicit_tp0 = True
    return w


def amend(path, *, codec=None):
    """Copy-on-write amend: build a new file from the old and replace it at
    ``commit``; readers of the old file keep reading the old inode."""
    from .medh5 import Sample
    s = Sample(path)
    try:
        doc = copy.deepcopy(s.document)
        grids = {}
        for g in (s._file["grids"].keys() if "grids" in s._file else []):
            at = s._file["grids"][g].attrs
            grids[g] = {"shape": [int(n) for n in at["shape"]],
                        "spacing": [float(x) for x in at["spacing"]]}
            for k in ("patch_hint", "chunk_hint"):
                if k in at:
                    grids[g][k] = [int(n) for n in np.atleast_1d(at[k])]
            if "axis_kinds" in at and any(str(k) != "spatial" for k in at["axis_kinds"]):
                grids[g]["unsupported"] = True
        profiles = sorted(s.profiles)
    finally:
        s.close()
    return SampleWriter(path, doc, codec=codec or "balanced", profiles=profiles, amend=True,
                        grids=grids)
