//! purehdf on wasm32-unknown-unknown: each `check_*` export runs one task a
//! browser or edge user does, entirely in memory, and returns 0 on success.
//! The last message (success summary or error) is at `message_ptr()` /
//! `message_len()` in linear memory. A panic aborts, which traps in the host.

use std::sync::Mutex;

use purehdf_medh5::create::{demo_sample, plan_at};
use purehdf_medh5::profiles::Profile;
use purehdf_medh5::sample::SampleFile;
use purehdf_medh5::verify::verify_file;
use purehdf_medh5::writer::write_plan_bytes;
use purehdf::{
    s, AttrValue, Blosc2Codec, Blosc2Shuffle, DatasetSpec, Error, File, FileWriter, Filter,
};

/// An HDF5 file written by h5py + hdf5plugin (`make_fixture.py`).
static FIXTURE: &[u8] = include_bytes!("../data/fixture.h5");

static MESSAGE: Mutex<Vec<u8>> = Mutex::new(Vec::new());

fn report<E: std::fmt::Display>(r: Result<String, E>) -> i32 {
    let (code, text) = match r {
        Ok(t) => (0, t),
        Err(e) => (1, e.to_string()),
    };
    if let Ok(mut m) = MESSAGE.lock() {
        *m = text.into_bytes();
    }
    code
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

/// Address of the last message.
#[no_mangle]
pub extern "C" fn message_ptr() -> usize {
    MESSAGE.lock().map(|m| m.as_ptr() as usize).unwrap_or(0)
}

/// Length in bytes of the last message.
#[no_mangle]
pub extern "C" fn message_len() -> usize {
    MESSAGE.lock().map(|m| m.len()).unwrap_or(0)
}

/// Open the embedded file from bytes; read its Blosc2 and deflate datasets typed and sliced.
#[no_mangle]
pub extern "C" fn check_typed_reads() -> i32 {
    report((|| {
        let file = File::from_source(std::sync::Arc::new(FIXTURE), None)?;
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
#[no_mangle]
pub extern "C" fn check_raw_chunks() -> i32 {
    report((|| -> purehdf::Result<String> {
        let file = File::from_bytes(FIXTURE.to_vec())?;
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
#[no_mangle]
pub extern "C" fn check_write_read() -> i32 {
    report((|| -> purehdf::Result<String> {
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
        let spec =
            DatasetSpec::of::<f64>(&[5]).chunked(&[2], vec![Filter::shuffle(), Filter::deflate(6)?]);
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
#[no_mangle]
pub extern "C" fn check_medh5() -> i32 {
    report((|| -> purehdf_medh5::error::Result<String> {
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
