"""Write the tiny medh5_verify seeds with the reference medh5 package (2.2.x):
`python make_tiny.py OUTDIR`. At 8x8x8 every codec profile stores unfiltered
datasets, so balanced and portable (the two distinct outputs) are kept."""
import sys, os
import numpy as np
import medh5
from medh5.labels import from_keys
out = sys.argv[1]
z, y, x = np.indices((8, 8, 8))
img = (z * 64 + y * 8 + x - 256).astype(np.int16)
lab = ((z + y + x) % 4).astype(np.uint8)
K = dict(keys=['liver', 'spleen', 'kidney'], id='t')
for profile in ['balanced', 'training', 'archive', 'portable']:
    for chunk in (False, True):
        kw = dict(chunk_hint=(4, 4, 8)) if chunk else {}
        p = os.path.join(out, f'tiny_{profile}{"_chunked" if chunk else ""}.medh5')
        with medh5.create(p, sample_id='t', subject_id='S', codec=profile) as w:
            w.add_grid('g', shape=(8, 8, 8), spacing=(2.0, 0.8, 0.8), **kw)
            w.add_image('CT', img, grid='g', modality='CT')
            w.label_set(from_keys(K['keys'], id=K['id']))
            w.add_segmentation('organs', grid='g', labelmap=lab, label_values={1: 'liver', 2: 'spleen', 3: 'kidney'})
a = (z + y + x) % 4 == 1; b = x < 4
p = os.path.join(out, 'tiny_stacked.medh5')
with medh5.create(p, sample_id='t3', subject_id='S', codec='balanced') as w:
    w.add_grid('g', shape=(8, 8, 8), spacing=(2.0, 0.8, 0.8), chunk_hint=(4, 8, 8))
    w.add_image('CT', img, grid='g', modality='CT')
    w.label_set(from_keys(K['keys'], id=K['id']))
    w.add_segmentation('bit', grid='g', masks={'liver': a, 'spleen': b}, encoding='bitmask')
    w.add_segmentation('prob', grid='g', probabilities={'liver': a * 0.5}, encoding='probmap')
    w.add_segmentation('inst', grid='g', masks={'liver': (z < 2) & (y < 2)}, encoding='instances')
    w.add_mask('fov', np.ones((8, 8, 8), bool), grid='g')
    w.build_index(max_coords=4, seed=0)
p = os.path.join(out, 'tiny_minimal.medh5')
with medh5.create(p, sample_id='m', subject_id='S', codec='balanced') as w:
    w.add_grid('g', shape=(2, 2, 2), spacing=(1.0, 1.0, 1.0))
    w.add_image('CT', img[:2, :2, :2], grid='g', modality='CT')
print('ok')
