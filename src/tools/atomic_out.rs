//! Whole-file outputs of the tools written atomically: a temporary beside the
//! target (`.<name>.tmp-<pid>-<8 hex>`), fsync, rename over the target, so a
//! killed `h5 manifest -o`, `h5 cat -o` or `h5 recompress --report` leaves
//! the old file or the complete new one, and the next run removes what a
//! killed one left behind.

use std::io::Write;
use std::path::Path;

use purehdf::low_level::write::atomic::TempFile;
use purehdf::{Error, Result};

/// Write `bytes` to `path` atomically (old content or all of the new).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let (tmp, mut f) = TempFile::create(path)?;
    f.write_all(bytes)
        .map_err(|e| Error::io(tmp.path().display(), e))?;
    tmp.commit(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_leaves_nothing_else() {
        let d = std::env::temp_dir().join(format!("purehdf-atomic-out-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("m.json");
        std::fs::write(&p, b"old").unwrap();
        // a temporary a killed writer left (pid 2^31 - 16 does not exist)
        std::fs::write(d.join(".m.json.tmp-2147483632-0badf00d"), b"half").unwrap();
        write_atomic(&p, b"new content").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new content");
        let names: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["m.json"]);
        let _ = std::fs::remove_dir_all(&d);
    }
}
