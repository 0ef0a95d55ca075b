//! `h5 copy --filter keep` keeps every dataset's filter pipeline message byte
//! for byte (issue 47 item 2), over every corpus file h5py reads whole: the
//! message body (version, ids, flags, names, every `cd_values` slot) of each
//! filtered dataset in the copy equals the source's.

mod common;

use std::collections::BTreeMap;

use purehdf::low_level::copy::{copy_file, CopyOptions};
use purehdf::{File, Object};

/// Filter pipeline message type (HDF5 File Format Specification IV.A.2.l).
const FILTER_PIPELINE: u16 = 0x000B;

/// Each filtered dataset's pipeline message body, by path (`None`: the
/// message is shared and stored elsewhere).
fn pipelines(path: &std::path::Path) -> purehdf::Result<BTreeMap<String, Option<Vec<u8>>>> {
    let f = File::open(path)?;
    let mut out = BTreeMap::new();
    f.root()?.visit(|_, obj| {
        if let Object::Dataset(d) = obj {
            if let Some(m) = d.header().first(FILTER_PIPELINE) {
                let body = (!m.is_shared()).then(|| m.data.clone());
                out.insert(d.path().to_string(), body);
            }
        }
        Ok(())
    })?;
    Ok(out)
}

#[test]
fn keep_copies_carry_filter_messages_byte_for_byte() {
    let Some(dir) = common::corpus_dir() else {
        println!("skipped: keep_copies_carry_filter_messages_byte_for_byte (no ../shared/corpus)");
        return;
    };
    let tmp = std::env::temp_dir().join(format!("purehdf-filterbytes-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let (mut files, mut datasets, mut shared, mut refused) = (0, 0, 0, 0);
    let mut differ = Vec::new();
    for (i, r) in common::read_manifest(&dir).iter().enumerate() {
        let filters = r.get("filters").map(String::as_str).unwrap_or("");
        if r.get("h5py_reads_all").map(String::as_str) != Some("yes") || filters.is_empty() {
            continue;
        }
        let rel = r.get("path").cloned().unwrap_or_default();
        let src = dir.join(&rel);
        let Ok(before) = pipelines(&src) else {
            continue;
        };
        if before.is_empty() {
            continue;
        }
        let dst = tmp.join(format!("{i}.h5"));
        if let Err(e) = copy_file(&src, &dst, &CopyOptions::default()) {
            // Files the copier refuses are counted, not compared: the copy
            // tests say which and why.
            println!("  not copied {rel}: {e}");
            refused += 1;
            continue;
        }
        let after = pipelines(&dst).unwrap_or_else(|e| panic!("{rel}: copy unreadable: {e}"));
        files += 1;
        for (path, body) in &before {
            let Some(body) = body else {
                shared += 1;
                continue;
            };
            datasets += 1;
            match after.get(path) {
                Some(Some(b)) if b == body => {}
                got => differ.push(format!("{rel} {path}: {body:02x?} became {got:02x?}")),
            }
        }
        std::fs::remove_file(&dst).ok();
    }
    std::fs::remove_dir_all(&tmp).ok();
    for d in differ.iter().take(20) {
        println!("  DIFFER {d}");
    }
    println!(
        "filter bytes: {files} corpus files copied with keep, {datasets} filtered datasets, \
         {} differ, {shared} shared messages not compared, {refused} files not copied",
        differ.len()
    );
    assert!(
        differ.is_empty(),
        "{} pipeline messages changed",
        differ.len()
    );
    assert!(
        datasets >= 50,
        "too few filtered datasets compared: {datasets}"
    );
}
