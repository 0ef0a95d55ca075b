"""The rest of the reference medh5 API in purehdf.medh5, each against the
reference on the same files: the sampler's ``foreground_classes`` /
``class_weights`` (draws with the same seeds equal), its refusals,
``Sample.at`` and the timepoint-aware collections on a longitudinal sample
both writers wrote, the error hierarchy, and an amended image chunked as
the reference's amend chunks it."""

import glob
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import INTEROP, need

WEIGHTS = ("uniform", "frequency", "inverse_frequency", {1: 1.0, 2: 3.0}, {3: 2.0, 9: 1.0})


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    need("medh5")
    from medh5 import _core
    out = str(tmp_path_factory.mktemp("medh5pyapi"))
    subprocess.run([sys.executable, os.path.join(INTEROP, "medh5_random_samples.py"), out, "6",
                    "11"], check=True, capture_output=True)
    paths = sorted(p for p in glob.glob(os.path.join(out, "r*.medh5")) if p.count(".") == 1)
    assert len(paths) == 6
    # the synthetic sample has a sampling index (the draws read it)
    indexed = _core.bench_synthetic_sample(out, shape=(16, 24, 20), classes=5,
                                           codec="training", index=True)
    return paths + [indexed]


def test_class_selection_draws_equal_the_reference(samples):
    import medh5 as ref
    from medh5.sampling import PatchSampler as RefSampler
    from purehdf import medh5 as ours
    compared = targeted = 0
    for p in samples:
        with ref.open(p) as a, ours.open(p) as b:
            anns = [k for k, v in a.annotations.items()
                    if getattr(v, "kind", None) in ("labelmap", "layers", "bitmask",
                                                    "probmap", "instances")]
            keys = [c.key for c in a.label_set.classes] if a.label_set is not None else []
            selections = [None, [2], [1, 3, 70000]] + ([[keys[-1], 1]] if keys else [])
            for k in anns:
                for weights in WEIGHTS:
                    for classes in selections:
                        for strategy in ("foreground", "balanced"):
                            kw = dict(strategy=strategy, foreground_classes=classes,
                                      class_weights=weights)
                            sa, sb = RefSampler(4, **kw), ours.PatchSampler(4, **kw)
                            da = [x.to_json() for x in sa.draws(a, k, 6, rng=5)]
                            db = [x.to_json() for x in sb.draws(b, k, 6, rng=5)]
                            assert da == db, (p, k, kw)
                            ra = sa.draw(a, k, rng=(2, 1, 7)).to_json()
                            assert ra == sb.draw(b, k, rng=(2, 1, 7)).to_json(), (p, k, kw)
                            compared += 7
                            targeted += sum(d["class_id"] is not None for d in da)
    print("medh5 class-selected draws: %d equal to the reference's (%d on a class)"
          % (compared, targeted))
    assert compared >= 1000 and targeted >= 300


def test_pick_class_and_refusals_as_the_reference():
    need("medh5")
    from medh5.sampling import PatchSampler as RefSampler
    from purehdf import medh5 as ours
    counts = {3: 60, 1: 10, 2: 30, 4: 0}
    for weights in WEIGHTS + ({1: 0.0, 2: 0.0},):
        sa, sb = RefSampler(8, class_weights=weights), ours.PatchSampler(8, class_weights=weights)
        for seed in list(range(40)) + [(1, 2, 3)]:
            assert sa._pick_class(counts, seed) == sb._pick_class(counts, seed), (weights, seed)
    for bad in ("bogus", {1: -1.0}, {1: float("inf")}, {1: float("nan")}):
        with pytest.raises(ValueError) as ea:
            RefSampler(8, class_weights=bad)
        with pytest.raises(ours.MEDH5ValidationError) as eb:
            ours.PatchSampler(8, class_weights=bad)
        assert isinstance(eb.value, ours.MEDH5Error) and type(ea.value).__name__ == \
            type(eb.value).__name__
    with pytest.raises(TypeError):
        ours.PatchSampler(8, foreground_classes=[1.5])
    with pytest.raises(ours.MEDH5ValidationError):
        ours.PatchSampler(8, strategy="nope")
    s = ours.PatchSampler(8)
    with pytest.raises(ours.MEDH5ValidationError):
        s.class_weights = "zz"
    assert s.class_weights == "uniform"  # a refused change leaves it as it was
    assert repr(s) == repr(RefSampler(8)) == "PatchSampler(8, balanced)"
    import pickle
    t = pickle.loads(pickle.dumps(ours.PatchSampler(8, class_weights={1: 2.0},
                                                    foreground_classes=[1])))
    assert (t.class_weights, t.foreground_classes) == ({1: 2.0}, (1,))


def build_longitudinal(mod, out):
    """The writer script: two visits, three images, one label per visit."""
    shape = (8, 12, 10)
    rng = np.random.default_rng(1)
    lab = np.zeros(shape, np.uint8)
    lab[2:5, 3:7, 1:4] = 1
    lab[5:7, 8:11, 6:9] = 2
    with mod.create(out, sample_id="L1", subject_id="p9") as w:
        w.add_timepoint("base", date="2020-01-02", label="baseline", days_from_baseline=0.0)
        w.add_timepoint("fu1", date="2020-07-01", days_from_baseline=181.0)
        w.add_grid("g0", shape=shape, spacing=(2.0, 1.0, 1.0), timepoint="base")
        w.add_grid("g1", shape=shape, spacing=(2.0, 1.0, 1.0), timepoint="fu1")
        w.add_image("ct0", rng.integers(0, 100, size=shape, dtype=np.int16), grid="g0",
                    modality="CT")
        w.add_image("ct1", rng.integers(0, 100, size=shape, dtype=np.int16), grid="g1",
                    modality="CT")
        w.add_image("mr1", rng.random(shape, dtype=np.float32), grid="g1", modality="MR")
        w.label_set(mod.LabelSet("organs", [mod.LabelClass(1, "liver", "Liver"),
                                            mod.LabelClass(2, "spleen", "Spleen")]))
        w.add_segmentation("seg0", grid="g0", labelmap=lab, label_values={1: "liver",
                                                                          2: "spleen"})
        w.add_segmentation("seg1", grid="g1", labelmap=lab[::-1].copy(),
                           label_values={1: "liver", 2: "spleen"})


def views(mod, path):
    """What a script reads through the timepoint API."""
    out = []
    with mod.open(path) as s:
        tl = s.timepoints
        out.append((tl.ids, tl["fu1"].to_json(), tl[0].to_json(), "fu1" in tl,
                    tl.interval_days("base", "fu1"), s.is_longitudinal, s.content_id))
        for key in ("base", "fu1", 0, 1):
            v = s.at(key)
            out.append((v.id, repr(v), sorted(v.grids), sorted(v.images),
                        sorted(v.annotations), v.timepoint.to_json()))
        out.append((s.images.by_modality("CT"), s.images.on_grid("g1"),
                    s.images.by_timepoint("fu1")))
        ann = s.annotations
        out.append(tuple(tuple(a.ann_id for a in x) for x in (
            ann.by_kind("labelmap"), ann.by_task("segmentation"), ann.spanning(),
            ann.by_timepoint("base"))))
        out.append({k: a.timepoints for k, a in ann.items()})
        with pytest.raises(KeyError):
            s.at("nope")
    return out


def test_timepoint_views_equal_the_reference(tmp_path):
    need("medh5")
    import medh5 as ref
    from purehdf import medh5 as ours
    pa, pb = str(tmp_path / "ref.medh5"), str(tmp_path / "ours.medh5")
    build_longitudinal(ref, pa)
    build_longitudinal(ours, pb)
    want = views(ref, pa)
    assert want[0][0] == ("base", "fu1") and want[0][4] == 181.0
    assert views(ours, pa) == want
    assert views(ours, pb) == want  # our writer's file: the same, content_id too
    assert views(ref, pb) == want


def test_error_hierarchy_as_the_reference():
    need("medh5")
    import medh5 as ref
    from purehdf import medh5 as ours
    for name in ("MEDH5FileError", "MEDH5FileNotFoundError", "MEDH5IOError",
                 "MEDH5IntegrityError", "MEDH5IsADirectoryError", "MEDH5PermissionError",
                 "MEDH5SchemaError", "MEDH5ValidationError", "MEDH5VersionError"):
        a, b = getattr(ref, name), getattr(ours, name)
        bases = lambda c: sorted(k.__name__.replace("Medh5Error", "MEDH5Error")  # noqa: E731
                                 for k in c.__mro__ if k not in (object, BaseException))
        # purehdf's Medh5Error is also a ValueError (the reference's is not)
        assert bases(a) == [n for n in bases(b) if n != "ValueError" or n in bases(a)], name
    ours.set_threads(2)
    assert ours.get_threads() == 2
    with pytest.raises(ValueError):
        ours.set_threads(0)


def test_amended_image_chunks_equal_the_reference(tmp_path):
    need("medh5")
    import h5py
    import medh5 as ref
    from purehdf import medh5 as ours
    shape = (24, 40, 48)
    got = {}
    for mod, name in ((ref, "ref"), (ours, "ours")):
        p = str(tmp_path / (name + ".medh5"))
        with mod.create(p, sample_id="s", subject_id="p") as w:
            w.add_grid("g0", shape=shape, spacing=(1.0, 1.0, 1.0))
            w.add_grid("g1", shape=shape, spacing=(1.0, 1.0, 1.0), patch_hint=(8, 16, 16))
            w.add_image("ct", np.arange(np.prod(shape), dtype=np.int16).reshape(shape),
                        grid="g0", modality="CT")
        with mod.amend(p) as w:
            w.add_image("mr", np.ones(shape, np.float32), grid="g1", modality="MR")
            w.add_image("pt", np.ones(shape, np.uint16), grid="g0", modality="PT")
        with h5py.File(p, "r") as f:
            got[name] = {k: f["images"][k].chunks for k in f["images"]}
    assert got["ours"] == got["ref"]
    assert got["ref"]["mr"] != got["ref"]["pt"]  # the grid's patch hint chose it
