//! Grids (`docs/medh5-format.md` §2.3): shape and geometry in the
//! attributes of `/grids/<grid_id>`, validation (E102–E111), and the chunk
//! shape of arrays on the grid (§6.3).

use super::err;
use crate::attribute::AttrValue;
use crate::chunking::{self, Patch};
use crate::document::is_valid_id;
use crate::error::Result;

/// Kind of a grid axis, stored in the grid's `axis_kinds` attribute (§2.3).
/// A grid has 2 or 3 spatial axes, contiguous and trailing (E103), and at
/// most one time and one channel axis (E110).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AxisKind {
    /// A physical axis with a spacing, origin and direction entry.
    Spatial,
    /// Channels of one voxel (e.g. RGB or MR echoes); images name them in
    /// `channel_names`.
    Channel,
    /// Frames in time; the grid's `time_values` give one value per frame.
    Time,
    /// Any other non-spatial axis.
    Other,
}

impl AxisKind {
    /// The stored name: `spatial`, `channel`, `time` or `other`.
    pub fn name(self) -> &'static str {
        match self {
            AxisKind::Spatial => "spatial",
            AxisKind::Channel => "channel",
            AxisKind::Time => "time",
            AxisKind::Other => "other",
        }
    }
}

/// One grid, `/grids/<id>` (§2.3): the shape and physical geometry shared by
/// every image and voxel annotation on it. All geometry lives in attributes
/// ([`attrs`](Self::attrs)); the group itself is empty.
///
/// Per-spatial-axis vectors (`spacing`, `origin`, `patch_hint`) follow the
/// array's axis order (e.g. `z, y, x`), not `x, y, z`.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    /// Grid id, the member name under `/grids` (`[A-Za-z0-9_.-]{1,128}`, not
    /// `meta`); images and annotations name it in their `grid` attribute.
    pub id: String,
    /// Array shape of everything on the grid, one extent per axis, all > 0.
    pub shape: Vec<u64>,
    /// One name per axis; defaults `z`, `y`, `x` for the trailing spatial
    /// axes and the kind's first letter (`c`, `t`, `o`) otherwise.
    pub axis_names: Vec<String>,
    /// One kind per axis (see [`AxisKind`] for the rules).
    pub axis_kinds: Vec<AxisKind>,
    /// Voxel spacing, one per spatial axis, in [`units`](Self::units);
    /// finite and > 0 (E104).
    pub spacing: Vec<f64>,
    /// Physical position of voxel index 0 (voxel centres sit at integer
    /// indexes), one per spatial axis, in [`units`](Self::units); finite.
    /// Defaults to zeros.
    pub origin: Vec<f64>,
    /// Direction cosines, S×S (S spatial axes) row-major, stored as a 2-D
    /// `float64` attribute; orthonormal to 1e-4 (E102). Defaults to the
    /// identity.
    pub direction: Vec<f64>,
    /// Patient coordinate convention of `origin`/`direction`: `LPS`
    /// (default), `RAS`, or another name.
    pub coord_system: String,
    /// Length unit of `spacing` and `origin`: `mm` (default), `um`, `m` or
    /// `px` (E109 otherwise).
    pub units: String,
    /// Id of the document timepoint the grid was acquired at; required when
    /// the document has more than one timepoint (E106, E107).
    pub timepoint: Option<String>,
    /// Frame-of-reference UID; grids sharing one are in the same physical
    /// space (transforms map between them).
    pub frame_uid: Option<String>,
    /// With a time axis: one time value per frame, in
    /// [`time_units`](Self::time_units).
    pub time_values: Option<Vec<f64>>,
    /// Unit of `time_values`: `s` or `ms`; only with a time axis.
    pub time_units: Option<String>,
    /// Preferred chunk shape for arrays on the grid, one positive entry per
    /// axis; overrides the chunk optimiser and makes chunking host-independent
    /// (§6.3 rule 1).
    pub chunk_hint: Option<Vec<i64>>,
    /// Training patch size in voxels, one positive entry per spatial axis;
    /// drives the chunk optimiser when there is no `chunk_hint` (§6.4).
    pub patch_hint: Option<Vec<i64>>,
}

const SPATIAL_NAMES: [&str; 3] = ["z", "y", "x"];

impl Grid {
    /// A grid whose axes are all spatial (2-D or 3-D), with the writer's
    /// defaults: names `z,y,x`, origin zeros, identity direction, `LPS`, `mm`.
    pub fn new(id: &str, shape: &[u64], spacing: &[f64]) -> Self {
        let kinds = vec![AxisKind::Spatial; shape.len()];
        Grid::with_axes(id, shape, &kinds, spacing)
    }

    /// A grid with explicit axis kinds; default names are `z,y,x` for the
    /// trailing spatial axes and the kind's first letter otherwise.
    pub fn with_axes(id: &str, shape: &[u64], kinds: &[AxisKind], spacing: &[f64]) -> Self {
        let n_spatial = kinds.iter().filter(|k| **k == AxisKind::Spatial).count();
        let mut seen_spatial = 0;
        let axis_names = kinds
            .iter()
            .map(|k| match k {
                AxisKind::Spatial => {
                    let skip = SPATIAL_NAMES.len().saturating_sub(n_spatial);
                    let name = SPATIAL_NAMES
                        .get(skip + seen_spatial)
                        .copied()
                        .unwrap_or("s");
                    seen_spatial += 1;
                    name.to_string()
                }
                other => other.name()[..1].to_string(),
            })
            .collect();
        let s = spacing.len();
        let mut direction = vec![0.0; s * s];
        for i in 0..s {
            direction[i * s + i] = 1.0;
        }
        Grid {
            id: id.to_string(),
            shape: shape.to_vec(),
            axis_names,
            axis_kinds: kinds.to_vec(),
            spacing: spacing.to_vec(),
            origin: vec![0.0; s],
            direction,
            coord_system: "LPS".to_string(),
            units: "mm".to_string(),
            timepoint: None,
            frame_uid: None,
            time_values: None,
            time_units: None,
            chunk_hint: None,
            patch_hint: None,
        }
    }

    /// The spatial extents.
    pub fn spatial_shape(&self) -> Vec<u64> {
        self.shape
            .iter()
            .zip(&self.axis_kinds)
            .filter(|(_, k)| **k == AxisKind::Spatial)
            .map(|(&s, _)| s)
            .collect()
    }

    /// Extent of the channel axis, if any.
    pub fn channel_extent(&self) -> Option<u64> {
        self.shape
            .iter()
            .zip(&self.axis_kinds)
            .find(|(_, k)| **k == AxisKind::Channel)
            .map(|(&s, _)| s)
    }

    /// Check the grid (E003, E102, E103, E104, E109, E110).
    ///
    /// # Errors
    ///
    /// [`Error::Code`](crate::error::Error::Code) with the first
    /// failing rule's code: E003 bad id, E103 spatial axes not 2–3 trailing,
    /// E110 repeated time/channel axis, E104 bad spacing, E102 direction not
    /// orthonormal, E109 any other malformed or wrongly sized attribute.
    pub fn validate(&self) -> Result<()> {
        let at = |m: &str| format!("grids/{}: {m}", self.id);
        if !is_valid_id(&self.id) {
            return Err(err("E003", format!("bad grid id {:?}", self.id)));
        }
        let nd = self.shape.len();
        if nd == 0 || self.shape.contains(&0) {
            return Err(err("E109", at("shape must be non-empty and positive")));
        }
        if self.axis_kinds.len() != nd || self.axis_names.len() != nd {
            return Err(err(
                "E109",
                at("axis_names/axis_kinds must have one entry per axis"),
            ));
        }
        let spatial: Vec<usize> = (0..nd)
            .filter(|&i| self.axis_kinds[i] == AxisKind::Spatial)
            .collect();
        let s = spatial.len();
        if !(2..=3).contains(&s) || spatial.first() != Some(&(nd - s)) {
            return Err(err(
                "E103",
                at("2 or 3 spatial axes, contiguous and trailing"),
            ));
        }
        for kind in [AxisKind::Time, AxisKind::Channel] {
            if self.axis_kinds.iter().filter(|k| **k == kind).count() > 1 {
                return Err(err("E110", at("at most one time and one channel axis")));
            }
        }
        if self.spacing.len() != s || self.origin.len() != s || self.direction.len() != s * s {
            return Err(err(
                "E109",
                at("spacing/origin/direction sized by the spatial axes"),
            ));
        }
        if self.spacing.iter().any(|v| !v.is_finite() || *v <= 0.0) {
            return Err(err("E104", at("spacing must be finite and > 0")));
        }
        if self
            .origin
            .iter()
            .chain(&self.direction)
            .any(|v| !v.is_finite())
        {
            return Err(err("E109", at("origin/direction must be finite")));
        }
        for i in 0..s {
            for j in 0..s {
                let dot: f64 = (0..s)
                    .map(|k| self.direction[i * s + k] * self.direction[j * s + k])
                    .sum();
                let want = if i == j { 1.0 } else { 0.0 };
                if (dot - want).abs() > 1e-4 {
                    return Err(err("E102", at("direction is not orthonormal")));
                }
            }
        }
        if !["mm", "um", "m", "px"].contains(&self.units.as_str()) {
            return Err(err("E109", at("units must be mm, um, m or px")));
        }
        if let Some(h) = &self.chunk_hint {
            if h.len() != nd || h.iter().any(|&v| v <= 0) {
                return Err(err("E109", at("chunk_hint: one positive entry per axis")));
            }
        }
        if let Some(h) = &self.patch_hint {
            if h.len() != s || h.iter().any(|&v| v <= 0) {
                return Err(err(
                    "E109",
                    at("patch_hint: one positive entry per spatial axis"),
                ));
            }
        }
        let has_time = self.axis_kinds.contains(&AxisKind::Time);
        if let Some(tv) = &self.time_values {
            let t = self
                .shape
                .iter()
                .zip(&self.axis_kinds)
                .find(|(_, k)| **k == AxisKind::Time)
                .map(|(&e, _)| e);
            if t != Some(tv.len() as u64) {
                return Err(err(
                    "E109",
                    at("time_values: one per frame of the time axis"),
                ));
            }
        }
        if let Some(u) = &self.time_units {
            if !has_time || !["s", "ms"].contains(&u.as_str()) {
                return Err(err(
                    "E109",
                    at("time_units must be s or ms, with a time axis"),
                ));
            }
        }
        Ok(())
    }

    /// The grid's attributes in the order the writer emits them.
    pub fn attrs(&self) -> Vec<(String, AttrValue)> {
        let s = self.spacing.len() as u64;
        let mut a = vec![
            (
                "shape".to_string(),
                AttrValue::i64s(&self.shape.iter().map(|&v| v as i64).collect::<Vec<_>>()),
            ),
            ("axis_names".to_string(), AttrValue::strs(&self.axis_names)),
            (
                "axis_kinds".to_string(),
                AttrValue::strs(&self.axis_kinds.iter().map(|k| k.name()).collect::<Vec<_>>()),
            ),
            ("spacing".to_string(), AttrValue::f64s(&self.spacing)),
            ("origin".to_string(), AttrValue::f64s(&self.origin)),
            (
                "direction".to_string(),
                AttrValue::F64 {
                    shape: vec![s, s],
                    values: self.direction.clone(),
                },
            ),
            (
                "coord_system".to_string(),
                AttrValue::str(&self.coord_system),
            ),
            ("units".to_string(), AttrValue::str(&self.units)),
        ];
        let mut opt_str = |name: &str, v: &Option<String>| {
            if let Some(v) = v {
                a.push((name.to_string(), AttrValue::str(v)));
            }
        };
        opt_str("timepoint", &self.timepoint);
        opt_str("frame_uid", &self.frame_uid);
        if let Some(tv) = &self.time_values {
            a.push(("time_values".to_string(), AttrValue::f64s(tv)));
        }
        if let Some(tu) = &self.time_units {
            a.push(("time_units".to_string(), AttrValue::str(tu)));
        }
        if let Some(h) = &self.chunk_hint {
            a.push(("chunk_hint".to_string(), AttrValue::i64s(h)));
        }
        if let Some(h) = &self.patch_hint {
            a.push(("patch_hint".to_string(), AttrValue::i64s(h)));
        }
        a
    }

    /// The chunk of an array on this grid with `leading` stacked axes before
    /// the grid axes (§6.3 rules 1–2): from `chunk_hint`, else the optimiser
    /// with `patch_hint` (non-spatial axes 1). `itemsize` is the element size
    /// in bytes and `l3_bytes` the per-core L3 cache size the optimiser
    /// targets.
    ///
    /// # Errors
    ///
    /// An invalid-input error when `chunk_hint` does not have one entry per
    /// grid axis, or when the optimiser rejects the spatial shape or patch
    /// (see [`chunking::optimize_chunks`]).
    pub fn chunks(&self, itemsize: u64, leading: usize, l3_bytes: u64) -> Result<Vec<u64>> {
        let kinds: Vec<&str> = self.axis_kinds.iter().map(|k| k.name()).collect();
        let mut shape = vec![1u64; leading];
        shape.extend_from_slice(&self.shape);
        match &self.chunk_hint {
            Some(h) => chunking::chunk_from_hint(&shape, &kinds, h, leading),
            None => {
                let patch = self
                    .patch_hint
                    .as_deref()
                    .map_or(Patch::Default, Patch::PerAxis);
                chunking::optimize_chunks(&shape, &kinds, patch, itemsize, l3_bytes, leading)
            }
        }
    }

    /// The chunk of an annotation dataset of `shape` whose trailing axes are
    /// the grid's spatial axes (§6.3 rule 3): `leading = ndim − S` ones, then
    /// the spatial entries of the grid chunk, clipped to the dataset shape.
    ///
    /// # Errors
    ///
    /// E405 when `shape` has fewer axes than the grid has spatial axes;
    /// otherwise as [`chunks`](Self::chunks).
    pub fn annotation_chunks(
        &self,
        shape: &[u64],
        itemsize: u64,
        l3_bytes: u64,
    ) -> Result<Vec<u64>> {
        let s = self.spacing.len();
        let leading = shape.len().checked_sub(s).ok_or_else(|| {
            err(
                "E405",
                format!("annotation shape {shape:?} lacks the spatial axes"),
            )
        })?;
        let grid_chunk = self.chunks(itemsize, leading, l3_bytes)?;
        let spatial: Vec<u64> = grid_chunk[leading..]
            .iter()
            .zip(&self.axis_kinds)
            .filter(|(_, k)| **k == AxisKind::Spatial)
            .map(|(&c, _)| c)
            .collect();
        let mut out = vec![1u64; leading];
        out.extend(spatial);
        Ok(out
            .iter()
            .zip(shape)
            .map(|(&c, &d)| c.min(d).max(1))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunking::FALLBACK_L3_BYTES;

    #[test]
    fn defaults_and_attrs() {
        let g = Grid::new("ct", &[8, 16, 16], &[2.0, 0.8, 0.8]);
        g.validate().unwrap();
        let attrs = g.attrs();
        let json: Vec<String> = attrs
            .iter()
            .map(|(k, v)| format!("{k}={}", v.to_json().to_canonical()))
            .collect();
        assert_eq!(
            json,
            [
                "shape=[8,16,16]",
                "axis_names=[\"z\",\"y\",\"x\"]",
                "axis_kinds=[\"spatial\",\"spatial\",\"spatial\"]",
                "spacing=[2.0,0.8,0.8]",
                "origin=[0.0,0.0,0.0]",
                "direction=[[1.0,0.0,0.0],[0.0,1.0,0.0],[0.0,0.0,1.0]]",
                "coord_system=\"LPS\"",
                "units=\"mm\""
            ]
        );
        let g2 = Grid::with_axes(
            "mr",
            &[4, 3, 16, 16],
            &[
                AxisKind::Time,
                AxisKind::Channel,
                AxisKind::Spatial,
                AxisKind::Spatial,
            ],
            &[1.0, 1.0],
        );
        assert_eq!(g2.axis_names, ["t", "c", "y", "x"]);
        g2.validate().unwrap();
        assert_eq!(g2.channel_extent(), Some(3));
    }

    #[test]
    fn validation_codes() {
        let code = |g: &Grid| match g.validate() {
            Err(crate::error::Error::Code { code, .. }) => code,
            other => panic!("{other:?}"),
        };
        let mut g = Grid::new("ct", &[8, 16, 16], &[2.0, 0.8, 0.8]);
        g.spacing[1] = 0.0;
        assert_eq!(code(&g), "E104");
        let mut g = Grid::new("ct", &[8, 16, 16], &[2.0, 0.8, 0.8]);
        g.direction[1] = 0.5;
        assert_eq!(code(&g), "E102");
        let g = Grid::with_axes(
            "x",
            &[3, 4, 4],
            &[AxisKind::Spatial, AxisKind::Channel, AxisKind::Spatial],
            &[1.0, 1.0],
        );
        assert_eq!(code(&g), "E103");
        let mut g = Grid::new("ct", &[8, 16, 16], &[2.0, 0.8, 0.8]);
        g.units = "cm".into();
        assert_eq!(code(&g), "E109");
        let g = Grid::new("meta", &[8, 16], &[1.0, 1.0]);
        assert_eq!(code(&g), "E003");
    }

    #[test]
    fn chunk_rules() {
        let mut g = Grid::new("g", &[16, 64, 64], &[2.0, 0.8, 0.8]);
        g.chunk_hint = Some(vec![8, 32, 32]);
        assert_eq!(g.chunks(2, 0, FALLBACK_L3_BYTES).unwrap(), [8, 32, 32]);
        assert_eq!(
            g.annotation_chunks(&[2, 16, 64, 64], 1, FALLBACK_L3_BYTES)
                .unwrap(),
            [1, 8, 32, 32]
        );
        g.chunk_hint = None;
        let big = Grid::new("b", &[512, 512, 512], &[1.0, 1.0, 1.0]);
        assert_eq!(big.chunks(2, 0, FALLBACK_L3_BYTES).unwrap(), [128, 64, 64]);
        assert_eq!(
            big.annotation_chunks(&[3, 512, 512, 512], 1, FALLBACK_L3_BYTES)
                .unwrap(),
            [1, 128, 64, 64]
        );
    }
}
