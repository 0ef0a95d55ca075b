"""Patch sampling (the reference's ``medh5.sampling``): :class:`PatchSampler`
draws windows with the library's sampler (``purehdf_medh5::index::draw``),
so a seed gives the same patches as the reference, and :class:`Patch` says
where to read."""

import os
from dataclasses import dataclass

import numpy as np

from . import _native

from ._medh5_errors import MEDH5Error, MEDH5ValidationError
from ._medh5_inference import (BLEND_MODES, PatchAggregator, blend_weights,  # noqa: F401
                               coerce_patch_size, grid_patches, window_around)

STRATEGIES = ("uniform", "foreground", "balanced")


@dataclass(frozen=True)
class Patch:
    """One draw: where to read, and how the location was chosen."""

    slices: tuple
    pad: tuple = ()
    center: tuple = ()
    strategy: str = "uniform"
    class_id: int = None
    used_index: bool = None
    grid_id: str = None

    @property
    def padding(self):
        return self.pad or ((0, 0),) * len(self.slices)

    @property
    def shape(self):
        return tuple((s.stop - s.start) + a + b for s, (a, b) in zip(self.slices, self.padding))

    @property
    def needs_padding(self):
        return any(a or b for a, b in self.padding)

    def apply_padding(self, array, value=0.0):
        """Pad a read to the requested patch size, leading axes untouched."""
        if not self.needs_padding:
            return array
        lead = array.ndim - len(self.slices)
        return np.pad(array, ((0, 0),) * lead + tuple(self.padding), mode="constant",
                      constant_values=value)

    def to_json(self):
        return {"start": [s.start for s in self.slices], "stop": [s.stop for s in self.slices],
                "pad": [list(p) for p in self.padding], "center": list(self.center),
                "strategy": self.strategy, "class_id": self.class_id,
                "used_index": self.used_index, "grid_id": self.grid_id}

    def __repr__(self):
        return "Patch([%s], %s)" % (", ".join("%d:%d" % (s.start, s.stop) for s in self.slices),
                                    self.strategy)


def _seeds(rng):
    """The seed list an ``rng=`` value stands for."""
    if rng is None:
        return [int.from_bytes(os.urandom(8), "little")]
    if isinstance(rng, np.random.Generator):
        return [int(rng.integers(0, 2**63))]
    if isinstance(rng, (int, np.integer)):
        return [int(rng) & (2**64 - 1)]
    return [int(x) & (2**64 - 1) for x in rng]


WEIGHTS = ("uniform", "inverse_frequency", "frequency")
_CONFIG = ("patch_size", "strategy", "foreground_prob", "foreground_classes", "class_weights")


def _check(strategy, foreground_prob, classes, weights):
    """Refuse a configuration as the reference does (at construction)."""
    if strategy not in STRATEGIES:
        raise MEDH5ValidationError("unknown strategy %r; expected one of %s"
                                   % (strategy, list(STRATEGIES)))
    if not 0.0 <= float(foreground_prob) <= 1.0:
        raise MEDH5ValidationError("foreground_prob %r is not in [0, 1]" % (foreground_prob,))
    for c in classes or ():
        if not isinstance(c, (str, int, np.integer)):
            raise TypeError("a class is an int id or a str key, not %s" % type(c).__name__)
    if isinstance(weights, str):
        if weights not in WEIGHTS:
            raise MEDH5ValidationError(
                "unknown class_weights %r; expected one of %s or a mapping of class id to "
                "weight" % (weights, list(WEIGHTS)))
        return weights, None
    pairs = []
    for k, w in weights.items():
        k, w = int(k), float(w)
        if not np.isfinite(w) or w < 0:
            raise MEDH5ValidationError("class_weights gives class %d the weight %r; a weight "
                                       "is a finite number of at least 0" % (k, w))
        if 0 <= k < 2**16:
            pairs.append((k, w))
    return "uniform", pairs


class PatchSampler:
    """Choose patch windows in a volume: ``uniform``, ``foreground`` (centres
    from the sampling index, or a scan when the file has none) or
    ``balanced`` (foreground with probability ``foreground_prob``).
    ``foreground_classes`` (ids or label-set keys; every class when None)
    are the classes a foreground draw may target, ``class_weights``
    (``uniform``, ``frequency``, ``inverse_frequency`` or a mapping of class
    id to weight) picks among them, as the reference does."""

    def __init__(self, patch_size, *, strategy="balanced", foreground_prob=0.5,
                 foreground_classes=None, class_weights="uniform"):
        classes = None if foreground_classes is None else tuple(foreground_classes)
        _check(strategy, foreground_prob, classes, class_weights)
        object.__setattr__(self, "patch_size", patch_size)
        object.__setattr__(self, "strategy", strategy)
        object.__setattr__(self, "foreground_prob", float(foreground_prob))
        object.__setattr__(self, "foreground_classes", classes)
        object.__setattr__(self, "class_weights", class_weights)

    def __setattr__(self, name, value):
        # a change is checked as __init__ checks one; a refused change leaves
        # the sampler as it was
        if name in _CONFIG:
            conf = {n: getattr(self, n) for n in _CONFIG}
            conf[name] = value
            if name == "foreground_classes" and value is not None:
                value = tuple(value)
                conf[name] = value
            _check(conf["strategy"], conf["foreground_prob"], conf["foreground_classes"],
                   conf["class_weights"])
        object.__setattr__(self, name, value)

    def __getstate__(self):
        return {n: getattr(self, n) for n in _CONFIG}

    def __setstate__(self, state):
        for n, v in state.items():
            object.__setattr__(self, n, v)

    def __repr__(self):
        return "PatchSampler(%r, %s)" % (self.patch_size, self.strategy)

    def _classes(self, sample):
        """The selected class ids (None: every class); a key the label set
        lacks is a KeyError, an id the annotation cannot hold counts zero."""
        if self.foreground_classes is None:
            return None
        out = []
        for c in self.foreground_classes:
            if isinstance(c, str):
                ls = sample.label_set
                found = None if ls is None else ls.get(c)
                if found is None:
                    raise KeyError("label set %r has no class %r"
                                   % (None if ls is None else ls.id, c))
                c = found.id
            c = int(c)
            if 0 <= c < 2**16:
                out.append(c)
        return out

    def _pick_class(self, counts, rng):
        """Choose a class to sample from, weighted as configured (the
        reference's ``_pick_class``)."""
        name, pairs = _check(self.strategy, self.foreground_prob, None, self.class_weights)
        return _native.medh5_pick_class([(int(k), int(v)) for k, v in counts.items()
                                         if 0 <= int(k) < 2**16],
                                        _seeds(rng), name, pairs)

    def _annotation(self, sample, annotation, grid=None):
        if annotation is not None:
            return annotation
        for ann_id, _kind, _cids, _sp in sample._voxel_annotations():
            if grid is None or sample.annotations[ann_id].grid_id == grid:
                return ann_id
        raise MEDH5Error("%s: no voxel annotation with classes to draw from" % sample.path)

    def _run(self, sample, annotation, seeds, n, grid):
        ann = self._annotation(sample, annotation, grid)
        size = self.patch_size
        size = [int(size)] if isinstance(size, (int, np.integer)) else [int(s) for s in size]
        gid = sample.annotations[ann].grid_id
        name, pairs = _check(self.strategy, self.foreground_prob, None, self.class_weights)
        rows = _native.medh5_draws(sample._native, ann, size, self.strategy,
                                   self.foreground_prob, seeds, n, self._classes(sample),
                                   name, pairs)
        return [Patch(slices=tuple(slice(a, b) for a, b in zip(start, stop)),
                      pad=tuple(tuple(p) for p in pad), center=tuple(center), strategy=st,
                      class_id=cid, used_index=used, grid_id=gid)
                for start, stop, pad, center, st, cid, used in rows]

    def draw(self, sample, annotation=None, rng=None, *, grid=None):
        """One patch window from ``sample`` seeded by ``rng`` (an int, a
        sequence such as ``(seed, epoch, index)``, a numpy Generator or None)."""
        return self._run(sample, annotation, [_seeds(rng)], 1, grid)[0]

    def draws(self, sample, annotation=None, n=1, rng=None, *, grid=None):
        """``n`` draws from one generator seeded by ``rng``."""
        return self._run(sample, annotation, [_seeds(rng)], int(n), grid)

    def draw_many(self, sample, annotation, rngs, *, grid=None):
        """One draw per seed of ``rngs`` in one call (each as :meth:`draw`)."""
        return self._run(sample, annotation, [_seeds(r) for r in rngs], 1, grid)
