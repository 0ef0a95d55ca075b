//! purehdf-cli: the work behind the `h5` and `medh5` commands — `h5 dump`'s
//! canonical description and data hashes ([`dump`]) and the `h5` tools
//! ([`tools`]: copy, recompress, compare, cat, import). The binaries in
//! `src/bin` parse flags and call these; [`open`] routes a path or an
//! object URL to the right reader.

pub mod dump;
pub mod open;
pub mod tools;
