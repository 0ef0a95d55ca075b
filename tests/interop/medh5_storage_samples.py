"""Write seeded medh5 samples with the reference writer for the storage tests
(tests/medh5_recompress.rs, tests/medh5_collection.rs): each holds two images
(int16 and float32) and one annotation of every voxel encoding (labelmap,
layers, bitmask, probmap, instances, mask), large enough to be chunked, in
the codec profile given per file.

Usage: python medh5_storage_samples.py OUTDIR PROFILE[,PROFILE...] [SEED] [SCALE]
Writes OUTDIR/s<i>_<profile>.medh5, one per profile listed.
"""
import json, os, sys

import numpy as np

import medh5
from medh5.labels import from_keys

out = sys.argv[1]
profiles = sys.argv[2].split(',')
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 11
scale = int(sys.argv[4]) if len(sys.argv) > 4 else 1
os.makedirs(out, exist_ok=True)
KEYS = ['liver', 'spleen', 'kidney']

for i, profile in enumerate(profiles):
    rng = np.random.default_rng(seed + i)
    shape = (int(rng.integers(10, 20)) * scale, int(rng.integers(60, 90)), int(rng.integers(60, 90)))
    path = os.path.join(out, f's{i}_{profile}.medh5')
    if os.path.exists(path):
        os.remove(path)
    z, y, x = np.indices(shape)
    masks = {}
    for key in KEYS:
        c = [rng.integers(0, s) for s in shape]
        r = rng.uniform(4, min(shape) * 0.9)
        masks[key] = ((z - c[0]) ** 2 + ((y - c[1]) / 2) ** 2 + ((x - c[2]) / 2) ** 2) < r * r
    with medh5.create(path, sample_id=f's{i}', subject_id=f'SUBJ-{i}', codec=profile) as w:
        w.add_grid('g', shape=shape, spacing=(2.0, 0.8, 0.8))
        w.add_image('CT', rng.integers(-1000, 2000, shape).astype(np.int16), grid='g', modality='CT')
        w.add_image('PT', rng.normal(0, 5, shape).astype(np.float32), grid='g', modality='PT')
        w.label_set(from_keys(KEYS, id='organs'))
        lm = np.zeros(shape, np.uint8)
        for c, key in enumerate(KEYS):
            lm[masks[key]] = c + 1
        w.add_segmentation('lm', grid='g', encoding='labelmap', labelmap=lm,
                           label_values={c + 1: k for c, k in enumerate(KEYS)})
        for enc in ['layers', 'bitmask', 'instances']:
            w.add_segmentation(enc, grid='g', encoding=enc, masks=masks)
        w.add_segmentation('prob', grid='g', encoding='probmap',
                           probabilities={k: (m * 0.9).astype(np.float32) for k, m in masks.items()})
        w.add_mask('body', lm > 0, grid='g')
print(json.dumps({'samples': len(profiles)}))
