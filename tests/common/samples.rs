//! medh5 samples the remote-read tests write in memory: a textured int16 CT
//! (so it compresses only partly) on one grid, with an optional labelmap.

use purehdf_medh5::create::plan_at;
use purehdf_medh5::document::LabelSet;
use purehdf_medh5::model::{Annotation, ArrayData, Encoding, Grid, Image, Sample};

/// A balanced-profile sample of `shape` (with a three-organ labelmap when
/// `labels`): the file's bytes and the CT's raw little-endian bytes.
pub(crate) fn textured_ct(shape: [u64; 3], labels: bool) -> (Vec<u8>, Vec<u8>) {
    let n = (shape[0] * shape[1] * shape[2]) as usize;
    let mut x = 0x2545_f491u32;
    let ct: Vec<i16> = (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            ((i % 128) as i16) * 4 + (x % 64) as i16 - 500
        })
        .collect();
    let mut s = Sample::new("remote", "SUBJ-R");
    s.grids.push(Grid::new("ct", &shape, &[1.0, 0.8, 0.8]));
    s.images.push(Image::new(
        "CT",
        "ct",
        "CT",
        ArrayData::from_slice(&shape, &ct).unwrap(),
    ));
    if labels {
        let map: Vec<u8> = (0..n).map(|i| ((i / 5000) % 4) as u8).collect();
        s.document.label_set = Some(LabelSet::from_keys(
            "organs",
            "1.0.0",
            &["liver", "spleen", "kidney"],
        ));
        s.annotations.push(Annotation::new(
            "organs",
            "ct",
            &[1, 2, 3],
            Encoding::Labelmap {
                data: ArrayData::from_slice(&shape, &map).unwrap(),
            },
        ));
    }
    let plan = plan_at(
        s,
        purehdf_medh5::Profile::Balanced,
        None,
        "2026-01-01T00:00:00Z",
    )
    .unwrap();
    let bytes = purehdf_medh5::writer::write_plan_bytes(&plan).unwrap();
    let raw: Vec<u8> = ct.iter().flat_map(|v| v.to_le_bytes()).collect();
    (bytes, raw)
}
