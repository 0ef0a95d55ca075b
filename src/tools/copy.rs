//! `h5 copy SRC DST`: the command-line layer over the one object-graph copier
//! ([`purehdf::low_level::copy`]): flags, messages and the exit code.

use purehdf::low_level::copy::{copy_with_threads, parse_filter, CopyOptions};

/// `h5 copy SRC DST [--filter F] [--threads N]`. Returns the exit code.
pub fn run(args: &[String]) -> u8 {
    const USAGE: &str = "usage: h5 copy SRC DST [--filter keep|none|deflate:4|shuffle+deflate:4|\
blosc2:zstd:3:shuffle|blosc2:lz4:1:bitshuffle|zstd:3|lz4] [--threads N]";
    let mut pos = Vec::new();
    let mut opts = CopyOptions::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--filter" => match it.next().map(|f| parse_filter(f)) {
                Some(Ok(f)) => opts.filter = f,
                Some(Err(e)) => {
                    eprintln!("h5 copy: {e}");
                    return 2;
                }
                None => {
                    eprintln!("{USAGE}");
                    return 2;
                }
            },
            "--threads" => match it.next().and_then(|n| n.parse::<usize>().ok()) {
                Some(n) if n >= 1 => opts.threads = n,
                _ => {
                    eprintln!("{USAGE}");
                    return 2;
                }
            },
            _ => pos.push(a.clone()),
        }
    }
    let [src, dst] = pos.as_slice() else {
        eprintln!("{USAGE}");
        return 2;
    };
    let copied = crate::open::write_output(dst, |out| {
        copy_with_threads(src, &out.to_string_lossy(), &opts)
    });
    match copied {
        Err(e) => {
            eprintln!("h5 copy: {e}");
            2
        }
        Ok(r) => {
            for s in &r.skipped {
                eprintln!("h5 copy: skipped {s}");
            }
            for n in &r.notes {
                eprintln!("h5 copy: note: {n}");
            }
            if r.virtual_datasets > 0 {
                eprintln!(
                    "h5 copy: {} virtual dataset(s) written with their mappings (sources not copied)",
                    r.virtual_datasets
                );
            }
            println!(
                "copied {} group(s), {} dataset(s), {} attribute(s), {} soft link(s), \
{} external link(s), {} hard link(s), {} raw chunk(s), {} re-encoded chunk(s); {} skipped",
                r.groups,
                r.datasets,
                r.attributes,
                r.soft_links,
                r.external_links,
                r.hard_links,
                r.raw_chunks,
                r.encoded_chunks,
                r.skipped.len()
            );
            u8::from(!r.skipped.is_empty())
        }
    }
}
