"""Map-style patch datasets over medh5 samples (the reference's
``medh5.torch.PatchDataset`` items): usable with
``torch.utils.data.DataLoader(num_workers=N)`` when torch is installed, and
with a plain process pool when it is not. A dataset holds paths only; each
process opens its own handles on first use, so it pickles and survives fork."""

import os

import numpy as np

from . import _native
from ._medh5_sampling import PatchSampler

MEDH5Error = _native.Medh5Error

LABEL_FORMATS = ("onehot", "labelmap", "none")

try:  # a torch Dataset when torch is there; the protocol is the same without it
    from torch.utils.data import Dataset as _Base  # type: ignore
except Exception:  # noqa: BLE001
    _Base = object

_HANDLES = {}
_HANDLES_PID = [None]


def _open_cached(path):
    """This process's open sample for ``path`` (handles are per process)."""
    from .medh5 import open as open_sample
    if _HANDLES_PID[0] != os.getpid():
        _HANDLES.clear()
        _HANDLES_PID[0] = os.getpid()
    s = _HANDLES.get(path)
    if s is None:
        if len(_HANDLES) >= 64:
            _HANDLES.pop(next(iter(_HANDLES))).close()
        s = _HANDLES[path] = open_sample(path)
    return s


class PatchDataset(_Base):
    """``samples_per_volume`` patches from each file, drawn by ``sampler``
    seeded ``(seed, epoch, index)``. An item is ``{"images": {id: array},
    "label": {annotation: array}, "meta": {...}}``; images are read with
    ``physical`` and ``dtype`` and padded to the patch size, labels are
    ``(C, *patch)`` planes (``onehot``) or one int64 plane (``labelmap``)."""

    def __init__(self, paths, sampler, *, samples_per_volume=1, annotation=None, seed=0,
                 images=None, annotations=None, label_format="onehot", physical=True,
                 dtype=np.float32):
        if label_format not in LABEL_FORMATS:
            raise MEDH5Error("unknown label_format %r; expected one of %s"
                             % (label_format, LABEL_FORMATS))
        self.paths = [os.fspath(p) for p in paths]
        if not self.paths:
            raise MEDH5Error("a dataset needs at least one file")
        if not isinstance(sampler, PatchSampler):
            raise TypeError("sampler must be a PatchSampler")
        self.sampler = sampler
        self.samples_per_volume = int(samples_per_volume)
        if self.samples_per_volume < 1:
            raise MEDH5Error("samples_per_volume must be at least 1")
        self.images = None if images is None else tuple(images)
        self.annotations = {} if annotations is None else {k: tuple(v) for k, v in
                                                           annotations.items()}
        self.annotation = annotation or (next(iter(self.annotations)) if self.annotations
                                         else None)
        self.seed = int(seed)
        self.epoch = 0
        self.label_format = label_format
        self.physical = bool(physical)
        self.dtype = np.dtype(dtype)

    def set_epoch(self, epoch):
        """Redraw patches from the next item on (set it in every worker)."""
        self.epoch = int(epoch)

    def __len__(self):
        return len(self.paths) * self.samples_per_volume

    def file_groups(self):
        n = self.samples_per_volume
        return [range(f * n, (f + 1) * n) for f in range(len(self.paths))]

    def draw(self, index):
        """The patch item ``index`` reads."""
        sample = _open_cached(self.paths[index // self.samples_per_volume])
        return sample, self.sampler.draw(sample, self.annotation, (self.seed, self.epoch, index))

    def __getitem__(self, index):
        index = int(index)
        if not 0 <= index < len(self):
            raise IndexError(index)
        sample, patch = self.draw(index)
        return self._item(sample, patch)

    def _item(self, sample, patch):
        ids = self.images if self.images is not None else tuple(sorted(sample.images))
        images = {}
        for i in ids:
            a = sample.images[i].read(patch.slices, physical=self.physical, dtype=self.dtype)
            images[i] = patch.apply_padding(a)
        item = {"images": images,
                "meta": {"path": sample.path, "sample_id": sample.identity.sample_id,
                         "subject_id": sample.identity.subject_id, "patch": patch.to_json()}}
        if self.label_format != "none" and self.annotations:
            labels = {}
            for ann_id, classes in self.annotations.items():
                ann = sample.annotations[ann_id]
                wanted = list(classes) if classes else None
                if self.label_format == "labelmap":
                    arr = np.asarray(ann.labelmap(roi=patch.slices, priority=wanted),
                                     dtype=np.int64)
                    if wanted is not None:
                        keep = list(ann.resolve_classes(wanted)) + [ann.ignore_id]
                        arr[~np.isin(arr, keep)] = 0
                    pad = 65535
                else:
                    arr = np.asarray(ann.dense(wanted, roi=patch.slices), dtype=self.dtype)
                    pad = 0.0
                labels[ann_id] = patch.apply_padding(arr, value=pad)
            item["label"] = labels
        return item
