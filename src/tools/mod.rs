//! Command-line tools over the reader and the writer: `h5 cat` (one hyperslab of a
//! dataset to `.npy`) and `h5 copy` (rebuild a file through the writer, optionally
//! with another filter pipeline).

pub mod cat;
pub mod copy;
