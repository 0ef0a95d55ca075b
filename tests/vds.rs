//! Virtual datasets end to end: the files of tests/golden/vds/ (written by
//! h5py/libhdf5 with make_vds.py, which also recorded in expected.json what
//! h5py reads from each) are opened and read, whole and in parts, and compared
//! with h5py's values: several mappings, a strided source selection, a missing
//! source (a typed error by default; the fill value, as h5py gives, when the
//! file's options ask for it), printf-style `%b` sources up to the first missing one,
//! an unlimited mapping whose extent follows its source, same-file sources
//! (`.`), irregular hyperslabs on both sides, type conversion (i32 → f64), a
//! virtual source of a virtual dataset, and a cycle of two virtual datasets.

use std::path::{Path, PathBuf};

use purehdf::low_level::virtual_layout::VirtualOptions;
use purehdf::{Dataset, Error, File, Object, Selection};
use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/vds")
}

/// The dataset `name` of `file`, missing sources read as the fill value (as h5py).
fn open(file: &str, name: &str) -> Dataset {
    let f = File::open(dir().join(file)).unwrap();
    f.set_virtual_options(VirtualOptions {
        fill_missing: true,
        prefix: None,
    });
    match f.object(name).unwrap() {
        Object::Dataset(d) => *d,
        o => panic!("{name} is a {}", o.kind_name()),
    }
}

fn expected() -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(dir().join("expected.json")).unwrap();
    match serde_json::from_str(&text).unwrap() {
        Value::Object(m) => m,
        _ => panic!("expected.json is not an object"),
    }
}

/// Decode little-endian elements of numpy type `dtype` as f64 values.
fn values(dtype: &str, bytes: &[u8]) -> Vec<f64> {
    match dtype {
        "<i2" => bytes
            .chunks_exact(2)
            .map(|c| f64::from(i16::from_le_bytes([c[0], c[1]])))
            .collect(),
        "<i4" => bytes
            .chunks_exact(4)
            .map(|c| f64::from(i32::from_le_bytes(c.try_into().unwrap())))
            .collect(),
        "<f8" => bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        d => panic!("dtype {d}"),
    }
}

#[test]
fn every_virtual_dataset_matches_h5py() {
    let exp = expected();
    assert_eq!(exp.len(), 6);
    for (key, want) in &exp {
        let (file, name) = key.split_once(':').unwrap();
        let d = open(file, name);
        assert_eq!(d.layout_kind(), "virtual", "{key}");
        let shape: Vec<u64> = want["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(d.shape(), shape.as_slice(), "{key} shape");
        let dtype = want["dtype"].as_str().unwrap();
        assert_eq!(d.dtype().numpy_str().as_deref(), Some(dtype), "{key} dtype");
        let want_vals: Vec<f64> = want["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let got = values(dtype, &d.read_all_raw().unwrap());
        assert_eq!(got, want_vals, "{key} values");
        // Every single-row hyperslab, and a box in the middle, agree with the whole.
        let rank = shape.len();
        let row: u64 = shape[1..].iter().product();
        for r in 0..shape[0] {
            let mut start = vec![0u64; rank];
            start[0] = r;
            let mut count = shape.clone();
            count[0] = 1;
            let mut out = vec![0u8; (row * d.dtype().size()) as usize];
            d.read_raw(&Selection::Hyperslab { start, count }, &mut out)
                .unwrap();
            let a = (r * row) as usize;
            assert_eq!(
                values(dtype, &out),
                want_vals[a..a + row as usize],
                "{key} row {r}"
            );
        }
        if rank == 2 && shape[0] > 2 && shape[1] > 2 {
            let (start, count) = (vec![1u64, 1], vec![shape[0] - 2, shape[1] - 2]);
            let mut out = vec![0u8; (count[0] * count[1] * d.dtype().size()) as usize];
            d.read_raw(
                &Selection::Hyperslab {
                    start: start.clone(),
                    count: count.clone(),
                },
                &mut out,
            )
            .unwrap();
            let got = values(dtype, &out);
            for i in 0..count[0] {
                for j in 0..count[1] {
                    let w = want_vals[((i + 1) * shape[1] + j + 1) as usize];
                    assert_eq!(got[(i * count[1] + j) as usize], w, "{key} box ({i}, {j})");
                }
            }
        }
    }
}

#[test]
fn mapping_list_is_exposed() {
    let d = open("vds_several.h5", "v");
    let maps = purehdf::low_level::virtual_layout::mappings(&d).unwrap();
    let names: Vec<(&str, &str)> = maps
        .iter()
        .map(|m| (m.source_file.as_str(), m.source_dataset.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("src_a.h5", "data"),
            ("src_b.h5", "data"),
            ("missing.h5", "data")
        ]
    );
    // printf: three sources exist before the first missing one (p_3.h5), so
    // p_4.h5 is not used and the extent is 3 blocks of 2 rows.
    let p = open("vds_printf.h5", "v");
    assert_eq!(p.shape(), &[6, 3]);
    assert_eq!(p.dataspace().dims, vec![0, 3]);
}

#[test]
fn in_memory_file_resolves_only_its_own_sources() {
    let bytes = std::fs::read(dir().join("vds_same_file.h5")).unwrap();
    let f = File::from_bytes(bytes).unwrap();
    let Object::Dataset(d) = f.object("/as_f64").unwrap() else {
        panic!()
    };
    let got = values("<f8", &d.read_all_raw().unwrap());
    assert_eq!(got, (0..16).map(f64::from).collect::<Vec<_>>());
    // Sources in other files cannot be opened without a path: a typed error
    // naming the first one, or the fill value when asked for.
    let bytes = std::fs::read(dir().join("vds_several.h5")).unwrap();
    let f = File::from_bytes(bytes).unwrap();
    let Object::Dataset(d) = f.object("/v").unwrap() else {
        panic!()
    };
    match d.read_all_raw() {
        Err(Error::MissingVdsSource {
            dataset,
            source_file,
            ..
        }) => assert_eq!((dataset.as_str(), source_file.as_str()), ("/v", "src_a.h5")),
        other => panic!("expected MissingVdsSource, got {other:?}"),
    }
    f.set_virtual_options(VirtualOptions {
        fill_missing: true,
        prefix: None,
    });
    assert_eq!(values("<i4", &d.read_all_raw().unwrap()), vec![-7.0; 60]);
}

#[test]
fn a_missing_source_is_a_typed_error_unless_filling_is_asked_for() {
    let f = File::open(dir().join("vds_several.h5")).unwrap();
    let Object::Dataset(d) = f.object("/v").unwrap() else {
        panic!()
    };
    // Rows 6..8 map missing.h5: reading them (or everything) fails, naming it.
    match d.read_all_raw() {
        Err(e @ Error::MissingVdsSource { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("/v") && text.contains("missing.h5:data"),
                "{text}"
            );
        }
        other => panic!("expected MissingVdsSource, got {other:?}"),
    }
    let mut row = vec![0u8; 6 * 4];
    let sel = |r: u64| Selection::Hyperslab {
        start: vec![r, 0],
        count: vec![1, 6],
    };
    assert!(matches!(
        d.read_raw(&sel(7), &mut row),
        Err(Error::MissingVdsSource { .. })
    ));
    // Rows that no missing mapping covers read as usual.
    d.read_raw(&sel(0), &mut row).unwrap();
    assert_eq!(
        values("<i4", &row),
        (100..106).map(f64::from).collect::<Vec<_>>()
    );
    d.read_raw(&sel(9), &mut row).unwrap();
    assert_eq!(values("<i4", &row), vec![-7.0; 6]);
    let plan = d.virtual_plan().unwrap().unwrap();
    assert_eq!(plan.missing.len(), 1);
    assert_eq!(plan.missing[0].source_file, "missing.h5");
    // Asked for, the fill value (h5py's answer), and the read is recorded.
    f.set_virtual_options(VirtualOptions {
        fill_missing: true,
        prefix: None,
    });
    d.read_raw(&sel(7), &mut row).unwrap();
    assert_eq!(values("<i4", &row), vec![-7.0; 6]);
    assert!(purehdf::low_level::virtual_layout::locate::filled_sources()
        .iter()
        .any(|s| s.dataset == "/v" && s.source_file == "missing.h5"));
}

#[test]
fn a_cycle_of_virtual_datasets_is_a_typed_error() {
    let d = open("vds_cycle_a.h5", "v");
    match d.read_all_raw() {
        Err(Error::Cycle { .. }) => {}
        other => panic!("expected a cycle error, got {other:?}"),
    }
    // The stored extent is still reported.
    assert_eq!(d.shape(), &[3]);
}

#[test]
fn dump_reads_every_virtual_dataset() {
    for f in [
        "vds_printf.h5",
        "vds_unlimited.h5",
        "vds_same_file.h5",
        "vds_chain.h5",
    ] {
        let dump = purehdf_cli::dump::dump_file(dir().join(f)).unwrap();
        assert_eq!(dump.failures, 0, "{f}: {}", dump.doc);
    }
    // A missing source is a failure of that dataset's read, not silence.
    let dump = purehdf_cli::dump::dump_file(dir().join("vds_several.h5")).unwrap();
    assert_eq!(dump.failures, 1, "{}", dump.doc);
    assert!(
        dump.doc.to_string().contains("missing source"),
        "{}",
        dump.doc
    );
}

#[test]
fn corrupted_virtual_files_never_panic() {
    // Flip every byte of an in-memory copy of a same-file VDS (one at a time)
    // and read everything: each read gives values or a typed error.
    let orig = std::fs::read(dir().join("vds_same_file.h5")).unwrap();
    let mut typed_errors = 0usize;
    for i in 0..orig.len() {
        let mut b = orig.clone();
        b[i] ^= 0x5a;
        let Ok(f) = File::from_bytes(b) else { continue };
        for name in ["/as_f64", "/irregular"] {
            if let Ok(Object::Dataset(d)) = f.object(name) {
                let _ = d.shape();
                if d.num_elements() <= 1 << 16 && d.read_all_raw().is_err() {
                    typed_errors += 1;
                }
            }
        }
    }
    // Corrupt mapping lists are caught (checksum, selection checks).
    assert!(typed_errors > 50, "{typed_errors}");
}
