"""Write seeded random medh5 samples with the reference writer, for the verify
and labelmap() agreement tests (tests/medh5_verify_random.rs).

Usage: python medh5_random_samples.py OUTDIR [N] [SEED]
Writes OUTDIR/r<i>.medh5 and OUTDIR/manifest.json; for every voxel
annotation also the reference's labelmap() as raw little-endian uint16
(whole: <file>.<ann>.lm, and one random patch: <file>.<ann>.patch); and three
mutated copies of each sample: <file>.flip.medh5 (one flipped bit in a chunk of
images/img), <file>.attr.medh5 (covered attribute images/img@modality edited),
<file>.cid.medh5 (stale root content_id).
"""
import json, os, sys, warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import medh5_mutate  # noqa: E402
import medh5
from medh5.labels import from_keys

out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 20261129
os.makedirs(out, exist_ok=True)

DTYPES = ['int16', 'uint16', 'float32', 'uint8', 'int32', 'float64']
PROFILES = ['training', 'balanced', 'archive', 'portable']
ENCODINGS = ['labelmap', 'layers', 'bitmask', 'probmap', 'instances', None]
KEYS = ['liver', 'spleen', 'kidney', 'lung', 'heart']

manifest = []
for i in range(n):
    rng = np.random.default_rng(seed + i)
    shape = (int(rng.integers(3, 20)), int(rng.integers(8, 72)), int(rng.integers(8, 72)))
    dtype = DTYPES[i % len(DTYPES)] if i < len(DTYPES) else str(rng.choice(DTYPES))
    profile = PROFILES[i % len(PROFILES)]
    encoding = ENCODINGS[i % len(ENCODINGS)]
    k = int(rng.integers(1, 5))
    name = f'r{i:02d}.medh5'
    path = os.path.join(out, name)
    if os.path.exists(path):
        os.remove(path)
    z, y, x = np.indices(shape)
    if np.dtype(dtype).kind == 'f':
        img = rng.normal(0, 100, shape).astype(dtype)
    else:
        info = np.iinfo(dtype)
        img = rng.integers(max(info.min, -3000), min(info.max, 3000), shape, endpoint=True).astype(dtype)
    entry = {'file': name, 'dtype': dtype, 'profile': profile, 'shape': list(shape),
             'encoding': encoding, 'annotations': []}
    with medh5.create(path, sample_id=f'r{i}', subject_id=f'S{i}', codec=profile) as w:
        w.add_grid('g', shape=shape, spacing=(float(rng.uniform(0.5, 3)), 0.8, 0.8))
        w.add_image('img', img, grid='g', modality='CT' if i % 2 else 'MR')
        if encoding is not None:
            keys = KEYS[:k]
            w.label_set(from_keys(keys, id='rand'))
            # overlapping random blobs, one per class
            masks = {}
            for c, key in enumerate(keys):
                cz, cy, cx = (rng.integers(0, s) for s in shape)
                r = rng.uniform(2, max(3, min(shape) * 0.8))
                masks[key] = ((z - cz) ** 2 + ((y - cy) / 2) ** 2 + ((x - cx) / 2) ** 2) < r * r
            kw = {}
            if encoding == 'labelmap':
                lm = np.zeros(shape, np.uint8)
                for c, key in enumerate(keys):
                    lm[masks[key]] = c + 1
                kw = dict(labelmap=lm, label_values={c + 1: key for c, key in enumerate(keys)})
                if i % 3 == 0:
                    lm[x < 2] = 255
                    kw['ignore_value'] = 255
            elif encoding == 'probmap':
                kw = dict(probabilities={key: np.clip(m * rng.uniform(0.3, 1.0) + rng.uniform(0, 0.2, shape), 0, 1)
                                         .astype(np.float32) for key, m in masks.items()})
            else:
                kw = dict(masks=masks)
                if (i // 5) % 2 == 0 and encoding != 'instances':
                    kw['ignore'] = (x < 2)
            w.add_segmentation('seg', grid='g', encoding=encoding, **kw)
        if i % 4 == 1:
            w.add_mask('fov', np.ones(shape, bool), grid='g')
    if encoding is not None:
        s = medh5.open(path)
        ann = s.annotations['seg']
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            lm = ann.labelmap()
            start = [int(rng.integers(0, d)) for d in shape]
            count = [int(rng.integers(1, d - a + 1)) for a, d in zip(start, shape)]
            patch = ann.labelmap(roi=tuple(slice(a, a + c) for a, c in zip(start, count)))
        lm.astype('<u2').tofile(path + '.seg.lm')
        patch.astype('<u2').tofile(path + '.seg.patch')
        entry['annotations'].append({'id': 'seg', 'kind': ann.kind, 'start': start, 'count': count,
                                     'dtype': str(lm.dtype)})
        s.close()
    medh5_mutate.flip(path, path + '.flip.medh5', 'images/img')
    medh5_mutate.attr(path, path + '.attr.medh5', 'images/img', 'modality', 'XA')
    medh5_mutate.stale_cid(path, path + '.cid.medh5')
    entry['mutations'] = [name + '.flip.medh5', name + '.attr.medh5', name + '.cid.medh5']
    manifest.append(entry)
json.dump(manifest, open(os.path.join(out, 'manifest.json'), 'w'), indent=1)
print(f'{len(manifest)} samples')
