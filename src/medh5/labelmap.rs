//! Voxel annotations decoded back to one label volume
//! (`docs/medh5-format.md` §2.5, voxel encodings), as the reference's
//! `labelmap()` returns it: `labelmap` values as stored; `layers`, `bitmask`
//! and `probmap` flattened by painting classes in `class_ids` order (later
//! classes overwrite earlier ones, `priority` moves classes to the end,
//! highest precedence last); `instances` painted from their bit-packed masks;
//! the ignore region (in band, or the sibling mask `ignore_mask` names) painted
//! last as `ignore_id`; a `mask` reads as background. Whole or as a patch.

use crate::error::{Error, Result};
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::datatype::{ByteOrder, Datatype};
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::limits::MAX_DECODED;
use purehdf::low_level::selection::Selection;

use super::canonical_json::Json;
use super::model::half::f16_to_f64;
use super::values::attr_json;

/// The default ignore id (65535).
pub const DEFAULT_IGNORE: u16 = u16::MAX;

/// A decoded label volume (C order, `shape` = the spatial extent read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelVolume {
    /// Extent of each spatial axis read (the grid's spatial shape, or the
    /// patch's extent for a patch read).
    pub shape: Vec<u64>,
    /// One class id per voxel in C order: 0 = background, the annotation's
    /// ignore id (default [`DEFAULT_IGNORE`]) = ignore.
    pub data: Vec<u16>,
    /// Voxels where two or more classes met and one overwrote the others.
    pub overwritten: u64,
}

impl LabelVolume {
    /// The volume as uint8, refused (as the reference refuses a narrower
    /// dtype) when a value does not fit.
    ///
    /// # Errors
    ///
    /// An invalid-input error naming the first value above 255.
    pub fn to_u8(&self) -> Result<Vec<u8>> {
        self.data
            .iter()
            .map(|&v| {
                u8::try_from(v)
                    .map_err(|_| Error::invalid(format!("label {v} does not fit in uint8")))
            })
            .collect()
    }

    /// Little-endian uint16 bytes.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        self.data.iter().flat_map(|v| v.to_le_bytes()).collect()
    }
}

fn bad(msg: impl Into<String>) -> Error {
    Error::Code {
        code: "E410".into(),
        message: msg.into(),
    }
}

fn dataset(file: &File, path: &str) -> Result<Dataset> {
    match file.object(path)? {
        Object::Dataset(ds) => Ok(*ds),
        _ => Err(bad(format!("{path} is not a dataset"))),
    }
}

fn attr(file: &File, obj: &Object, name: &str) -> Result<Option<Json>> {
    match obj.attributes()?.into_iter().find(|a| a.name == name) {
        Some(a) => Ok(Some(attr_json(file, &a)?)),
        None => Ok(None),
    }
}

fn ints(v: Option<Json>) -> Vec<u64> {
    fn walk(v: &Json, out: &mut Vec<u64>) {
        match v {
            Json::Int(i) => out.push(u64::try_from(*i).unwrap_or(0)),
            Json::UInt(u) => out.push(*u),
            Json::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Some(v) = v {
        walk(&v, &mut out);
    }
    out
}

/// Read `sel` of an integer (or bool) dataset as u64 values.
fn read_ints(ds: &Dataset, sel: &Selection, n: u64) -> Result<Vec<u64>> {
    let (size, order) = match ds.dtype() {
        Datatype::Integer { size, order, .. } => (*size, *order),
        Datatype::Enum { base, .. } => match base.as_ref() {
            Datatype::Integer { size, order, .. } => (*size, *order),
            _ => return Err(bad(format!("{}: not an integer dataset", ds.path()))),
        },
        _ => return Err(bad(format!("{}: not an integer dataset", ds.path()))),
    };
    let raw = read_bytes(ds, sel, n, u64::from(size))?;
    let s = size as usize;
    Ok(raw
        .chunks_exact(s.max(1))
        .map(|el| {
            let mut b = [0u8; 8];
            for (i, &v) in el.iter().take(8).enumerate() {
                let j = if order == ByteOrder::Big {
                    s - 1 - i
                } else {
                    i
                };
                if let Some(slot) = b.get_mut(j) {
                    *slot = v;
                }
            }
            u64::from_le_bytes(b)
        })
        .collect())
}

fn read_bytes(ds: &Dataset, sel: &Selection, n: u64, size: u64) -> Result<Vec<u8>> {
    let bytes = n
        .checked_mul(size)
        .filter(|&b| b <= MAX_DECODED)
        .ok_or_else(|| Error::invalid(format!("{}: selection too large", ds.path())))?;
    // A new buffer, not zeroed first (chunked data; see `Dataset::read_raw_vec`).
    let raw = ds.read_raw_vec(sel)?;
    if raw.len() as u64 != bytes {
        return Err(Error::invalid(format!(
            "{}: read {} bytes, expected {bytes}",
            ds.path(),
            raw.len()
        )));
    }
    Ok(raw)
}

/// Membership of each element of a float16/32/64 probability dataset:
/// `value >= threshold`, compared in the stored precision.
fn read_members(ds: &Dataset, sel: &Selection, n: u64, threshold: f64) -> Result<Vec<bool>> {
    let (size, order) = match ds.dtype() {
        Datatype::Float { size, order, .. } => (*size, *order),
        _ => return Err(bad(format!("{}: not a float dataset", ds.path()))),
    };
    let raw = read_bytes(ds, sel, n, u64::from(size))?;
    let s = size as usize;
    let thr = match size {
        2 => f16_to_f64(super::model::half::f32_to_f16(threshold as f32)),
        4 => f64::from(threshold as f32),
        _ => threshold,
    };
    Ok(raw
        .chunks_exact(s.max(1))
        .map(|el| {
            let v = super::values::float_value(el, size, order).unwrap_or(f64::NAN);
            v >= thr
        })
        .collect())
}

/// Hyperslab over `lead` whole leading planes and the spatial box.
fn stacked(lead: Option<u64>, start: &[u64], count: &[u64]) -> Selection {
    let (mut s, mut c) = (Vec::new(), Vec::new());
    if let Some(l) = lead {
        s.push(0);
        c.push(l);
    }
    s.extend_from_slice(start);
    c.extend_from_slice(count);
    Selection::Hyperslab { start: s, count: c }
}

/// Which class wins a voxel: the one painted last.
struct Painter {
    rank: std::collections::HashMap<u64, usize>,
}

impl Painter {
    fn new(class_ids: &[u64], priority: &[u16]) -> Self {
        let mut order: Vec<u64> = class_ids
            .iter()
            .copied()
            .filter(|c| !priority.iter().any(|p| u64::from(*p) == *c))
            .collect();
        order.extend(priority.iter().rev().map(|&p| u64::from(p)));
        let rank = order.iter().enumerate().map(|(i, &c)| (c, i + 1)).collect();
        Painter { rank }
    }

    fn rank(&self, c: u64) -> usize {
        self.rank.get(&c).copied().unwrap_or(0)
    }

    /// Paint the classes present at one voxel; returns (label, overlapped).
    fn pick(&self, present: impl Iterator<Item = u64>) -> (u64, bool) {
        let mut best: Option<(usize, u64)> = None;
        let mut distinct = 0usize;
        for c in present {
            if best.is_some_and(|(_, b)| b == c) {
                continue;
            }
            distinct += 1;
            let r = self.rank(c);
            if best.is_none_or(|(br, _)| r >= br) {
                best = Some((r, c));
            }
        }
        (best.map_or(0, |(_, c)| c), distinct > 1)
    }
}

/// Decode annotation `ann` of `file` over the spatial box `start..start+count`
/// (`None`: the whole grid).
pub fn decode(
    file: &File,
    ann: &str,
    roi: Option<(&[u64], &[u64])>,
    priority: &[u16],
) -> Result<LabelVolume> {
    let gpath = format!("annotations/{ann}");
    let group = file.object(&gpath)?;
    let Some(Json::Str(kind)) = attr(file, &group, "kind")? else {
        return Err(bad(format!("{gpath}: no kind")));
    };
    let class_ids = ints(attr(file, &group, "class_ids")?);
    let ignore_id = ints(attr(file, &group, "ignore_id")?)
        .first()
        .map_or(DEFAULT_IGNORE, |&v| {
            u16::try_from(v).unwrap_or(DEFAULT_IGNORE)
        });
    let grid_shape = spatial_shape(file, &group, &gpath)?;
    let (start, count) = match roi {
        Some((s, c)) => (s.to_vec(), c.to_vec()),
        None => (vec![0; grid_shape.len()], grid_shape.clone()),
    };
    if start.len() != grid_shape.len()
        || count.len() != grid_shape.len()
        || start
            .iter()
            .zip(&count)
            .zip(&grid_shape)
            .any(|((&s, &c), &d)| s.checked_add(c).is_none_or(|e| e > d))
    {
        return Err(Error::invalid(format!(
            "{gpath}: patch {start:?}+{count:?} outside {grid_shape:?}"
        )));
    }
    let n = count
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .filter(|&v| v <= MAX_DECODED)
        .ok_or_else(|| Error::invalid(format!("{gpath}: patch too large")))?;
    let nv = n as usize;
    let painter = Painter::new(&class_ids, priority);
    let mut overwritten = 0u64;
    let mut out = vec![0u16; nv];
    let data_path = format!("{gpath}/data");
    let spatial = Selection::Hyperslab {
        start: start.clone(),
        count: count.clone(),
    };
    match kind.as_str() {
        "labelmap" => {
            let ds = dataset(file, &data_path)?;
            for (o, v) in out.iter_mut().zip(read_ints(&ds, &spatial, n)?) {
                *o = u16::try_from(v).unwrap_or(ignore_id);
            }
        }
        "layers" => {
            let ds = dataset(file, &data_path)?;
            let l = *ds.shape().first().unwrap_or(&0);
            let vals = read_ints(&ds, &stacked(Some(l), &start, &count), n.saturating_mul(l))?;
            for (i, o) in out.iter_mut().enumerate() {
                let present = (0..l as usize).filter_map(|k| vals.get(k * nv + i).copied());
                let mut ignored = false;
                let (c, over) = painter.pick(present.filter(|&v| {
                    ignored |= v == u64::from(ignore_id);
                    v != 0 && v != u64::from(ignore_id)
                }));
                overwritten += u64::from(over);
                *o = if ignored { ignore_id } else { c as u16 };
            }
        }
        "bitmask" => {
            let ds = dataset(file, &data_path)?;
            let bc = dataset(file, &format!("{gpath}/bit_class_ids"))?;
            let bits = read_ints(&bc, &Selection::All, bc.num_elements())?;
            let p = *ds.shape().first().unwrap_or(&0);
            let vals = read_ints(&ds, &stacked(Some(p), &start, &count), n.saturating_mul(p))?;
            for (i, o) in out.iter_mut().enumerate() {
                let present = bits.iter().enumerate().filter_map(|(k, &c)| {
                    let word = vals.get((k / 64) * nv + i)?;
                    ((word >> (k % 64)) & 1 == 1).then_some(c)
                });
                let (c, over) = painter.pick(present);
                overwritten += u64::from(over);
                *o = c as u16;
            }
        }
        "probmap" => {
            let ds = dataset(file, &data_path)?;
            let threshold = match attr(file, &group, "threshold")? {
                Some(Json::Float(t)) => t,
                Some(Json::Int(t)) => t as f64,
                _ => 0.5,
            };
            let mut planes = class_ids.clone();
            planes.sort_unstable();
            let c = *ds.shape().first().unwrap_or(&0);
            let m = read_members(
                &ds,
                &stacked(Some(c), &start, &count),
                n.saturating_mul(c),
                threshold,
            )?;
            for (i, o) in out.iter_mut().enumerate() {
                let present = planes
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| m.get(k * nv + i).copied().unwrap_or(false))
                    .map(|(_, &c)| c);
                let (c, over) = painter.pick(present);
                overwritten += u64::from(over);
                *o = c as u16;
            }
        }
        "instances" => {
            overwritten = paint_instances(file, &gpath, &start, &count, &painter, &mut out)?;
        }
        "mask" => {}
        other => {
            return Err(Error::invalid(format!(
                "{gpath}: kind {other:?} has no label volume"
            )))
        }
    }
    // The ignore region named by `ignore_mask`, painted last.
    if let Some(Json::Str(mask)) = attr(file, &group, "ignore_mask")? {
        let ds = dataset(file, &format!("annotations/{mask}/data"))?;
        for (o, v) in out.iter_mut().zip(read_ints(&ds, &spatial, n)?) {
            if v != 0 {
                *o = ignore_id;
            }
        }
    }
    Ok(LabelVolume {
        shape: count,
        data: out,
        overwritten,
    })
}

/// The spatial shape: the annotation's grid `shape` (its trailing spatial axes).
fn spatial_shape(file: &File, group: &Object, gpath: &str) -> Result<Vec<u64>> {
    let Some(Json::Str(grid)) = attr(file, group, "grid")? else {
        return Err(bad(format!("{gpath}: no grid")));
    };
    let gobj = file.object(&format!("grids/{grid}"))?;
    let shape = ints(attr(file, &gobj, "shape")?);
    let kinds = match attr(file, &gobj, "axis_kinds")? {
        Some(Json::Array(a)) => a,
        _ => Vec::new(),
    };
    if kinds.len() == shape.len() {
        Ok(shape
            .iter()
            .zip(&kinds)
            .filter(|(_, k)| matches!(k, Json::Str(s) if s == "spatial"))
            .map(|(&d, _)| d)
            .collect())
    } else {
        Ok(shape)
    }
}

fn read_all_ints(file: &File, path: &str) -> Result<(Vec<u64>, Vec<u64>)> {
    let ds = dataset(file, path)?;
    let v = read_ints(&ds, &Selection::All, ds.num_elements())?;
    Ok((ds.shape().to_vec(), v))
}

/// Paint `instances` objects from their bit-packed bounding-box masks (§2.5):
/// classes in paint order, objects in stored order within a class. Objects
/// without masks fill their box. Returns the overwritten voxel count.
fn paint_instances(
    file: &File,
    gpath: &str,
    start: &[u64],
    count: &[u64],
    painter: &Painter,
    out: &mut [u16],
) -> Result<u64> {
    let (_, classes) = read_all_ints(file, &format!("{gpath}/class_ids"))?;
    let boxes = dataset(file, &format!("{gpath}/boxes"))?;
    let nb = boxes.num_elements();
    let raw = read_bytes(&boxes, &Selection::All, nb, boxes.dtype().size())?;
    let (bsize, border) = match boxes.dtype() {
        Datatype::Float { size, order, .. } => (*size, *order),
        _ => return Err(bad(format!("{gpath}/boxes: not float"))),
    };
    let lo_hi: Vec<f64> = raw
        .chunks_exact(bsize as usize)
        .map(|el| super::values::float_value(el, bsize, border).unwrap_or(f64::NAN))
        .collect();
    let rank = start.len();
    let masks = match file.object(&format!("{gpath}/mask_data")) {
        Ok(_) => Some((
            read_all_ints(file, &format!("{gpath}/mask_offsets"))?.1,
            read_all_ints(file, &format!("{gpath}/mask_shapes"))?.1,
            read_all_ints(file, &format!("{gpath}/mask_data"))?.1,
        )),
        Err(_) => None,
    };
    let mut objects: Vec<usize> = (0..classes.len()).collect();
    objects.sort_by_key(|&i| painter.rank(classes.get(i).copied().unwrap_or(0)));
    let mut hit = vec![false; out.len()];
    let mut overwritten = 0u64;
    for i in objects {
        let class = classes.get(i).copied().unwrap_or(0) as u16;
        let origin: Vec<i64> = (0..rank)
            .map(|a| {
                let lo = lo_hi.get((i * rank + a) * 2).copied().unwrap_or(f64::NAN);
                (lo + 0.5).round() as i64
            })
            .collect();
        let (shape, bits): (Vec<u64>, Option<&[u64]>) = match &masks {
            Some((offsets, shapes, data)) => {
                let sh: Vec<u64> = (0..rank)
                    .map(|a| shapes.get(i * rank + a).copied().unwrap_or(0))
                    .collect();
                let (a, b) = (
                    offsets.get(i).copied().unwrap_or(0) as usize,
                    offsets.get(i + 1).copied().unwrap_or(0) as usize,
                );
                (sh, data.get(a..b))
            }
            None => (
                (0..rank)
                    .map(|a| {
                        let hi = lo_hi
                            .get((i * rank + a) * 2 + 1)
                            .copied()
                            .unwrap_or(f64::NAN);
                        let stop = (hi + 0.5).round() as i64;
                        u64::try_from(stop - origin.get(a).copied().unwrap_or(0)).unwrap_or(0)
                    })
                    .collect(),
                None,
            ),
        };
        let total = shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .filter(|&t| t <= MAX_DECODED)
            .ok_or_else(|| bad(format!("{gpath}: object {i} too large")))?;
        let mut idx = vec![0u64; rank];
        for flat in 0..total {
            // C-order index of `flat` inside the crop
            let mut rem = flat;
            for a in (0..rank).rev() {
                let d = shape.get(a).copied().unwrap_or(1).max(1);
                if let Some(slot) = idx.get_mut(a) {
                    *slot = rem % d;
                }
                rem /= d;
            }
            if let Some(b) = bits {
                let byte = b.get((flat / 8) as usize).copied().unwrap_or(0);
                if (byte >> (7 - (flat % 8))) & 1 == 0 {
                    continue;
                }
            }
            // position in the patch
            let mut pos = 0usize;
            let mut inside = true;
            for a in 0..rank {
                let g =
                    origin.get(a).copied().unwrap_or(0) + idx.get(a).copied().unwrap_or(0) as i64;
                let s = start.get(a).copied().unwrap_or(0) as i64;
                let c = count.get(a).copied().unwrap_or(0) as i64;
                if g < s || g >= s + c {
                    inside = false;
                    break;
                }
                pos = pos * c as usize + (g - s) as usize;
            }
            if !inside {
                continue;
            }
            if let (Some(o), Some(h)) = (out.get_mut(pos), hit.get_mut(pos)) {
                if *o != 0 && *o != class && !*h {
                    *h = true;
                    overwritten += 1;
                }
                *o = class;
            }
        }
    }
    Ok(overwritten)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v3() -> std::path::PathBuf {
        crate::test_support::medh5_vector("v3_stacked_index.medh5")
    }

    fn counts(v: &LabelVolume) -> Vec<(u16, usize)> {
        let mut m = std::collections::BTreeMap::new();
        for &x in &v.data {
            *m.entry(x).or_insert(0usize) += 1;
        }
        m.into_iter().collect()
    }

    #[test]
    fn v3_encodings_match_the_reference_counts() {
        let Ok(f) = File::open(v3()) else { return };
        // class counts of the reference's labelmap() on the same file
        let lay = decode(&f, "lay", None, &[]).unwrap();
        assert_eq!(lay.shape, vec![16, 64, 64]);
        assert_eq!(
            counts(&lay),
            vec![(0, 16384), (1, 8192), (2, 8192), (3, 32768)]
        );
        assert_eq!(lay.overwritten, 16384);
        let bit = decode(&f, "bit", None, &[]).unwrap();
        assert_eq!(bit.data, lay.data);
        let prob = decode(&f, "prob", None, &[]).unwrap();
        assert_eq!(counts(&prob), vec![(0, 24576), (1, 8192), (3, 32768)]);
        assert_eq!(prob.overwritten, 8192);
        let inst = decode(&f, "inst", None, &[]).unwrap();
        assert_eq!(counts(&inst), vec![(0, 61120), (1, 256), (2, 4160)]);
        let fov = decode(&f, "fov", None, &[]).unwrap();
        assert_eq!(counts(&fov), vec![(0, 65536)]);
    }

    #[test]
    fn patch_is_the_slice_of_the_whole_and_priority_reorders() {
        let Ok(f) = File::open(v3()) else { return };
        let whole = decode(&f, "bit", None, &[]).unwrap();
        let (start, count) = ([2u64, 10, 30], [3u64, 10, 10]);
        let patch = decode(&f, "bit", Some((&start, &count)), &[]).unwrap();
        let mut expect = Vec::new();
        for z in 2..5usize {
            for y in 10..20usize {
                for x in 30..40usize {
                    expect.push(whole.data[(z * 64 + y) * 64 + x]);
                }
            }
        }
        assert_eq!(patch.data, expect);
        // class 1 first: where 1 and 3 overlap, 1 now wins
        let pri = decode(&f, "bit", None, &[1]).unwrap();
        assert_eq!(
            counts(&pri),
            vec![(0, 16384), (1, 16384), (2, 8192), (3, 24576)]
        );
        assert!(decode(&f, "bit", Some((&[15, 0, 0], &[2, 1, 1])), &[]).is_err());
        assert!(decode(&f, "nope", None, &[]).is_err());
        assert!(pri.to_u8().is_ok());
        let wide = LabelVolume {
            shape: vec![1],
            data: vec![65535],
            overwritten: 0,
        };
        assert!(wide.to_u8().is_err());
    }

    mod roundtrip {
        use super::super::*;
        use crate::create;
        use crate::document::LabelSet;
        use crate::model::{encode, Annotation, ArrayData, Grid, Image, NumDtype, Sample};
        use crate::profiles::Profile;
        use crate::writer::write_plan_bytes;
        use proptest::prelude::*;

        /// Write `masks` in encoding `which` through our writer and decode them back.
        fn roundtrip(shape: &[u64], masks: &[Vec<bool>], which: u8) -> LabelVolume {
            let keys = ["a", "b", "c", "d"];
            let ids: Vec<u16> = (1..=masks.len() as u16).collect();
            let cm: Vec<(u16, &[bool])> = ids
                .iter()
                .copied()
                .zip(masks.iter().map(|m| m.as_slice()))
                .collect();
            let enc = match which {
                0 => encode::encode_layers(&cm, shape).unwrap(),
                1 => encode::encode_bitmask(&cm, shape).unwrap(),
                2 => {
                    let planes: Vec<Vec<f32>> = masks
                        .iter()
                        .map(|m| m.iter().map(|&b| if b { 0.75 } else { 0.25 }).collect())
                        .collect();
                    let p: Vec<(u16, &[f32])> = ids
                        .iter()
                        .copied()
                        .zip(planes.iter().map(|v| v.as_slice()))
                        .collect();
                    encode::encode_probmap(&p, shape, NumDtype::F16, false, None).unwrap()
                }
                _ => encode::encode_instances(&cm, shape, 1).unwrap(),
            };
            let n: u64 = shape.iter().product();
            let mut s = Sample::new("rt", "S");
            s.grids.push(Grid::new("g", shape, &[1.0, 1.0, 1.0]));
            s.images.push(Image::new(
                "img",
                "g",
                "CT",
                ArrayData::from_slice(shape, &vec![0i16; n as usize]).unwrap(),
            ));
            s.document.label_set = Some(LabelSet::from_keys("k", "1.0.0", &keys[..masks.len()]));
            s.annotations.push(Annotation::new("seg", "g", &ids, enc));
            let plan = create::plan(s, Profile::Balanced, None).unwrap();
            let f = File::from_bytes(write_plan_bytes(&plan).unwrap()).unwrap();
            decode(&f, "seg", None, &[]).unwrap()
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(24))]
            #[test]
            fn encode_then_labelmap_paints_classes_in_order(
                (shape, masks, which) in (1u64..4, 1u64..6, 1u64..6, 1usize..5, 0u8..4)
                    .prop_flat_map(|(z, y, x, k, w)| {
                        let n = (z * y * x) as usize;
                        (
                            Just(vec![z, y, x]),
                            proptest::collection::vec(proptest::collection::vec(any::<bool>(), n), k),
                            Just(w),
                        )
                    })
            ) {
                let v = roundtrip(&shape, &masks, which);
                let n = masks[0].len();
                let expect: Vec<u16> = (0..n)
                    .map(|i| {
                        masks
                            .iter()
                            .enumerate()
                            .filter(|(_, m)| m[i])
                            .map(|(c, _)| c as u16 + 1)
                            .next_back()
                            .unwrap_or(0)
                    })
                    .collect();
                prop_assert_eq!(v.shape, shape);
                prop_assert_eq!(v.data, expect);
            }
        }
    }
}
