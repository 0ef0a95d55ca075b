//! The library on wasm32-unknown-unknown, run for real: builds
//! `tests/wasm_node` (a cdylib over purehdf with `default-features = false`)
//! for the wasm32 target and runs `tests/wasm_node/run.mjs` under Node,
//! which instantiates it with no imports and calls every check (open from
//! bytes, typed Blosc2/deflate reads, raw chunk batch, filtered write and
//! read back, medh5 create + verify in memory). A trap or a failed check
//! fails the test. Prints `skipped:` when the wasm32 target or node is absent.

use std::path::{Path, PathBuf};
use std::process::Command;

fn has_wasm_target() -> bool {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = Command::new(rustc).args(["--print", "sysroot"]).output() else {
        return false;
    };
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    sysroot
        .join("lib/rustlib/wasm32-unknown-unknown/lib")
        .is_dir()
}

fn node() -> Option<String> {
    let ok = Command::new("node")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let v = String::from_utf8_lossy(&ok.stdout).trim().to_string();
    Some(v)
}

#[test]
fn wasm32_module_runs_under_node() {
    if !has_wasm_target() {
        println!(
            "skipped: wasm32 (the wasm32-unknown-unknown target is not installed: rustup target add wasm32-unknown-unknown)"
        );
        return;
    }
    let Some(version) = node() else {
        println!("skipped: wasm32 (node is not installed)");
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crate_dir = root.join("tests/wasm_node");
    let target_dir = root.join("target/wasm");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(&crate_dir)
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-unknown-unknown",
            "--target-dir",
        ])
        .arg(&target_dir)
        // The outer test build's flags (e.g. coverage or crt-static) are not for wasm.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .expect("run cargo");
    assert!(
        status.success(),
        "building tests/wasm_node for wasm32 failed"
    );
    let wasm = target_dir.join("wasm32-unknown-unknown/release/purehdf_wasm_test.wasm");
    let out = Command::new("node")
        .arg(crate_dir.join("run.mjs"))
        .arg(&wasm)
        .output()
        .expect("run node");
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "wasm checks failed under node {version}"
    );
    assert!(text.contains("4/4 checks passed"), "{text}");
}
