//! Command-line tools over the reader and the writer: `h5 cat` (one hyperslab of a
//! dataset to `.npy`) and `h5 copy` (rebuild a file through the writer, optionally
//! with another filter pipeline) and `h5 import` (one `.npy` into a chunked dataset).

pub mod cat;
pub mod copy;
pub mod import;
