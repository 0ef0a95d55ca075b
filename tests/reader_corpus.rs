//! End-to-end checks of the HDF5 reader against real files of the shared corpus
//! and the h5py-produced `expected/*.json` descriptions.

use std::collections::HashSet;
use std::path::PathBuf;

use purehdf::low_level::datatype::{ByteOrder, Datatype};
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::link::Link;
use serde_json::Value;

fn corpus() -> Option<PathBuf> {
    let rel = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if rel.join("MANIFEST.tsv").is_file() {
        return Some(rel);
    }
    println!("skipped: ../shared/corpus absent");
    None
}

fn expected(root: &std::path::Path, rel: &str) -> Value {
    let p = root.join("expected").join(format!("{rel}.json"));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// The h5py class name of a datatype.
fn class_name(dt: &Datatype) -> &'static str {
    match dt {
        Datatype::Integer { .. } => "integer",
        Datatype::Float { .. } => "float",
        Datatype::Time { .. } => "time",
        Datatype::String { .. } | Datatype::VarString { .. } => "string",
        Datatype::Bitfield { .. } => "bitfield",
        Datatype::Opaque { .. } => "opaque",
        Datatype::Compound { .. } => "compound",
        Datatype::Reference { kind, .. } => match kind {
            purehdf::low_level::datatype::ReferenceKind::Object => "reference_object",
            purehdf::low_level::datatype::ReferenceKind::Region => "reference_region",
            _ => "reference_h5r",
        },
        Datatype::Enum { .. } => "enum",
        Datatype::VarSequence { .. } => "vlen_sequence",
        Datatype::Array { .. } => "array",
        Datatype::Complex { .. } => "complex",
    }
}

/// Compare a datatype with an `h5t` description (class, size, order, members...).
fn check_h5t(dt: &Datatype, h: &Value, ctx: &str) {
    assert_eq!(class_name(dt), h["class"].as_str().unwrap(), "{ctx}: class");
    match dt {
        Datatype::VarString { .. } => assert_eq!(h["variable"], true, "{ctx}"),
        Datatype::String { size, .. } => {
            assert_eq!(h["variable"], false, "{ctx}");
            assert_eq!(u64::from(*size), h["size"].as_u64().unwrap(), "{ctx}: size");
        }
        Datatype::VarSequence { base, .. } => check_h5t(base, &h["base"], ctx),
        Datatype::Enum { base, members } => {
            check_h5t(base, &h["base"], ctx);
            assert_eq!(
                members.len() as u64,
                h["nmembers"].as_u64().unwrap(),
                "{ctx}"
            );
        }
        Datatype::Array { base, dims } => {
            let want: Vec<u64> = h["dims"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            assert_eq!(dims, &want, "{ctx}: array dims");
            check_h5t(base, &h["base"], ctx);
        }
        Datatype::Compound { size, members } => {
            if !dt.has_vlen_or_ref() {
                // h5py reports the in-memory size, which differs for vlen/reference members.
                assert_eq!(u64::from(*size), h["size"].as_u64().unwrap(), "{ctx}: size");
            }
            let want = h["members"].as_array().unwrap();
            assert_eq!(members.len(), want.len(), "{ctx}: members");
            for (m, w) in members.iter().zip(want) {
                assert_eq!(m.name, w["name"].as_str().unwrap(), "{ctx}");
                if !dt.has_vlen_or_ref() {
                    assert_eq!(u64::from(m.offset), w["offset"].as_u64().unwrap(), "{ctx}");
                }
                if !w["type"].is_null() {
                    check_h5t(&m.dtype, &w["type"], ctx);
                }
            }
        }
        Datatype::Integer {
            size,
            order,
            signed,
            ..
        } => {
            assert_eq!(u64::from(*size), h["size"].as_u64().unwrap(), "{ctx}: size");
            assert_eq!(*signed, h["signed"].as_bool().unwrap(), "{ctx}: sign");
            assert_eq!(
                order_name(*order),
                h["order"].as_str().unwrap(),
                "{ctx}: order"
            );
        }
        Datatype::Float { size, order, .. } => {
            assert_eq!(u64::from(*size), h["size"].as_u64().unwrap(), "{ctx}: size");
            assert_eq!(
                order_name(*order),
                h["order"].as_str().unwrap(),
                "{ctx}: order"
            );
        }
        _ => {}
    }
}

fn order_name(o: ByteOrder) -> &'static str {
    match o {
        ByteOrder::Little => "le",
        ByteOrder::Big => "be",
        ByteOrder::Vax => "other",
    }
}

/// Types whose stored bytes equal h5py's "raw-le-packed" form.
fn le_plain(dt: &Datatype) -> bool {
    match dt {
        // Raw bytes equal h5py's values only at full precision: a 16-bit
        // integer at bit offset 5 of a 4-byte container (nbit files) is
        // shifted and sign-extended by libhdf5's conversion.
        Datatype::Integer {
            order,
            size,
            bit_offset,
            precision,
            ..
        } => {
            (*order == ByteOrder::Little || *size == 1)
                && *bit_offset == 0
                && u32::from(*precision) == size * 8
        }
        Datatype::Float {
            order,
            size,
            layout,
        } => {
            *order == ByteOrder::Little
                && *layout == purehdf::low_level::datatype::FloatLayout::ieee(*size)
                && [2, 4, 8].contains(size)
        }
        Datatype::Array { base, .. } => le_plain(base),
        _ => false,
    }
}

fn sha256_hex(b: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// Numeric values of raw elements as f64 (integers and IEEE floats of 4/8 bytes).
fn numbers(dt: &Datatype, raw: &[u8]) -> Option<Vec<f64>> {
    let (size, order) = match dt {
        Datatype::Integer { size, order, .. } | Datatype::Float { size, order, .. } => {
            (*size as usize, *order)
        }
        _ => return None,
    };
    let float_ok = match dt {
        Datatype::Float { layout, .. } => {
            (size == 4 || size == 8)
                && *layout == purehdf::low_level::datatype::FloatLayout::ieee(size as u32)
        }
        _ => true,
    };
    if !(1..=8).contains(&size) || !float_ok {
        return None;
    }
    let mut out = Vec::new();
    for e in raw.chunks(size) {
        let mut b = e.to_vec();
        if order == ByteOrder::Big {
            b.reverse();
        }
        let mut w = [0u8; 8];
        w[..size].copy_from_slice(&b);
        let v = match dt {
            Datatype::Integer { signed: true, .. } => {
                let shift = 64 - 8 * size as u32;
                ((i64::from_le_bytes(w) << shift) >> shift) as f64
            }
            Datatype::Integer { .. } => u64::from_le_bytes(w) as f64,
            Datatype::Float { .. } if size == 4 => {
                f32::from_le_bytes([w[0], w[1], w[2], w[3]]) as f64
            }
            Datatype::Float { .. } if size == 8 => f64::from_le_bytes(w),
            _ => return None,
        };
        out.push(v);
    }
    Some(out)
}

fn flatten(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| flatten(x, out)),
        x => out.push(x.clone()),
    }
}

fn same_number(a: f64, w: &Value) -> bool {
    match w.as_f64() {
        Some(x) => a == x || (a.is_nan() && x.is_nan()) || (a - x).abs() <= 1e-6 * x.abs(),
        None => matches!(w.as_str(), Some("nan" | "NaN")) && a.is_nan() || w.is_string(),
    }
}

/// Check one expected object against the reader; returns how many values were compared.
fn check_object(file: &File, o: &Value) -> usize {
    let path = o["path"].as_str().unwrap();
    let kind = o["kind"].as_str().unwrap();
    let obj = file.object(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(obj.kind_name(), kind, "{path}");
    let hdr = obj.header();
    assert_eq!(
        u64::from(hdr.version),
        o["object_header"]["version"].as_u64().unwrap(),
        "{path}: header version"
    );
    let want_msgs: Vec<&str> = o["object_header"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(hdr.message_names(), want_msgs, "{path}: messages");
    let oh = &o["object_header"];
    assert_eq!(
        hdr.nchunks as u64,
        oh["nchunks"].as_u64().unwrap(),
        "{path}: nchunks"
    );
    assert_eq!(
        hdr.messages.len() as u64,
        oh["nmesgs"].as_u64().unwrap(),
        "{path}: nmesgs"
    );
    assert_eq!(
        file.attr_storage(hdr).name(),
        o["attr_storage"].as_str().unwrap(),
        "{path}: attr storage"
    );
    let attrs = obj
        .attributes()
        .unwrap_or_else(|e| panic!("{path} attrs: {e}"));
    let names: HashSet<String> = attrs.iter().map(|a| a.name.clone()).collect();
    let want: HashSet<String> = o["attrs"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(names, want, "{path}: attribute names");
    let mut compared = 0;
    for a in &attrs {
        let w = &o["attrs"][&a.name];
        check_h5t(&a.dtype, &w["h5t"], &format!("{path}@{}", a.name));
        let shape: Vec<u64> = w["shape"]
            .as_array()
            .map(|s| s.iter().map(|v| v.as_u64().unwrap()).collect())
            .unwrap_or_default();
        assert_eq!(a.shape(), shape.as_slice(), "{path}@{}", a.name);
        let wv = &w["value"];
        if let (Some(nums), true) = (numbers(&a.dtype, &a.data), wv.is_array() || wv.is_number()) {
            let mut flat = Vec::new();
            flatten(&w["value"], &mut flat);
            assert_eq!(nums.len(), flat.len(), "{path}@{}", a.name);
            for (x, y) in nums.iter().zip(&flat) {
                assert!(same_number(*x, y), "{path}@{}: {x} vs {y}", a.name);
            }
            compared += 1;
        }
        if matches!(a.dtype, Datatype::VarString { .. }) && a.shape().is_empty() {
            if let Some(s) = w["value"].as_str() {
                let b = file.vlen_bytes(&a.data).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&b).trim_end_matches('\0'),
                    s,
                    "{path}@{}",
                    a.name
                );
                compared += 1;
            }
        }
    }
    match obj {
        Object::Group(g) => {
            assert_eq!(
                g.storage().name(),
                o["storage"].as_str().unwrap(),
                "{path}: storage"
            );
            let links: Vec<String> = g.links().unwrap().into_iter().map(|(n, _)| n).collect();
            let want: Vec<String> = o["links"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            assert_eq!(links, want, "{path}: links");
        }
        Object::Dataset(d) => {
            check_h5t(d.dtype(), &o["h5t"], path);
            let shape: Vec<u64> = o["shape"]
                .as_array()
                .map(|s| s.iter().map(|v| v.as_u64().unwrap()).collect())
                .unwrap_or_default();
            if d.layout_kind() != "virtual" {
                // libhdf5 derives a virtual dataset's extent from its sources.
                assert_eq!(d.shape(), shape.as_slice(), "{path}: shape");
            }
            if let Some(ms) = o["maxshape"].as_array() {
                let ms: Vec<Option<u64>> = ms.iter().map(Value::as_u64).collect();
                assert_eq!(d.maxshape(), ms.as_slice(), "{path}: maxshape");
            }
            assert_eq!(
                d.layout_kind(),
                o["layout"].as_str().unwrap(),
                "{path}: layout"
            );
            assert_eq!(
                d.space_kind().name(),
                o["dataspace"].as_str().unwrap(),
                "{path}: dataspace"
            );
            assert_eq!(
                d.fill_value().state_name(),
                o["fill_value_defined"].as_str().unwrap(),
                "{path}: fill"
            );
            if d.layout_kind() != "chunked" {
                assert_eq!(
                    d.storage_size().unwrap(),
                    o["storage_size"].as_u64().unwrap(),
                    "{path}: storage size"
                );
            }
            let small = d.num_elements().saturating_mul(d.dtype().size()) <= 16 << 20;
            if o["hash_kind"] == "raw-le-packed" && le_plain(d.dtype()) && small {
                if let Ok(raw) = d.read_all_raw() {
                    assert_eq!(
                        sha256_hex(&raw),
                        o["sha256"].as_str().unwrap(),
                        "{path}: data hash"
                    );
                    compared += 1;
                } else if !matches!(d.layout_kind(), "chunked" | "virtual") {
                    panic!("{path}: read failed");
                }
            }
            let vals = o.get("values").filter(|v| v.is_array() || v.is_number());
            if let (Some(vals), true) = (vals, d.layout_kind() != "virtual") {
                let raw = d
                    .read_all_raw()
                    .unwrap_or_else(|e| panic!("{path} read: {e}"));
                if let Some(nums) = numbers(d.dtype(), &raw) {
                    let mut flat = Vec::new();
                    flatten(vals, &mut flat);
                    assert_eq!(nums.len(), flat.len(), "{path}: value count");
                    for (x, y) in nums.iter().zip(&flat) {
                        assert!(same_number(*x, y), "{path}: {x} vs {y}");
                    }
                    compared += 1;
                }
            }
        }
        Object::NamedDatatype(t) => {
            check_h5t(&t.dtype, &o["h5t"], path);
        }
    }
    compared
}

/// Check every group/dataset/datatype object of one file; returns values compared.
fn check_file(rel: &str) -> Option<usize> {
    let root = corpus()?;
    let exp = expected(&root, rel);
    let file = File::open(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    assert_eq!(
        u64::from(file.superblock().version),
        exp["format"]["superblock_version"].as_u64().unwrap()
    );
    let mut compared = 0;
    for o in exp["objects"].as_array().unwrap() {
        if matches!(o["kind"].as_str(), Some("group" | "dataset" | "datatype")) {
            compared += check_object(&file, o);
        }
    }
    Some(compared)
}

#[test]
fn v0_symbol_table_file() {
    if let Some(n) = check_file("anndata/tests/data/archives/v0.11.4/adata.h5ad") {
        assert!(n > 0);
    }
}

#[test]
fn v2_superblock_compact_links_and_values() {
    // /dataset1 = [0,1,2,3] (<i4), /group1/dataset2 = [0..4] (>u8), vlen string attribute "Test".
    if let Some(n) = check_file("pyfive/tests/data/latest.hdf5") {
        assert!(n >= 5, "{n}");
    }
}

#[test]
fn hyperslab_reads_of_contiguous_data() {
    let Some(root) = corpus() else { return };
    let f = File::open(root.join("pyfive/tests/data/latest.hdf5")).unwrap();
    let d = f.root().unwrap().dataset("group1/dataset2").unwrap(); // >u8 [0, 1, 2, 3]
    let sel = purehdf::Selection::Hyperslab {
        start: vec![1],
        count: vec![2],
    };
    let mut out = vec![0u8; 16];
    d.read_raw(&sel, &mut out).unwrap();
    assert_eq!(out[..8], 1u64.to_be_bytes());
    assert_eq!(out[8..], 2u64.to_be_bytes());
    // Wrong buffer size and out-of-range selections are errors.
    assert!(d.read_raw(&sel, &mut [0u8; 8]).is_err());
    let bad = purehdf::Selection::Hyperslab {
        start: vec![3],
        count: vec![2],
    };
    assert!(d.read_raw(&bad, &mut out).is_err());
}

#[test]
fn v3_superblock_files() {
    for f in [
        "jhdf/jhdf/src/test/resources/hdf5/test_compact_datasets_latest.hdf5",
        "jhdf/jhdf/src/test/resources/hdf5/test_string_datasets_latest.hdf5",
        "jhdf/jhdf/src/test/resources/hdf5/test_enum_datasets_latest.hdf5",
        "jhdf/jhdf/src/test/resources/hdf5/test_fill_value_latest.hdf5",
        "jhdf/jhdf/src/test/resources/hdf5/float_special_values_latest.hdf5",
        "jhdf/jhdf/src/test/resources/hdf5/opaque_datasets_latest.hdf5",
    ] {
        check_file(f);
    }
}

#[test]
fn compound_array_and_committed_types() {
    for f in [
        "hdf5-json/data/hdf5/comp_complex.h5",
        "netcdf-c/ncdump/ref_tst_compounds2.nc",
        "pyfive/tests/data/enum_variable.nc",
    ] {
        check_file(f);
    }
}

#[test]
fn dense_groups_and_attributes() {
    for f in [
        "netcdf-rust/testdata/hdf5/dense_groups.h5",
        "jhdf/jhdf/src/test/resources/hdf5/test_large_attribute.hdf5",
        "hdf5-pure-stephenberry/tests/fixtures/dense_attrs_root.h5",
        "hdf5/tools/test/h5dump/testfiles/tattr4_be.h5",
    ] {
        check_file(f);
    }
}

#[test]
fn external_raw_data_file() {
    // /external: two <i4 stored in h5repack_ext.bin next to the HDF5 file.
    if let Some(n) = check_file("hdf5/tools/test/h5repack/testfiles/h5repack_ext.h5") {
        assert!(n >= 1);
    }
    let Some(root) = corpus() else { return };
    let bytes =
        std::fs::read(root.join("hdf5/tools/test/h5repack/testfiles/h5repack_ext.h5")).unwrap();
    // Without a path the external file cannot be found: an error on that dataset only.
    let f = File::from_bytes(bytes).unwrap();
    let d = f.root().unwrap().dataset("external").unwrap();
    assert_eq!(d.external_files().unwrap().slots.len(), 1);
    assert!(d.read_all_raw().is_err());
}

#[test]
fn link_resolution() {
    let Some(root) = corpus() else { return };
    let file = File::open(root.join("jhdf/jhdf/src/test/resources/hdf5/test_file2.hdf5")).unwrap();
    // External link into test_file_ext.hdf5 (same folder) resolves to a dataset.
    let ext = file.object("/links_group/external_link").unwrap();
    assert_eq!(ext.kind_name(), "dataset");
    assert_eq!(ext.path(), "/links_group/external_link");
    // A missing external file and a dangling soft link are errors on that object only.
    assert!(file
        .object("/links_group/external_link_to_missing_file")
        .is_err());
    assert!(file.object("/links_group/broken_soft_link").is_err());
    // Soft links reach the same object header as the target path.
    let a = file.object("/links_group/soft_link_to_int8").unwrap();
    let b = file.object("/datasets_group/int/int8").unwrap();
    assert_eq!(a.address(), b.address());
    let g = file.object("/links_group/soft_link_to_group").unwrap();
    assert_eq!(g.kind_name(), "group");
    // Relative paths from a group, and "." components.
    let grp = file.root().unwrap().group("datasets_group").unwrap();
    assert_eq!(grp.open("int/./int8").unwrap().address(), b.address());
    assert!(matches!(
        file.object("/nope"),
        Err(purehdf::Error::NotFound(_))
    ));
}

/// Byte-flipped copies of real files: every walk ends with a value or an error.
#[test]
fn mutated_files_never_panic() {
    let Some(root) = corpus() else { return };
    for rel in [
        "pyfive/tests/data/latest.hdf5",
        "anndata/tests/data/archives/v0.11.4/adata.h5ad",
        "netcdf-rust/testdata/hdf5/dense_groups.h5",
        "hdf5-json/data/hdf5/comp_complex.h5",
    ] {
        let orig = std::fs::read(root.join(rel)).unwrap();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..1000 {
            let mut bytes = orig.clone();
            for _ in 0..4 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let i = (state as usize) % bytes.len().min(4096);
                bytes[i] = (state >> 32) as u8;
            }
            let Ok(file) = File::from_bytes(bytes) else {
                continue;
            };
            let Ok(g) = file.root() else { continue };
            let Ok(links) = g.links() else { continue };
            let _ = g.attributes();
            for (name, _) in links {
                if let Ok(o) = g.open(&name) {
                    let _ = o.attributes_each();
                    if let Object::Dataset(d) = o {
                        let _ = d.read_all_raw();
                        let _ = d.storage_size();
                    }
                }
            }
        }
    }
}

#[test]
fn revised_references_point_at_datasets() {
    // Dimension-scale REFERENCE_LIST attributes hold {H5T_STD_REF dataset, int dimension}.
    let Some(root) = corpus() else { return };
    let file = File::open(root.join("hdf5/hl/test/testfiles/test_ds_le_new_ref.h5")).unwrap();
    let ds = file.object("/ds_1_al").unwrap();
    let attr = ds
        .attributes()
        .unwrap()
        .into_iter()
        .find(|a| a.name == "REFERENCE_LIST")
        .unwrap();
    let Datatype::Compound { size, members } = &attr.dtype else {
        panic!("{:?}", attr.dtype)
    };
    assert_eq!(members[0].name, "dataset");
    let mut n = 0;
    for e in attr.data.chunks(*size as usize) {
        let r = file
            .revised_reference(&e[..members[0].dtype.size() as usize])
            .unwrap();
        assert_eq!(r.kind, 2);
        let obj = file.object_at(r.address.unwrap(), "/ref".into()).unwrap();
        assert_eq!(obj.kind_name(), "dataset");
        n += 1;
    }
    assert_eq!(n, 2);
}

#[test]
fn shared_messages_committed_and_sohm() {
    // /DS1 uses a committed datatype; h5stat_tsohm.h5 keeps dataspaces in the
    // shared-message heap (superblock extension -> SMTB -> fractal heap).
    check_file("hdf5-json/data/hdf5/committed_type.h5");
    check_file("hdf5/tools/test/h5stat/testfiles/h5stat_tsohm.h5");
    let Some(root) = corpus() else { return };
    let f = File::open(root.join("hdf5/tools/test/h5stat/testfiles/h5stat_tsohm.h5")).unwrap();
    assert!(f.sohm_table().is_some());
    let d = f.object("/dataset2").unwrap();
    assert_eq!(d.header().shared_message_names(), vec!["dataspace"]);
    let Object::Dataset(d) = d else { panic!() };
    assert!(!d.shape().is_empty());
}

#[test]
fn soft_and_external_links() {
    let Some(root) = corpus() else { return };
    let rel = "jhdf/jhdf/src/test/resources/hdf5/test_file2.hdf5";
    let exp = expected(&root, rel);
    let file = File::open(root.join(rel)).unwrap();
    for o in exp["objects"].as_array().unwrap() {
        let path = o["path"].as_str().unwrap();
        match o["kind"].as_str().unwrap() {
            "soft_link" => {
                let (parent, name) = path.rsplit_once('/').unwrap();
                let g = file
                    .root()
                    .unwrap()
                    .group(if parent.is_empty() { "/" } else { parent })
                    .unwrap();
                assert_eq!(
                    g.link(name).unwrap(),
                    Link::Soft(o["target"].as_str().unwrap().to_string())
                );
            }
            "external_link" => {
                let (parent, name) = path.rsplit_once('/').unwrap();
                let g = file
                    .root()
                    .unwrap()
                    .group(if parent.is_empty() { "/" } else { parent })
                    .unwrap();
                assert!(
                    matches!(g.link(name).unwrap(), Link::External { .. }),
                    "{path}"
                );
            }
            "group" | "dataset" => {
                check_object(&file, o);
            }
            _ => {}
        }
    }
}

/// Every corpus file whose datasets are contiguous/compact: open it and walk every
/// object and attribute (errors allowed, panics not).
#[test]
fn smoke_walk_contiguous_files() {
    let Some(root) = corpus() else { return };
    let manifest = std::fs::read_to_string(root.join("MANIFEST.tsv")).unwrap();
    let (mut files, mut opened, mut objects, mut failures) = (0, 0, 0usize, 0usize);
    let t0 = std::time::Instant::now();
    for line in manifest.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let layouts = cols.get(10).copied().unwrap_or("");
        if !layouts
            .split(',')
            .all(|l| l.is_empty() || l == "contiguous" || l == "compact")
        {
            continue;
        }
        files += 1;
        let tf = std::time::Instant::now();
        let Ok(file) = File::open(root.join(cols[0])) else {
            continue;
        };
        opened += 1;
        let mut stack = vec![("/".to_string(), 0usize)];
        let mut seen = HashSet::new();
        while let Some((path, depth)) = stack.pop() {
            let obj = match file.object(&path) {
                Ok(o) => o,
                Err(e) => {
                    println!("failed: {} {path}: {e}", cols[0]);
                    failures += 1;
                    continue;
                }
            };
            if !seen.insert(obj.address()) || depth > 64 {
                continue;
            }
            objects += 1;
            let _ = obj.attributes();
            match obj {
                Object::Group(g) => {
                    let links = g.links();
                    if let Err(e) = &links {
                        println!("links failed: {} {path}: {e}", cols[0]);
                    }
                    if let Ok(links) = links {
                        for (name, link) in links {
                            if let Link::Hard(_) = link {
                                stack.push((
                                    purehdf::low_level::link::join_path(&path, &name),
                                    depth + 1,
                                ));
                            }
                        }
                    } else {
                        failures += 1;
                    }
                }
                Object::Dataset(d) => {
                    if d.num_elements().saturating_mul(d.dtype().size()) < (64 << 20) {
                        let _ = d.read_all_raw();
                    }
                }
                Object::NamedDatatype(_) => {}
            }
        }
        if tf.elapsed().as_millis() > 100 {
            println!("slow: {} {:?}", cols[0], tf.elapsed());
        }
    }
    println!(
        "smoke: {files} files, {opened} opened, {objects} objects, {failures} failures, {:?}",
        t0.elapsed()
    );
    assert!(opened * 10 >= files * 9, "{opened}/{files} opened");
}

/// Every contiguous/compact-only corpus file that h5py reads completely: each
/// group/dataset/datatype object must match `expected/` (kinds, header messages,
/// links, attributes, dtypes, shapes, layouts, fill states, small values).
#[test]
fn contiguous_corpus_matches_expected() {
    let Some((checked, bad)) = compare_corpus(true) else {
        return;
    };
    assert!(checked > 10_000, "only {checked} objects checked");
    assert!(
        bad <= MAX_MISMATCHES_CONTIGUOUS,
        "{bad} of {checked} objects differ (ceiling {MAX_MISMATCHES_CONTIGUOUS})"
    );
}

/// Every file h5py reads completely, chunked ones included (these also exercise
/// the chunk indexes and filters): the reader must agree on nearly every object.
#[test]
fn whole_corpus_matches_expected() {
    let Some((checked, bad)) = compare_corpus(false) else {
        return;
    };
    assert!(checked > 12_000, "only {checked} objects checked");
    assert!(
        bad <= MAX_MISMATCHES_ALL,
        "{bad} of {checked} objects differ (ceiling {MAX_MISMATCHES_ALL})"
    );
}

/// Objects this API-level check may still disagree on (lower them as the reader
/// improves). The remaining ones are deliberately corrupt libhdf5 test files
/// whose objects this test's own helpers cannot walk (the `h5 dump` comparison
/// of `tests/corpus.rs` matches libhdf5 on them) and three zfp-filtered
/// datasets (filter 32013, not implemented).
const MAX_MISMATCHES_CONTIGUOUS: usize = 8;
const MAX_MISMATCHES_ALL: usize = 11;

/// The comparison swaps the process-wide panic hook: one at a time.
static HOOK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn compare_corpus(contiguous_only: bool) -> Option<(usize, usize)> {
    let root = corpus()?;
    let _guard = HOOK.lock().unwrap_or_else(|e| e.into_inner());
    let manifest = std::fs::read_to_string(root.join("MANIFEST.tsv")).unwrap();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let (mut checked, mut bad) = (0usize, Vec::new());
    for line in manifest.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let layouts = cols.get(10).copied().unwrap_or("");
        let simple = layouts
            .split(',')
            .all(|l| l.is_empty() || l == "contiguous" || l == "compact");
        if cols.get(19) != Some(&"yes") || (contiguous_only && !simple) {
            continue;
        }
        let rel = cols[0];
        let exp = expected(&root, rel);
        if exp.get("opened_after_clearing_status_flags").is_some() {
            continue;
        }
        let Ok(file) = File::open(root.join(rel)) else {
            bad.push(format!("{rel}: open failed"));
            continue;
        };
        for o in exp["objects"].as_array().unwrap() {
            if !matches!(o["kind"].as_str(), Some("group" | "dataset" | "datatype")) {
                continue;
            }
            checked += 1;
            let r =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_object(&file, o)));
            if let Err(e) = r {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                bad.push(format!(
                    "{rel}: {}",
                    msg.lines().take(3).collect::<Vec<_>>().join(" | ")
                ));
            }
        }
    }
    std::panic::set_hook(prev);
    for b in bad.iter().take(60) {
        println!("MISMATCH {b}");
    }
    println!(
        "corpus (contiguous only: {contiguous_only}): {checked} objects checked, {} mismatches",
        bad.len()
    );
    Some((checked, bad.len()))
}
