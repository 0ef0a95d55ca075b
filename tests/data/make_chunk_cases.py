"""Write small samples with the reference writer (no chunk_hint) and record each
dataset's chunks, for the write-plan chunk rules (§6.3) on this host's L3.
Run: .oracle-venv/bin/python make_chunk_cases.py  -> chunk_cases.json"""
import json, os, tempfile
import numpy as np, h5py, hdf5plugin  # noqa: F401
import medh5
from medh5 import _core
from medh5.labels import from_keys

out = {'l3_bytes': _core.detect_l3_bytes(), 'cases': []}
tmp = tempfile.mkdtemp()
cases = [
    ('a', dict(shape=(40, 200, 180), spacing=(1.0, 1.0, 1.0)), np.int16),
    ('b', dict(shape=(40, 200, 180), spacing=(1.0, 1.0, 1.0), patch_hint=(32, 96, 96)), np.float32),
    ('c', dict(shape=(3, 30, 100, 100), spacing=(1.0, 1.0, 1.0), axis_kinds=('channel', 'spatial', 'spatial', 'spatial')), np.uint8),
    ('d', dict(shape=(300, 280), spacing=(1.0, 1.0)), np.float64),
]
for name, grid, dt in cases:
    p = os.path.join(tmp, name + '.medh5')
    shape = grid['shape']
    spatial = shape[-3:] if len(shape) == 4 else shape
    with medh5.create(p, sample_id=name, subject_id='S', codec='balanced') as w:
        w.add_grid('g', **grid)
        w.add_image('I', (np.arange(np.prod(shape)) % 97).astype(dt).reshape(shape), grid='g', modality='CT')
        w.label_set(from_keys(['liver', 'spleen', 'kidney'], id='demo'))
        idx = np.indices(spatial)
        a = (idx.sum(0) % 3) == 0
        b = (idx.sum(0) % 5) == 0
        w.add_segmentation('lay', grid='g', masks={'liver': a, 'spleen': b}, encoding='layers')
        w.add_segmentation('lm', grid='g', labelmap=a.astype(np.uint8), label_values={1: 'liver'})
    f = h5py.File(p, 'r')
    ds = {}
    f.visititems(lambda n, o: ds.__setitem__(n, list(o.chunks) if o.chunks else None) if isinstance(o, h5py.Dataset) and n != 'meta' else None)
    out['cases'].append({'name': name, 'grid': {k: list(v) if isinstance(v, tuple) else v for k, v in grid.items()},
                         'dtype': np.dtype(dt).str, 'chunks': ds})
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, 'chunk_cases.json'), 'w') as fh:
    json.dump(out, fh, indent=1)
    fh.write('\n')
print(json.dumps(out))
