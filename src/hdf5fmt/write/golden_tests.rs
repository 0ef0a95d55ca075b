//! Byte-for-byte regression check of the writer: files that exercise every
//! structure it builds (fixed and extensible arrays, v2 B-tree chunk indexes,
//! dense links and attributes with creation-order indexes, huge heap objects,
//! global heap strings, committed datatypes, fill values) hash to the values
//! recorded when the encoders moved onto the shared model types. A change of
//! any encoded byte fails here; update the table only for an intended format
//! change. `PUREHDF_WRITER_BYTES_DIR=dir` also writes each file there.
use super::*;

fn files() -> Vec<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    let u8t = || Datatype::int(1, false);
    let i32t = || Datatype::int(4, true);

    // Fixed array (filtered and not), extensible array, v2 B-tree chunk index.
    let mut w = FileWriter::in_memory();
    let r = w.root();
    let data: Vec<u8> = (0..400u32).flat_map(|i| (i as i32).to_le_bytes()).collect();
    let spec = DatasetSpec::new(i32t(), &[20, 20]).chunked(&[5, 4], vec![]);
    w.create_dataset(r, "fa", spec, data.clone()).unwrap();
    let spec = DatasetSpec::new(i32t(), &[20, 20]).chunked(
        &[5, 4],
        vec![Filter::shuffle(), Filter::deflate(4).unwrap()],
    );
    w.create_dataset(r, "fa_z", spec, data.clone()).unwrap();
    let spec = DatasetSpec::new(i32t(), &[20, 20])
        .with_maxshape(&[None, Some(20)])
        .chunked(&[1, 4], vec![]);
    w.create_dataset(r, "ea", spec, data.clone()).unwrap();
    let spec = DatasetSpec::new(i32t(), &[20, 20])
        .with_maxshape(&[None, Some(20)])
        .chunked(&[1, 4], vec![Filter::deflate(1).unwrap()]);
    w.create_dataset(r, "ea_z", spec, data.clone()).unwrap();
    let spec = DatasetSpec::new(i32t(), &[20, 20])
        .with_maxshape(&[None, None])
        .chunked(&[2, 2], vec![]);
    w.create_dataset(r, "bt", spec, data.clone()).unwrap();
    let spec = DatasetSpec::new(i32t(), &[20, 20])
        .with_maxshape(&[None, None])
        .chunked(&[2, 2], vec![Filter::deflate(1).unwrap()]);
    w.create_dataset(r, "bt_z", spec, data).unwrap();
    // 600 chunks along the unlimited dimension: extensible array super blocks
    let long: Vec<u8> = (0..600u32).map(|i| (i % 256) as u8).collect();
    let spec = DatasetSpec::new(u8t(), &[600])
        .with_maxshape(&[None])
        .chunked(&[1], vec![]);
    w.create_dataset(r, "ea_long", spec, long).unwrap();
    let spec = DatasetSpec::new(u8t(), &[6]).with_fill(vec![7]);
    w.create_dataset(r, "fill", spec, DatasetData::None)
        .unwrap();
    out.push(("chunk_indexes", w.finish().unwrap()));

    // Dense links and attributes, creation order tracked and indexed, huge
    // heap objects, vlen strings in the global heap, a committed datatype.
    let mut w = FileWriter::in_memory();
    let r = w.root();
    let g = w.create_group(r, "dense").unwrap();
    let both = CreationOrder {
        tracked: true,
        indexed: true,
    };
    w.set_link_creation_order(g, both).unwrap();
    w.set_attr_creation_order(g, both).unwrap();
    for i in 0..40 {
        w.create_group(g, &format!("child{i:02}")).unwrap();
        w.set_attr(g, &format!("a{i:02}"), AttrValue::string(&format!("v{i}")))
            .unwrap();
    }
    let big: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
    w.set_attr(
        r,
        "big",
        AttrValue::raw(u8t(), Dataspace::simple(&[70_000]), big),
    )
    .unwrap();
    let spec = DatasetSpec::new(vlen_string_type(CharSet::Utf8), &[3]);
    let strings = vec!["alpha".to_string(), String::new(), "γάμμα".to_string()];
    w.create_dataset(r, "strings", spec, DatasetData::VarStrings(strings))
        .unwrap();
    let t = w.commit_datatype(r, "t", i32t()).unwrap();
    let spec = DatasetSpec::new(i32t(), &[2]);
    let two: Vec<u8> = vec![1, 0, 0, 0, 2, 0, 0, 0];
    w.create_dataset_with_type(r, "typed", spec, t, two)
        .unwrap();
    let small = w.create_group(r, "small").unwrap();
    w.set_link_creation_order(
        small,
        CreationOrder {
            tracked: true,
            indexed: false,
        },
    )
    .unwrap();
    w.create_group(small, "x").unwrap();
    w.soft_link(small, "s", "/dense").unwrap();
    out.push(("groups_attrs", w.finish().unwrap()));
    out
}

/// FNV-1a, 64 bits.
fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[test]
fn writer_bytes_are_unchanged() {
    let dir = std::env::var_os("PUREHDF_WRITER_BYTES_DIR");
    let got: Vec<(&str, usize, u64)> = files()
        .into_iter()
        .map(|(name, b)| {
            if let Some(d) = &dir {
                std::fs::write(std::path::Path::new(d).join(format!("{name}.h5")), &b).unwrap();
            }
            // every file reads back
            let f = crate::file::File::from_bytes(b.clone()).unwrap();
            assert!(!f.root().unwrap().links().unwrap().is_empty());
            (name, b.len(), fnv(&b))
        })
        .collect();
    let want: Vec<(&str, usize, u64)> = GOLDEN.to_vec();
    assert_eq!(got, want);
}

/// Recorded from the writer before its encoders moved onto the model types.
const GOLDEN: &[(&str, usize, u64)] = &[
    ("chunk_indexes", 32_953, 898_559_818_761_995_882),
    ("groups_attrs", 89_834, 5_200_264_651_691_645_787),
];
