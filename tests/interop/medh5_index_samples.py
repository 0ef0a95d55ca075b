"""Write seeded random medh5 samples for the sampling-index tests
(tests/medh5_index.rs), with the reference writer, and index a copy of each
with the reference's own `index build`.

Usage: python medh5_index_samples.py OUTDIR MEDH5_CLI [N] [SEED]
For sample i: OUTDIR/s<i>.medh5 (no index) and OUTDIR/s<i>.ref.medh5 (the
reference's `index build` of it with the sample's options); OUTDIR/manifest.json
lists file, encoding, classes, shape and the options (max_coords, seed,
occupancy). Encodings cycle through labelmap, layers, bitmask, probmap,
instances; class counts through 1 to 70 (some classes empty, some larger and
some smaller than max_coords); a few files are written under `portable`.
"""
import json
import os
import subprocess
import sys

import numpy as np

import medh5
from medh5.labels import from_keys

out, cli = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 15
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 20261202
os.makedirs(out, exist_ok=True)

ENCODINGS = ["labelmap", "layers", "bitmask", "probmap", "instances"]
CLASSES = [1, 3, 7, 63, 2, 20, 70, 5, 1, 12, 64, 4, 9, 30, 2]
MAXC = [4096, 5, 1, 50, 17, 4096, 3, 200, 2, 9]
SEEDS = [0, 1, 12345, 7, 2**40 + 3, 0, -1, 99]
OCC = [8, 4, 0, 8, 1, 3]

manifest = []
for i in range(n):
    rng = np.random.default_rng(seed + i)
    enc = ENCODINGS[i % len(ENCODINGS)]
    k = CLASSES[i % len(CLASSES)]
    if enc == "probmap":
        k = min(k, 12)
    shape = (int(rng.integers(2, 9)), int(rng.integers(5, 30)), int(rng.integers(5, 30)))
    opts = {"max_coords": MAXC[i % len(MAXC)], "seed": SEEDS[i % len(SEEDS)],
            "occupancy": OCC[i % len(OCC)]}
    if i == 15:
        # big enough that fg_coords and occupancy are chunked (>= 64 KiB)
        enc, k, shape = "labelmap", 3, (16, 48, 48)
        opts = {"max_coords": 7000, "seed": 3, "occupancy": 1}
    name = f"s{i:02d}.medh5"
    path = os.path.join(out, name)
    for p in (path, path[:-6] + ".ref.medh5"):
        if os.path.exists(p):
            os.remove(p)
    keys = [f"c{j}" for j in range(1, k + 1)]
    z, y, x = np.indices(shape)
    masks = {}
    for j, key in enumerate(keys):
        if j % 5 == 4:  # an empty class
            masks[key] = np.zeros(shape, bool)
            continue
        cz, cy, cx = (rng.integers(0, s) for s in shape)
        r = rng.uniform(1, max(2, min(shape) * 1.5)) if i != 15 else 40
        masks[key] = ((z - cz) ** 2 + (y - cy) ** 2 + (x - cx) ** 2) < r * r
    profile = "portable" if i % 4 == 3 else "balanced"
    img = rng.integers(-100, 100, shape).astype(np.int16)
    with medh5.create(path, sample_id=f"s{i}", subject_id=f"S{i}", codec=profile) as w:
        w.add_grid("g", shape=shape, spacing=(1.0, 1.0, 1.0))
        w.add_image("img", img, grid="g", modality="CT")
        w.label_set(from_keys(keys, id="rand"))
        if enc == "labelmap":
            lm = np.zeros(shape, np.uint8)
            for j, key in enumerate(keys):
                lm[masks[key]] = j + 1
            w.add_segmentation("seg", grid="g", labelmap=lm,
                               label_values={j + 1: key for j, key in enumerate(keys)})
        elif enc == "probmap":
            probs = {key: np.clip(m * rng.uniform(0.3, 1.0) + rng.uniform(0, 0.3, shape), 0, 1)
                     .astype(np.float32) for key, m in masks.items()}
            w.add_segmentation("seg", grid="g", probabilities=probs, encoding="probmap")
        else:
            w.add_segmentation("seg", grid="g", masks=masks, encoding=enc)
        if i % 3 == 0:
            # a second annotation, a labelmap of two classes
            w.add_segmentation("two", grid="g", labelmap=((x + y) % 3).astype(np.uint8),
                               label_values={1: keys[0], 2: keys[-1]} if k > 1 else {1: keys[0], 2: keys[0]})
    ref = path[:-6] + ".ref.medh5"
    with open(path, "rb") as f, open(ref, "wb") as g:
        g.write(f.read())
    args = [cli, "index", "build", ref, "--max-coords", str(opts["max_coords"]),
            "--seed", str(opts["seed"]), "--occupancy", str(opts["occupancy"])]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    s = medh5.open(path)
    kind = s.annotations["seg"].kind
    s.close()
    manifest.append({"file": name, "ref": os.path.basename(ref), "encoding": enc, "kind": kind,
                     "classes": k, "shape": list(shape), **opts})
json.dump(manifest, open(os.path.join(out, "manifest.json"), "w"), indent=1)
print(f"{len(manifest)} samples")
