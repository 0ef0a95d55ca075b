//! Open arbitrary bytes as an HDF5 file, walk every object reachable from the
//! root (each address once, bounded depth), read every attribute and every
//! dataset of at most 16 MiB, and resolve vlen elements of attributes. Any
//! outcome but a panic, hang or runaway allocation is fine.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::selection::Selection;

fn walk(file: &File, obj: Object, seen: &mut HashSet<u64>, depth: usize) {
    if depth > 64 || !seen.insert(obj.address()) || seen.len() > 10_000 {
        return;
    }
    if let Ok(attrs) = obj.attributes() {
        for a in attrs {
            if a.dtype.has_vlen_or_ref() {
                let size = a.dtype.size() as usize;
                for el in a.data.chunks(size.max(1)).take(64) {
                    let _ = file.vlen_bytes(el);
                }
            }
        }
    }
    match obj {
        Object::Group(g) => {
            if let Ok(links) = g.links() {
                for (name, _) in links.into_iter().take(10_000) {
                    if let Ok(child) = g.open(&name) {
                        walk(file, child, seen, depth + 1);
                    }
                }
            }
        }
        Object::Dataset(d) => {
            let bytes = d.num_elements().saturating_mul(d.dtype().size());
            if bytes <= 16 << 20 {
                let mut buf = vec![0u8; bytes as usize];
                let _ = d.read_raw(&Selection::All, &mut buf);
            }
        }
        Object::NamedDatatype(_) => {}
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(file) = File::from_bytes(data.to_vec()) {
        if let Ok(root) = file.root() {
            let mut seen = HashSet::new();
            walk(&file, Object::Group(root), &mut seen, 0);
        }
    }
});
