//! Write a chunked, Blosc2-compressed volume slab by slab (memory holds one
//! slab, never the whole volume), with an attribute; commit it atomically
//! and read it back. `cargo run --example write_slabs [OUT.h5]`; check it
//! with `python -c "import h5py, hdf5plugin; print(h5py.File('OUT.h5')['ct'][::16, 0, 0])"`.
//!
//! The h5py version (8 lines of code). Ours writes the same in the first 11
//! lines of `main` (to `w.commit()`); the other 8 read the file back and check it:
//!
//! ```python
//! import h5py, hdf5plugin, numpy as np
//! with h5py.File("slabs.h5", "w") as f:
//!     ds = f.create_dataset("ct", shape=(64, 128, 128), dtype="i2", chunks=(8, 128, 128),
//!                           **hdf5plugin.Blosc2(cname="zstd", clevel=5,
//!                                               filters=hdf5plugin.Blosc2.SHUFFLE))
//!     for z in range(0, 64, 16):
//!         ds[z:z + 16] = np.full((16, 128, 128), z, dtype="i2")
//!     ds.attrs["spacing"] = [2.5, 0.75, 0.75]
//! ```
use purehdf::{s, AttrValue, Blosc2Codec, Blosc2Shuffle, DatasetSpec, File, FileWriter, Filter};

fn main() -> purehdf::Result<()> {
    let default = std::env::temp_dir().join("purehdf-example-slabs.h5");
    let path = std::env::args().nth(1).map_or(default, Into::into);
    let mut w = FileWriter::create(&path)?;
    let blosc2 = Filter::blosc2(Blosc2Codec::Zstd, 5, Blosc2Shuffle::Byte)?;
    let spec = DatasetSpec::of::<i16>(&[64, 128, 128]).chunked(&[8, 128, 128], vec![blosc2]);
    let ct = w.create_chunked(w.root(), "ct", spec)?;
    for z in (0..64).step_by(16) {
        w.write_slab(ct, z, &vec![z as i16; 16 * 128 * 128])?; // 16 planes: 2 rows of chunks
    }
    w.set_attr(ct, "spacing", AttrValue::array(&[2.5f64, 0.75, 0.75]))?;
    w.commit()?; // temp file, fsync, rename
    let ds = File::open(&path)?.root()?.dataset("ct")?;
    let firsts: Vec<i16> = ds.read_slice(&s![..; 16, 0, 0])?; // ct[::16, 0, 0]
    let spacing: Vec<f64> = ds.attribute("spacing")?.read()?;
    let pipeline = ds.filter_pipeline();
    println!("{:?} {}: {firsts:?} {spacing:?}", ds.shape(), pipeline[0]);
    assert_eq!(firsts, [0, 16, 32, 48]);
    assert_eq!(spacing, [2.5, 0.75, 0.75]);
    Ok(())
}
