"""Generate chunk_table.json: random inputs -> the reference engine's
`spatial_chunk_for` (medh5 2.2.3 `_core`) and h5py's `guess_chunk`.

Run: .oracle-venv/bin/python make_chunk_table.py (deterministic seed)."""
import json, os, random
from medh5 import _core
from h5py._hl.filters import guess_chunk

rng = random.Random(7)
L3 = [1441792, 262144, 16777216, 4194304, 33554432 // 12]
cases = []
for _ in range(400):
    nd = rng.choice([2, 3, 3, 3])
    shape = [rng.choice([rng.randint(1, 40), rng.randint(1, 700), 2 ** rng.randint(0, 11)]) for _ in range(nd)]
    kind = rng.choice(['none', 'int', 'axes'])
    if kind == 'none':
        patch = None
    elif kind == 'int':
        patch = rng.randint(0, 300)
    else:
        patch = [rng.randint(-2, 400) for _ in range(nd)]
    itemsize = rng.choice([1, 2, 4, 8])
    l3 = rng.choice(L3)
    out = _core.spatial_chunk_for(shape, patch, itemsize=itemsize, l3_bytes=l3)
    cases.append({'shape': shape, 'patch': patch, 'itemsize': itemsize, 'l3': l3, 'chunk': list(out)})
guess = []
for _ in range(200):
    nd = rng.randint(1, 4)
    shape = [rng.choice([rng.randint(1, 50), rng.randint(1, 3000), 0]) for _ in range(nd)]
    itemsize = rng.choice([1, 2, 4, 8])
    guess.append({'shape': shape, 'itemsize': itemsize,
                  'chunk': [int(x) for x in guess_chunk(tuple(shape), None, itemsize)]})
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, 'chunk_table.json'), 'w') as f:
    json.dump({'spatial_chunk_for': cases, 'guess_chunk': guess}, f)
    f.write('\n')
