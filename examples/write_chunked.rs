//! Write a chunked, filtered file atomically (a whole dataset at once and one
//! filled slab by slab), with attributes, and read it back.
//! `cargo run --example write_chunked [OUT.h5]`; check it with
//! `python -c "import h5py, hdf5plugin; print(h5py.File('OUT.h5')['ct'][:2])"`.
use purehdf::{AttrValue, Blosc2Codec, Blosc2Shuffle, DatasetSpec, File, FileWriter, Filter};

fn main() -> purehdf::Result<()> {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| tmp("purehdf-example.h5"));
    let ct: Vec<i16> = (0..32 * 64 * 64)
        .map(|i| (i % 2000 - 1000) as i16)
        .collect();
    let mut w = FileWriter::create(&out)?;
    let blosc2 = Filter::blosc2(Blosc2Codec::Zstd, 5, Blosc2Shuffle::Byte);
    let spec = DatasetSpec::of::<i16>(&[32, 64, 64]).chunked(&[8, 64, 64], vec![blosc2]);
    let d = w.write_dataset(w.root(), "ct", spec, &ct)?;
    w.set_attr(d, "spacing", AttrValue::array(&[2.5f64, 0.75, 0.75]))?;
    w.set_attr(d, "modality", AttrValue::string("CT"))?;
    let spec = DatasetSpec::of::<f32>(&[1000, 16])
        .chunked(&[100, 16], vec![Filter::shuffle(), Filter::deflate(6)]);
    let rows = w.create_chunked(w.root(), "features", spec)?;
    for start in (0..1000).step_by(200) {
        w.write_slab(rows, start, &vec![start as f32; 200 * 16])?; // one slab in memory at a time
    }
    w.commit()?; // temp file, fsync, rename
    let file = File::open(&out)?;
    let back = file.root()?.dataset("ct")?;
    assert_eq!(back.read::<i16>()?, ct);
    assert_eq!(back.attribute("modality")?.read_string_in(&file)?, "CT");
    assert_eq!(
        file.root()?
            .dataset("features")?
            .read_slice::<f32>(&purehdf::s![999, 0])?,
        vec![800.0]
    );
    println!(
        "wrote {out}: ct {:?}, spacing {:?}",
        back.shape(),
        back.attribute("spacing")?.read_vec::<f64>()?
    );
    Ok(())
}

fn tmp(name: &str) -> String {
    std::env::temp_dir().join(name).display().to_string()
}
