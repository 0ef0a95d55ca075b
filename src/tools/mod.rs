//! Command-line tools over the reader and the writer: `h5 cat` (one hyperslab of a
//! dataset to `.npy`) and `h5 copy` (rebuild a file through the writer, optionally
//! with another filter pipeline) and `h5 import` (one `.npy` into a chunked dataset);
//! `h5 recompress` (re-encode files or trees and swap them in safely) and
//! `h5 compare` (exact, SSIM, PSNR or max-abs comparison of two files);
//! `h5 verify` (every checksum checked and every chunk and record decoded);
//! `h5 tail` (follow a dataset a SWMR writer appends to).

pub mod atomic_out;
pub mod cat;
pub mod compare;
pub mod copy;
pub mod edit;
pub mod import;
pub mod manifest;
pub mod manifest_parquet;
pub mod manifest_zarr;
pub mod parquet;
pub mod recompress;
pub mod tail;
pub mod vds;
pub mod verify;
