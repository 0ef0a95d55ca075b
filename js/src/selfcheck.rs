//! The library's own checks on wasm32, run by the Node tests over the
//! module the package ships (one wasm build for the package and these):
//! the tasks a browser or edge user does, in memory, through the Rust API
//! (typed Blosc2/deflate reads of `test/fixture/fixture.h5` written by
//! h5py + hdf5plugin, a raw chunk batch, a filtered write read back, a
//! medh5 sample created, verified and read). Each returns a summary or the
//! failure; a panic aborts, which traps in the host.

use purehdf::{
    s, AttrValue, Blosc2Codec, Blosc2Shuffle, DatasetSpec, Error, File, FileWriter, Filter,
};
use purehdf_medh5::create::{demo_sample, plan_at};
use purehdf_medh5::profiles::Profile;
use purehdf_medh5::sample::SampleFile;
use purehdf_medh5::verify::verify_file;
use purehdf_medh5::writer::write_plan_bytes;
use wasm_bindgen::prelude::*;

/// Run the check `name` (`typed_reads`, `raw_chunks`, `write_read`,
/// `medh5`; the first two read `fixture`): its summary, or an `Error`
/// naming what differed. For the package's tests, not part of its API.
#[wasm_bindgen(js_name = __selfCheck)]
pub fn self_check(name: &str, fixture: &[u8]) -> Result<String, JsValue> {
    let r = match name {
        "typed_reads" => typed_reads(fixture),
        "raw_chunks" => raw_chunks(fixture),
        "write_read" => write_read(),
        "medh5" => medh5(),
        _ => Err(format!("no check {name}")),
    };
    r.map_err(|e| js_sys::Error::new(&format!("{name}: {e}")).into())
}

fn text<E: std::fmt::Display>(r: Result<String, E>) -> Result<String, String> {
    r.map_err(|e| e.to_string())
}

fn fail(msg: String) -> Error {
    Error::InvalidArgument(msg)
}

fn expect<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Result<(), Error> {
    if got == want {
        Ok(())
    } else {
        Err(fail(format!("{what}: got {got:?}, want {want:?}")))
    }
}

/// Open the fixture from bytes; read its Blosc2 and deflate datasets typed and sliced.
fn typed_reads(fixture: &[u8]) -> Result<String, String> {
    text((|| {
        let file = File::from_bytes(fixture.to_vec())?;
        let root = file.root()?;
        let b = root.dataset("blosc2")?;
        let v: Vec<i32> = b.read()?;
        let want: Vec<i32> = (0..16 * 32).map(|i| i * 3 - 500).collect();
        expect("blosc2 values", &v, &want)?;
        let part = b.read_slice::<f64>(&s![3..16; 4, 30..])?;
        expect(
            "blosc2 slice",
            part,
            vec![
                (3 * 32 + 30) as f64 * 3.0 - 500.0,
                (3 * 32 + 31) as f64 * 3.0 - 500.0,
                (7 * 32 + 30) as f64 * 3.0 - 500.0,
                (7 * 32 + 31) as f64 * 3.0 - 500.0,
                (11 * 32 + 30) as f64 * 3.0 - 500.0,
                (11 * 32 + 31) as f64 * 3.0 - 500.0,
                (15 * 32 + 30) as f64 * 3.0 - 500.0,
                (15 * 32 + 31) as f64 * 3.0 - 500.0,
            ],
        )?;
        if b.read::<u8>().is_ok() {
            return Err(fail("negative int16 read as u8 without an error".into()));
        }
        let d = root.dataset("deflate")?;
        let col: Vec<f32> = d.read_slice(&s![.., 7])?;
        expect(
            "deflate column",
            col,
            (0..10).map(|i| i as f32 * 10.0 + 7.5).collect(),
        )?;
        expect(
            "units",
            d.attribute("units")?.read_scalar::<String>()?,
            "mm".to_string(),
        )?;
        expect("scale", d.attribute("scale")?.read_scalar::<f64>()?, 0.25)?;
        Ok(format!(
            "blosc2 {} values, deflate column, attributes",
            v.len()
        ))
    })())
}

/// Raw chunk batch of the Blosc2 dataset: borrowed bytes, order kept, decoded.
fn raw_chunks(fixture: &[u8]) -> Result<String, String> {
    text((|| -> purehdf::Result<String> {
        let file = File::from_bytes(fixture.to_vec())?;
        let ds = file.root()?.dataset("blosc2")?;
        expect("chunk count", ds.chunks()?.len(), 4)?;
        let r = ds.chunk_reader()?;
        let batch = r.raw_chunks(&[[1u64, 1], [0, 0], [1, 1]], true)?;
        let first = batch[0]
            .as_ref()
            .ok_or_else(|| fail("chunk (1, 1) missing".into()))?;
        expect("borrowed", first.is_borrowed(), true)?;
        expect(
            "duplicate",
            batch[2].as_ref().map(|c| c.bytes.clone()),
            Some(first.bytes.clone()),
        )?;
        let dec = r.decode(first)?;
        expect("decoded size", dec.len(), 8 * 16 * 2)?;
        let v0 = i16::from_le_bytes([dec[0], dec[1]]);
        expect(
            "first value of chunk (1, 1)",
            i32::from(v0),
            (8 * 32 + 16) * 3 - 500,
        )?;
        Ok(format!(
            "{} chunks in a batch, {} stored bytes borrowed",
            batch.len(),
            first.bytes.len()
        ))
    })())
}

/// Write a chunked file with Blosc2 and deflate to memory, slab by slab, and read it back.
fn write_read() -> Result<String, String> {
    text((|| -> purehdf::Result<String> {
        let mut w = FileWriter::in_memory();
        let root = w.root();
        let spec = DatasetSpec::of::<u16>(&[6, 8]).chunked(
            &[2, 8],
            vec![Filter::blosc2(Blosc2Codec::Lz4, 5, Blosc2Shuffle::Byte)?],
        );
        let d = w.create_chunked(root, "slabs", spec)?;
        let all: Vec<u16> = (0..48).collect();
        w.write_slab(d, 0, &all[..16])?;
        w.write_slab(d, 2, &all[16..])?;
        let spec = DatasetSpec::of::<f64>(&[5])
            .chunked(&[2], vec![Filter::shuffle(), Filter::deflate(6)?]);
        let e = w.write_dataset(root, "gz", spec, &[1.5, 2.5, 3.5, 4.5, 5.5])?;
        w.set_attr(e, "note", AttrValue::string("wasm"))?;
        let bytes = w.finish()?;
        let f = File::from_bytes(bytes)?;
        expect("slabs", f.root()?.dataset("slabs")?.read::<u16>()?, all)?;
        let gz = f.root()?.dataset("gz")?;
        expect("gz", gz.read::<f32>()?, vec![1.5, 2.5, 3.5, 4.5, 5.5])?;
        expect(
            "note",
            gz.attribute("note")?.read_scalar::<String>()?,
            "wasm".to_string(),
        )?;
        Ok("blosc2 slabs and deflate dataset round-trip".into())
    })())
}

/// Create the demo medh5 sample in memory (clock passed in, no /sys, no
/// threads), verify its digests and content_id, read an image patch typed.
fn medh5() -> Result<String, String> {
    text((|| -> purehdf_medh5::error::Result<String> {
        let p = plan_at(
            demo_sample()?,
            Profile::Balanced,
            None,
            "2026-01-01T00:00:00Z",
        )?;
        let bytes = write_plan_bytes(&p)?;
        let file = File::from_bytes(bytes)?;
        let rep = verify_file(&file, "memory", None)?;
        if !rep.ok || rep.content_id_ok != Some(true) {
            return Err(fail(format!("verify failed: {}", rep.to_json())).into());
        }
        let s = SampleFile::from_file(file);
        let patch = s.image_patch::<f32>("CT", &[16, 30, 22], &[1, 1, 2])?;
        expect("patch shape", patch.shape.clone(), vec![1, 1, 2])?;
        let labels = s.labelmap_patch("organs", &[16, 30, 22], &[1, 1, 1])?;
        expect("liver label", labels.data, vec![1])?;
        Ok(format!(
            "medh5 sample verified ({} digests), {}",
            rep.checked, p.content_id
        ))
    })())
}
