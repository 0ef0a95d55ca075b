"""Draw from files' sampling index with the reference's Python API
(tests/medh5_index.rs).

Usage: python medh5_index_draw.py FILE...
For each file: 20 foreground draws of 4-voxel patches on annotation `seg`
seeded (3, i); prints `FILE <draws answered by the index> <draws whose window
holds a voxel of the drawn class>` (the class checked on the reference's own
dense `labelmap()` where it has one, else counted as holding).
"""
import sys
import warnings

import numpy as np

import medh5
from medh5.sampling import PatchSampler

for path in sys.argv[1:]:
    with medh5.open(path) as s:
        sampler = PatchSampler(4, strategy="foreground")
        used = hit = 0
        ann = s.annotations["seg"]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lm = ann.labelmap() if ann.kind == "labelmap" else None
        except Exception:  # noqa: BLE001
            lm = None
        for i in range(20):
            p = sampler.draw(s, "seg", rng=(3, i))
            used += bool(p.used_index)
            if lm is None or p.class_id is None:
                hit += 1
            else:
                hit += bool(np.any(lm[p.slices] == p.class_id))
        print(path, used, hit)
