//! By-hand byte check of the copier's output (and so of the writer's
//! encoders): with `PUREHDF_COPY_CORPUS=<dir of .h5 files>` and
//! `PUREHDF_COPY_BYTES_DIR=<out dir>` set, copies every HDF5 file under the
//! corpus (up to 2 MB each) into the out dir, named by its path, for a `cmp`
//! of two builds' outputs. Without them it prints `skipped`.
use super::*;

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "h5")
            && std::fs::metadata(&p).is_ok_and(|m| m.len() <= 2 << 20)
        {
            out.push(p);
        }
    }
}

#[test]
fn copies_of_the_corpus() {
    let (Some(corpus), Some(out)) = (
        std::env::var_os("PUREHDF_COPY_CORPUS"),
        std::env::var_os("PUREHDF_COPY_BYTES_DIR"),
    ) else {
        println!("skipped: PUREHDF_COPY_CORPUS and PUREHDF_COPY_BYTES_DIR not set");
        return;
    };
    let corpus = Path::new(&corpus);
    let mut files = Vec::new();
    walk(corpus, &mut files);
    let (mut copied, mut failed) = (0, 0);
    for f in &files {
        let rel = f.strip_prefix(corpus).unwrap_or(f);
        let name = rel.to_string_lossy().replace('/', "__");
        let dst = Path::new(&out).join(name);
        match copy_file(f, &dst, &CopyOptions::default()) {
            Ok(_) => copied += 1,
            Err(_) => failed += 1,
        }
    }
    println!("copied {copied}, failed {failed} of {}", files.len());
    assert!(copied > 0);
}
