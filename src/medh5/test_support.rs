//! Test-only helpers: where the shared test material is (`../shared` next to
//! the checkout). Tests that need it are skipped, with a
//! `skipped:` line, in a plain clone.

use std::path::{Path, PathBuf};

/// `rel` inside the shared material. When it is absent, prints a `skipped:`
/// line and returns the (missing) path beside the checkout, so the caller's
/// existence check skips the test.
pub(crate) fn shared(rel: &str) -> PathBuf {
    // This crate lives in `src/medh5` of the checkout.
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let beside = here.join("../shared").join(rel);
    if beside.exists() {
        return beside;
    }
    println!("skipped: ../shared/{rel} absent");
    beside
}

/// A file (or, with `""`, the folder) of the medh5 vectors.
pub(crate) fn medh5_vector(name: &str) -> PathBuf {
    shared(&format!("vectors/medh5/{name}"))
}
