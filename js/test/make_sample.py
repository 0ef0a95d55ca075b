"""A medh5 sample written by the reference medh5 package for the package's
tests and the viewer's browser test, and what it holds (`sample.json`):
its content_id, one CT slice's pixel values and labels at a few points.

Usage: make_sample.py OUT_DIR [Z Y X]

The image `CT` is int16 of shape Z×Y×X (default 320×256×256), the
annotation `seg` a labelmap (uint8) of two spheres. The reference writer
chunks the image in blocks 64 voxels deep, so one slice would need a fifth
of the file; the image is then rewritten with thin chunks (2×128×128, the
same filters, values and attributes) as a slice viewer's files would be
chunked, so that showing a slice needs a few percent of the file.
"""
import json
import os
import sys

import h5py
import hdf5plugin  # noqa: F401  (registers the filters the reference writer uses)
import medh5
import numpy as np
from medh5.labels import from_keys


def rechunk(path, name, chunks):
    """Rewrite dataset `name` of `path` with `chunks` (everything else copied)."""
    tmp = path + ".tmp"
    with h5py.File(path, "r") as src, h5py.File(tmp, "w") as dst:
        for k, v in src.attrs.items():
            dst.attrs[k] = v
        parent, leaf = name.rsplit("/", 1)
        for key in src:
            if key != parent:
                src.copy(src[key], dst, name=key)
        g = dst.create_group(parent)
        for k, v in src[parent].attrs.items():
            g.attrs[k] = v
        for key in src[parent]:
            if key != leaf:
                src.copy(src[parent][key], g, name=key)
        old = src[name]
        dcpl = old.id.get_create_plist()
        dcpl.set_chunk(chunks)
        new = h5py.h5d.create(g.id, leaf.encode(), old.id.get_type(), old.id.get_space(), dcpl=dcpl)
        ds = h5py.Dataset(new)
        ds[...] = old[...]
        for k, v in old.attrs.items():
            ds.attrs[k] = v
    os.replace(tmp, path)


def main():
    out = sys.argv[1]
    shape = tuple(int(x) for x in sys.argv[2:5]) if len(sys.argv) >= 5 else (320, 256, 256)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "sample.medh5")
    if os.path.exists(path):
        os.remove(path)
    rng = np.random.default_rng(5)
    z, y, x = np.indices(shape)
    ct = (rng.integers(-1000, 2000, shape)).astype(np.int16)
    lm = np.zeros(shape, np.uint8)
    lm[(z - shape[0] // 2) ** 2 + (y - 80) ** 2 + (x - 80) ** 2 < 30 ** 2] = 1
    lm[(z - shape[0] // 2) ** 2 + (y - 170) ** 2 + (x - 160) ** 2 < 40 ** 2] = 2
    with medh5.create(path, sample_id="viewer", subject_id="SUBJ-1", codec="balanced") as w:
        w.add_grid("g", shape=shape, spacing=(2.0, 0.8, 0.8))
        w.add_image("CT", ct, grid="g", modality="CT")
        w.label_set(from_keys(["liver", "spleen"], id="organs"))
        w.add_segmentation("seg", grid="g", encoding="labelmap", labelmap=lm,
                           label_values={1: "liver", 2: "spleen"})
    rechunk(path, "images/CT", (2, 128, 128))
    with h5py.File(path, "r") as f:
        cid = f.attrs.get("content_id")
        cid = cid.decode() if isinstance(cid, bytes) else cid
        ds = f["images/CT"] if isinstance(f["images/CT"], h5py.Dataset) else f["images/CT/data"]
        chunks = ds.chunks
    zi = shape[0] // 2
    points = [[zi, 80, 80], [zi, 170, 160], [zi, 5, 250], [zi, 128, 128]]
    info = {
        "shape": list(shape),
        "content_id": cid,
        "chunks": list(chunks) if chunks else None,
        "size": os.path.getsize(path),
        "slice": zi,
        "points": [{"at": p, "ct": int(ct[tuple(p)]), "label": int(lm[tuple(p)])} for p in points],
        "slice_sum": int(ct[zi].astype(np.int64).sum()),
        "label_count": int((lm[zi] > 0).sum()),
    }
    with open(os.path.join(out, "sample.json"), "w") as fh:
        json.dump(info, fh)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
