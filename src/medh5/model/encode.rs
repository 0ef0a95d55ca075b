//! Encoders from per-class boolean masks to the stored voxel encodings (spec
//! digest `docs/medh5-format.md` §2.5): layers (greedy colouring of the
//! overlap graph), bitmask, probmap (float16 with float32 widening), mask and
//! instances (boxes + MSB-first bit-packed crops).

use std::collections::BTreeMap;

use super::annotation::Encoding;
use super::array::element_count;
use super::half::{f16_to_f64, f32_to_f16};
use super::{err, ArrayData, NumDtype};
use crate::error::Result;

/// One class mask: `(class_id, C-order voxels of the spatial shape)`.
pub type ClassMask<'a> = (u16, &'a [bool]);

fn voxel_count(spatial: &[u64]) -> Result<usize> {
    element_count(spatial)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| err("E405", format!("spatial shape {spatial:?} overflows")))
}

fn check_masks<'a>(masks: &[ClassMask<'a>], n: usize) -> Result<Vec<ClassMask<'a>>> {
    let mut sorted: Vec<ClassMask<'a>> = masks.to_vec();
    sorted.sort_by_key(|m| m.0);
    for w in sorted.windows(2) {
        if w[0].0 == w[1].0 {
            return Err(err("E404", format!("class {} given twice", w[0].0)));
        }
    }
    for (c, m) in &sorted {
        if *c == 0 || *c == u16::MAX {
            return Err(err("E303", format!("class id {c} is reserved")));
        }
        if m.len() != n {
            return Err(err(
                "E405",
                format!("mask of class {c} has {} voxels, expected {n}", m.len()),
            ));
        }
    }
    Ok(sorted)
}

/// Colour classes so that overlapping classes differ: classes by degree
/// descending then id ascending, each gets the smallest colour none of its
/// neighbours has (the reference's `greedy_colour`).
pub fn greedy_colour(class_ids: &[u16], edges: &[(u16, u16)]) -> BTreeMap<u16, usize> {
    let mut degree: BTreeMap<u16, usize> = BTreeMap::new();
    for &(a, b) in edges {
        *degree.entry(a).or_default() += 1;
        *degree.entry(b).or_default() += 1;
    }
    let deg = |c: u16| degree.get(&c).copied().unwrap_or(0);
    let mut order: Vec<u16> = class_ids.to_vec();
    order.sort_by(|&a, &b| deg(b).cmp(&deg(a)).then(a.cmp(&b)));
    let mut colour: BTreeMap<u16, usize> = BTreeMap::new();
    for c in order {
        let used: Vec<usize> = edges
            .iter()
            .filter_map(|&(a, b)| match (a == c, b == c) {
                (true, _) => colour.get(&b).copied(),
                (_, true) => colour.get(&a).copied(),
                _ => None,
            })
            .collect();
        let k = (0..).find(|k| !used.contains(k)).unwrap_or(0);
        colour.insert(c, k);
    }
    colour
}

/// Pairs of classes (ascending ids) that share at least one voxel; one pass
/// over the voxels, reading each mask once.
fn overlap_edges(masks: &[ClassMask<'_>], n: usize) -> Vec<(u16, u16)> {
    let mut edges = std::collections::BTreeSet::new();
    let mut on: Vec<u16> = Vec::new();
    for v in 0..n {
        on.clear();
        for (c, m) in masks {
            if m.get(v).copied().unwrap_or(false) {
                on.push(*c);
            }
        }
        for (i, &a) in on.iter().enumerate() {
            for &b in &on[i + 1..] {
                edges.insert((a, b));
            }
        }
    }
    edges.into_iter().collect()
}

/// `labelmap`: mutually exclusive class masks painted into one array, uint8
/// when every class id is ≤ 254, else uint16; overlapping classes are E404.
pub fn encode_labelmap(masks: &[ClassMask<'_>], spatial: &[u64]) -> Result<Encoding> {
    let n = voxel_count(spatial)?;
    let masks = check_masks(masks, n)?;
    let mut vals = vec![0u16; n];
    for (c, m) in &masks {
        for (v, &on) in vals.iter_mut().zip(m.iter()) {
            if on {
                if *v != 0 {
                    return Err(err(
                        "E404",
                        format!("classes {} and {c} overlap; use layers", *v),
                    ));
                }
                *v = *c;
            }
        }
    }
    let data = if masks.iter().all(|m| m.0 <= 254) {
        ArrayData::from_slice(spatial, &vals.iter().map(|&v| v as u8).collect::<Vec<u8>>())?
    } else {
        ArrayData::from_slice(spatial, &vals)?
    };
    Ok(Encoding::Labelmap { data })
}

/// `layers`: one labelmap per colour of the overlap graph; returns the encoding.
pub fn encode_layers(masks: &[ClassMask<'_>], spatial: &[u64]) -> Result<Encoding> {
    let n = voxel_count(spatial)?;
    let masks = check_masks(masks, n)?;
    let ids: Vec<u16> = masks.iter().map(|m| m.0).collect();
    let edges = overlap_edges(&masks, n);
    let colour = greedy_colour(&ids, &edges);
    let n_layers = colour.values().max().map_or(0, |m| m + 1);
    let mut layers: Vec<Vec<u16>> = vec![Vec::new(); n_layers];
    for (&c, &k) in &colour {
        if let Some(l) = layers.get_mut(k) {
            l.push(c);
        }
    }
    let width = layers.iter().map(Vec::len).max().unwrap_or(0);
    let table: Vec<u16> = layers
        .iter()
        .flat_map(|l| l.iter().copied().chain(std::iter::repeat(0)).take(width))
        .collect();
    let wide = ids.iter().any(|&c| c > 254);
    let mut shape = vec![n_layers as u64];
    shape.extend_from_slice(spatial);
    let mut vals = vec![0u16; n_layers * n];
    for (c, m) in &masks {
        let k = colour.get(c).copied().unwrap_or(0);
        let plane = &mut vals[k * n..(k + 1) * n];
        for (v, &on) in plane.iter_mut().zip(m.iter()) {
            if on {
                *v = *c;
            }
        }
    }
    let data = if wide {
        ArrayData::from_slice(&shape, &vals)?
    } else {
        ArrayData::from_slice(&shape, &vals.iter().map(|&v| v as u8).collect::<Vec<u8>>())?
    };
    Ok(Encoding::Layers {
        data,
        layer_class_ids: ArrayData::from_slice(&[n_layers as u64, width as u64], &table)?,
    })
}

/// `bitmask`: class at position `k` (ascending id) ↔ plane `k / 64`, bit `k % 64`.
pub fn encode_bitmask(masks: &[ClassMask<'_>], spatial: &[u64]) -> Result<Encoding> {
    let n = voxel_count(spatial)?;
    let masks = check_masks(masks, n)?;
    let planes = masks.len().div_ceil(64);
    let mut words = vec![0u64; planes * n];
    for (k, (_, m)) in masks.iter().enumerate() {
        let plane = &mut words[(k / 64) * n..(k / 64 + 1) * n];
        let bit = 1u64 << (k % 64);
        for (w, &on) in plane.iter_mut().zip(m.iter()) {
            if on {
                *w |= bit;
            }
        }
    }
    let mut shape = vec![planes as u64];
    shape.extend_from_slice(spatial);
    let ids: Vec<u16> = masks.iter().map(|m| m.0).collect();
    Ok(Encoding::Bitmask {
        data: ArrayData::from_slice(&shape, &words)?,
        bit_class_ids: ArrayData::from_slice(&[ids.len() as u64], &ids)?,
    })
}

/// `probmap`: planes in ascending class id, stored as `dtype` (F16 or F32);
/// float16 is widened to float32 when rounding would move a voxel across the
/// threshold (default 0.5). Values must be in [0, 1] (E411).
pub fn encode_probmap(
    planes: &[(u16, &[f32])],
    spatial: &[u64],
    dtype: NumDtype,
    normalized: bool,
    threshold: Option<f64>,
) -> Result<Encoding> {
    let n = voxel_count(spatial)?;
    let mut sorted: Vec<(u16, &[f32])> = planes.to_vec();
    sorted.sort_by_key(|p| p.0);
    for (c, p) in &sorted {
        if p.len() != n {
            return Err(err(
                "E405",
                format!("plane of class {c} has {} voxels", p.len()),
            ));
        }
        if p.iter().any(|v| !(0.0..=1.0).contains(v)) {
            return Err(err(
                "E411",
                format!("class {c}: probabilities outside [0, 1]"),
            ));
        }
    }
    if !matches!(dtype, NumDtype::F16 | NumDtype::F32) {
        return Err(err("E411", "probmap dtype must be float16 or float32"));
    }
    let t = threshold.unwrap_or(0.5);
    let t16 = f16_to_f64(f32_to_f16(t as f32));
    let flips = dtype == NumDtype::F16
        && sorted.iter().any(|(_, p)| {
            p.iter()
                .any(|&v| (f64::from(v) >= t) != (f16_to_f64(f32_to_f16(v)) >= t16))
        });
    let mut shape = vec![sorted.len() as u64];
    shape.extend_from_slice(spatial);
    let data = if dtype == NumDtype::F16 && !flips {
        let mut bytes = Vec::with_capacity(sorted.len() * n * 2);
        for (_, p) in &sorted {
            for &v in p.iter() {
                bytes.extend_from_slice(&f32_to_f16(v).to_le_bytes());
            }
        }
        ArrayData::from_bytes(NumDtype::F16, shape, bytes)?
    } else {
        let flat: Vec<f32> = sorted.iter().flat_map(|(_, p)| p.iter().copied()).collect();
        ArrayData::from_slice(&shape, &flat)?
    };
    Ok(Encoding::Probmap {
        data,
        normalized,
        threshold,
    })
}

/// `mask`: a boolean field.
pub fn encode_mask(mask: &[bool], spatial: &[u64]) -> Result<Encoding> {
    Ok(Encoding::Mask {
        data: ArrayData::from_slice(spatial, mask)?,
    })
}

/// `instances` from one mask per class, in the given order: object `i` gets
/// id `start_id + i`; an empty mask yields no object but keeps its id slot.
/// Boxes are `[start − 0.5, stop − 0.5]` per axis; crops are bit-packed
/// MSB-first in C order, padded to a byte per object.
pub fn encode_instances(
    masks: &[ClassMask<'_>],
    spatial: &[u64],
    start_id: u64,
) -> Result<Encoding> {
    let n = voxel_count(spatial)?;
    let s = spatial.len();
    let mut boxes: Vec<f32> = Vec::new();
    let mut classes: Vec<u16> = Vec::new();
    let mut ids: Vec<u64> = Vec::new();
    let mut offsets: Vec<u64> = vec![0];
    let mut shapes: Vec<i32> = Vec::new();
    let mut packed: Vec<u8> = Vec::new();
    for (i, (c, m)) in masks.iter().enumerate() {
        if m.len() != n {
            return Err(err(
                "E405",
                format!("mask of class {c} has {} voxels", m.len()),
            ));
        }
        let mut lo = vec![u64::MAX; s];
        let mut hi = vec![0u64; s];
        let mut any = false;
        for (flat, _) in m.iter().enumerate().filter(|(_, on)| **on) {
            any = true;
            let mut rem = flat as u64;
            for ax in (0..s).rev() {
                let idx = rem % spatial[ax];
                rem /= spatial[ax];
                lo[ax] = lo[ax].min(idx);
                hi[ax] = hi[ax].max(idx + 1);
            }
        }
        if !any {
            continue;
        }
        for ax in 0..s {
            boxes.push(lo[ax] as f32 - 0.5);
            boxes.push(hi[ax] as f32 - 0.5);
        }
        classes.push(*c);
        ids.push(
            start_id
                .checked_add(i as u64)
                .ok_or_else(|| err("E404", "instance id overflows"))?,
        );
        let ext: Vec<u64> = (0..s).map(|ax| hi[ax] - lo[ax]).collect();
        for e in &ext {
            shapes.push(i32::try_from(*e).map_err(|_| err("E405", "crop extent exceeds int32"))?);
        }
        let crop_n: u64 = ext.iter().product();
        let mut bits = vec![0u8; crop_n.div_ceil(8) as usize];
        for k in 0..crop_n {
            let mut rem = k;
            let mut flat = 0u64;
            let mut coords = vec![0u64; s];
            for ax in (0..s).rev() {
                coords[ax] = rem % ext[ax] + lo[ax];
                rem /= ext[ax];
            }
            for ax in 0..s {
                flat = flat * spatial[ax] + coords[ax];
            }
            if m.get(flat as usize).copied().unwrap_or(false) {
                bits[(k / 8) as usize] |= 0x80 >> (k % 8);
            }
        }
        packed.extend_from_slice(&bits);
        offsets.push(packed.len() as u64);
    }
    let n_obj = classes.len() as u64;
    let instance_ids = if ids.iter().all(|&v| v <= u64::from(u32::MAX)) {
        ArrayData::from_slice(&[n_obj], &ids.iter().map(|&v| v as u32).collect::<Vec<_>>())?
    } else {
        ArrayData::from_slice(&[n_obj], &ids)?
    };
    Ok(Encoding::Instances {
        boxes: ArrayData::from_slice(&[n_obj, s as u64, 2], &boxes)?,
        object_class_ids: ArrayData::from_slice(&[n_obj], &classes)?,
        instance_ids,
        masks: Some(Box::new((
            ArrayData::from_slice(&[n_obj + 1], &offsets)?,
            ArrayData::from_slice(&[n_obj, s as u64], &shapes)?,
            ArrayData::from_slice(&[packed.len() as u64], &packed)?,
        ))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colouring_matches_reference() {
        // Values from the reference's `greedy_colour`.
        let c = greedy_colour(&[1, 2, 3], &[(1, 3), (2, 3)]);
        assert_eq!(c.into_iter().collect::<Vec<_>>(), [(1, 1), (2, 1), (3, 0)]);
        let c = greedy_colour(&[1, 2, 3, 4], &[(3, 4), (1, 4), (2, 4), (1, 2)]);
        assert_eq!(
            c.into_iter().collect::<Vec<_>>(),
            [(1, 1), (2, 2), (3, 1), (4, 0)]
        );
        let c = greedy_colour(&[5, 4, 3, 2, 1], &[(1, 2), (2, 3), (3, 4), (4, 5), (1, 5)]);
        assert_eq!(
            c.into_iter().collect::<Vec<_>>(),
            [(1, 0), (2, 1), (3, 0), (4, 1), (5, 2)]
        );
    }

    #[test]
    fn layers_and_bitmask() {
        let a = [true, false, false, true];
        let b = [false, true, false, false];
        let c = [true, true, false, false];
        let e = encode_layers(&[(1, &a), (2, &b), (3, &c)], &[2, 2]).unwrap();
        let Encoding::Layers {
            data,
            layer_class_ids,
        } = e
        else {
            panic!()
        };
        assert_eq!(layer_class_ids.shape, [2, 2]);
        assert_eq!(layer_class_ids.bytes, [3, 0, 0, 0, 1, 0, 2, 0]);
        assert_eq!(data.bytes, [3, 3, 0, 0, 1, 2, 0, 1]);
        let Encoding::Bitmask { data, .. } = encode_bitmask(&[(3, &c), (1, &a)], &[2, 2]).unwrap()
        else {
            panic!()
        };
        let words: Vec<u64> = data
            .bytes
            .chunks(8)
            .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
            .collect();
        assert_eq!(words, [0b11, 0b10, 0, 0b01]);
        assert!(encode_layers(&[(0, &a)], &[2, 2]).is_err());
        assert!(encode_layers(&[(1, &a[..3])], &[2, 2]).is_err());
    }

    #[test]
    fn labelmap_from_masks() {
        let a = [true, false, false, false];
        let b = [false, false, true, false];
        let Encoding::Labelmap { data } = encode_labelmap(&[(2, &b), (1, &a)], &[2, 2]).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (data.dtype, data.bytes.clone()),
            (NumDtype::U8, vec![1, 0, 2, 0])
        );
        let Encoding::Labelmap { data } = encode_labelmap(&[(300, &a)], &[2, 2]).unwrap() else {
            panic!()
        };
        assert_eq!(data.dtype, NumDtype::U16);
        assert!(encode_labelmap(&[(1, &a), (2, &a)], &[2, 2]).is_err());
    }

    #[test]
    fn instances_pack_msb_first() {
        // 1-D-like 2x4 grid, object covering (0,1),(0,2),(1,2).
        let m = [false, true, true, false, false, false, true, false];
        let Encoding::Instances {
            boxes,
            masks: Some(packed),
            ..
        } = encode_instances(&[(7, &m)], &[2, 4], 1).unwrap()
        else {
            panic!()
        };
        let (off, shapes, data) = *packed;
        let b: Vec<f32> = boxes
            .bytes
            .chunks(4)
            .map(|w| f32::from_le_bytes(w.try_into().unwrap()))
            .collect();
        assert_eq!(b, [-0.5, 1.5, 0.5, 2.5]);
        assert_eq!(shapes.bytes, [2, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(data.bytes, [0b1101_0000]);
        assert_eq!(off.bytes[8], 1);
    }

    #[test]
    fn probmap_widens_when_rounding_flips() {
        let p = [0.49999f32, 0.75];
        let Encoding::Probmap { data, .. } =
            encode_probmap(&[(1, &p)], &[2], NumDtype::F16, false, None).unwrap()
        else {
            panic!()
        };
        assert_eq!(data.dtype, NumDtype::F32);
        let q = [0.25f32, 0.75];
        let Encoding::Probmap { data, .. } =
            encode_probmap(&[(1, &q)], &[2], NumDtype::F16, false, None).unwrap()
        else {
            panic!()
        };
        assert_eq!(data.dtype, NumDtype::F16);
        assert!(encode_probmap(&[(1, &[1.5f32, 0.0])], &[2], NumDtype::F16, false, None).is_err());
    }
}
