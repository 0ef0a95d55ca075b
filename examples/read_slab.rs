//! Read parts of a file: a strided slab of a chunked dataset, one field of
//! a compound dataset and a variable-length string attribute, each
//! converted to the Rust type asked for. `cargo run --example read_slab`
//! (writes its sample to the temp directory first).
//!
//! The h5py version (6 lines of code; ours is 9 in `main`):
//!
//! ```python
//! import h5py
//! with h5py.File("read_slab.h5") as f:
//!     slab = f["ct"][1:7:2, ::3]        # rows 1, 3, 5; every third column
//!     x = f["points"]["x"]              # field x of every element
//!     units = f["ct"].attrs["units"]    # a variable-length string
//!     print(slab, x, units)
//! ```
use purehdf::{s, AttrValue, CompoundMember, DatasetSpec, Datatype, File, FileWriter, Filter};

fn main() -> purehdf::Result<()> {
    let file = File::open(write_sample()?)?;
    let ct = file.root()?.dataset("ct")?;
    let slab: Vec<i16> = ct.read_slice(&s![1..7; 2, ..; 3])?;
    let x: Vec<f64> = file.root()?.dataset("points")?.read_field("x")?;
    let units: String = ct.attribute("units")?.read_scalar()?;
    println!("slab {slab:?}, x {x:?}, units {units}");
    assert_eq!(slab, [100, 103, 106, 300, 303, 306, 500, 503, 506]);
    assert_eq!((x, units.as_str()), (vec![0.5, 1.5, 2.5], "HU"));
    Ok(())
}

/// `ct`: int16 8 x 9 (value 100 × row + column) in 4 x 3 deflate chunks
/// with a `units` attribute; `points`: three `{id: int32, x: float64}`
/// records. Returns the file's path.
fn write_sample() -> purehdf::Result<std::path::PathBuf> {
    let path = std::env::temp_dir().join("purehdf-example-read-slab.h5");
    let mut w = FileWriter::create(&path)?;
    let ct: Vec<i16> = (0..8 * 9).map(|i| i / 9 * 100 + i % 9).collect();
    let spec = DatasetSpec::of::<i16>(&[8, 9]).chunked(&[4, 3], vec![Filter::deflate(6)?]);
    let d = w.write_dataset(w.root(), "ct", spec, &ct)?;
    w.set_attr(d, "units", AttrValue::string("HU"))?;
    let member = |name: &str, offset, dtype| CompoundMember {
        name: name.into(),
        offset,
        dtype,
    };
    let point = Datatype::Compound {
        size: 12,
        members: vec![
            member("id", 0, Datatype::int(4, true)),
            member("x", 4, Datatype::float(8)),
        ],
    };
    let mut bytes = Vec::new();
    for (id, x) in [(1i32, 0.5f64), (2, 1.5), (3, 2.5)] {
        bytes.extend_from_slice(&id.to_le_bytes());
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    w.create_dataset(w.root(), "points", DatasetSpec::new(point, &[3]), bytes)?;
    w.commit()?;
    Ok(path)
}
