//! `h5 cat`: slices of corpus datasets equal the same slice cut from our full read,
//! and the written `.npy` parses back with the right dtype and shape.

use std::path::{Path, PathBuf};

use purehdf::low_level::file::{File, Object};
use purehdf_cli::tools::cat::{npy_target, parse_slice, read_slice, swap_bytes};

fn corpus() -> Option<PathBuf> {
    let rel = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if rel.join("MANIFEST.tsv").is_file() {
        return Some(rel);
    }
    println!("skipped: ../shared/corpus absent");
    None
}

/// Cut `start..start+count` out of a C-order array of `dims` with `esize`-byte elements.
fn cut(full: &[u8], dims: &[u64], start: &[u64], count: &[u64], esize: usize) -> Vec<u8> {
    let n: u64 = count.iter().product();
    let mut out = Vec::new();
    for k in 0..n {
        let mut rem = k;
        let mut idx = vec![0u64; dims.len()];
        for d in (0..dims.len()).rev() {
            idx[d] = start[d] + rem % count[d];
            rem /= count[d];
        }
        let lin = idx.iter().zip(dims).fold(0u64, |a, (i, d)| a * d + i) as usize;
        out.extend_from_slice(&full[lin * esize..(lin + 1) * esize]);
    }
    out
}

#[test]
fn cat_slices_match_full_reads() {
    let Some(root) = corpus() else { return };
    let text = std::fs::read_to_string(root.join("MANIFEST.tsv")).unwrap();
    let mut checked = 0;
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.get(19) != Some(&"yes") || checked >= 200 {
            continue;
        }
        let Ok(file) = File::open(root.join(f[0])) else {
            continue;
        };
        let Ok(g) = file.root() else { continue };
        let Ok(links) = g.links() else { continue };
        for (name, _) in links {
            let Ok(Object::Dataset(ds)) = file.object(&format!("/{name}")) else {
                continue;
            };
            let Ok((_, swap)) = npy_target(ds.dtype()) else {
                continue;
            };
            let dims = ds.shape().to_vec();
            if dims.is_empty() || dims.iter().any(|&d| d < 2) {
                continue;
            }
            let Ok(mut full) = ds.read_all_raw() else {
                continue;
            };
            swap_bytes(&mut full, swap);
            // first half of dim 0, index 1 of dim 1 (if any), rest whole
            let h = dims[0] / 2;
            let spec = if dims.len() > 1 {
                format!("{}:{},1", h / 2, h + 1)
            } else {
                format!("1:{h}")
            };
            let sl = parse_slice(Some(&spec), &dims).unwrap();
            let (descr, shape, got) = read_slice(&ds, Some(&spec)).unwrap();
            let want = cut(
                &full,
                &dims,
                &sl.start,
                &sl.count,
                ds.dtype().size() as usize,
            );
            assert_eq!(got, want, "{} {name} [{spec}]", f[0]);
            assert_eq!(shape, sl.out_shape);
            assert!(descr.starts_with('<') || descr.starts_with('|'), "{descr}");
            let mut npy = Vec::new();
            purehdf_medh5::npy::write(&mut npy, &descr, &shape, &got).unwrap();
            let (hdr, data) = purehdf_medh5::npy::read(&npy).unwrap();
            assert_eq!((hdr.shape, data), (shape, &got[..]));
            checked += 1;
        }
    }
    println!("h5 cat: {checked} slices equal our full read");
    assert!(checked >= 50, "only {checked} datasets sliced");
}
