//! Voxel annotations (`docs/medh5-format.md` §2.5): the header
//! attributes of `/annotations/<ann_id>/` and the datasets of the encodings
//! `labelmap`, `layers`, `bitmask`, `probmap`, `mask` and `instances`, with
//! their checks (E303, E306, E401–E413).

use super::array::ValueSet;
use super::{err, ArrayData, Grid, NumDtype};
use crate::attribute::AttrValue;
use crate::document::is_valid_id;
use crate::error::Result;

/// The stored datasets of one voxel encoding (§2.5, "Voxel encodings"); the
/// variant decides the annotation's `kind` attribute. `S` is the grid's
/// spatial shape; every array is C order.
#[derive(Clone, Debug, PartialEq)]
pub enum Encoding {
    /// `data`: uint8/uint16, shape S; voxel = class id.
    Labelmap {
        /// Voxel value = class id, 0 = background, the annotation's
        /// `ignore_id` = ignore; uint8 unless a class id exceeds 254 or an
        /// ignore voxel is painted (E411).
        data: ArrayData,
    },
    /// `data`: uint8/uint16 (L, *S); `layer_class_ids`: uint16 (L, W).
    Layers {
        /// L stacked labelmaps, each holding mutually non-overlapping
        /// classes, so overlapping classes go to different layers.
        data: ArrayData,
        /// uint16 (L, W): row `l` lists the classes of layer `l`, zero-padded
        /// to width W.
        layer_class_ids: ArrayData,
    },
    /// `data`: uint64 (P, *S); `bit_class_ids`: uint16 (C,), ascending.
    Bitmask {
        /// P = ceil(C / 64) bit planes; the class at position `k` of
        /// `bit_class_ids` is bit `k % 64` (LSB first) of plane `k / 64`.
        data: ArrayData,
        /// uint16 (C,): every class of the annotation, ascending.
        bit_class_ids: ArrayData,
    },
    /// `data`: float16/float32 (C, *S), planes in ascending class id.
    Probmap {
        /// One probability plane per class id, values in [0, 1] (E411).
        data: ArrayData,
        /// Attribute `normalized` (always written): whether the planes sum
        /// to 1 at every voxel.
        normalized: bool,
        /// Attribute `threshold` in [0, 1]: a voxel belongs to a class when
        /// its value is ≥ threshold (0.5 when absent), compared in the
        /// stored precision.
        threshold: Option<f64>,
    },
    /// `data`: bool or uint8, shape S.
    Mask {
        /// Boolean field (field of view, ignore region, valid region); no
        /// classes.
        data: ArrayData,
    },
    /// Objects: boxes, class ids, instance ids and optional bit-packed crops.
    /// N objects (N = 0 is legal: "looked, found none").
    Instances {
        /// float32 (N, S, 2): per object and spatial axis `[lo, hi]` =
        /// `[start − 0.5, stop − 0.5]` in index space (voxel centres at
        /// integers).
        boxes: ArrayData,
        /// uint16 (N,): each object's class; stored as the dataset
        /// `class_ids` (not the header attribute of that name).
        object_class_ids: ArrayData,
        /// uint32 (N,), or uint64 when an id exceeds 2³²−1; unique within
        /// the annotation.
        instance_ids: ArrayData,
        /// `(mask_offsets, mask_shapes, mask_data)` when masks are stored:
        /// uint64 (N+1,) byte offsets into `mask_data`, int32 (N, S) crop
        /// shapes, and uint8 (B,) each object's bounding-box crop bit-packed
        /// MSB-first in C order, padded to a byte.
        masks: Option<Box<(ArrayData, ArrayData, ArrayData)>>,
    },
}

impl Encoding {
    /// The `kind` attribute.
    pub fn kind(&self) -> &'static str {
        match self {
            Encoding::Labelmap { .. } => "labelmap",
            Encoding::Layers { .. } => "layers",
            Encoding::Bitmask { .. } => "bitmask",
            Encoding::Probmap { .. } => "probmap",
            Encoding::Mask { .. } => "mask",
            Encoding::Instances { .. } => "instances",
        }
    }

    /// The datasets `(name, array)` inside the annotation group.
    pub fn datasets(&self) -> Vec<(&'static str, &ArrayData)> {
        match self {
            Encoding::Labelmap { data }
            | Encoding::Mask { data }
            | Encoding::Probmap { data, .. } => {
                vec![("data", data)]
            }
            Encoding::Layers {
                data,
                layer_class_ids,
            } => vec![("data", data), ("layer_class_ids", layer_class_ids)],
            Encoding::Bitmask {
                data,
                bit_class_ids,
            } => {
                vec![("data", data), ("bit_class_ids", bit_class_ids)]
            }
            Encoding::Instances {
                boxes,
                object_class_ids,
                instance_ids,
                masks,
            } => {
                let mut v = vec![
                    ("boxes", boxes),
                    ("class_ids", object_class_ids),
                    ("instance_ids", instance_ids),
                ];
                if let Some(m) = masks {
                    let (off, shapes, data) = &**m;
                    v.push(("mask_offsets", off));
                    v.push(("mask_shapes", shapes));
                    v.push(("mask_data", data));
                }
                v
            }
        }
    }

    /// Move the datasets out.
    pub fn into_datasets(self) -> Vec<(&'static str, ArrayData)> {
        match self {
            Encoding::Labelmap { data }
            | Encoding::Mask { data }
            | Encoding::Probmap { data, .. } => {
                vec![("data", data)]
            }
            Encoding::Layers {
                data,
                layer_class_ids,
            } => vec![("data", data), ("layer_class_ids", layer_class_ids)],
            Encoding::Bitmask {
                data,
                bit_class_ids,
            } => {
                vec![("data", data), ("bit_class_ids", bit_class_ids)]
            }
            Encoding::Instances {
                boxes,
                object_class_ids,
                instance_ids,
                masks,
            } => {
                let mut v = vec![
                    ("boxes", boxes),
                    ("class_ids", object_class_ids),
                    ("instance_ids", instance_ids),
                ];
                if let Some(m) = masks {
                    let (off, shapes, data) = *m;
                    v.push(("mask_offsets", off));
                    v.push(("mask_shapes", shapes));
                    v.push(("mask_data", data));
                }
                v
            }
        }
    }
}

/// One voxel annotation, the group `/annotations/<id>/` (§2.5): header
/// attributes ([`attrs`](Self::attrs)) plus the datasets of its
/// [`Encoding`].
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    /// Annotation id, the member name under `/annotations`
    /// (`[A-Za-z0-9_.-]{1,128}`, not `meta`).
    pub id: String,
    /// Id of the grid the voxel data lies on; must exist (E101).
    pub grid: String,
    /// One of [`TASKS`] (E412); `segmentation` by default, `other` for masks.
    pub task: String,
    /// `explicit` (default: each class covers only its own voxels) or
    /// `implicit` (readers add every `is_a` descendant's voxels to each
    /// ancestor; the validator warns W918 on voxel annotations). E412
    /// otherwise.
    pub closure: String,
    /// Every class the data can encode (not written for `mask`).
    pub class_ids: Vec<u16>,
    /// Classes actually looked for (⊆ `class_ids`).
    pub annotated_class_ids: Vec<u16>,
    /// Ids of the document timepoints the annotation covers (E409 when
    /// unknown); an empty list is stored as an empty int64 array.
    pub timepoints: Option<Vec<String>>,
    /// Voxel value meaning "ignore" in label data (default 65535); must not
    /// be a class id (E303). Written only when ≠ 65535.
    pub ignore_id: u16,
    /// Id of a `mask` annotation on the same grid marking voxels to ignore
    /// (E413).
    pub ignore_mask: Option<String>,
    /// Id of the provenance activity that produced the annotation (E601).
    pub prov: Option<String>,
    /// Key of the annotation's record in the document's `quality` (E602).
    pub quality: Option<String>,
    /// Ids of the annotations this one was derived from (E413).
    pub derived_from: Option<Vec<String>>,
    /// The voxel data and its `kind`.
    pub encoding: Encoding,
}

/// Known `task` values.
pub const TASKS: [&str; 5] = [
    "segmentation",
    "detection",
    "classification",
    "registration",
    "other",
];

impl Annotation {
    /// A segmentation annotation over `class_ids` (all of them annotated); a
    /// `mask` encoding gets task `other` and no classes.
    pub fn new(id: &str, grid: &str, class_ids: &[u16], encoding: Encoding) -> Self {
        let is_mask = matches!(encoding, Encoding::Mask { .. });
        let mut ids = if is_mask {
            Vec::new()
        } else {
            class_ids.to_vec()
        };
        ids.sort_unstable();
        ids.dedup();
        Annotation {
            id: id.to_string(),
            grid: grid.to_string(),
            task: if is_mask { "other" } else { "segmentation" }.to_string(),
            closure: "explicit".to_string(),
            annotated_class_ids: ids.clone(),
            class_ids: ids,
            timepoints: None,
            ignore_id: u16::MAX,
            ignore_mask: None,
            prov: None,
            quality: None,
            derived_from: None,
            encoding,
        }
    }

    /// Header attributes in the order the writer emits them.
    pub fn attrs(&self) -> Vec<(String, AttrValue)> {
        let mut a = vec![
            ("kind".to_string(), AttrValue::str(self.encoding.kind())),
            ("task".to_string(), AttrValue::str(&self.task)),
            ("closure".to_string(), AttrValue::str(&self.closure)),
            ("grid".to_string(), AttrValue::str(&self.grid)),
        ];
        if !matches!(self.encoding, Encoding::Mask { .. }) {
            a.push(("class_ids".into(), AttrValue::u16s(&self.class_ids)));
        }
        a.push((
            "annotated_class_ids".into(),
            AttrValue::u16s(&self.annotated_class_ids),
        ));
        if let Some(tp) = &self.timepoints {
            if tp.is_empty() {
                a.push(("timepoints".into(), AttrValue::i64s(&[])));
            } else {
                a.push(("timepoints".into(), AttrValue::strs(tp)));
            }
        }
        if self.ignore_id != u16::MAX {
            a.push((
                "ignore_id".into(),
                AttrValue::i64(i64::from(self.ignore_id)),
            ));
        }
        for (name, v) in [
            ("ignore_mask", &self.ignore_mask),
            ("prov", &self.prov),
            ("quality", &self.quality),
        ] {
            if let Some(v) = v {
                a.push((name.into(), AttrValue::str(v)));
            }
        }
        if let Some(d) = &self.derived_from {
            a.push(("derived_from".into(), AttrValue::strs(d)));
        }
        if let Encoding::Probmap {
            normalized,
            threshold,
            ..
        } = &self.encoding
        {
            a.push(("normalized".into(), AttrValue::bool(*normalized)));
            if let Some(t) = threshold {
                a.push(("threshold".into(), AttrValue::f64(*t)));
            }
        }
        a
    }

    /// Check against the grid and the label set's class ids (`None` = no
    /// inline label set to check against). Reads labelmap and layers
    /// voxel data (one pass each) to find undeclared values and over-wide
    /// dtypes.
    ///
    /// # Errors
    ///
    /// [`Error::Code`](crate::error::Error::Code): E003 bad id, E412
    /// unknown task/closure, E303 reserved class id (0, 65535 or the ignore
    /// id), E402 class not in the label set, E403 `annotated_class_ids` not a
    /// subset, E405 dataset shapes wrong for the grid or disagreeing, E411
    /// wrong dtype (including uint16 where uint8 suffices) or threshold
    /// outside [0, 1], E404 a voxel value or object class not declared.
    pub fn validate(&self, grid: &Grid, label_classes: Option<&[u16]>) -> Result<()> {
        let at = |m: &str| format!("annotations/{}: {m}", self.id);
        if !is_valid_id(&self.id) {
            return Err(err("E003", format!("bad annotation id {:?}", self.id)));
        }
        if !TASKS.contains(&self.task.as_str())
            || !["explicit", "implicit"].contains(&self.closure.as_str())
        {
            return Err(err("E412", at("task/closure")));
        }
        for &c in self.class_ids.iter().chain(&self.annotated_class_ids) {
            if c == 0 || c == u16::MAX || c == self.ignore_id {
                return Err(err("E303", at(&format!("class id {c} is reserved"))));
            }
            if let Some(known) = label_classes {
                if !known.contains(&c) {
                    return Err(err("E402", at(&format!("class {c} not in the label set"))));
                }
            }
        }
        if self
            .annotated_class_ids
            .iter()
            .any(|c| !self.class_ids.contains(c))
        {
            return Err(err(
                "E403",
                at("annotated_class_ids must be a subset of class_ids"),
            ));
        }
        let s = grid.spatial_shape();
        let check_shape = |a: &ArrayData, lead: Option<u64>| -> Result<()> {
            let mut want = Vec::new();
            if let Some(l) = lead {
                want.push(l);
            }
            want.extend_from_slice(&s);
            if a.shape != want {
                return Err(err(
                    "E405",
                    at(&format!("data shape {:?}, expected {want:?}", a.shape)),
                ));
            }
            Ok(())
        };
        let dtype_ok = |a: &ArrayData, ok: &[NumDtype]| -> Result<()> {
            if ok.contains(&a.dtype) {
                Ok(())
            } else {
                Err(err("E411", at(&format!("data dtype {:?}", a.dtype))))
            }
        };
        let n = self.class_ids.len() as u64;
        // uint16 label data is only allowed when uint8 cannot hold it: a class id
        // above 254, or ignore voxels present (the reference's E411 wide-dtype rule).
        let too_wide = |data: &ArrayData| -> Result<()> {
            if data.dtype != NumDtype::U16 || self.class_ids.iter().any(|&c| c > 254) {
                return Ok(());
            }
            if data
                .first_outside(&ValueSet::all_but(self.ignore_id))
                .is_some()
            {
                return Ok(());
            }
            Err(err(
                "E411",
                at("stored as uint16 although every class id is at most 254 and no ignore voxel is present (uint8 required)"),
            ))
        };
        match &self.encoding {
            Encoding::Labelmap { data } => {
                dtype_ok(data, &[NumDtype::U8, NumDtype::U16])?;
                check_shape(data, None)?;
                too_wide(data)?;
                let declared = ValueSet::of(
                    [0, self.ignore_id]
                        .into_iter()
                        .chain(self.class_ids.iter().copied()),
                );
                if let Some(v) = data.first_outside(&declared) {
                    return Err(err(
                        "E404",
                        at(&format!("voxel value {v} is not a declared class")),
                    ));
                }
            }
            Encoding::Layers {
                data,
                layer_class_ids,
            } => {
                dtype_ok(data, &[NumDtype::U8, NumDtype::U16])?;
                too_wide(data)?;
                let l = layer_class_ids.shape.first().copied().unwrap_or(0);
                check_shape(data, Some(l))?;
                dtype_ok(layer_class_ids, &[NumDtype::U16])?;
            }
            Encoding::Bitmask {
                data,
                bit_class_ids,
            } => {
                dtype_ok(data, &[NumDtype::U64])?;
                check_shape(data, Some(n.div_ceil(64)))?;
                if bit_class_ids.shape != [n] {
                    return Err(err("E405", at("bit_class_ids must list every class")));
                }
            }
            Encoding::Probmap {
                data, threshold, ..
            } => {
                dtype_ok(data, &[NumDtype::F16, NumDtype::F32])?;
                check_shape(data, Some(n))?;
                if let Some(t) = threshold {
                    if !(0.0..=1.0).contains(t) {
                        return Err(err("E411", at("threshold must be in [0, 1]")));
                    }
                }
            }
            Encoding::Mask { data } => {
                dtype_ok(data, &[NumDtype::Bool, NumDtype::U8])?;
                check_shape(data, None)?;
            }
            Encoding::Instances {
                boxes,
                object_class_ids,
                instance_ids,
                ..
            } => {
                let objs = object_class_ids.shape.first().copied().unwrap_or(0);
                if boxes.shape != [objs, s.len() as u64, 2] || instance_ids.shape != [objs] {
                    return Err(err(
                        "E405",
                        at("instances arrays disagree on the object count"),
                    ));
                }
                for i in 0..object_class_ids.len() {
                    let c = object_class_ids.get_u64(i).unwrap_or(0);
                    if !self.class_ids.iter().any(|&k| u64::from(k) == c) {
                        return Err(err("E404", at(&format!("object class {c} not declared"))));
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labelmap<T: crate::model::Element>(vals: &[T], classes: &[u16]) -> Annotation {
        let data = ArrayData::from_slice(&[2, 3, 4], vals).unwrap();
        Annotation::new("seg", "ct", classes, Encoding::Labelmap { data })
    }

    fn code(r: Result<()>) -> String {
        match r {
            Err(crate::error::Error::Code { code, message }) => format!("{code}: {message}"),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn labelmap_values_are_checked_against_the_classes() {
        let g = Grid::new("ct", &[2, 3, 4], &[1.0, 1.0, 1.0]);
        let mut v = vec![0u8; 24];
        v[3] = 2;
        v[20] = 5;
        assert!(labelmap(&v, &[2, 5]).validate(&g, None).is_ok());
        // The first undeclared voxel value in C order is named.
        v[7] = 9;
        v[9] = 4;
        let e = code(labelmap(&v, &[2, 5]).validate(&g, None));
        assert!(e.starts_with("E404") && e.contains("voxel value 9"), "{e}");
        // The ignore id counts as declared; uint16 data is only allowed when
        // uint8 cannot hold it (a class above 254 or an ignore voxel).
        let mut w = vec![0u16; 24];
        w[1] = 3;
        let e = code(labelmap(&w, &[3]).validate(&g, None));
        assert!(e.starts_with("E411"), "{e}");
        w[2] = u16::MAX;
        assert!(labelmap(&w, &[3]).validate(&g, None).is_ok());
        w[2] = 300;
        w[5] = u16::MAX;
        let e = code(labelmap(&w, &[3]).validate(&g, None));
        assert!(e.contains("voxel value 300"), "{e}");
        assert!(labelmap(&w, &[3, 300]).validate(&g, None).is_ok());
    }
}
