//! Vector data and samples built exactly as `shared/vectors/medh5/make_vectors.py` does.

use super::*;

// ---------------------------------------------------------------------------
// Vector data, built exactly as `shared/vectors/medh5/make_vectors.py` does.

/// C-order iteration over a 3-D shape.
pub(crate) fn zyx(shape: [usize; 3]) -> impl Iterator<Item = (i64, i64, i64)> {
    let [nz, ny, nx] = shape;
    (0..nz).flat_map(move |z| {
        (0..ny).flat_map(move |y| (0..nx).map(move |x| (z as i64, y as i64, x as i64)))
    })
}

pub(crate) fn le_i16(it: impl Iterator<Item = i64>) -> Vec<u8> {
    it.flat_map(|v| (v as i16).to_le_bytes()).collect()
}

pub(crate) struct VecData {
    pub path: &'static str,
    pub dtype: &'static str,
    pub shape: Vec<u64>,
    pub bytes: Vec<u8>,
}

pub(crate) fn d(path: &'static str, dtype: &'static str, shape: &[u64], bytes: Vec<u8>) -> VecData {
    VecData {
        path,
        dtype,
        shape: shape.to_vec(),
        bytes,
    }
}

pub(crate) fn v1_ct() -> Vec<u8> {
    le_i16(zyx([8, 16, 16]).map(|(z, y, x)| z * 256 + y * 16 + x))
}

pub(crate) fn v3_masks() -> (Vec<bool>, Vec<bool>, Vec<bool>) {
    let s = [16, 64, 64];
    let a = zyx(s).map(|(z, y, x)| (z + y + x) % 4 == 1).collect();
    let b = zyx(s).map(|(z, y, x)| (z + y + x) % 4 == 2).collect();
    let c = zyx(s).map(|(_, _, x)| x < 32).collect();
    (a, b, c)
}

pub(crate) fn vector_data(name: &str) -> Vec<VecData> {
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
pub(crate) const CONTENT_IDS: &[(&str, &str)] = &[
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

// ---------------------------------------------------------------------------
// End to end: build each vector through the sample model, plan it, and compare
// the plan with the reference's file (digests, content_id, layouts, filters,
// covered attributes).

pub(crate) fn bytes_of(v: &[VecData], path: &str) -> Vec<u8> {
    v.iter().find(|d| d.path == path).unwrap().bytes.clone()
}

pub(crate) fn organs() -> LabelSet {
    LabelSet::from_keys("demo-organs", "1.0.0", &["liver", "spleen", "kidney"])
}

pub(crate) fn build_sample(name: &str) -> (Sample, Profile) {
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

pub(crate) fn plan_for(name: &str) -> WritePlan {
    let (s, profile) = build_sample(name);
    let opts = WriteOptions {
        profile,
        l3_bytes: Some(chunking::FALLBACK_L3_BYTES),
        ..WriteOptions::default()
    };
    s.into_plan(opts).unwrap()
}
