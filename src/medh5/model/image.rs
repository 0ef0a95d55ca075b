//! Images (`docs/medh5-format.md` §2.4): a numeric dataset
//! `/images/<image_id>` on a grid, with its attributes and checks (E202–E205).

use super::{err, ArrayData};
use crate::attribute::AttrValue;
use crate::document::is_valid_id;
use crate::error::Result;
use crate::model::Grid;

/// Known `value_type`s.
pub const VALUE_TYPES: [&str; 6] = [
    "intensity",
    "quantitative",
    "rgb",
    "probability",
    "displacement",
    "mask",
];

/// One single-resolution image, the dataset `/images/<id>` (§2.4), with its
/// attributes ([`attrs`](Self::attrs)); `digest` is stamped at commit.
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    /// Image id, the member name under `/images` (`[A-Za-z0-9_.-]{1,128}`,
    /// not `meta`).
    pub id: String,
    /// Id of the grid the image lies on (attribute `grid`); must exist (E101).
    pub grid: String,
    /// The voxels; the shape must equal the grid's `shape` (E202).
    pub data: ArrayData,
    /// Imaging modality, free non-empty text such as `CT` or `MR` (E205).
    pub modality: String,
    /// What the values mean: one of [`VALUE_TYPES`] (E203); `intensity` by
    /// default.
    pub value_type: String,
    /// One name per entry of the grid's channel axis (E204).
    pub channel_names: Option<Vec<String>>,
    /// Linear rescale to physical values, `value × slope + intercept`
    /// (as DICOM's Rescale Slope); finite.
    pub rescale_slope: Option<f64>,
    /// Offset of the linear rescale (DICOM Rescale Intercept, e.g. −1024 for
    /// CT in HU); finite.
    pub rescale_intercept: Option<f64>,
    /// Unit of the (rescaled) values, free text (e.g. `HU`).
    pub value_units: Option<String>,
    /// Display window centres, one per preset (pairs with `window_width`).
    pub window_center: Option<Vec<f64>>,
    /// Display window widths, one per preset.
    pub window_width: Option<Vec<f64>>,
    /// Id of a `mask` annotation on the same grid marking the voxels that
    /// hold valid data (E413).
    pub valid_mask: Option<String>,
    /// Id of the provenance activity that produced the image (E601).
    pub prov: Option<String>,
}

impl Image {
    /// An `intensity` image.
    pub fn new(id: &str, grid: &str, modality: &str, data: ArrayData) -> Self {
        Image {
            id: id.to_string(),
            grid: grid.to_string(),
            data,
            modality: modality.to_string(),
            value_type: "intensity".to_string(),
            channel_names: None,
            rescale_slope: None,
            rescale_intercept: None,
            value_units: None,
            window_center: None,
            window_width: None,
            valid_mask: None,
            prov: None,
        }
    }

    /// Check against its grid (E003, E202, E203, E204, E205).
    ///
    /// # Errors
    ///
    /// [`Error::Code`](crate::error::Error::Code) with E003 for a bad
    /// id, E202 for a shape other than the grid's, E205 for an empty
    /// modality or a non-finite rescale, E203 for an unknown `value_type`,
    /// E204 for `channel_names` not matching the channel extent. The `grid`
    /// and `valid_mask` references are checked by
    /// [`Sample::validate`](crate::model::Sample::validate).
    pub fn validate(&self, grid: &Grid) -> Result<()> {
        if !is_valid_id(&self.id) {
            return Err(err("E003", format!("bad image id {:?}", self.id)));
        }
        if self.data.shape != grid.shape {
            return Err(err(
                "E202",
                format!(
                    "images/{}: shape {:?} != grid shape {:?}",
                    self.id, self.data.shape, grid.shape
                ),
            ));
        }
        if self.modality.is_empty() {
            return Err(err("E205", format!("images/{}: empty modality", self.id)));
        }
        if !VALUE_TYPES.contains(&self.value_type.as_str()) {
            return Err(err(
                "E203",
                format!("images/{}: value_type {:?}", self.id, self.value_type),
            ));
        }
        if let Some(names) = &self.channel_names {
            if grid.channel_extent() != Some(names.len() as u64) {
                return Err(err(
                    "E204",
                    format!("images/{}: channel_names length", self.id),
                ));
            }
        }
        for v in [self.rescale_slope, self.rescale_intercept]
            .into_iter()
            .flatten()
        {
            if !v.is_finite() {
                return Err(err(
                    "E205",
                    format!("images/{}: rescale must be finite", self.id),
                ));
            }
        }
        Ok(())
    }

    /// The attributes the writer emits (before `digest`).
    pub fn attrs(&self) -> Vec<(String, AttrValue)> {
        let mut a = vec![
            ("grid".to_string(), AttrValue::str(&self.grid)),
            ("modality".to_string(), AttrValue::str(&self.modality)),
            ("value_type".to_string(), AttrValue::str(&self.value_type)),
        ];
        if let Some(c) = &self.channel_names {
            a.push(("channel_names".into(), AttrValue::strs(c)));
        }
        if let Some(v) = self.rescale_slope {
            a.push(("rescale_slope".into(), AttrValue::f64(v)));
        }
        if let Some(v) = self.rescale_intercept {
            a.push(("rescale_intercept".into(), AttrValue::f64(v)));
        }
        if let Some(v) = &self.value_units {
            a.push(("value_units".into(), AttrValue::str(v)));
        }
        if let Some(v) = &self.window_center {
            a.push(("window_center".into(), AttrValue::f64s(v)));
        }
        if let Some(v) = &self.window_width {
            a.push(("window_width".into(), AttrValue::f64s(v)));
        }
        if let Some(v) = &self.valid_mask {
            a.push(("valid_mask".into(), AttrValue::str(v)));
        }
        if let Some(v) = &self.prov {
            a.push(("prov".into(), AttrValue::str(v)));
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks() {
        let g = Grid::new("ct", &[2, 2], &[1.0, 1.0]);
        let img = Image::new(
            "CT",
            "ct",
            "CT",
            ArrayData::from_slice(&[2, 2], &[1i16, 2, 3, 4]).unwrap(),
        );
        img.validate(&g).unwrap();
        assert_eq!(img.attrs().len(), 3);
        let mut bad = img.clone();
        bad.value_type = "weird".into();
        assert!(bad.validate(&g).is_err());
        let g3 = Grid::new("ct", &[2, 3], &[1.0, 1.0]);
        assert!(
            matches!(img.validate(&g3), Err(crate::error::Error::Code { code, .. }) if code == "E202")
        );
    }
}
