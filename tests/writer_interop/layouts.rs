//! The chunked and filtered cases of the writer interop matrix
//! (`tests/writer_interop.rs`): every chunk index, edge chunks, unlimited and
//! zero-length dimensions, fill values, and every filter pipeline we encode.

use super::*;

pub(super) fn chunked() -> (FileWriter, Vec<Value>) {
    let mut w = FileWriter::in_memory();
    let r = w.root();
    let mut exp = Vec::new();
    // Single chunk.
    let v: Vec<i32> = (0..12).collect();
    w.create_dataset(
        r,
        "single",
        DatasetSpec::new(Datatype::int(4, true), &[3, 4]).chunked(&[3, 4], vec![]),
        to_bytes(&v),
    )
    .unwrap();
    exp.push(
        json!({"path": "/single", "kind": "dataset", "chunks": [3, 4],
        "value": [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]}),
    );
    // Fixed array with edge chunks.
    let v: Vec<u16> = (0..(7 * 5)).collect();
    w.create_dataset(
        r,
        "edges",
        DatasetSpec::new(Datatype::int(2, false), &[7, 5]).chunked(&[3, 2], vec![]),
        to_bytes(&v),
    )
    .unwrap();
    let rows: Vec<Vec<u16>> = v.chunks(5).map(|c| c.to_vec()).collect();
    exp.push(
        json!({"path": "/edges", "kind": "dataset", "chunks": [3, 2], "nchunks": 9, "value": rows}),
    );
    // Many chunks (more than 1024 entries).
    let v: Vec<f32> = (0..5000).map(|i| i as f32).collect();
    w.create_dataset(
        r,
        "many",
        DatasetSpec::new(Datatype::float(4), &[5000]).chunked(&[3], vec![]),
        to_bytes(&v),
    )
    .unwrap();
    exp.push(json!({"path": "/many", "kind": "dataset", "value": v}));
    // Fixed maxshape larger than shape.
    let v: Vec<i8> = (0..10).collect();
    w.create_dataset(
        r,
        "maxfixed",
        DatasetSpec::new(Datatype::int(1, true), &[10])
            .with_maxshape(&[Some(20)])
            .chunked(&[4], vec![]),
        to_bytes(&v),
    )
    .unwrap();
    exp.push(json!({"path": "/maxfixed", "kind": "dataset", "maxshape": [20], "value": v}));
    // Unlimited dims.
    let v: Vec<i64> = (0..10).collect();
    w.create_dataset(
        r,
        "unlim",
        DatasetSpec::new(Datatype::int(8, true), &[10])
            .with_maxshape(&[None])
            .chunked(&[4], vec![]),
        to_bytes(&v),
    )
    .unwrap();
    exp.push(json!({"path": "/unlim", "kind": "dataset", "maxshape": [null], "value": v}));
    let v: Vec<u8> = (0..30).collect();
    w.create_dataset(
        r,
        "unlim2",
        DatasetSpec::new(Datatype::int(1, false), &[5, 6])
            .with_maxshape(&[None, None])
            .chunked(&[2, 4], vec![]),
        to_bytes(&v),
    )
    .unwrap();
    let rows: Vec<Vec<u8>> = v.chunks(6).map(|c| c.to_vec()).collect();
    exp.push(
        json!({"path": "/unlim2", "kind": "dataset", "maxshape": [null, null], "value": rows}),
    );
    w.create_dataset(
        r,
        "unlim_empty",
        DatasetSpec::new(Datatype::float(8), &[0])
            .with_maxshape(&[None])
            .chunked(&[16], vec![]),
        Vec::<u8>::new(),
    )
    .unwrap();
    exp.push(json!({"path": "/unlim_empty", "kind": "dataset", "shape": [0], "value": []}));
    // One unlimited dimension that is not the first, and many chunks (super blocks).
    let v: Vec<i32> = (0..(3 * 2000)).collect();
    w.create_dataset(
        r,
        "unlim_last",
        DatasetSpec::new(Datatype::int(4, true), &[3, 2000])
            .with_maxshape(&[Some(3), None])
            .chunked(&[2, 3], vec![]),
        to_bytes(&v),
    )
    .unwrap();
    let rows: Vec<Vec<i32>> = v.chunks(2000).map(|c| c.to_vec()).collect();
    exp.push(json!({"path": "/unlim_last", "kind": "dataset", "maxshape": [3, null], "nchunks": 1334, "value": rows}));
    // 131 100 chunks: past the 131 060 entries that 1024-entry data blocks cover.
    let v: Vec<u8> = (0..131_100u32).map(|i| (i % 251) as u8).collect();
    w.create_dataset(
        r,
        "unlim_many",
        DatasetSpec::new(Datatype::int(1, false), &[131_100])
            .with_maxshape(&[None])
            .chunked(&[1], vec![]),
        v.clone(),
    )
    .unwrap();
    exp.push(json!({"path": "/unlim_many", "kind": "dataset", "nchunks": 131_100, "value": v}));
    w.create_dataset(
        r,
        "fixed_empty",
        DatasetSpec::new(Datatype::int(4, true), &[0, 5]).chunked(&[4, 5], vec![]),
        Vec::<u8>::new(),
    )
    .unwrap();
    exp.push(json!({"path": "/fixed_empty", "kind": "dataset", "shape": [0, 5], "value": []}));
    // Unwritten chunks read as the fill value.
    w.create_dataset(
        r,
        "unwritten",
        DatasetSpec::new(Datatype::int(2, true), &[6])
            .chunked(&[2], vec![])
            .with_fill(to_bytes(&[5i16])),
        DatasetData::None,
    )
    .unwrap();
    exp.push(json!({"path": "/unwritten", "kind": "dataset", "value": [5, 5, 5, 5, 5, 5]}));
    // Raw chunk writes (unfiltered): chunk 1 only.
    let d = w
        .create_dataset(
            r,
            "raw",
            DatasetSpec::new(Datatype::int(4, true), &[4]).chunked(&[2], vec![]),
            DatasetData::None,
        )
        .unwrap();
    w.write_raw_chunk(d, &[1], to_bytes(&[8i32, 9]), 0).unwrap();
    exp.push(json!({"path": "/raw", "kind": "dataset", "nchunks": 1, "value": [0, 0, 8, 9]}));
    (w, exp)
}

/// Filter pipelines: each filter used only if its encoder works in this build.
pub(super) fn filtered(select: impl Fn(&str) -> bool) -> (FileWriter, Vec<Value>, usize) {
    let mut w = FileWriter::in_memory();
    let r = w.root();
    let mut exp = Vec::new();
    let v: Vec<i32> = (0..1000).map(|i| i * 3 % 17).collect();
    let ctx = purehdf_filters::ChunkContext::new(4, 400);
    let pipelines: Vec<(&str, Vec<FilterSpec>)> = vec![
        ("deflate", vec![spec(1, vec![6])]),
        ("shuffle_deflate", vec![spec(2, vec![4]), spec(1, vec![4])]),
        ("fletcher32", vec![spec(3, vec![])]),
        (
            "shuffle_deflate_fletcher",
            vec![spec(2, vec![]), spec(1, vec![1]), spec(3, vec![])],
        ),
        ("lz4", vec![spec(32004, vec![0])]),
        ("zstd", vec![spec(32015, vec![3])]),
        ("bzip2", vec![spec(307, vec![9])]),
        ("lzf", vec![spec(32000, vec![])]),
        ("blosc_lz4", vec![spec(32001, vec![0, 0, 0, 0, 5, 1, 1])]),
        (
            "blosc_blosclz_bitshuffle",
            vec![spec(32001, vec![0, 0, 0, 0, 9, 2, 0])],
        ),
        ("blosc_zstd", vec![spec(32001, vec![0, 0, 0, 0, 3, 1, 5])]),
        (
            "blosc2_default",
            vec![spec(32026, vec![0, 0, 0, 0, 5, 1, 0])],
        ),
        ("blosc2_zstd", vec![spec(32026, vec![0, 0, 0, 0, 3, 1, 5])]),
        ("bitshuffle_lz4", vec![spec(32008, vec![0, 2])]),
        ("bitshuffle_zstd", vec![spec(32008, vec![0, 3, 3])]),
    ];
    let mut used = 0;
    // A 2-D chunked case too (Blosc2 stores rank and chunk dims).
    let v2: Vec<u16> = (0..(50 * 40)).map(|i| (i % 97) as u16).collect();
    for (name, p) in pipelines {
        if !select(name) {
            continue;
        }
        let local: Vec<FilterSpec> = p
            .iter()
            .map(|f| {
                purehdf::low_level::write::set_local::set_local(f, &Datatype::int(4, true), &[100])
            })
            .collect();
        if purehdf_filters::encode_pipeline(&local, &ctx, &[0u8; 400]).is_err() {
            println!("skipped pipeline {name}: encoder not available");
            continue;
        }
        used += 1;
        let ids: Vec<u32> = p.iter().map(|f| f.id).collect();
        w.create_dataset(
            r,
            name,
            DatasetSpec::new(Datatype::int(4, true), &[1000]).chunked_stored(&[100], p.clone()),
            to_bytes(&v),
        )
        .unwrap();
        exp.push(
            json!({"path": format!("/{name}"), "kind": "dataset", "filters": ids, "value": v}),
        );
        let one = format!("{name}_single");
        w.create_dataset(
            r,
            &one,
            DatasetSpec::new(Datatype::int(4, true), &[1000]).chunked_stored(&[1000], p.clone()),
            to_bytes(&v),
        )
        .unwrap();
        exp.push(json!({"path": format!("/{one}"), "kind": "dataset", "value": v}));
        let un = format!("{name}_unlimited");
        w.create_dataset(
            r,
            &un,
            DatasetSpec::new(Datatype::int(4, true), &[1000])
                .with_maxshape(&[None])
                .chunked_stored(&[300], p.clone()),
            to_bytes(&v),
        )
        .unwrap();
        exp.push(json!({"path": format!("/{un}"), "kind": "dataset", "value": v}));
        let two = format!("{name}_2d");
        w.create_dataset(
            r,
            &two,
            DatasetSpec::new(Datatype::int(2, false), &[50, 40])
                .chunked_stored(&[16, 16], p.clone()),
            to_bytes(&v2),
        )
        .unwrap();
        let rows: Vec<Vec<u16>> = v2.chunks(40).map(|c| c.to_vec()).collect();
        exp.push(json!({"path": format!("/{two}"), "kind": "dataset", "value": rows}));
    }
    // Pre-encoded chunks through write_raw_chunk: one deflated, one stored raw with
    // the deflate stage masked out.
    let deflate = vec![spec(1, vec![6])];
    if select("deflate") && purehdf_filters::encode_pipeline(&deflate, &ctx, &[0u8; 8]).is_ok() {
        let d = w
            .create_dataset(
                r,
                "raw_deflate",
                DatasetSpec::new(Datatype::int(4, true), &[4])
                    .chunked_stored(&[2], deflate.clone()),
                DatasetData::None,
            )
            .unwrap();
        let c0 = purehdf_filters::encode(&deflate[0], &ctx, &to_bytes(&[1i32, 2])).unwrap();
        w.write_raw_chunk(d, &[0], c0, 0).unwrap();
        w.write_raw_chunk(d, &[1], to_bytes(&[3i32, 4]), 1).unwrap();
        exp.push(
            json!({"path": "/raw_deflate", "kind": "dataset", "filters": [1],
            "nchunks": 2, "value": [1, 2, 3, 4]}),
        );
    }
    (w, exp, used)
}

pub(super) fn spec(id: u32, cd: Vec<u32>) -> FilterSpec {
    FilterSpec {
        id,
        flags: 0,
        cd_values: cd,
        name: None,
    }
}
