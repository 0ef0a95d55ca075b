"""Timepoint-aware views of a sample (the reference's ``Sample.at``,
``TimepointView``, ``ImageCollection`` / ``AnnotationCollection`` filters
and ``Timeline`` lookups by id)."""

__all__ = ["AnnotationCollection", "ImageCollection", "TimepointView", "Timeline",
           "annotation_timepoints"]


class Timeline(tuple):
    """The sample's timepoints in chronological order; ``tl[i]`` by position,
    ``tl["id"]`` by id."""

    def __getitem__(self, key):
        if isinstance(key, str):
            for t in self:
                if t.id == key:
                    return t
            raise KeyError("undeclared timepoint %r; declared: %r" % (key, list(self.ids)))
        return tuple.__getitem__(self, key)

    def __contains__(self, key):
        if isinstance(key, str):
            return key in self.ids
        return tuple.__contains__(self, key)

    def __repr__(self):
        return "Timeline(%r)" % (list(self.ids),)

    @property
    def ids(self):
        return tuple(t.id for t in self)

    @property
    def baseline(self):
        return self[0] if self else None

    @property
    def is_longitudinal(self):
        return len(self) >= 2

    def require(self, timepoint_id, *, where=""):
        """The timepoint ``timepoint_id`` (a KeyError when undeclared)."""
        return self[timepoint_id]

    def interval_days(self, a, b):
        """Days from ``a`` to ``b`` by their ``days_from_baseline`` (None
        when either lacks one)."""
        da, db = self[a].days_from_baseline, self[b].days_from_baseline
        return None if da is None or db is None else float(db) - float(da)

    def to_json(self):
        return [t.to_json() for t in self]


class ImageCollection(dict):
    """The sample's images by id (``images[id]``), with timepoint-, modality-
    and grid-aware views."""

    def by_timepoint(self, timepoint_id):
        return tuple(n for n, im in self.items() if im.timepoint == timepoint_id)

    def by_modality(self, modality):
        return tuple(n for n, im in self.items() if im.modality == modality)

    def on_grid(self, grid_id):
        return tuple(n for n, im in self.items() if im.grid_id == grid_id)


class AnnotationCollection(dict):
    """The sample's annotations by id, with task-, kind- and timepoint-aware
    views (each a tuple of annotations)."""

    def by_task(self, task):
        return tuple(a for a in self.values() if a.task == task)

    def by_kind(self, kind):
        return tuple(a for a in self.values() if a.kind == kind)

    def by_timepoint(self, timepoint_id):
        return tuple(a for a in self.values() if timepoint_id in a.timepoints)

    def spanning(self):
        """Annotations covering more than one timepoint (change labels)."""
        return tuple(a for a in self.values() if len(a.timepoints) > 1)


def annotation_timepoints(ann):
    """The timepoints an annotation covers: its declared ``timepoints``, or
    its grid's."""
    import numpy as np
    declared = ann._attrs.get("timepoints")
    if declared is not None:
        return tuple(str(t) for t in np.atleast_1d(declared))
    gid = ann._attrs.get("grid")
    if gid is None:
        return ()
    tp = ann._sample.grids[str(gid)].timepoint
    return () if tp is None else (str(tp),)


class TimepointView:
    """Everything in the sample that belongs to one timepoint."""

    __slots__ = ("_sample", "timepoint")

    def __init__(self, sample, timepoint):
        self._sample = sample
        self.timepoint = timepoint

    @property
    def id(self):
        return str(self.timepoint.id)

    @property
    def grids(self):
        return {gid: g for gid, g in self._sample.grids.items()
                if g.timepoint == self.timepoint.id}

    @property
    def images(self):
        names = self._sample.images.by_timepoint(self.timepoint.id)
        return ImageCollection((n, self._sample.images[n]) for n in names)

    @property
    def annotations(self):
        found = self._sample.annotations.by_timepoint(self.timepoint.id)
        return AnnotationCollection((a.ann_id, a) for a in found)

    def __repr__(self):
        return "TimepointView(%r, %d images, %d annotations)" % (
            self.timepoint.id, len(self.images), len(self.annotations))
