"""Patch sampling (the reference's ``medh5.sampling``): :class:`PatchSampler`
draws windows with the library's sampler (``purehdf_medh5::index::draw``),
so a seed gives the same patches as the reference, and :class:`Patch` says
where to read."""

import os
from dataclasses import dataclass

import numpy as np

from . import _native

MEDH5Error = _native.Medh5Error

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


class PatchSampler:
    """Choose patch windows in a volume: ``uniform``, ``foreground`` (centres
    from the sampling index, or a scan when the file has none) or
    ``balanced`` (foreground with probability ``foreground_prob``)."""

    def __init__(self, patch_size, *, strategy="balanced", foreground_prob=0.5,
                 foreground_classes=None, class_weights="uniform"):
        if strategy not in STRATEGIES:
            raise MEDH5Error("unknown strategy %r; expected one of %s" % (strategy, STRATEGIES))
        if not 0.0 <= float(foreground_prob) <= 1.0:
            raise MEDH5Error("foreground_prob %r is not in [0, 1]" % (foreground_prob,))
        if foreground_classes is not None or class_weights != "uniform":
            raise NotImplementedError("purehdf's sampler draws every class with uniform weights "
                                      "(foreground_classes / class_weights are not supported)")
        self.patch_size = patch_size
        self.strategy = strategy
        self.foreground_prob = float(foreground_prob)
        self.foreground_classes = None
        self.class_weights = "uniform"

    def __repr__(self):
        return "PatchSampler(%r, strategy=%r)" % (self.patch_size, self.strategy)

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
        rows = _native.medh5_draws(sample._native, ann, size, self.strategy,
                                   self.foreground_prob, seeds, n)
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
