//! The caps the codecs hold themselves to. They know bytes and element sizes
//! only; the file layer (`hdf5fmt::limits`) re-uses these values so a chunk
//! the file layer accepts is one the codecs will decode.

/// Largest decoded buffer (a chunk, a Blosc2 frame with its padded B2ND
/// extent) a codec produces in one call (1 GiB).
pub const MAX_DECODED: u64 = 1 << 30;
/// Deepest nesting of a type description a codec walks (the n-bit filter's
/// compound-in-array-in-compound trees).
pub const MAX_DATATYPE_DEPTH: usize = 32;
