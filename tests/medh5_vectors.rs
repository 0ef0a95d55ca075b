//! medh5 known answers: Python float repr table, the vector recipes of
//! `shared/vectors/medh5/README.md` (digests and `content_id`s), profiles and
//! the chunk optimiser table of `docs/medh5-format.md` §6.4.

use purehdf_medh5::canonical_json::Json;
use purehdf_medh5::chunking::{self, Patch};
use purehdf_medh5::document::LabelSet;
use purehdf_medh5::document::SampleDocument;
use purehdf_medh5::index::IndexOptions;
use purehdf_medh5::integrity::{self, ContentIdInput, DigestAlgo};
use purehdf_medh5::model::encode;
use purehdf_medh5::model::{Annotation, ArrayData, Encoding, Grid, Image, NumDtype, Sample};
use purehdf_medh5::plan::{Layout, PlanStep, WriteOptions, WritePlan};
use purehdf_medh5::profiles::{Profile, Role};
use purehdf_medh5::pyfloat;
use std::path::{Path, PathBuf};

#[path = "medh5_vectors/plans.rs"]
mod plans;
#[path = "medh5_vectors/recipes.rs"]
mod recipes;
#[path = "medh5_vectors/storage.rs"]
mod storage;

use recipes::*;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn shared_dir() -> Option<PathBuf> {
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if local.is_dir() {
        return Some(local);
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
// /meta serialisation against the reference engine (tests/data/doc_table.json).

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

/// The checked-in fixture agrees with the shared vectors' README (when the
/// shared directory is present): every content_id and every digest it lists.
#[test]
fn fixture_agrees_with_shared_readme() {
    let Some(shared) = shared_dir() else { return };
    let Ok(readme) = std::fs::read_to_string(shared.join("vectors/medh5/README.md")) else {
        println!("skipped: ../shared absent");
        return;
    };
    for (name, cid) in CONTENT_IDS {
        assert!(readme.contains(cid), "{name}");
    }
    let fx = fixture();
    let mut n = 0;
    for (name, _) in CONTENT_IDS {
        for ds in fx[*name]["datasets"].as_array().unwrap() {
            if let Some(d) = ds["digest"].as_str() {
                assert!(readme.contains(d), "{name} {}", ds["path"]);
                n += 1;
            }
        }
    }
    assert_eq!(n, 1 + 2 + 4 * 2 + 13);
}
