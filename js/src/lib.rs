//! purehdf's WebAssembly module for JavaScript (the npm package `purehdf`):
//! the file, writer and medh5 handles the JavaScript layer (`index.js`)
//! wraps in h5wasm's shapes. Lazy sources (URLs, blobs) are read through
//! the library's host-driven range source: each call is one attempt that
//! either finishes or names the byte ranges the host must fetch first.

mod errors;
mod file;
mod host;
mod medh5;
mod selfcheck;
mod values;
mod write;

pub use file::WasmFile;
pub use selfcheck::self_check;
pub use write::WasmWriter;
