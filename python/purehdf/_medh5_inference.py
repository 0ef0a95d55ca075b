"""Sliding-window inference helpers of the reference's ``medh5.sampling``:
``grid_patches`` (a deterministic cover of a volume, the last window on each
axis shifted inwards), ``blend_weights`` and ``PatchAggregator`` (stitch
patch predictions back into one volume), ``coerce_patch_size`` and
``window_around``."""

import math

import numpy as np

from ._medh5_errors import MEDH5ValidationError

__all__ = ["BLEND_MODES", "PatchAggregator", "blend_weights", "coerce_patch_size",
           "grid_patches", "window_around"]

BLEND_MODES = ("constant", "gaussian")
_FLOOR = 1e-6


def coerce_patch_size(patch_size, ndim):
    """A patch size per spatial axis: a scalar broadcast over ``ndim`` axes."""
    if isinstance(patch_size, (int, np.integer)):
        size = (int(patch_size),) * int(ndim)
    else:
        size = tuple(int(n) for n in patch_size)
    if len(size) != int(ndim):
        raise MEDH5ValidationError("patch_size %r has %d axes; the grid has %d"
                                   % (size, len(size), ndim))
    if any(n < 1 for n in size):
        raise MEDH5ValidationError("patch_size %r must be positive on every axis" % (size,))
    return size


def window_around(center, patch, shape):
    """Slices of ``patch`` voxels around ``center`` in ``shape`` (shifted
    inwards at the border) and the padding where an axis is shorter."""
    slices, pads = [], []
    for c, p, n in zip(center, patch, shape):
        c, p, n = int(c), int(p), int(n)
        if p >= n:
            slices.append(slice(0, n))
            pads.append(((p - n) // 2, (p - n) - (p - n) // 2))
        else:
            s = min(max(c - p // 2, 0), n - p)
            slices.append(slice(s, s + p))
            pads.append((0, 0))
    return tuple(slices), tuple(pads)


def _starts(n, p, stride):
    if p >= n:
        return [0]
    return list(range(0, n - p, stride)) + [n - p]


def grid_patches(shape, patch_size, *, overlap=0, grid_id=None):
    """A deterministic sliding-window cover of a volume (the inference path):
    windows every ``patch - overlap`` voxels, C order, the last one on each
    axis shifted inwards; an axis shorter than the patch is padded after."""
    from ._medh5_sampling import Patch
    shape = tuple(int(n) for n in shape)
    size = coerce_patch_size(patch_size, len(shape))
    overlap = int(overlap)
    if overlap < 0 or any(overlap >= p for p in size):
        raise MEDH5ValidationError("overlap must be non-negative and below patch_size")
    axes = [_starts(n, p, p - overlap) for n, p in zip(shape, size)]
    out = []
    for starts in np.ndindex(*[len(a) for a in axes]):
        slices, pads, center = [], [], []
        for ax, k in enumerate(starts):
            n, p = shape[ax], size[ax]
            s = axes[ax][k]
            e = min(s + p, n)
            slices.append(slice(s, e))
            pads.append((0, max(p - n, 0)))
            center.append((s + e) // 2)
        out.append(Patch(slices=tuple(slices), pad=tuple(pads), center=tuple(center),
                         strategy="grid", grid_id=grid_id))
    return out


def blend_weights(patch_size, *, mode="gaussian", sigma_scale=0.125):
    """Each voxel's weight when patches are stitched back: ``constant`` 1, or
    a separable Gaussian (standard deviation ``sigma_scale`` of each axis)
    peaking at 1; never below 1e-6."""
    size = tuple(int(n) for n in patch_size)
    if any(n < 1 for n in size):
        raise MEDH5ValidationError("a patch has at least one voxel per axis: %r" % (size,))
    if mode not in BLEND_MODES:
        raise MEDH5ValidationError("unknown blend mode %r; expected one of %r"
                                   % (mode, list(BLEND_MODES)))
    if mode == "constant":
        return np.ones(size, dtype=np.float32)
    if not (math.isfinite(sigma_scale) and sigma_scale > 0):
        raise MEDH5ValidationError("sigma_scale is a positive fraction of the patch, not %r"
                                   % (sigma_scale,))
    w = np.ones((), dtype=np.float64)
    for n in size:
        x = np.arange(n, dtype=np.float64) - (n - 1) / 2.0
        g = np.exp(-0.5 * (x / (sigma_scale * n)) ** 2)
        w = np.multiply.outer(w, g / g.max())
    w /= w.max()
    return np.maximum(w, _FLOOR).astype(np.float32)


class PatchAggregator:
    """Stitch patch predictions into one volume: ``add(prediction, patch)``
    weights each by :func:`blend_weights` (padding cut off), ``result()``
    divides by the summed weights; ``channels`` is an optional leading axis."""

    def __init__(self, spatial_shape, *, channels=None, mode="gaussian", sigma_scale=0.125,
                 dtype=np.float32, grid_id=None):
        self.spatial_shape = tuple(int(n) for n in spatial_shape)
        self.channels = None if channels is None else int(channels)
        if self.channels is not None and self.channels < 1:
            raise MEDH5ValidationError("channels is at least 1, or None")
        blend_weights((1,) * len(self.spatial_shape), mode=mode, sigma_scale=sigma_scale)
        self.mode, self.sigma_scale = mode, float(sigma_scale)
        self.dtype = np.dtype(dtype)
        self.grid_id = grid_id
        lead = () if self.channels is None else (self.channels,)
        self._sum = np.zeros(lead + self.spatial_shape, dtype=self.dtype)
        self._weight = np.zeros(self.spatial_shape, dtype=self.dtype)
        self._blends = {}
        self.count = 0
        self.coverage = np.zeros(self.spatial_shape, dtype=bool)

    def add(self, prediction, patch):
        """Add one prediction, shaped as the patch (padding included), after
        ``channels`` when there are channels."""
        if patch.grid_id is not None:
            if self.grid_id is None:
                self.grid_id = patch.grid_id
            elif patch.grid_id != self.grid_id:
                raise MEDH5ValidationError(
                    "a patch on grid %r cannot be stitched into a volume on grid %r"
                    % (patch.grid_id, self.grid_id))
        if len(patch.slices) != len(self.spatial_shape):
            raise MEDH5ValidationError("a %d-D patch cannot be stitched into a %d-D volume"
                                       % (len(patch.slices), len(self.spatial_shape)))
        a = np.asarray(prediction)
        lead = () if self.channels is None else (self.channels,)
        if a.shape != lead + tuple(patch.shape):
            raise MEDH5ValidationError("a prediction for %r is shaped %r, not %r"
                                       % (patch, lead + tuple(patch.shape), a.shape))
        if any(s.start < 0 or s.stop > n for s, n in zip(patch.slices, self.spatial_shape)):
            raise MEDH5ValidationError("%r reaches outside the volume %r"
                                       % (patch, self.spatial_shape))
        inner = tuple(slice(b, b + (s.stop - s.start))
                      for s, (b, _) in zip(patch.slices, patch.padding))
        size = tuple(patch.shape)
        if size not in self._blends:
            self._blends[size] = blend_weights(size, mode=self.mode,
                                               sigma_scale=self.sigma_scale)
        w = self._blends[size][inner]
        region = tuple(patch.slices)
        la = (slice(None),) * (a.ndim - len(region))
        cut = np.asarray(a[la + inner], dtype=np.float64) * w
        self._sum[la + region] += cut.astype(self.dtype, copy=False)
        self._weight[region] += w
        self.coverage[region] = True
        self.count += 1

    def result(self, *, uncovered=float("nan")):
        """The stitched volume; voxels no patch covered hold ``uncovered``."""
        out = np.full(self._sum.shape, uncovered, dtype=self.dtype)
        covered = np.broadcast_to(self.coverage, self._sum.shape)
        weight = np.broadcast_to(self._weight, self._sum.shape)
        np.divide(self._sum, weight, out=out, where=covered)
        return out
