//! medh5 known answers: Python float repr table, the vector recipes of
//! `shared/vectors/medh5/README.md` (digests and `content_id`s), profiles and
//! the chunk optimiser table of `shared/spec/medh5.md` §6.4.

use std::path::{Path, PathBuf};

use purehdf::medh5::pyfloat;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

#[allow(dead_code)]
fn shared_dir() -> Option<PathBuf> {
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if local.is_dir() {
        return Some(local);
    }
    let abs = PathBuf::from("/work/shared");
    if abs.is_dir() {
        return Some(abs);
    }
    println!("skipped: ../shared absent");
    None
}

#[test]
fn pyfloat_matches_python_table() {
    let text = std::fs::read_to_string(data_dir().join("pyfloat_table.txt")).unwrap();
    let mut n = 0;
    for line in text.lines() {
        let (hex, want) = line.split_once(' ').unwrap();
        let v = f64::from_bits(u64::from_str_radix(hex, 16).unwrap());
        assert_eq!(pyfloat::repr(v), want, "bits {hex}");
        n += 1;
    }
    assert!(n > 3000, "table has {n} rows");
}

// ---------------------------------------------------------------------------
// Vector data, built exactly as `shared/vectors/medh5/make_vectors.py` does.

use purehdf::medh5::canonical_json::Json;
use purehdf::medh5::integrity::{self, ContentIdInput, DigestAlgo};

/// C-order iteration over a 3-D shape.
fn zyx(shape: [usize; 3]) -> impl Iterator<Item = (i64, i64, i64)> {
    let [nz, ny, nx] = shape;
    (0..nz).flat_map(move |z| {
        (0..ny).flat_map(move |y| (0..nx).map(move |x| (z as i64, y as i64, x as i64)))
    })
}

fn le_i16(it: impl Iterator<Item = i64>) -> Vec<u8> {
    it.flat_map(|v| (v as i16).to_le_bytes()).collect()
}

pub struct VecData {
    pub path: &'static str,
    pub dtype: &'static str,
    pub shape: Vec<u64>,
    pub bytes: Vec<u8>,
}

fn d(path: &'static str, dtype: &'static str, shape: &[u64], bytes: Vec<u8>) -> VecData {
    VecData {
        path,
        dtype,
        shape: shape.to_vec(),
        bytes,
    }
}

fn v1_ct() -> Vec<u8> {
    le_i16(zyx([8, 16, 16]).map(|(z, y, x)| z * 256 + y * 16 + x))
}

fn v3_masks() -> (Vec<bool>, Vec<bool>, Vec<bool>) {
    let s = [16, 64, 64];
    let a = zyx(s).map(|(z, y, x)| (z + y + x) % 4 == 1).collect();
    let b = zyx(s).map(|(z, y, x)| (z + y + x) % 4 == 2).collect();
    let c = zyx(s).map(|(_, _, x)| x < 32).collect();
    (a, b, c)
}

fn vector_data(name: &str) -> Vec<VecData> {
    match name {
        "v1_minimal.medh5" => vec![d("images/CT", "<i2", &[8, 16, 16], v1_ct())],
        "v1b_dense_label.medh5" => vec![
            d("images/CT", "<i2", &[8, 16, 16], v1_ct()),
            d(
                "annotations/organs/data",
                "|u1",
                &[8, 16, 16],
                zyx([8, 16, 16])
                    .map(|(z, y, x)| ((z + y + x) % 4) as u8)
                    .collect(),
            ),
        ],
        n if n.starts_with("v2_") => vec![
            d(
                "images/CT",
                "<i2",
                &[32, 64, 64],
                le_i16(zyx([32, 64, 64]).map(|(z, y, x)| ((z * 64 + y) * 64 + x) % 4096 - 2048)),
            ),
            d(
                "annotations/organs/data",
                "|u1",
                &[32, 64, 64],
                zyx([32, 64, 64])
                    .map(|(z, y, x)| ((z / 8 + y / 16 + x / 16) % 4) as u8)
                    .collect(),
            ),
        ],
        "v3_stacked_index.medh5" => {
            let s = [16, 64, 64];
            let (a, b, c) = v3_masks();
            let ct = le_i16(zyx(s).map(|(z, y, x)| z * 4096 + y * 64 + x - 32768));
            let mut lay = vec![0u8; 2 * 16 * 64 * 64];
            let n = 16 * 64 * 64;
            for i in 0..n {
                if c[i] {
                    lay[i] = 3;
                }
                if a[i] {
                    lay[n + i] = 1;
                }
                if b[i] {
                    lay[n + i] = 2;
                }
            }
            let bit: Vec<u8> = (0..n)
                .flat_map(|i| {
                    (u64::from(a[i]) | u64::from(b[i]) << 1 | u64::from(c[i]) << 2).to_le_bytes()
                })
                .collect();
            let prob: Vec<u8> = (0..n)
                .map(|i| if a[i] { 0x3a00u16 } else { 0 })
                .chain((0..n).map(|i| if c[i] { 0x3c00u16 } else { 0 }))
                .flat_map(|v| v.to_le_bytes())
                .collect();
            let boxes: Vec<u8> = [
                -0.5f32, 3.5, -0.5, 7.5, -0.5, 7.5, 10.5, 15.5, 50.5, 63.5, -0.5, 63.5,
            ]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
            let u16s = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
            vec![
                d("images/CT", "<i2", &[16, 64, 64], ct),
                d("annotations/lay/data", "|u1", &[2, 16, 64, 64], lay),
                d(
                    "annotations/lay/layer_class_ids",
                    "<u2",
                    &[2, 2],
                    u16s(&[3, 0, 1, 2]),
                ),
                d("annotations/bit/data", "<u8", &[1, 16, 64, 64], bit),
                d(
                    "annotations/bit/bit_class_ids",
                    "<u2",
                    &[3],
                    u16s(&[1, 2, 3]),
                ),
                d("annotations/prob/data", "<f2", &[2, 16, 64, 64], prob),
                d("annotations/inst/boxes", "<f4", &[2, 3, 2], boxes),
                d("annotations/inst/class_ids", "<u2", &[2], u16s(&[1, 2])),
                d(
                    "annotations/inst/instance_ids",
                    "<u4",
                    &[2],
                    [1u32, 2].iter().flat_map(|v| v.to_le_bytes()).collect(),
                ),
                d("annotations/inst/mask_data", "|u1", &[552], vec![0xff; 552]),
                d(
                    "annotations/inst/mask_offsets",
                    "<u8",
                    &[3],
                    [0u64, 32, 552]
                        .iter()
                        .flat_map(|v| v.to_le_bytes())
                        .collect(),
                ),
                d(
                    "annotations/inst/mask_shapes",
                    "<i4",
                    &[2, 3],
                    [4i32, 8, 8, 5, 13, 64]
                        .iter()
                        .flat_map(|v| v.to_le_bytes())
                        .collect(),
                ),
                d("annotations/fov/data", "|b1", &[16, 64, 64], vec![1; n]),
            ]
        }
        other => panic!("no recipe for {other}"),
    }
}

/// content_ids listed in `shared/vectors/medh5/README.md`.
const CONTENT_IDS: &[(&str, &str)] = &[
    (
        "v1_minimal.medh5",
        "sha256:65b888679596d42ec07edaafda5841adcec5a3c57a59070d7ecb8660891f53a3",
    ),
    (
        "v1b_dense_label.medh5",
        "sha256:fae30a0f75a409cab953d1ebd457dd3b5fb0171557db5b2203c0560bef524786",
    ),
    (
        "v2_balanced.medh5",
        "sha256:11bd36c806ee9a445272a7d3d81f50986aa6561d5c469f542e381b69647ce8dc",
    ),
    (
        "v2_training.medh5",
        "sha256:11bd36c806ee9a445272a7d3d81f50986aa6561d5c469f542e381b69647ce8dc",
    ),
    (
        "v2_archive.medh5",
        "sha256:11bd36c806ee9a445272a7d3d81f50986aa6561d5c469f542e381b69647ce8dc",
    ),
    (
        "v2_portable.medh5",
        "sha256:11bd36c806ee9a445272a7d3d81f50986aa6561d5c469f542e381b69647ce8dc",
    ),
    (
        "v3_stacked_index.medh5",
        "sha256:e4c4ac56afdaa8c234ceb90cc20a5ea939529193ed76b505b7c97b2ad0da4b68",
    ),
];

fn fixture() -> serde_json::Value {
    let text = std::fs::read_to_string(data_dir().join("vector_fixture.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn attr_list(v: &serde_json::Value) -> Vec<(String, Json)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap().to_string(),
                Json::from_serde(&a["value"]),
            )
        })
        .collect()
}

#[test]
fn dataset_digests_match_vectors() {
    let fx = fixture();
    for (name, _) in CONTENT_IDS {
        let entry = &fx[*name];
        let data = vector_data(name);
        let stored: Vec<&serde_json::Value> = entry["datasets"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|ds| !ds["digest"].is_null())
            .collect();
        assert_eq!(stored.len(), data.len(), "{name}: digested datasets");
        for ds in stored {
            let path = ds["path"].as_str().unwrap();
            let mine = data
                .iter()
                .find(|v| v.path == path)
                .unwrap_or_else(|| panic!("{path}"));
            assert_eq!(ds["dtype"].as_str().unwrap(), mine.dtype, "{name} {path}");
            let digest = integrity::dataset_digest(
                DigestAlgo::Sha256,
                path,
                mine.dtype,
                &mine.shape,
                &mine.bytes,
            );
            assert_eq!(digest, ds["digest"].as_str().unwrap(), "{name} {path}");
        }
    }
}

#[test]
fn content_ids_match_vectors() {
    let fx = fixture();
    for (name, want) in CONTENT_IDS {
        let entry = &fx[*name];
        let datasets = vector_data(name)
            .iter()
            .map(|v| {
                let dg = integrity::dataset_digest(
                    DigestAlgo::Sha256,
                    v.path,
                    v.dtype,
                    &v.shape,
                    &v.bytes,
                );
                (v.path.to_string(), dg)
            })
            .collect();
        let mut attribute_objects = vec![(
            String::new(),
            integrity::canonical_attrs(integrity::ROOT_COVERED, &attr_list(&entry["root_attrs"])),
        )];
        for obj in entry["objects"].as_array().unwrap() {
            let path = obj["path"].as_str().unwrap();
            let covered = integrity::covered_names(path).unwrap();
            attribute_objects.push((
                path.to_string(),
                integrity::canonical_attrs(covered, &attr_list(&obj["attrs"])),
            ));
        }
        let input = ContentIdInput {
            algo: DigestAlgo::Sha256,
            datasets,
            meta: entry["meta"].as_str().unwrap().as_bytes().to_vec(),
            attribute_objects,
        };
        assert_eq!(input.content_id(), *want, "{name}");
    }
}

#[test]
fn worked_payload_v1b() {
    let fx = fixture();
    let entry = &fx["v1b_dense_label.medh5"];
    let root =
        integrity::canonical_attrs(integrity::ROOT_COVERED, &attr_list(&entry["root_attrs"]));
    assert_eq!(
        root,
        r#"{"medh5_kind":"sample","medh5_profiles":["core","seg"],"medh5_version":"1.0"}"#
    );
    let grid = &entry["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["path"] == "grids/ct")
        .unwrap()["attrs"];
    assert_eq!(
        integrity::canonical_attrs(integrity::GRID_COVERED, &attr_list(grid)),
        r#"{"axis_kinds":["spatial","spatial","spatial"],"axis_names":["z","y","x"],"coord_system":"LPS","direction":[[1.0,0.0,0.0],[0.0,1.0,0.0],[0.0,0.0,1.0]],"origin":[0.0,0.0,0.0],"shape":[8,16,16],"spacing":[2.0,0.8,0.8],"units":"mm"}"#
    );
    assert_eq!(
        integrity::hex_digest(
            DigestAlgo::Sha256,
            entry["meta"].as_str().unwrap().as_bytes()
        ),
        "7f41422b109317d813f02c792957d2be5a9a4d8abfdc7bd5b19ffc17d170d0bd"
    );
}

#[test]
fn index_source_digests_match_vectors() {
    let fx = fixture();
    let entry = &fx["v3_stacked_index.medh5"];
    let want = [
        (
            "lay",
            "sha256:e61e029be98f69df6dc9c8c4073c42a575a3a17e828fd09b2c673a1f4c7d5869",
        ),
        (
            "bit",
            "sha256:6273620c497e8dbe5c234781fa82da8b1279ee7811bf42a3aa132e1d4f0ffb0b",
        ),
        (
            "prob",
            "sha256:b83ad31af7610e6b7f988b7201454c51eef441e19820e0baab4e48e212fd4a64",
        ),
        (
            "inst",
            "sha256:fc56c4b3e1cfc231444da0bc727328ccf73afc8e1623503300808853609ce7c7",
        ),
    ];
    for (ann, digest) in want {
        let prefix = format!("annotations/{ann}/");
        let children: Vec<(String, String)> = entry["datasets"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|ds| {
                let p = ds["path"].as_str()?;
                let name = p.strip_prefix(&prefix)?;
                Some((name.to_string(), ds["digest"].as_str()?.to_string()))
            })
            .collect();
        assert_eq!(
            integrity::group_digest(DigestAlgo::Sha256, &children),
            digest,
            "{ann}"
        );
    }
}

// ---------------------------------------------------------------------------
// Chunking: §6.4 table, oracle-generated random table, §6.5 guess_chunk.

use purehdf::medh5::chunking::{self, Patch};

#[test]
fn optimiser_matches_spec_table() {
    const L3S: [u64; 3] = [1_441_792, 262_144, 16_777_216];
    #[allow(clippy::type_complexity)]
    let table: &[(&[u64], Option<&[i64]>, u64, [&[u64]; 3])] = &[
        (
            &[512, 512, 512],
            None,
            2,
            [&[128, 64, 64], &[64, 64, 64], &[128, 64, 64]],
        ),
        (
            &[512, 512, 512],
            None,
            4,
            [&[128, 64, 64], &[64, 64, 64], &[128, 64, 64]],
        ),
        (
            &[512, 512, 512],
            None,
            1,
            [&[128, 64, 64], &[128, 64, 64], &[128, 64, 64]],
        ),
        (
            &[512, 512, 512],
            None,
            8,
            [&[64, 64, 64], &[64, 64, 64], &[128, 64, 64]],
        ),
        (
            &[512, 512, 512],
            Some(&[96, 96, 96]),
            2,
            [&[128, 128, 128]; 3],
        ),
        (&[512, 512, 512], Some(&[96, 96, 96]), 4, [&[96, 96, 96]; 3]),
        (
            &[512, 512, 512],
            Some(&[128, 128, 128]),
            4,
            [&[64, 128, 128]; 3],
        ),
        (
            &[600, 600, 600],
            Some(&[160, 160, 160]),
            2,
            [&[80, 160, 160]; 3],
        ),
        (
            &[300, 512, 512],
            Some(&[48, 160, 160]),
            4,
            [&[24, 160, 160]; 3],
        ),
        (
            &[64, 512, 512],
            Some(&[32, 128, 128]),
            2,
            [&[64, 128, 128], &[32, 128, 128], &[64, 128, 128]],
        ),
        (
            &[120, 256, 256],
            None,
            2,
            [&[120, 64, 64], &[64, 64, 64], &[120, 64, 64]],
        ),
        (&[32, 64, 64], None, 2, [&[32, 64, 64]; 3]),
        (&[16, 24, 24], Some(&[8, 8, 8]), 2, [&[16, 8, 8]; 3]),
        (&[2048, 2048], None, 1, [&[128, 64]; 3]),
        (&[4096, 4096], Some(&[256, 256]), 2, [&[512, 256]; 3]),
        (&[1000, 1000], None, 4, [&[128, 64]; 3]),
        (&[40, 600, 600], None, 2, [&[40, 128, 64]; 3]),
        (
            &[512, 512, 96],
            Some(&[96, 96, 16]),
            4,
            [&[128, 128, 16]; 3],
        ),
    ];
    for (shape, patch, itemsize, want) in table {
        for (l3, w) in L3S.iter().zip(want) {
            let p = patch.map_or(Patch::Default, Patch::PerAxis);
            let got = chunking::spatial_chunk_for(shape, p, *itemsize, *l3).unwrap();
            assert_eq!(got, *w, "{shape:?} {patch:?} x{itemsize} L3={l3}");
        }
    }
}

#[test]
fn optimiser_matches_oracle_random_table() {
    let text = std::fs::read_to_string(data_dir().join("chunk_table.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let u = |x: &serde_json::Value| -> Vec<u64> {
        x.as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_u64().unwrap())
            .collect()
    };
    let cases = v["spatial_chunk_for"].as_array().unwrap();
    assert!(cases.len() >= 400);
    for c in cases {
        let shape = u(&c["shape"]);
        let axes: Vec<i64>;
        let patch = match &c["patch"] {
            serde_json::Value::Null => Patch::Default,
            serde_json::Value::Number(n) => Patch::Uniform(n.as_i64().unwrap()),
            a => {
                axes = a
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e.as_i64().unwrap())
                    .collect();
                Patch::PerAxis(&axes)
            }
        };
        let got = chunking::spatial_chunk_for(
            &shape,
            patch,
            c["itemsize"].as_u64().unwrap(),
            c["l3"].as_u64().unwrap(),
        )
        .unwrap();
        assert_eq!(got, u(&c["chunk"]), "{c}");
    }
    for c in v["guess_chunk"].as_array().unwrap() {
        let got = chunking::guess_chunk(&u(&c["shape"]), c["itemsize"].as_u64().unwrap());
        assert_eq!(got, u(&c["chunk"]), "{c}");
    }
}

// ---------------------------------------------------------------------------
// Profiles: §6.1 pipelines equal what the reference's vector files carry.

use purehdf::medh5::profiles::{Profile, Role};

#[test]
fn profile_pipelines_match_vector_files() {
    let fx = fixture();
    let files = [
        ("v2_balanced.medh5", Profile::Balanced),
        ("v2_training.medh5", Profile::Training),
        ("v2_archive.medh5", Profile::Archive),
        ("v2_portable.medh5", Profile::Portable),
        ("v3_stacked_index.medh5", Profile::Balanced),
    ];
    let mut checked = 0;
    for (name, profile) in files {
        for ds in fx[name]["datasets"].as_array().unwrap() {
            let path = ds["path"].as_str().unwrap();
            let shape: Vec<u64> = ds["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_u64().unwrap())
                .collect();
            let es: u32 = ds["dtype"].as_str().unwrap()[2..].parse().unwrap();
            let contiguous = purehdf::medh5::profiles::is_contiguous(&shape, u64::from(es));
            assert_eq!(contiguous, ds["chunks"].is_null(), "{name} {path}");
            if contiguous {
                assert!(ds["filters"].as_array().unwrap().is_empty());
                continue;
            }
            let chunks: Vec<u64> = ds["chunks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_u64().unwrap())
                .collect();
            let mine = profile
                .codec(Role::for_path(path))
                .pipeline(es, &chunks)
                .unwrap();
            let theirs = ds["filters"].as_array().unwrap();
            assert_eq!(mine.len(), theirs.len(), "{name} {path}");
            for (m, t) in mine.iter().zip(theirs) {
                assert_eq!(u64::from(m.id), t["id"].as_u64().unwrap());
                assert_eq!(u64::from(m.flags), t["flags"].as_u64().unwrap());
                let cd: Vec<u32> = t["cd_values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e.as_u64().unwrap() as u32)
                    .collect();
                assert_eq!(m.cd_values, cd, "{name} {path}");
                assert_eq!(m.name.as_deref(), t["name"].as_str());
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 2 * 4 + 5);
}

// ---------------------------------------------------------------------------
// /meta serialisation against the reference engine (tests/data/doc_table.json).

use purehdf::medh5::document::SampleDocument;

#[test]
fn meta_serialisation_matches_reference() {
    let text = std::fs::read_to_string(data_dir().join("doc_table.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 5);
    for row in rows {
        let doc = SampleDocument::from_json(&Json::from_serde(&row["input"])).unwrap();
        assert_eq!(doc.to_meta(), row["meta"].as_str().unwrap());
        // Reading the stored text back gives the same bytes.
        let again = SampleDocument::from_meta(row["meta"].as_str().unwrap()).unwrap();
        assert_eq!(again.to_meta(), row["meta"].as_str().unwrap());
    }
}

#[test]
fn vector_meta_texts_round_trip() {
    let fx = fixture();
    for (name, _) in CONTENT_IDS {
        let meta = fx[*name]["meta"].as_str().unwrap();
        assert_eq!(
            SampleDocument::from_meta(meta).unwrap().to_meta(),
            meta,
            "{name}"
        );
    }
}

// ---------------------------------------------------------------------------
// End to end: build each vector through the sample model, plan it, and compare
// the plan with the reference's file (digests, content_id, layouts, filters,
// covered attributes).

use purehdf::medh5::document::LabelSet;
use purehdf::medh5::index::IndexOptions;
use purehdf::medh5::model::encode;
use purehdf::medh5::model::{Annotation, ArrayData, Encoding, Grid, Image, NumDtype, Sample};
use purehdf::medh5::plan::{Layout, PlanStep, WriteOptions, WritePlan};

fn bytes_of(v: &[VecData], path: &str) -> Vec<u8> {
    v.iter().find(|d| d.path == path).unwrap().bytes.clone()
}

fn organs() -> LabelSet {
    LabelSet::from_keys("demo-organs", "1.0.0", &["liver", "spleen", "kidney"])
}

fn build_sample(name: &str) -> (Sample, Profile) {
    let data = vector_data(name);
    let ct = |shape: &[u64]| {
        ArrayData::from_bytes(NumDtype::I16, shape.to_vec(), bytes_of(&data, "images/CT")).unwrap()
    };
    match name {
        "v1_minimal.medh5" | "v1b_dense_label.medh5" => {
            let sid = if name.starts_with("v1b") { "v1b" } else { "v1" };
            let mut s = Sample::new(sid, "SUBJ-1");
            s.grids
                .push(Grid::new("ct", &[8, 16, 16], &[2.0, 0.8, 0.8]));
            s.images
                .push(Image::new("CT", "ct", "CT", ct(&[8, 16, 16])));
            if sid == "v1b" {
                s.document.label_set = Some(organs());
                let lm = ArrayData::from_bytes(
                    NumDtype::U8,
                    vec![8, 16, 16],
                    bytes_of(&data, "annotations/organs/data"),
                )
                .unwrap();
                s.annotations.push(Annotation::new(
                    "organs",
                    "ct",
                    &[1, 2, 3],
                    Encoding::Labelmap { data: lm },
                ));
            }
            (s, Profile::Balanced)
        }
        n if n.starts_with("v2_") => {
            let profile = Profile::from_name(Some(&n[3..n.len() - 6])).unwrap();
            let mut s = Sample::new("v2", "SUBJ-2");
            let mut g = Grid::new("ct", &[32, 64, 64], &[2.5, 0.75, 0.75]);
            g.origin = vec![-10.0, 20.5, -5.25];
            g.chunk_hint = Some(vec![16, 32, 32]);
            s.grids.push(g);
            s.images
                .push(Image::new("CT", "ct", "CT", ct(&[32, 64, 64])));
            s.document.label_set = Some(organs());
            let lm = ArrayData::from_bytes(
                NumDtype::U8,
                vec![32, 64, 64],
                bytes_of(&data, "annotations/organs/data"),
            )
            .unwrap();
            s.annotations.push(Annotation::new(
                "organs",
                "ct",
                &[1, 2, 3],
                Encoding::Labelmap { data: lm },
            ));
            (s, profile)
        }
        "v3_stacked_index.medh5" => {
            let sp = [16u64, 64, 64];
            let mut s = Sample::new("v3", "SUBJ-3");
            let mut g = Grid::new("g", &sp, &[2.0, 0.8, 0.8]);
            g.chunk_hint = Some(vec![8, 32, 32]);
            s.grids.push(g);
            s.images.push(Image::new("CT", "g", "CT", ct(&sp)));
            s.document.label_set = Some(organs());
            let (a, b, c) = v3_masks();
            let masks = [(1u16, a.as_slice()), (2, b.as_slice()), (3, c.as_slice())];
            s.annotations.push(Annotation::new(
                "lay",
                "g",
                &[1, 2, 3],
                encode::encode_layers(&masks, &sp).unwrap(),
            ));
            s.annotations.push(Annotation::new(
                "bit",
                "g",
                &[1, 2, 3],
                encode::encode_bitmask(&masks, &sp).unwrap(),
            ));
            let liver: Vec<f32> = a.iter().map(|&v| if v { 0.75 } else { 0.0 }).collect();
            let kidney: Vec<f32> = c.iter().map(|&v| if v { 1.0 } else { 0.0 }).collect();
            let prob = encode::encode_probmap(
                &[(1, &liver), (3, &kidney)],
                &sp,
                NumDtype::F16,
                false,
                None,
            )
            .unwrap();
            s.annotations
                .push(Annotation::new("prob", "g", &[1, 3], prob));
            let idx: Vec<(i64, i64, i64)> = zyx([16, 64, 64]).collect();
            let il: Vec<bool> = idx
                .iter()
                .map(|&(z, y, x)| z < 4 && y < 8 && x < 8)
                .collect();
            let isp: Vec<bool> = idx.iter().map(|&(z, y, _)| z > 10 && y > 50).collect();
            let inst = encode::encode_instances(&[(1, &il), (2, &isp)], &sp, 1).unwrap();
            s.annotations
                .push(Annotation::new("inst", "g", &[1, 2], inst));
            s.annotations.push(Annotation::new(
                "fov",
                "g",
                &[],
                encode::encode_mask(&vec![true; idx.len()], &sp).unwrap(),
            ));
            s.index = Some(IndexOptions {
                max_coords: 16,
                seed: 0,
                occupancy: 8,
            });
            (s, Profile::Balanced)
        }
        other => panic!("{other}"),
    }
}

fn plan_for(name: &str) -> WritePlan {
    let (s, profile) = build_sample(name);
    let opts = WriteOptions {
        profile,
        l3_bytes: Some(chunking::FALLBACK_L3_BYTES),
        ..WriteOptions::default()
    };
    s.into_plan(opts).unwrap()
}

fn fixture_attr_json(attrs: &serde_json::Value) -> Vec<(String, String)> {
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

fn plan_attr_json(
    attrs: &[(String, purehdf::medh5::attribute::AttrValue)],
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
fn model_plans_reproduce_vectors() {
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
                purehdf::medh5::integrity::dtype_descr(&mine.datatype).as_deref(),
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
fn content_id_does_not_depend_on_profile_or_chunking() {
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
fn sha512_and_blake2b_plans() {
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
fn invalid_samples_are_refused() {
    let code = |s: Sample| match s.into_plan(WriteOptions::default()) {
        Err(purehdf::Error::Medh5 { code, .. }) => code,
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
fn hash_throughput() {
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

fn plan_bytes(plan: &WritePlan, path: &str) -> Vec<u8> {
    match &plan.dataset(path).unwrap().data {
        purehdf::medh5::plan::PlanData::Bytes(b) => b.clone(),
        other => panic!("{other:?}"),
    }
}

fn i32s(rows: &[[i32; 3]]) -> Vec<u8> {
    rows.iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect()
}

#[test]
fn v3_index_matches_readme() {
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
