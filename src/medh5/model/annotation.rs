//! Voxel annotations (spec digest `shared/spec/medh5.md` §2.5): the header
//! attributes of `/annotations/<ann_id>/` and the datasets of the encodings
//! `labelmap`, `layers`, `bitmask`, `probmap`, `mask` and `instances`, with
//! their checks (E303, E306, E401–E413).

use super::array::ValueSet;
use super::{err, ArrayData, Grid, NumDtype};
use crate::medh5::attribute::AttrValue;
use crate::medh5::document::is_valid_id;
use crate::medh5::error::Result;

/// The stored datasets of one encoding.
#[derive(Clone, Debug, PartialEq)]
pub enum Encoding {
    /// `data`: uint8/uint16, shape S; voxel = class id.
    Labelmap { data: ArrayData },
    /// `data`: uint8/uint16 (L, *S); `layer_class_ids`: uint16 (L, W).
    Layers {
        data: ArrayData,
        layer_class_ids: ArrayData,
    },
    /// `data`: uint64 (P, *S); `bit_class_ids`: uint16 (C,), ascending.
    Bitmask {
        data: ArrayData,
        bit_class_ids: ArrayData,
    },
    /// `data`: float16/float32 (C, *S), planes in ascending class id.
    Probmap {
        data: ArrayData,
        normalized: bool,
        threshold: Option<f64>,
    },
    /// `data`: bool or uint8, shape S.
    Mask { data: ArrayData },
    /// Objects: boxes, class ids, instance ids and optional bit-packed crops.
    Instances {
        boxes: ArrayData,
        object_class_ids: ArrayData,
        instance_ids: ArrayData,
        /// `(mask_offsets, mask_shapes, mask_data)` when masks are stored.
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

/// One voxel annotation.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    pub id: String,
    pub grid: String,
    pub task: String,
    pub closure: String,
    /// Every class the data can encode (not written for `mask`).
    pub class_ids: Vec<u16>,
    /// Classes actually looked for (⊆ `class_ids`).
    pub annotated_class_ids: Vec<u16>,
    pub timepoints: Option<Vec<String>>,
    /// Written only when ≠ 65535.
    pub ignore_id: u16,
    pub ignore_mask: Option<String>,
    pub prov: Option<String>,
    pub quality: Option<String>,
    pub derived_from: Option<Vec<String>>,
    pub encoding: Encoding,
}

/// Known tasks.
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
    /// inline label set to check against).
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

    fn labelmap<T: crate::medh5::model::Element>(vals: &[T], classes: &[u16]) -> Annotation {
        let data = ArrayData::from_slice(&[2, 3, 4], vals).unwrap();
        Annotation::new("seg", "ct", classes, Encoding::Labelmap { data })
    }

    fn code(r: Result<()>) -> String {
        match r {
            Err(crate::medh5::error::Error::Code { code, message }) => format!("{code}: {message}"),
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
