"""purehdf.medh5's reference-shaped API returns what the reference medh5
package returns on samples the reference wrote (every voxel encoding, every
profile): grids, annotations, dense(), labelmap() (whole, a region, with a
priority), voxel_counts(), class_bboxes(), patch draws with the same seeds,
pack/open_collection and recompress; a script written for the reference runs
unchanged with only its import changed."""

import glob
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from conftest import INTEROP, need


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    need("medh5")
    out = str(tmp_path_factory.mktemp("medh5api"))
    subprocess.run([sys.executable, os.path.join(INTEROP, "medh5_random_samples.py"), out, "12",
                    "7"], check=True, capture_output=True)
    paths = sorted(p for p in glob.glob(os.path.join(out, "r*.medh5")) if p.count(".") == 1)
    assert len(paths) == 12
    return paths


def test_grids_and_annotations_equal_the_reference(samples):
    import medh5 as ref
    from purehdf import medh5 as ours
    n_dense = n_lm = n_stats = 0
    for p in samples:
        with ref.open(p) as a, ours.open(p) as b, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert sorted(a.grids) == sorted(b.grids), p
            for g in a.grids:
                ga, gb = a.grids[g], b.grids[g]
                assert (ga.shape, ga.spacing, ga.origin, ga.timepoint, ga.spatial_shape) == \
                    (gb.shape, gb.spacing, gb.origin, gb.timepoint, gb.spatial_shape), p
                assert np.allclose(ga.direction, gb.direction)
                assert np.allclose(ga.affine, gb.affine)
            assert sorted(a.annotations) == sorted(b.annotations), p
            for k in a.annotations:
                x, y = a.annotations[k], b.annotations[k]
                assert (x.kind, x.class_ids, x.grid_id) == (y.kind, y.class_ids, y.grid_id), p
                if not hasattr(x, "dense"):
                    continue
                assert np.array_equal(x.dense(), y.dense()), (p, k)
                sp = x.spatial_shape
                roi = tuple(slice(n // 4, max(n // 4 + 1, n - n // 3)) for n in sp)
                assert np.array_equal(x.dense(roi=roi), y.dense(roi=roi)), (p, k)
                n_dense += 2
                if x.kind == "mask":
                    continue
                assert np.array_equal(x.labelmap(), y.labelmap()), (p, k)
                assert np.array_equal(x.labelmap(roi=roi), y.labelmap(roi=roi)), (p, k)
                pri = list(reversed(x.class_ids))
                assert np.array_equal(x.labelmap(priority=pri), y.labelmap(priority=pri)), (p, k)
                pri = [x.class_ids[0]]
                assert np.array_equal(x.labelmap(roi=roi, priority=pri),
                                      y.labelmap(roi=roi, priority=pri)), (p, k)
                n_lm += 4
                assert x.voxel_counts() == y.voxel_counts(), (p, k)
                ba, bb = x.class_bboxes(), y.class_bboxes()
                assert ba.keys() == bb.keys()
                for c in ba:
                    assert (ba[c] is None) == (bb[c] is None), (p, k, c)
                    if ba[c] is not None:
                        assert np.array_equal(ba[c], bb[c]), (p, k, c)
                n_stats += 1
    print("medh5 api: %d dense, %d labelmap, %d counts/boxes equal" % (n_dense, n_lm, n_stats))
    assert n_dense >= 10 and n_lm >= 10 and n_stats >= 5


def test_draws_equal_the_reference(samples, tmp_path):
    import medh5 as ref
    from medh5 import _core
    from medh5.sampling import PatchSampler as RefSampler
    from purehdf import medh5 as ours
    # the reference's random samples have no sampling index (the labels are
    # scanned); its synthetic sample has one (the draws read it)
    indexed = _core.bench_synthetic_sample(str(tmp_path), shape=(24, 40, 36), classes=5,
                                           codec="training", index=True)
    with ours.open(indexed) as b, ref.open(indexed) as a:
        assert ours.PatchSampler(4, strategy="foreground").draw(b, rng=1).used_index is True
        assert b.fresh_indices == a.fresh_indices == frozenset(a.annotations) - {"seg_ignore"}
    for p in samples:
        with ours.open(p) as b, ref.open(p) as a:
            assert b.fresh_indices == a.fresh_indices, p
    compared = 0
    for p in samples + [indexed]:
        with ref.open(p) as a, ours.open(p) as b:
            anns = [k for k, v in a.annotations.items()
                    if getattr(v, "kind", None) in ("labelmap", "layers", "bitmask",
                                                    "probmap", "instances")]
            for k in anns:
                for strategy in ("uniform", "foreground", "balanced"):
                    for size in (4, (2, 9, 5)):
                        sa = RefSampler(size, strategy=strategy)
                        sb = ours.PatchSampler(size, strategy=strategy)
                        for i in range(6):
                            assert sa.draw(a, k, rng=(3, 1, i)).to_json() == \
                                sb.draw(b, k, rng=(3, 1, i)).to_json(), (p, k, strategy, size, i)
                        assert sa.draw(a, k, rng=11).to_json() == sb.draw(b, k, rng=11).to_json()
                        assert [x.to_json() for x in sa.draws(a, k, 5, rng=12)] == \
                            [x.to_json() for x in sb.draws(b, k, 5, rng=12)]
                        compared += 12
    print("medh5 draws: %d equal to the reference's" % compared)
    assert compared >= 500


def test_pack_open_collection_recompress(samples, tmp_path):
    import medh5 as ref
    from purehdf import medh5 as ours
    shard = str(tmp_path / "c.medh5c")
    keys = ["k%d" % i for i in range(4)]
    assert str(ours.pack(samples[:4], shard, keys=keys)) == shard
    with ref.open_collection(shard) as ra, ours.open_collection(shard) as ob:
        assert sorted(ra) == sorted(ob) == keys
        for key, src in zip(keys, samples):
            assert ra[key].content_id == ob[key].content_id == ref.open(src).content_id
            assert ob[key].verify().ok and ob[key].compute_content_id() == ra[key].content_id
            img = sorted(ra[key].images)[0]
            assert np.array_equal(ra[key].images[img].read(), ob[key].images[img].read())
    out = str(tmp_path / "re.medh5")
    r = ours.recompress(samples[0], "archive", out=out)
    assert r["content_id_preserved"] is True
    with ref.open(out) as a:
        assert a.verify().ok and a.content_id == ref.open(samples[0]).content_id


SCRIPT = '''
import sys, warnings
import numpy as np
import medh5
from medh5 import PatchSampler
warnings.simplefilter("ignore")
for path in sys.argv[1:]:
    with medh5.open(path) as s:
        print(s.identity.sample_id, s.content_id, sorted(s.profiles), sorted(s.grids))
        for g, grid in s.grids.items():
            print(g, grid.shape, grid.spacing, grid.origin, grid.timepoint)
        for iid, im in s.images.items():
            print(iid, im.shape, im.dtype, im.chunks, float(np.asarray(im.read(), float).sum()))
        for k, ann in s.annotations.items():
            print(k, ann.kind, ann.class_ids, ann.grid_id)
            if ann.kind in ("labelmap", "layers", "bitmask", "probmap", "instances"):
                print(int(ann.labelmap().sum()), ann.voxel_counts(), int(ann.dense().sum()))
                print({c: None if b is None else b.tolist() for c, b in ann.class_bboxes().items()})
                sm = PatchSampler(6, strategy="balanced")
                print([sm.draw(s, k, rng=(5, i)).to_json() for i in range(3)])
        v = s.verify()
        print(v.ok, v.content_id_ok, len(v.checked), s.compute_content_id())
'''


def test_a_reference_script_runs_unchanged(samples, tmp_path):
    need("medh5")
    a = tmp_path / "ref.py"
    a.write_text(SCRIPT)
    b = tmp_path / "ours.py"
    b.write_text(SCRIPT.replace("import medh5\nfrom medh5 import PatchSampler",
                                "from purehdf import medh5\nfrom purehdf.medh5 import PatchSampler"))
    ra = subprocess.run([sys.executable, str(a)] + samples, capture_output=True, text=True,
                        check=True)
    rb = subprocess.run([sys.executable, str(b)] + samples, capture_output=True, text=True,
                        check=True)
    assert ra.stdout.count("\n") > 50
    assert ra.stdout == rb.stdout


def _item(args):
    ds, i = args
    return ds[i]


def test_patch_dataset_with_two_workers(samples):
    import pickle
    from concurrent.futures import ProcessPoolExecutor
    import multiprocessing

    import medh5 as ref
    from medh5.sampling import PatchSampler as RefSampler
    from purehdf import medh5 as ours
    paths = [p for p in samples
             if ours.open(p).annotations.get("seg") is not None
             and ours.open(p).annotations["seg"].kind == "labelmap"]
    assert paths
    ds = ours.PatchDataset(paths, ours.PatchSampler(5, strategy="balanced"),
                           samples_per_volume=4, annotations={"seg": []}, seed=9)
    ds = pickle.loads(pickle.dumps(ds))
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(2, mp_context=ctx) as pool:
        items = list(pool.map(_item, [(ds, i) for i in range(len(ds))]))
    assert len(items) == len(ds) == 4 * len(paths)
    sm = RefSampler(5, strategy="balanced")
    for i, it in enumerate(items):
        p = paths[i // 4]
        with ref.open(p) as s:
            patch = sm.draw(s, "seg", rng=(9, 0, i))
            assert it["meta"]["patch"] == patch.to_json()
            img = sorted(s.images)[0]
            want = patch.apply_padding(s.images[img].read(patch.slices, physical=True,
                                                          dtype=np.float32))
            assert np.array_equal(it["images"][img], want)
            lab = patch.apply_padding(s.annotations["seg"].dense(roi=patch.slices)
                                      .astype(np.float32))
            assert np.array_equal(it["label"]["seg"], lab)
