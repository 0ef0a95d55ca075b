//! End to end: samples through the model and the write plan, compared with the vector files.

use super::*;

pub(crate) fn fixture_attr_json(attrs: &serde_json::Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = attrs
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["name"] != "digest")
        .map(|a| {
            (
                a["name"].as_str().unwrap().to_string(),
                Json::from_serde(&a["value"]).to_canonical(),
            )
        })
        .collect();
    v.sort();
    v
}

pub(crate) fn plan_attr_json(
    attrs: &[(String, purehdf_medh5::attribute::AttrValue)],
) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = attrs
        .iter()
        .filter(|(k, _)| k != "digest")
        .map(|(k, a)| (k.clone(), a.to_json().to_canonical()))
        .collect();
    v.sort();
    v
}

#[test]
pub(crate) fn model_plans_reproduce_vectors() {
    let fx = fixture();
    for (name, want_cid) in CONTENT_IDS {
        let plan = plan_for(name);
        let entry = &fx[*name];
        assert_eq!(plan.content_id, *want_cid, "{name}");
        assert_eq!(plan.meta, entry["meta"].as_str().unwrap(), "{name}");
        let mut n_datasets = 0;
        for ds in entry["datasets"].as_array().unwrap() {
            let path = ds["path"].as_str().unwrap();
            n_datasets += 1;
            let mine = plan
                .dataset(path)
                .unwrap_or_else(|| panic!("{name}: {path} missing from plan"));
            let shape: Vec<u64> = ds["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_u64().unwrap())
                .collect();
            assert_eq!(mine.shape, shape, "{name} {path}");
            let digest = mine
                .attrs
                .iter()
                .find(|(k, _)| k == "digest")
                .map(|(_, v)| v.to_json());
            if ds["digest"].is_null() {
                assert_eq!(digest, None, "{name} {path}");
            } else {
                assert_eq!(
                    digest,
                    Some(Json::from_serde(&ds["digest"])),
                    "{name} {path}"
                );
            }
            assert_eq!(
                purehdf_medh5::integrity::dtype_descr(&mine.datatype).as_deref(),
                ds["dtype"].as_str(),
                "{name} {path}"
            );
            match (&mine.layout, ds["chunks"].as_array()) {
                (Layout::Contiguous, None) => {}
                (Layout::Chunked { dims, filters }, Some(c)) => {
                    let c: Vec<u64> = c.iter().map(|e| e.as_u64().unwrap()).collect();
                    assert_eq!(*dims, c, "{name} {path}");
                    let theirs: Vec<(u64, Vec<u64>)> = ds["filters"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|f| {
                            (
                                f["id"].as_u64().unwrap(),
                                f["cd_values"]
                                    .as_array()
                                    .unwrap()
                                    .iter()
                                    .map(|e| e.as_u64().unwrap())
                                    .collect(),
                            )
                        })
                        .collect();
                    let ours: Vec<(u64, Vec<u64>)> = filters
                        .iter()
                        .map(|f| {
                            (
                                u64::from(f.id),
                                f.cd_values.iter().map(|&v| u64::from(v)).collect(),
                            )
                        })
                        .collect();
                    assert_eq!(ours, theirs, "{name} {path}");
                }
                (l, c) => panic!("{name} {path}: layout {l:?} vs chunks {c:?}"),
            }
        }
        let planned = plan
            .steps
            .iter()
            .filter(|s| matches!(s, PlanStep::Dataset(d) if d.path != "/meta"))
            .count();
        assert!(n_datasets > 0);
        assert_eq!(planned, n_datasets, "{name}");
        for obj in entry["objects"].as_array().unwrap() {
            let path = obj["path"].as_str().unwrap();
            let attrs = match plan.group_attrs(path) {
                Some(a) => plan_attr_json(a),
                None => plan_attr_json(&plan.dataset(path).unwrap().attrs),
            };
            assert_eq!(attrs, fixture_attr_json(&obj["attrs"]), "{name} {path}");
        }
        let Some(PlanStep::RootAttrs(root)) = plan.steps.last() else {
            panic!()
        };
        let names: Vec<&str> = root.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "medh5_version",
                "medh5_kind",
                "medh5_profiles",
                "created",
                "generator",
                "digest_algo",
                "content_id"
            ]
        );
        let theirs: Vec<(String, String)> = fixture_attr_json(&entry["root_attrs"])
            .into_iter()
            .filter(|(k, _)| k.starts_with("medh5_") || k == "digest_algo" || k == "content_id")
            .collect();
        let ours: Vec<(String, String)> = plan_attr_json(root)
            .into_iter()
            .filter(|(k, _)| k.starts_with("medh5_") || k == "digest_algo" || k == "content_id")
            .collect();
        assert_eq!(ours, theirs, "{name}");
    }
}

#[test]
pub(crate) fn content_id_does_not_depend_on_profile_or_chunking() {
    let (s, _) = build_sample("v2_balanced.medh5");
    let mut ids = Vec::new();
    for profile in Profile::ALL {
        for l3 in [262_144u64, 16_777_216] {
            let mut s2 = s.clone();
            s2.grids[0].chunk_hint = None;
            let opts = WriteOptions {
                profile,
                l3_bytes: Some(l3),
                ..WriteOptions::default()
            };
            let plan = s2.into_plan(opts).unwrap();
            ids.push(plan.content_id);
        }
    }
    // Without chunk_hint the grid attributes change, so the id differs from the
    // vector's but is the same for every profile and cache size.
    assert!(ids.windows(2).all(|w| w[0] == w[1]));
    assert_ne!(ids[0], CONTENT_IDS[2].1);
}

#[test]
pub(crate) fn sha512_and_blake2b_plans() {
    for algo in [DigestAlgo::Sha512, DigestAlgo::Blake2b] {
        let (s, _) = build_sample("v1_minimal.medh5");
        let plan = s
            .into_plan(WriteOptions {
                digest_algo: algo,
                ..WriteOptions::default()
            })
            .unwrap();
        let (a, hex) = integrity::parse_digest(&plan.content_id).unwrap();
        assert_eq!((a, hex.len()), (algo, 128));
        let d = plan.dataset("images/CT").unwrap();
        let dg = d
            .attrs
            .iter()
            .find(|(k, _)| k == "digest")
            .unwrap()
            .1
            .to_json();
        let Json::Str(dg) = dg else { panic!() };
        assert!(dg.starts_with(&format!("{}:", algo.name())));
    }
}

#[test]
pub(crate) fn invalid_samples_are_refused() {
    let code = |s: Sample| match s.into_plan(WriteOptions::default()) {
        Err(purehdf_medh5::error::Error::Code { code, .. }) => code,
        other => panic!("{other:?}"),
    };
    let (mut s, _) = build_sample("v1_minimal.medh5");
    s.images.clear();
    assert_eq!(code(s), "E201");
    let (mut s, _) = build_sample("v1b_dense_label.medh5");
    s.document.label_set = None;
    assert_eq!(code(s), "E301");
    let (mut s, _) = build_sample("v1_minimal.medh5");
    s.images[0].grid = "nope".into();
    assert_eq!(code(s), "E101");
    let (mut s, _) = build_sample("v1b_dense_label.medh5");
    s.annotations[0].class_ids = vec![1, 2];
    s.annotations[0].annotated_class_ids = vec![1, 2];
    assert_eq!(code(s), "E404");
}

/// Throughput of the streaming dataset digest (run with `--release -- --ignored --nocapture`).
#[test]
#[ignore]
pub(crate) fn hash_throughput() {
    let data: Vec<u8> = (0..64u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for algo in [DigestAlgo::Sha256, DigestAlgo::Sha512, DigestAlgo::Blake2b] {
        let t = std::time::Instant::now();
        let mut h = integrity::DatasetHasher::new(algo, "images/CT", "|u1", &[data.len() as u64]);
        for chunk in data.chunks(1 << 20) {
            h.update(chunk);
        }
        let d = h.finish();
        let secs = t.elapsed().as_secs_f64();
        println!("{}: {:.0} MiB/s ({})", algo.name(), 64.0 / secs, &d[..20]);
    }
}

pub(crate) fn plan_bytes(plan: &WritePlan, path: &str) -> Vec<u8> {
    match &plan.dataset(path).unwrap().data {
        purehdf_medh5::plan::PlanData::Bytes(b) => b.clone(),
        other => panic!("{other:?}"),
    }
}

pub(crate) fn i32s(rows: &[[i32; 3]]) -> Vec<u8> {
    rows.iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect()
}

#[test]
pub(crate) fn v3_index_matches_readme() {
    let plan = plan_for("v3_stacked_index.medh5");
    let source = |ann: &str| {
        let Some(attrs) = plan.group_attrs(&format!("index/{ann}")) else {
            panic!("{ann}")
        };
        attrs
            .iter()
            .find(|(k, _)| k == "source_digest")
            .unwrap()
            .1
            .to_json()
    };
    assert_eq!(
        source("lay"),
        Json::from("sha256:e61e029be98f69df6dc9c8c4073c42a575a3a17e828fd09b2c673a1f4c7d5869")
    );
    assert_eq!(
        source("bit"),
        Json::from("sha256:6273620c497e8dbe5c234781fa82da8b1279ee7811bf42a3aa132e1d4f0ffb0b")
    );
    assert_eq!(
        source("prob"),
        Json::from("sha256:b83ad31af7610e6b7f988b7201454c51eef441e19820e0baab4e48e212fd4a64")
    );
    assert_eq!(
        source("inst"),
        Json::from("sha256:fc56c4b3e1cfc231444da0bc727328ccf73afc8e1623503300808853609ce7c7")
    );
    let counts = |ann: &str| -> Vec<i64> {
        plan_bytes(&plan, &format!("index/{ann}/voxel_counts"))
            .chunks(8)
            .map(|b| i64::from_le_bytes(b.try_into().unwrap()))
            .collect()
    };
    assert_eq!(counts("lay"), [16384, 16384, 32768]);
    assert_eq!(counts("bit"), [16384, 16384, 32768]);
    assert_eq!(counts("prob"), [16384, 32768]);
    assert_eq!(counts("inst"), [256, 4160]);
    let c1 = [
        [0, 20, 17],
        [1, 26, 10],
        [3, 43, 31],
        [5, 8, 16],
        [5, 28, 16],
        [6, 24, 3],
        [7, 51, 47],
        [8, 23, 62],
        [9, 10, 54],
        [9, 37, 15],
        [9, 49, 55],
        [10, 26, 9],
        [11, 59, 27],
        [14, 34, 13],
        [14, 51, 36],
        [14, 58, 17],
    ];
    let c2 = [
        [1, 12, 29],
        [3, 1, 34],
        [5, 25, 20],
        [5, 49, 60],
        [6, 62, 2],
        [7, 52, 27],
        [8, 30, 20],
        [10, 3, 21],
        [10, 17, 43],
        [11, 2, 49],
        [11, 25, 2],
        [12, 0, 26],
        [13, 49, 28],
        [14, 16, 32],
        [14, 18, 22],
        [14, 36, 56],
    ];
    let c3 = [
        [0, 10, 24],
        [2, 23, 25],
        [2, 36, 20],
        [2, 46, 3],
        [3, 7, 5],
        [3, 25, 30],
        [4, 10, 9],
        [8, 1, 20],
        [8, 33, 27],
        [8, 48, 29],
        [9, 16, 19],
        [9, 43, 15],
        [12, 56, 3],
        [13, 52, 29],
        [15, 42, 19],
        [15, 62, 30],
    ];
    let p3 = [
        [1, 12, 15],
        [3, 1, 18],
        [5, 25, 14],
        [5, 50, 0],
        [6, 62, 6],
        [7, 52, 13],
        [8, 30, 14],
        [10, 3, 17],
        [10, 17, 25],
        [11, 3, 0],
        [11, 25, 3],
        [12, 0, 13],
        [13, 49, 20],
        [14, 16, 28],
        [14, 18, 13],
        [14, 37, 1],
    ];
    let i1 = [
        [0, 0, 5],
        [0, 2, 5],
        [0, 7, 0],
        [1, 1, 5],
        [1, 2, 3],
        [1, 4, 2],
        [1, 7, 4],
        [2, 0, 3],
        [2, 2, 1],
        [2, 2, 6],
        [2, 3, 0],
        [2, 4, 2],
        [2, 6, 3],
        [3, 4, 1],
        [3, 4, 2],
        [3, 5, 0],
    ];
    let i2 = [
        [11, 55, 53],
        [11, 63, 16],
        [12, 59, 56],
        [12, 61, 30],
        [13, 53, 15],
        [13, 56, 48],
        [13, 59, 24],
        [14, 52, 47],
        [14, 53, 44],
        [14, 56, 50],
        [14, 58, 15],
        [14, 60, 49],
        [15, 54, 57],
        [15, 56, 49],
        [15, 57, 0],
        [15, 58, 9],
    ];
    for ann in ["lay", "bit", "prob"] {
        assert_eq!(
            plan_bytes(&plan, &format!("index/{ann}/fg_coords/1")),
            i32s(&c1),
            "{ann}"
        );
    }
    for ann in ["lay", "bit"] {
        assert_eq!(
            plan_bytes(&plan, &format!("index/{ann}/fg_coords/2")),
            i32s(&c2),
            "{ann}"
        );
        assert_eq!(
            plan_bytes(&plan, &format!("index/{ann}/fg_coords/3")),
            i32s(&c3),
            "{ann}"
        );
    }
    assert_eq!(plan_bytes(&plan, "index/prob/fg_coords/3"), i32s(&p3));
    assert_eq!(plan_bytes(&plan, "index/inst/fg_coords/1"), i32s(&i1));
    assert_eq!(plan_bytes(&plan, "index/inst/fg_coords/2"), i32s(&i2));
    let bb: Vec<f32> = plan_bytes(&plan, "index/inst/class_bboxes")
        .chunks(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(
        bb,
        [-0.5, 3.5, -0.5, 7.5, -0.5, 7.5, 10.5, 15.5, 50.5, 63.5, -0.5, 63.5]
    );
}

/// Chunk shapes of grids without `chunk_hint` (optimiser, patch_hint, channel
/// axes, stacked layers) equal what the reference writer chose on the host
/// recorded in `tests/data/chunk_cases.json` (its detected L3 is replayed).
#[test]
fn plan_chunks_match_reference_writer() {
    use purehdf_medh5::model::grid::AxisKind;
    let text = std::fs::read_to_string(data_dir().join("chunk_cases.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let l3 = v["l3_bytes"].as_u64().unwrap();
    let u = |x: &serde_json::Value| -> Vec<u64> {
        x.as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_u64().unwrap())
            .collect()
    };
    for case in v["cases"].as_array().unwrap() {
        let g = &case["grid"];
        let shape = u(&g["shape"]);
        let spacing: Vec<f64> = g["spacing"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_f64().unwrap())
            .collect();
        let mut grid = match g["axis_kinds"].as_array() {
            Some(k) => {
                let kinds: Vec<AxisKind> = k
                    .iter()
                    .map(|s| match s.as_str().unwrap() {
                        "channel" => AxisKind::Channel,
                        "time" => AxisKind::Time,
                        _ => AxisKind::Spatial,
                    })
                    .collect();
                Grid::with_axes("g", &shape, &kinds, &spacing)
            }
            None => Grid::new("g", &shape, &spacing),
        };
        if let Some(p) = g["patch_hint"].as_array() {
            grid.patch_hint = Some(p.iter().map(|e| e.as_i64().unwrap()).collect());
        }
        let spatial = grid.spatial_shape();
        let n: usize = spatial.iter().product::<u64>() as usize;
        let total: usize = shape.iter().product::<u64>() as usize;
        let dtype = match case["dtype"].as_str().unwrap() {
            "<i2" => NumDtype::I16,
            "<f4" => NumDtype::F32,
            "|u1" => NumDtype::U8,
            "<f8" => NumDtype::F64,
            other => panic!("{other}"),
        };
        let mut s = Sample::new("x", "S");
        s.grids.push(grid);
        let img =
            ArrayData::from_bytes(dtype, shape.clone(), vec![0; total * dtype.size() as usize])
                .unwrap();
        s.images.push(Image::new("I", "g", "CT", img));
        s.document.label_set = Some(LabelSet::from_keys(
            "demo",
            "1.0.0",
            &["liver", "spleen", "kidney"],
        ));
        // Index sums along the spatial axes, as np.indices(spatial).sum(0).
        let sums: Vec<u64> = (0..n as u64)
            .map(|mut f| {
                let mut t = 0;
                for &d in spatial.iter().rev() {
                    t += f % d;
                    f /= d;
                }
                t
            })
            .collect();
        let a: Vec<bool> = sums.iter().map(|t| t % 3 == 0).collect();
        let b: Vec<bool> = sums.iter().map(|t| t % 5 == 0).collect();
        let lay = encode::encode_layers(&[(1, &a), (2, &b)], &spatial).unwrap();
        s.annotations
            .push(Annotation::new("lay", "g", &[1, 2], lay));
        let lm = encode::encode_labelmap(&[(1, &a)], &spatial).unwrap();
        s.annotations.push(Annotation::new("lm", "g", &[1], lm));
        let opts = WriteOptions {
            l3_bytes: Some(l3),
            ..WriteOptions::default()
        };
        let plan = s.into_plan(opts).unwrap();
        for (path, want) in case["chunks"].as_object().unwrap() {
            let got = match &plan.dataset(path).unwrap().layout {
                Layout::Contiguous => None,
                Layout::Chunked { dims, .. } => Some(dims.clone()),
            };
            let want = want.as_array().map(|_| u(want));
            assert_eq!(got, want, "{} {path}", case["name"]);
        }
    }
}
