//! Explicit caps on every allocation and walk that file bytes can drive.
//! A file that needs more gets [`crate::Error::Limit`], never an unbounded allocation.
//! Sizes of data (elements × element size, fill regions, attribute payloads)
//! are held to one data budget per object ([`data_budget`], issue 16 item 2):
//! over it, [`crate::Error::OverBudget`] names the object and the size.

/// Largest single read from a byte source (1 GiB).
pub const MAX_READ: u64 = 1 << 30;
/// Largest decoded chunk or contiguous dataset held in memory at once (1 GiB):
/// the codecs' own cap ([`purehdf_filters::limits::MAX_DECODED`]).
pub const MAX_DECODED: u64 = purehdf_filters::limits::MAX_DECODED;
/// Largest object-header chunk (v1/v2 header blocks and continuations).
pub const MAX_HEADER_CHUNK: u64 = 64 << 20;
/// Most continuation blocks followed for one object header.
pub const MAX_HEADER_CHUNKS: usize = 65_536;
/// Most messages in one object header.
pub const MAX_MESSAGES: usize = 1 << 20;
/// Deepest B-tree / heap indirect-block nesting.
pub const MAX_TREE_DEPTH: usize = 64;
/// Most nodes visited in one B-tree or heap walk.
pub const MAX_TREE_NODES: usize = 10_000_000;
/// Deepest group nesting in a tree walk.
pub const MAX_GROUP_DEPTH: usize = 1024;
/// Most soft/external link hops in one resolution.
pub const MAX_LINK_HOPS: usize = 32;
/// Deepest datatype nesting (compound in array in vlen ...): the codecs' own
/// cap ([`purehdf_filters::limits::MAX_DATATYPE_DEPTH`]).
pub const MAX_DATATYPE_DEPTH: usize = purehdf_filters::limits::MAX_DATATYPE_DEPTH;
/// Highest dataspace rank (HDF5's H5S_MAX_RANK).
pub const MAX_RANK: usize = 32;
/// Most members in one compound or enum datatype.
pub const MAX_MEMBERS: usize = 65_536;
/// Most elements in one attribute or vlen sequence materialised at once.
pub const MAX_ELEMENTS: u64 = 1 << 28;
/// Largest metadata cache image block read and kept in memory (256 MiB).
pub const MAX_CACHE_IMAGE: u64 = 256 << 20;

/// Budget floor for the bytes one object may make a reader produce (2 GiB):
/// see [`data_budget`].
pub const DATA_BUDGET_FLOOR: u64 = 2 << 30;
/// Budget per byte of the file: an object may describe up to this many
/// logical bytes per stored byte of its file (fill-value regions included).
pub const DATA_BUDGET_PER_FILE_BYTE: u64 = 1024;

/// `0` = the default rule; `u64::MAX` = unlimited; else a fixed budget.
static DATA_BUDGET: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static DATA_BUDGET_ENV: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// Set the data budget for this process: `Some(bytes)` a fixed budget
/// (`u64::MAX` = unlimited), `None` back to the default rule. Overrides the
/// `PUREHDF_DATA_BUDGET` environment variable.
pub fn set_data_budget(bytes: Option<u64>) {
    DATA_BUDGET.store(
        bytes.map_or(0, |b| b.max(1)),
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// Parse a budget: bytes with an optional K/M/G/T suffix (powers of 1024),
/// or `unlimited`.
pub fn parse_budget(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("unlimited") {
        return Some(u64::MAX);
    }
    let (num, shift) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 10),
        (i, 'm' | 'M') => (&s[..i], 20),
        (i, 'g' | 'G') => (&s[..i], 30),
        (i, 't' | 'T') => (&s[..i], 40),
        _ => (s, 0),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(1u64 << shift)
}

/// The most logical bytes one object (a dataset's elements × element size, a
/// fill region, an attribute payload) of a file of `file_len` bytes may make a
/// reader, verifier, copier or indexer produce or hash: by default
/// `max(DATA_BUDGET_FLOOR, DATA_BUDGET_PER_FILE_BYTE × file_len)`, so a small
/// damaged file cannot ask for terabytes or hours, while a real file's sparse
/// or fill-value datasets stay readable. `PUREHDF_DATA_BUDGET` (e.g. `64G`,
/// `unlimited`) or [`set_data_budget`] fix it instead.
pub fn data_budget(file_len: u64) -> u64 {
    let set = DATA_BUDGET.load(std::sync::atomic::Ordering::Relaxed);
    let fixed = if set != 0 {
        set
    } else {
        *DATA_BUDGET_ENV.get_or_init(|| {
            std::env::var("PUREHDF_DATA_BUDGET")
                .ok()
                .and_then(|v| parse_budget(&v))
                .unwrap_or(0)
        })
    };
    if fixed != 0 {
        return fixed;
    }
    DATA_BUDGET_FLOOR.max(file_len.saturating_mul(DATA_BUDGET_PER_FILE_BYTE))
}

/// `Err(Error::OverBudget)` naming `object` when `size` bytes exceed the data
/// budget of a file of `file_len` bytes.
pub fn check_budget(
    object: &str,
    what: &'static str,
    size: u64,
    file_len: u64,
) -> crate::Result<()> {
    let budget = data_budget(file_len);
    if size > budget {
        return Err(crate::Error::OverBudget {
            object: object.to_string(),
            what,
            size,
            budget,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_parse_and_scale_with_the_file() {
        assert_eq!(parse_budget("64G"), Some(64 << 30));
        assert_eq!(parse_budget("10"), Some(10));
        assert_eq!(parse_budget("unlimited"), Some(u64::MAX));
        assert_eq!(parse_budget("x"), None);
        assert_eq!(parse_budget("99999999999T"), None);
        // default rule (the environment variable is not set in tests)
        if std::env::var_os("PUREHDF_DATA_BUDGET").is_none() {
            assert_eq!(data_budget(1000), DATA_BUDGET_FLOOR);
            assert_eq!(data_budget(8 << 30), 8 << 40);
            let e = check_budget("/images/CT", "logical size", 3 << 30, 1000).unwrap_err();
            assert!(e.to_string().contains("/images/CT"), "{e}");
            assert!(check_budget("/x", "logical size", 1 << 30, 1000).is_ok());
        }
    }
}
