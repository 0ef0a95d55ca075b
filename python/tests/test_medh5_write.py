"""purehdf.medh5's writers against the reference's: the same script, with
only its import changed, writes a sample with each package (``create``,
then ``amend``); each side's file verifies under both readers and reads the
same images, annotations and identity, with the same ``content_id``. The
read API beyond the basics (``valid_region``, ``ignore_region``, image and
annotation headers, grid transforms) returns what the reference returns."""

import numpy as np
import pytest

from conftest import need


def build(mod, out, codec="balanced"):
    """The writer script: one CT-like image, a labelmap and a masks
    annotation, a label set and identity fields."""
    rng = np.random.default_rng(0)
    shape = (20, 40, 48)
    ct = rng.integers(-1000, 1000, size=shape, dtype=np.int16)
    lab = np.zeros(shape, np.uint8)
    lab[5:10, 10:20, 10:30] = 1
    lab[12:15, 5:9, 30:40] = 2
    with mod.create(out, sample_id="s1", subject_id="p1", codec=codec) as w:
        w.add_grid("g0", shape=shape, spacing=(2.0, 0.8, 0.8), origin=(0.0, 1.0, 2.0))
        w.add_image("ct", ct, grid="g0", modality="CT", value_units="HU",
                    rescale_slope=1.0, rescale_intercept=-1024.0)
        w.label_set(mod.LabelSet("organs", [mod.LabelClass(1, "liver", "Liver"),
                                            mod.LabelClass(2, "spleen", "Spleen")]))
        w.add_segmentation("seg", grid="g0", labelmap=lab, label_values={1: "liver", 2: "spleen"})
        w.add_segmentation("masks", grid="g0", masks={"liver": lab == 1, 2: lab == 2})
        w.identity(sex="F", bodypart="abdomen")
    return ct, lab


def amend_it(mod, path):
    """The amend script: a second image, an identity field, one annotation
    removed."""
    mr = np.linspace(0, 1, 20 * 40 * 48, dtype=np.float32).reshape(20, 40, 48)
    with mod.amend(path) as w:
        w.add_image("mr", mr, grid="g0", modality="MR")
        w.identity(laterality="left")
        w.remove_annotation("masks")
    return mr


def same(pa, pb, ref, ours):
    """Both files read the same under both readers; returns the ids."""
    for reader in (ref, ours):
        with reader.open(pa) as a, reader.open(pb) as b:
            assert a.verify().ok and b.verify().ok
            assert a.identity == b.identity
            assert sorted(a.images) == sorted(b.images)
            for i in a.images:
                assert np.array_equal(a.images[i].read(), b.images[i].read()), i
                assert a.images[i].dtype == b.images[i].dtype
            assert sorted(a.annotations) == sorted(b.annotations)
            for k in a.annotations:
                assert a.annotations[k].kind == b.annotations[k].kind, k
                assert np.array_equal(a.annotations[k].labelmap(), b.annotations[k].labelmap())
            assert a.profiles == b.profiles
    with ref.open(pa) as a, ours.open(pb) as b:
        assert a.content_id == b.content_id
        assert b.compute_content_id() == b.content_id
        return sorted(a.images), sorted(a.annotations)


@pytest.mark.parametrize("codec", ["balanced", "portable"])
def test_create_and_amend_match_the_reference(tmp_path, codec):
    need("medh5")
    import medh5 as ref
    from purehdf import medh5 as ours
    pa, pb = str(tmp_path / "ref.medh5"), str(tmp_path / "ours.medh5")
    ct, lab = build(ref, pa, codec)
    build(ours, pb, codec)
    images, anns = same(pa, pb, ref, ours)
    assert images == ["ct"] and anns == ["masks", "seg"]
    with ours.open(pb) as s:
        assert np.array_equal(s.images["ct"].read(), ct)
        assert np.array_equal(s.annotations["seg"].labelmap(), lab)
        assert s.identity.sex == "F" and s.identity.bodypart == "abdomen"
    mr = amend_it(ref, pa)
    amend_it(ours, pb)
    images, anns = same(pa, pb, ref, ours)
    assert images == ["ct", "mr"] and anns == ["seg"]
    with ref.open(pb) as s:
        assert np.array_equal(s.images["mr"].read(), mr)
        assert s.identity.laterality == "left"


def test_writer_refusals(tmp_path):
    from purehdf import medh5 as ours
    p = str(tmp_path / "x.medh5")
    w = ours.create(p, sample_id="s", subject_id="p")
    with pytest.raises(ours.MEDH5Error):
        w.add_image("ct", np.zeros((2, 2, 2), np.int16), grid="nope", modality="CT")
    w.add_grid("g", shape=(2, 2, 2), spacing=(1, 1, 1))
    with pytest.raises(ours.MEDH5Error):  # no such class: no label set
        w.add_segmentation("s", grid="g", labelmap=np.ones((2, 2, 2), np.uint8))
    with pytest.raises(ours.MEDH5Error):  # no image (E201)
        w.commit()
    w.abort()
    import os
    assert not os.path.exists(p)


def test_read_api_equals_the_reference(tmp_path):
    need("medh5")
    import medh5 as ref
    from purehdf import medh5 as ours
    p = str(tmp_path / "ign.medh5")
    lab = np.zeros((8, 16, 16), np.uint8)
    lab[2:5, 3:9, 3:12] = 1
    lab[5:7, 10:14, 1:4] = 2
    ign = np.zeros_like(lab, bool)
    ign[0:2, 0:4, 0:4] = True
    valid = np.ones_like(lab, bool)
    valid[:, :, 14:] = False
    with ref.create(p, sample_id="s2", subject_id="p2") as w:
        w.add_grid("g0", shape=lab.shape, spacing=(1.0, 2.0, 0.5), origin=(1.0, 2.0, 3.0))
        w.add_mask("fov", valid, grid="g0")
        w.add_image("mr", np.arange(lab.size, dtype=np.float32).reshape(lab.shape), grid="g0",
                    modality="MR", valid_mask="fov", window_center=[10.0], window_width=[100.0])
        w.label_set(ref.LabelSet("o", [ref.LabelClass(1, "a", "A"), ref.LabelClass(2, "b", "B")]))
        w.add_segmentation("seg", grid="g0", labelmap=np.where(ign, 9, lab).astype(np.uint8),
                           label_values={1: "a", 2: "b"}, ignore_value=9)
        w.add_segmentation("seg2", grid="g0", masks={1: lab == 1, 2: lab == 2},
                           encoding="layers")
    roi = (slice(0, 3), slice(-6, None), slice(2, 15))
    with ref.open(p) as a, ours.open(p) as b:
        for r in (None, roi):
            assert np.array_equal(a.valid_region("mr", r), b.valid_region("mr", r))
            for k in ("seg", "seg2"):
                assert np.array_equal(a.ignore_region(k, r), b.ignore_region(k, r)), k
        assert b.ignore_region("seg").sum() == ign.sum()
        ia, ib = a.images["mr"], b.images["mr"]
        for n in ("window", "valid_mask", "value_units", "prov", "channel_names", "timepoint"):
            assert getattr(ia, n) == getattr(ib, n), n
        assert ia.grid.grid_id == ib.grid.grid_id
        for k in ("seg", "seg2", "fov"):
            x, y = a.annotations[k], b.annotations[k]
            assert x.ann_id == y.ann_id and x.closure == y.closure and x.prov == y.prov
            assert x.has_ignore_region == y.has_ignore_region, k
            assert [c.key for c in x.classes] == [c.key for c in y.classes]
            assert [c.id for c in x.annotated_classes] == [c.id for c in y.annotated_classes]
        assert a.annotations["seg"].class_key(2) == b.annotations["seg"].class_key(2) == "b"
        assert a.label_set.id == b.label_set.id
        assert [c.key for c in a.label_set.classes] == [c.key for c in b.label_set.classes]
        assert a.is_longitudinal == b.is_longitudinal
        assert a.timepoints.ids == b.timepoints.ids == ("tp0",)
        assert a.timepoints[0].index == b.timepoints[0].index
        ga, gb = a.grids["g0"], b.grids["g0"]
        idx = np.array([[1, 2, 3], [0, 0, 0], [7, 15, 15]])
        assert np.allclose(ga.index_to_world(idx), gb.index_to_world(idx))
        w = ga.index_to_world(idx)
        assert np.allclose(ga.world_to_index(w), gb.world_to_index(w))
        assert ga.patch_hint == gb.patch_hint and ga.chunk_hint == gb.chunk_hint
