//! A whole sample (`docs/medh5-format.md` §2, §2.1): document,
//! grids, images, annotations; cross-object validation and profile inference.

use super::{err, Annotation, Encoding, Grid, Image};
use crate::document::{LabelSetForm, SampleDocument};
use crate::error::Result;

/// Profiles known to format 1.0–1.2.
pub const KNOWN_PROFILES: [&str; 10] = [
    "core",
    "seg",
    "det",
    "cls",
    "reg",
    "curation",
    "multiscale",
    "training",
    "longitudinal",
    "clinical",
];

/// One sample (`medh5_kind = "sample"`, §2), ready to be planned and written.
/// Objects keep the order of these vectors; ids must be unique within each
/// of the three namespaces (E003).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Sample {
    /// The `/meta` document.
    pub document: SampleDocument,
    /// `/grids/*`; at least one (E111).
    pub grids: Vec<Grid>,
    /// `/images/*`; at least one (E201).
    pub images: Vec<Image>,
    /// `/annotations/*`; may be empty.
    pub annotations: Vec<Annotation>,
    /// Profiles the caller declares in addition to the inferred ones.
    pub declared_profiles: Vec<String>,
    /// Build a sampling index (§6.8) for every non-`mask` annotation.
    pub index: Option<crate::index::IndexOptions>,
}

impl Sample {
    /// An empty sample whose document is [`SampleDocument::new`] (one
    /// timepoint `tp0`); add at least one grid and image before writing.
    pub fn new(sample_id: &str, subject_id: &str) -> Self {
        Sample {
            document: SampleDocument::new(sample_id, subject_id),
            ..Sample::default()
        }
    }

    /// The grid named `id`.
    pub fn grid(&self, id: &str) -> Option<&Grid> {
        self.grids.iter().find(|g| g.id == id)
    }

    /// `medh5_profiles` (§2.1): declared ∪ inferred, sorted by byte order and
    /// deduplicated. Inferred: `core` always; `seg` when a label set exists
    /// and a non-`mask` annotation does; `longitudinal` with ≥ 2 timepoints
    /// and every grid naming one; `training` when an index is requested and
    /// a non-`mask` annotation exists.
    pub fn profiles(&self) -> Vec<String> {
        let mut p: Vec<String> = vec!["core".to_string()];
        let seg = self.document.label_set.is_some()
            && self
                .annotations
                .iter()
                .any(|a| !matches!(a.encoding, Encoding::Mask { .. }));
        if seg {
            p.push("seg".to_string());
        }
        let multi =
            self.document.timepoints.len() >= 2 && self.grids.iter().all(|g| g.timepoint.is_some());
        if multi {
            p.push("longitudinal".to_string());
        }
        if self.index.is_some()
            && self
                .annotations
                .iter()
                .any(|a| !matches!(a.encoding, Encoding::Mask { .. }))
        {
            p.push("training".to_string());
        }
        p.extend(self.declared_profiles.iter().cloned());
        p.sort();
        p.dedup();
        p
    }

    /// Check everything the writer checks before committing: the document,
    /// each grid, image and annotation, and the references between them.
    ///
    /// # Errors
    ///
    /// The first failure as [`Error::Code`](crate::error::Error::Code):
    /// the document's and objects' own codes, plus E111 (no grid), E201 (no
    /// image), E007 (unknown declared profile), E003 (repeated id), E101
    /// (unknown grid), E106/E107 (grid timepoint missing/unknown), E301
    /// (non-`mask` annotation without a label set), E409 (unknown annotation
    /// timepoint), E413 (`ignore_mask`/`valid_mask` not a `mask` annotation
    /// on the same grid), E005 (index `max_coords` 0).
    pub fn validate(&self) -> Result<()> {
        self.document.validate()?;
        if self.grids.is_empty() {
            return Err(err("E111", "a sample needs at least one grid"));
        }
        if self.images.is_empty() {
            return Err(err("E201", "a sample needs at least one image"));
        }
        if self.index.is_some_and(|o| o.max_coords == 0) {
            return Err(err("E005", "index max_coords must be at least 1"));
        }
        for p in &self.declared_profiles {
            if !KNOWN_PROFILES.contains(&p.as_str()) {
                return Err(err("E007", format!("unknown profile {p:?}")));
            }
        }
        let tp_ids: Vec<&str> = self
            .document
            .timepoints
            .iter()
            .map(|t| t.id.as_str())
            .collect();
        for (i, g) in self.grids.iter().enumerate() {
            g.validate()?;
            if self.grids[..i].iter().any(|o| o.id == g.id) {
                return Err(err("E003", format!("grid id {:?} repeated", g.id)));
            }
            match &g.timepoint {
                Some(t) if !tp_ids.contains(&t.as_str()) => {
                    return Err(err(
                        "E107",
                        format!("grids/{}: unknown timepoint {t:?}", g.id),
                    ))
                }
                None if tp_ids.len() > 1 => {
                    return Err(err("E106", format!("grids/{}: needs a timepoint", g.id)))
                }
                _ => {}
            }
        }
        for (i, img) in self.images.iter().enumerate() {
            let g = self.grid(&img.grid).ok_or_else(|| {
                err(
                    "E101",
                    format!("images/{}: unknown grid {:?}", img.id, img.grid),
                )
            })?;
            img.validate(g)?;
            if self.images[..i].iter().any(|o| o.id == img.id) {
                return Err(err("E003", format!("image id {:?} repeated", img.id)));
            }
        }
        let label_classes: Option<Vec<u16>> =
            self.document
                .label_set
                .as_ref()
                .and_then(|ls| match ls.form {
                    LabelSetForm::Inline { .. } => {
                        Some(ls.classes().iter().map(|c| c.id).collect())
                    }
                    LabelSetForm::Ref { .. } => None,
                });
        for (i, a) in self.annotations.iter().enumerate() {
            let g = self.grid(&a.grid).ok_or_else(|| {
                err(
                    "E101",
                    format!("annotations/{}: unknown grid {:?}", a.id, a.grid),
                )
            })?;
            if !matches!(a.encoding, Encoding::Mask { .. }) && self.document.label_set.is_none() {
                return Err(err(
                    "E301",
                    format!("annotations/{}: needs a label set", a.id),
                ));
            }
            a.validate(g, label_classes.as_deref())?;
            if self.annotations[..i].iter().any(|o| o.id == a.id) {
                return Err(err("E003", format!("annotation id {:?} repeated", a.id)));
            }
            if let Some(tps) = &a.timepoints {
                if let Some(t) = tps.iter().find(|t| !tp_ids.contains(&t.as_str())) {
                    return Err(err(
                        "E409",
                        format!("annotations/{}: unknown timepoint {t:?}", a.id),
                    ));
                }
            }
            for name in [&a.ignore_mask].into_iter().flatten() {
                let ok = self.annotations.iter().any(|o| {
                    &o.id == name && o.grid == a.grid && matches!(o.encoding, Encoding::Mask { .. })
                });
                if !ok {
                    return Err(err(
                        "E413",
                        format!("annotations/{}: ignore_mask {name:?}", a.id),
                    ));
                }
            }
        }
        for img in &self.images {
            if let Some(name) = &img.valid_mask {
                let ok = self.annotations.iter().any(|o| {
                    &o.id == name
                        && o.grid == img.grid
                        && matches!(o.encoding, Encoding::Mask { .. })
                });
                if !ok {
                    return Err(err(
                        "E413",
                        format!("images/{}: valid_mask {name:?}", img.id),
                    ));
                }
            }
        }
        Ok(())
    }
}
