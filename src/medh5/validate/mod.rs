//! The validator (`docs/medh5-format.md` §9, spec §15): rules per level over a
//! sample (`.medh5`) or a collection (`.medh5c`, §7), reporting
//! `(code, severity, location, message)` diagnostics in the report of §9.3.
//!
//! One file per rule family: [`container`] (root attributes, layout groups,
//! identifiers, `/meta`, profile requirements), [`schema`] and [`document`]
//! (the `/meta` schema, timepoints, curation records, splits), [`geometry`]
//! (grids), [`images`] (images, bulk storage, pyramids), [`annotations`]
//! (headers, encodings, references), [`instances`] (boxes, offsets, rotations,
//! instance identity), [`closure`] (classification, implicit closure, layer
//! count), [`contours`], [`labels`] (label set, ontology bindings),
//! [`transforms`] (kinds, chains, inverses, frames), [`clinical`] and
//! [`clinical_links`] (format 1.1 tables), [`integrity`] (digests,
//! `content_id`, aliases, index currency), [`collection`], [`report`], and
//! [`ctx`] (the per-sample context).
//! A rule never stops the others; a file of another major version stops
//! after the container rule (E002).

pub mod annotations;
pub mod clinical;
pub mod clinical_links;
pub mod clinical_table;
pub mod closure;
pub mod collection;
pub mod container;
pub mod contours;
pub mod ctx;
pub mod document;
pub mod geometry;
pub mod images;
pub mod instances;
pub mod integrity;
pub mod labels;
pub mod loader;
pub mod report;
pub mod schema;
pub mod transforms;
pub mod values;

use std::path::Path;

pub use ctx::Ctx;
pub use report::{Diagnostic, Level, Report};

use purehdf::low_level::file::File;

/// Validation options (`--level`, `--profile`, `--codes-revision`).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The level to validate at (default [`Level::Semantic`]).
    pub level: Level,
    /// Extra profiles the file is held to besides the ones it declares.
    pub profiles: Vec<String>,
    /// Report only codes allocated up to this revision of the code table.
    pub codes_revision: Option<u32>,
}

/// The latest revision of the code table this validator implements.
pub const CODES_REVISION: u32 = 2;

/// Rules run at `structural` level, in report order.
pub const STRUCTURAL_RULES: &[&str] = &[
    "check_container",
    "check_document",
    "check_geometry",
    "check_images",
    "check_annotations",
    "check_bulk_storage",
    "check_clinical",
];
/// Rules `semantic` adds.
pub const SEMANTIC_RULES: &[&str] = &[
    "check_timepoints",
    "check_instance_identity",
    "check_references",
    "check_transforms",
    "check_label_set",
    "check_implicit_closure",
    "check_multiscale",
    "check_curation",
    "check_splits",
    "check_profiles",
    "check_ontology_bindings",
    "check_clinical_records",
];
/// Rules `integrity` and `strict` add.
pub const INTEGRITY_RULES: &[&str] = &["check_integrity", "check_clinical_digests"];

/// The rule names run at `level`.
pub fn rules_for(level: Level) -> Vec<&'static str> {
    let mut v = STRUCTURAL_RULES.to_vec();
    if level >= Level::Semantic {
        v.extend_from_slice(SEMANTIC_RULES);
    }
    if level >= Level::Integrity {
        v.extend_from_slice(INTEGRITY_RULES);
    }
    v
}

/// The revision of the code table that allocated `code` (1 for most; the
/// revision-2 warnings W915–W919).
pub fn code_revision(code: &str) -> u32 {
    match code {
        "W915" | "W916" | "W917" | "W918" | "W919" => 2,
        _ => 1,
    }
}

/// Validate the file at `path`; the report names it as `path` is written.
pub fn validate_path(path: &Path, opts: &Options) -> Report {
    let display = path.display().to_string();
    let mut report = match crate::self_contained::open_hdf5(path) {
        Ok(file) => match crate::self_contained::check(&file, &display) {
            Ok(()) => validate_file(&file, &display, opts),
            Err(e) => Report::unreadable(&display, opts.level, &e.to_string()),
        },
        Err(e) => Report::unreadable(&display, opts.level, &open_error(path, &e)),
    };
    if let Some(rev) = opts.codes_revision {
        report.diagnostics.retain(|d| code_revision(&d.code) <= rev);
    }
    report.finish();
    report
}

fn open_error(path: &Path, e: &purehdf::Error) -> String {
    if !path.exists() {
        return format!(
            "failed to open '{}': no such file or directory",
            path.display()
        );
    }
    format!("failed to open '{}': {e}", path.display())
}

/// Validate an open file (sample or collection).
pub fn validate_file(file: &File, display: &str, opts: &Options) -> Report {
    if collection::is_collection(file) {
        return collection::validate_collection(file, display, opts);
    }
    let mut ctx = Ctx::new(file, "", "", opts.level);
    let checked = run_sample(&mut ctx, &opts.profiles);
    let mut rep = Report::new(display, opts.level, ctx.profiles());
    rep.diagnostics = std::mem::take(&mut ctx.diags);
    rep.checked = checked;
    rep
}

/// Run every rule of the context's level over one sample root; returns the
/// report's `checked` object.
pub fn run_sample(ctx: &mut Ctx<'_>, extra_profiles: &[String]) -> serde_json::Value {
    ctx.extra_profiles = extra_profiles.to_vec();
    let go_on = container::check_container(ctx);
    if !go_on {
        return serde_json::json!({"rules": ["check_container"], "schema_checked": false});
    }
    document::check_document(ctx);
    geometry::check_geometry(ctx);
    images::check_images(ctx);
    annotations::check_annotations(ctx);
    instances::check_instance_data(ctx);
    images::check_bulk_storage(ctx);
    clinical::check_clinical(ctx);
    if ctx.level >= Level::Semantic {
        document::check_timepoints(ctx);
        geometry::check_grid_timepoints(ctx);
        instances::check_instance_identity(ctx);
        annotations::check_references(ctx);
        transforms::check_transforms(ctx);
        labels::check_label_set(ctx);
        closure::check_implicit_closure(ctx);
        contours::check_contour_roles(ctx);
        images::check_multiscale(ctx);
        document::check_curation(ctx);
        container::check_profiles(ctx);
        labels::check_ontology_bindings(ctx);
    }
    if ctx.level >= Level::Integrity {
        integrity::check_integrity(ctx);
        clinical::check_clinical_digests(ctx);
    }
    serde_json::json!({"rules": rules_for(ctx.level), "schema_checked": ctx.schema_checked})
}
