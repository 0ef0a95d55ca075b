//! Virtual datasets on the command line: the mapping lines `h5 ls` prints,
//! the `--fill-missing` / `--vds-prefix` options every `h5` command takes,
//! and the report of missing sources read as the fill value (a warning on
//! stderr and a JSON list).

use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::dataspace_selection::{DataspaceSelection, HyperDim};
use purehdf::low_level::virtual_layout::{self, locate};
use serde_json::{json, Value};

/// A selection as text: `all`, `none`, `[a:b, c:d]` for a single block,
/// `start:stride*count:block` per dimension for a regular hyperslab (`U` =
/// unlimited), blocks joined by ` + ` (the first 8) for an irregular one,
/// `N points` for points.
pub fn selection_text(sel: &DataspaceSelection) -> String {
    match sel {
        DataspaceSelection::None => "none".into(),
        DataspaceSelection::All => "all".into(),
        DataspaceSelection::Points { rank, coords } => {
            format!("{} points", coords.len() / (*rank).max(1))
        }
        DataspaceSelection::Irregular { rank, blocks } => {
            let r = (*rank).max(1);
            let n = blocks.len() / (2 * r);
            let mut parts: Vec<String> = blocks
                .chunks_exact(2 * r)
                .take(8)
                .map(|b| {
                    let (start, end) = b.split_at(r);
                    let dims: Vec<String> = start
                        .iter()
                        .zip(end)
                        .map(|(s, e)| format!("{s}:{}", e.saturating_add(1)))
                        .collect();
                    format!("[{}]", dims.join(", "))
                })
                .collect();
            if n > 8 {
                parts.push(format!("... ({n} blocks)"));
            }
            if parts.is_empty() {
                "none".into()
            } else {
                parts.join(" + ")
            }
        }
        DataspaceSelection::Regular(dims) => {
            let parts: Vec<String> = dims.iter().map(dim_text).collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

fn dim_text(d: &HyperDim) -> String {
    let u = |v: Option<u64>| v.map_or("U".to_string(), |x| x.to_string());
    match (d.count, d.block) {
        (Some(1), Some(b)) => format!("{}:{}", d.start, d.start.saturating_add(b)),
        (Some(1), None) => format!("{}:U", d.start),
        (c, b) => format!("{}:{}*{}:{}", d.start, d.stride, u(c), u(b)),
    }
}

/// One line per mapping of the virtual dataset `d` (`path\tvirtual mapping
/// i: VSEL <- FILE:DSET SSEL`), or one line with the error.
pub fn mapping_lines(d: &Dataset) -> Vec<String> {
    match virtual_layout::mappings(d) {
        Err(e) => vec![format!("{}\tvirtual mappings unreadable: {e}", d.path())],
        Ok(maps) => maps
            .iter()
            .enumerate()
            .map(|(i, m)| {
                format!(
                    "{}\tvirtual mapping {i}: {} <- {}:{} {}",
                    d.path(),
                    selection_text(&m.virtual_select),
                    m.source_file,
                    m.source_dataset,
                    selection_text(&m.source_select)
                )
            })
            .collect(),
    }
}

/// Take `--fill-missing` and `--vds-prefix DIR` (anywhere on the line) out of
/// `args` and make them the process-wide virtual-dataset options.
pub fn take_flags(args: Vec<String>) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(args.len());
    let mut opts = locate::default_options();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        if a == "--fill-missing" {
            opts.fill_missing = true;
        } else if a == "--vds-prefix" {
            opts.prefix = Some(it.next().ok_or("--vds-prefix needs a folder")?);
        } else if let Some(v) = a.strip_prefix("--vds-prefix=") {
            opts.prefix = Some(v.to_string());
        } else {
            out.push(a);
        }
    }
    locate::set_default_options(opts);
    Ok(out)
}

/// The missing sources read as the fill value so far, as JSON objects.
pub fn filled_json() -> Vec<Value> {
    locate::filled_sources()
        .into_iter()
        .map(|f| {
            json!({"dataset": f.dataset, "source_file": f.source_file,
                   "source_dataset": f.source_dataset, "reason": f.reason})
        })
        .collect()
}

/// Print one warning per missing source read as the fill value; the count.
pub fn warn_filled(tool: &str) -> usize {
    let filled = locate::filled_sources();
    for f in &filled {
        eprintln!(
            "{tool}: warning: {}: missing source {}:{} read as the fill value ({})",
            f.dataset, f.source_file, f.source_dataset, f.reason
        );
    }
    filled.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_as_text() {
        let d = |start, stride, count, block| HyperDim {
            start,
            stride,
            count,
            block,
        };
        let s =
            DataspaceSelection::Regular(vec![d(0, 1, Some(1), Some(4)), d(2, 1, Some(1), Some(6))]);
        assert_eq!(selection_text(&s), "[0:4, 2:8]");
        let s = DataspaceSelection::Regular(vec![d(0, 2, None, Some(2))]);
        assert_eq!(selection_text(&s), "[0:2*U:2]");
        assert_eq!(selection_text(&DataspaceSelection::All), "all");
        let s = DataspaceSelection::Irregular {
            rank: 2,
            blocks: vec![0, 0, 0, 5, 2, 0, 2, 5],
        };
        assert_eq!(selection_text(&s), "[0:1, 0:6] + [2:3, 0:6]");
    }
}
