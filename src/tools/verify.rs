//! `h5 verify FILE [--json]`: a full integrity scan (`docs/neighbours.md` row
//! I4). Every object header, link and attribute is parsed (so their stored
//! checksums are checked), every stored chunk of every chunked dataset is
//! read with its Fletcher-32 checked and then decoded through its pipeline,
//! contiguous and compact data is read, and every record of a record store
//! (`purehdf::low_level::records`) is checked against its CRC-32 and decoded.
//! Each failure names the object, the chunk coordinates and the file offset.
//! Exit codes: 0 all good, 1 some check failed, 2 the file cannot be opened
//! or bad usage.

use purehdf::low_level::file::Object;
use purehdf::low_level::records::RecordStore;
use purehdf::{Dataset, File, Group};

const USAGE: &str = "usage: h5 verify FILE [--json]";

/// What the scan found.
#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
    /// Datasets whose data was read.
    pub datasets: u64,
    /// Stored chunks checked and decoded.
    pub chunks: u64,
    /// Records of record stores checked.
    pub records: u64,
    /// Virtual datasets (their sources are other files; not read).
    pub virtual_datasets: u64,
    /// One line per failure: object, where, and why.
    pub failures: Vec<String>,
}

/// Scan the file at `path` (see the module doc); `Err` when it cannot be opened.
pub fn verify(path: &str) -> purehdf::Result<Report> {
    let file = File::open(path)?;
    let root = file.root()?;
    let mut r = Report::default();
    group(&root, "/", &mut r);
    let walked = root.visit(|p, obj| {
        let p = format!("/{p}");
        attributes(obj, &p, &mut r);
        match obj {
            Object::Group(g) => group(g, &p, &mut r),
            Object::Dataset(d) => dataset(d, &p, &mut r),
            Object::NamedDatatype(_) => {}
        }
        Ok(())
    });
    if let Err(e) = walked {
        r.failures.push(format!("walking the file: {e}"));
    }
    if let Err(e) = file.check_unchanged() {
        r.failures.push(e.to_string());
    }
    Ok(r)
}

fn attributes(obj: &Object, path: &str, r: &mut Report) {
    let attrs = match obj {
        Object::Group(g) => g.attributes(),
        Object::Dataset(d) => d.attributes(),
        Object::NamedDatatype(_) => return,
    };
    match attrs {
        Ok(list) => {
            for a in list {
                if let Err(e) = a.value() {
                    r.failures
                        .push(format!("{path}: attribute {}: {e}", a.name));
                }
            }
        }
        Err(e) => r.failures.push(format!("{path}: attributes: {e}")),
    }
}

fn group(g: &Group, path: &str, r: &mut Report) {
    if !RecordStore::is_store(g) {
        return;
    }
    match RecordStore::from_group(g) {
        Ok(s) => match s.verify_all() {
            Ok(()) => r.records += s.len() as u64,
            Err(e) => r.failures.push(format!("{path}: record store: {e}")),
        },
        Err(e) => r.failures.push(format!("{path}: record store: {e}")),
    }
}

fn dataset(d: &Dataset, path: &str, r: &mut Report) {
    if d.layout_kind() == "virtual" {
        r.virtual_datasets += 1;
        return;
    }
    r.datasets += 1;
    if d.chunk_dims().is_none() {
        if let Err(e) = d.read_all_raw() {
            r.failures.push(format!("{path}: {e}"));
        }
        return;
    }
    let (list, reader) = match (d.chunks(), d.chunk_reader()) {
        (Ok(l), Ok(c)) => (l, c),
        (Err(e), _) | (_, Err(e)) => {
            r.failures.push(format!("{path}: chunk index: {e}"));
            return;
        }
    };
    for info in list {
        r.chunks += 1;
        let checked = reader.raw_chunk(&info.coords, true).and_then(|c| match c {
            Some(c) => reader.decode(&c).map(|_| ()),
            None => Ok(()),
        });
        if let Err(e) = checked {
            r.failures.push(format!(
                "{path}: chunk {:?} at offset {:#x} ({} bytes): {e}",
                info.coords, info.address, info.size
            ));
        }
    }
}

/// `h5 verify` (arguments after the command name); returns the exit code.
pub fn run(args: &[String]) -> u8 {
    let mut json = false;
    let mut files = Vec::new();
    for a in args {
        match a.as_str() {
            "--json" => json = true,
            s if s.starts_with('-') => {
                eprintln!("{USAGE}");
                return 2;
            }
            s => files.push(s.to_string()),
        }
    }
    let [path] = files.as_slice() else {
        eprintln!("{USAGE}");
        return 2;
    };
    let report = match verify(path) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("h5 verify: cannot open {path}: {e}");
            return 2;
        }
    };
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        for f in &report.failures {
            println!("FAIL {path}: {f}");
        }
        println!(
            "{path}: {} datasets, {} chunks, {} records checked; {} virtual not read; {} failure(s)",
            report.datasets,
            report.chunks,
            report.records,
            report.virtual_datasets,
            report.failures.len()
        );
    }
    u8::from(!report.failures.is_empty())
}
