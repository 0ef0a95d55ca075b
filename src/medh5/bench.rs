//! `medh5 bench-op`: the data operations of the bench protocol
//! (`shared/bench/README.md`, "The bench-op protocol"; `ref_ops.py` is the
//! reference side). Each operation does its own warm-ups and repeats in one
//! process and returns one JSON object — `{"op", "times_ms", "bytes", ...}` —
//! that the CLI prints as its last stdout line. Times are per-call wall times
//! (`Instant`), warm-ups excluded.
//!
//! The workload is fixed by the harness: image `images/CT` (int16), labelmap
//! annotation `seg` on grid `ct`, label set `organs`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Value};

use super::create;
use super::document::{LabelClass, LabelSet, LabelSetForm};
use super::model::{Annotation, ArrayData, Encoding, Grid, Image, NumDtype, Sample};
use super::profiles::Profile;
use super::sample::{read_patch, read_patch_vec, SampleFile};
use super::verify;
use super::writer;
use crate::error::{Error, Result};
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::datatype::{ByteOrder, Datatype};

/// The image the workload reads.
pub const CT: &str = "CT";
/// The annotation the workload reads.
pub const SEG: &str = "seg";
/// Grid spacing of the workload (z, y, x).
const SPACING: [f64; 3] = [1.25, 0.8, 0.8];
/// The workload's classes (`workload.py` `CLASSES`).
const CLASSES: [(u16, &str); 5] = [
    (1, "liver"),
    (2, "spleen"),
    (3, "kidney_left"),
    (4, "kidney_right"),
    (5, "vertebra"),
];
/// Cap on the patch positions one call reads.
const MAX_POSITIONS: usize = 1 << 20;

fn usage(msg: impl std::fmt::Display) -> Error {
    Error::invalid(format!("bench-op: {msg}"))
}

/// The parsed flags of one `bench-op` call (every op's flags; each op uses its own).
#[derive(Clone, Debug, PartialEq)]
pub struct Args {
    /// The operation: `write`, `read-full`, `read-patches`,
    /// `open-first-patch`, `verify` or `collection-ids`.
    pub op: String,
    /// The positional `FILE` the reading operations open (a `.medh5`, or a
    /// `.medh5c` for `collection-ids`).
    pub file: Option<PathBuf>,
    /// Timed calls per operation (`--repeats`, default 5).
    pub repeats: usize,
    /// Untimed calls before the timed ones (`--warmup`, default 1); for the
    /// patch operations, the number of leading positions read untimed.
    pub warmup: usize,
    /// `write`: the image as a `.npy` int16 `(z, y, x)` array (`--image`).
    pub image: Option<PathBuf>,
    /// `write`: the labelmap as a `.npy` uint8 array of the image's shape
    /// (`--label`).
    pub label: Option<PathBuf>,
    /// `write`: the codec profile name (`--profile`, e.g. `training`);
    /// `balanced` when absent.
    pub profile: Option<String>,
    /// `write`: the sample file to (over)write on every call (`--out`).
    pub out: Option<PathBuf>,
    /// `write`: a cubic training patch edge in voxels, stored as the grid's
    /// `patch_hint` so the chunk optimiser targets it (`--patch-hint`).
    pub patch_hint: Option<u64>,
    /// `write`: the `sample_id` (and `subject_id`) written (`--sample-id`,
    /// default `bench`).
    pub sample_id: String,
    /// Reads: which dataset, `image`, `label` or `label_raw` (see [`What`];
    /// `--what`, default `image`).
    pub what: String,
    /// Patch operations: the cube edge in voxels of each patch read
    /// (`--size`, default 64).
    pub size: u64,
    /// Patch operations: a JSON file holding a list of `[z, y, x]` patch
    /// origins (`--positions`; see [`load_positions`]).
    pub positions: Option<PathBuf>,
    /// `read-patches`: open a new handle per patch (outside the timer), so no
    /// decoded chunk is reused between patches (`--fresh`).
    pub fresh: bool,
    /// `verify`: dataset paths to verify alone, as `verify --partial`
    /// (repeatable `--partial`); empty = the whole file.
    pub partial: Vec<String>,
}

impl Args {
    /// Parse `OP [FILE] [--flag value]...` (the arguments after `bench-op`).
    pub fn parse(args: &[String]) -> Result<Args> {
        let (op, rest) = args.split_first().ok_or_else(|| usage("no operation"))?;
        let mut a = Args {
            op: op.clone(),
            file: None,
            repeats: 5,
            warmup: 1,
            image: None,
            label: None,
            profile: None,
            out: None,
            patch_hint: None,
            sample_id: "bench".to_string(),
            what: "image".to_string(),
            size: 64,
            positions: None,
            fresh: false,
            partial: Vec::new(),
        };
        let mut it = rest.iter();
        while let Some(flag) = it.next() {
            let mut value = || {
                it.next()
                    .cloned()
                    .ok_or_else(|| usage(format!("{flag} needs a value")))
            };
            match flag.as_str() {
                "--repeats" => a.repeats = number(&value()?, flag)?,
                "--warmup" => a.warmup = number(&value()?, flag)?,
                "--image" => a.image = Some(value()?.into()),
                "--label" => a.label = Some(value()?.into()),
                "--profile" => a.profile = Some(value()?),
                "--out" => a.out = Some(value()?.into()),
                "--patch-hint" => a.patch_hint = Some(number(&value()?, flag)?),
                "--sample-id" => a.sample_id = value()?,
                "--what" => a.what = value()?,
                "--size" => a.size = number(&value()?, flag)?,
                "--positions" => a.positions = Some(value()?.into()),
                "--partial" => a.partial.push(value()?),
                "--fresh" => a.fresh = true,
                s if s.starts_with("--") => return Err(usage(format!("unknown option {s}"))),
                s if a.file.is_none() => a.file = Some(s.into()),
                s => return Err(usage(format!("unexpected argument {s}"))),
            }
        }
        Ok(a)
    }

    fn file(&self) -> Result<&Path> {
        self.file
            .as_deref()
            .ok_or_else(|| usage(format!("{} needs a FILE", self.op)))
    }

    fn need<'a>(v: &'a Option<PathBuf>, flag: &str) -> Result<&'a Path> {
        v.as_deref()
            .ok_or_else(|| usage(format!("{flag} is required")))
    }
}

fn number<T: std::str::FromStr>(s: &str, flag: &str) -> Result<T> {
    s.parse()
        .map_err(|_| usage(format!("{flag}: not a non-negative integer: {s:?}")))
}

/// Run one operation; the JSON object to print as the last stdout line.
pub fn run(a: &Args) -> Result<Value> {
    match a.op.as_str() {
        "write" => op_write(a),
        "read-full" => op_read_full(a),
        "read-patches" => op_read_patches(a),
        "open-first-patch" => op_open_first_patch(a),
        "verify" => op_verify(a),
        "collection-ids" => crate::collection::bench_collection_ids(a.file()?),
        "draw" | "content-id" => Err(Error::invalid(format!(
            "bench-op {}: not implemented yet",
            a.op
        ))),
        other => Err(usage(format!("unknown operation {other:?}"))),
    }
}

/// Milliseconds since `t`.
fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Run `f` `warmup + repeats` times; the timed calls' milliseconds and the
/// last call's result.
fn timed<T>(
    warmup: usize,
    repeats: usize,
    mut f: impl FnMut() -> Result<T>,
) -> Result<(Vec<f64>, Option<T>)> {
    let mut times = Vec::with_capacity(repeats);
    let mut last = None;
    for i in 0..warmup + repeats {
        let t = Instant::now();
        let v = f()?;
        let dt = ms(t);
        if i >= warmup {
            times.push(dt);
        }
        last = Some(v);
    }
    Ok((times, last))
}

// -- write -------------------------------------------------------------------

/// Load a `.npy` array of the expected dtype.
fn load(path: &Path, dtype: NumDtype) -> Result<ArrayData> {
    let a = create::load_npy(path)?;
    if a.dtype != dtype {
        return Err(usage(format!(
            "{}: dtype {} where {} is expected",
            path.display(),
            a.dtype.descr(),
            dtype.descr()
        )));
    }
    Ok(a)
}

/// `kidney_left` → `Kidney Left` (Python's `str.title` on ASCII keys).
fn title(key: &str) -> String {
    key.split('_')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f
                    .to_uppercase()
                    .chain(c.flat_map(char::to_lowercase))
                    .collect(),
                None => String::new(),
            }
        })
        .collect::<Vec<String>>()
        .join(" ")
}

/// The label set `organs` of the workload.
fn organs() -> LabelSet {
    let classes = CLASSES
        .iter()
        .map(|&(id, key)| LabelClass {
            id,
            key: key.to_string(),
            name: title(key),
            ..LabelClass::default()
        })
        .collect();
    LabelSet {
        id: "organs".to_string(),
        version: "1.0.0".to_string(),
        form: LabelSetForm::Inline {
            classes,
            relations: Vec::new(),
            skeletons: Vec::new(),
        },
    }
}

/// The non-zero values of a uint8 labelmap, ascending.
fn present_classes(labels: &[u8]) -> Vec<u16> {
    let mut seen = [false; 256];
    for &v in labels {
        seen[usize::from(v)] = true;
    }
    (1u16..256).filter(|&v| seen[usize::from(v)]).collect()
}

/// The workload's sample from its two arrays (`ref_ops.write_sample`).
pub fn workload_sample(
    image: ArrayData,
    labels: ArrayData,
    patch_hint: Option<u64>,
    sample_id: &str,
) -> Result<Sample> {
    if image.shape.len() != 3 || image.shape != labels.shape {
        return Err(usage(format!(
            "image {:?} and label {:?} must be 3-d arrays of one shape",
            image.shape, labels.shape
        )));
    }
    let mut s = Sample::new(sample_id, sample_id);
    s.document.label_set = Some(organs());
    let mut grid = Grid::new("ct", &image.shape, &SPACING);
    if let Some(p) = patch_hint {
        let p = i64::try_from(p).map_err(|_| usage("--patch-hint too large"))?;
        grid.patch_hint = Some(vec![p; 3]);
    }
    s.grids.push(grid);
    let mut img = Image::new(CT, "ct", "CT", image);
    img.value_units = Some("HU".to_string());
    s.images.push(img);
    let classes = present_classes(&labels.bytes);
    s.annotations.push(Annotation::new(
        SEG,
        "ct",
        &classes,
        Encoding::Labelmap { data: labels },
    ));
    Ok(s)
}

fn op_write(a: &Args) -> Result<Value> {
    let image = load(Args::need(&a.image, "--image")?, NumDtype::I16)?;
    let labels = load(Args::need(&a.label, "--label")?, NumDtype::U8)?;
    let out = Args::need(&a.out, "--out")?;
    let profile = Profile::from_name(a.profile.as_deref())?;
    let nbytes = image.bytes.len() + labels.bytes.len();
    let mut times = Vec::with_capacity(a.repeats);
    let mut content_id = String::new();
    for i in 0..a.warmup + a.repeats {
        // The arrays are "already in memory": copying them is not timed.
        let (im, lab) = (image.clone(), labels.clone());
        let t = Instant::now();
        let sample = workload_sample(im, lab, a.patch_hint, &a.sample_id)?;
        let plan = create::plan(sample, profile, None)?;
        content_id = plan.content_id.clone();
        writer::write_plan_owned(plan, out)?;
        let dt = ms(t);
        if i >= a.warmup {
            times.push(dt);
        }
    }
    let sf = SampleFile::open(out)?;
    let chunks = |ds: &Dataset| -> Value {
        ds.chunk_dims()
            .map(|c| json!(c))
            .unwrap_or_else(|| json!([]))
    };
    let file_bytes = std::fs::metadata(out)
        .map_err(|e| Error::io(out.display(), e))?
        .len();
    Ok(json!({
        "op": "write",
        "times_ms": times,
        "bytes": nbytes,
        "file_bytes": file_bytes,
        "content_id": content_id,
        "chunks": {"image": chunks(&sf.image(CT)?), "label": chunks(&sf.annotation_data(SEG)?)},
        "profile": profile.name(),
    }))
}

// -- reads -------------------------------------------------------------------

/// What `--what` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    /// The image `images/CT`, int16 as stored.
    Image,
    /// The annotation's labelmap as uint8 (class logic).
    Label,
    /// The stored labelmap dataset, as stored.
    LabelRaw,
}

impl What {
    /// The `--what` value `image`, `label` or `label_raw`.
    ///
    /// # Errors
    /// An invalid-argument (usage) error for any other string.
    pub fn parse(s: &str) -> Result<What> {
        match s {
            "image" => Ok(What::Image),
            "label" => Ok(What::Label),
            "label_raw" => Ok(What::LabelRaw),
            other => Err(usage(format!("unknown --what {other:?}"))),
        }
    }
}

/// A dataset opened once for repeated reads of whole volumes or patches.
pub struct Reader {
    ds: Dataset,
    what: What,
    /// Bytes per element as stored.
    esize: usize,
}

impl Reader {
    /// Open what `what` names in the sample `sf`.
    pub fn new(sf: &SampleFile, what: What) -> Result<Reader> {
        let ds = match what {
            What::Image => sf.image(CT)?,
            What::Label | What::LabelRaw => sf.annotation_data(SEG)?,
        };
        let esize = usize::try_from(ds.dtype().size()).map_err(|_| usage("element too large"))?;
        if what == What::Label {
            check_labelmap(sf, &ds)?;
        }
        Ok(Reader { ds, what, esize })
    }

    /// The dataset's shape.
    pub fn shape(&self) -> &[u64] {
        self.ds.shape()
    }

    /// Bytes one read of `count` elements per axis produces.
    pub fn out_bytes(&self, count: &[u64]) -> Result<usize> {
        let n = count
            .iter()
            .try_fold(1u64, |a, &c| a.checked_mul(c))
            .ok_or_else(|| usage("selection too large"))?;
        let per = if self.what == What::Label {
            1
        } else {
            self.esize as u64
        };
        n.checked_mul(per)
            .and_then(|b| usize::try_from(b).ok())
            .ok_or_else(|| usage("selection too large"))
    }

    /// Read the box `start .. start + count` (whole dataset when `start` is
    /// `None`) into a new buffer.
    pub fn read(&self, start: Option<&[u64]>, count: &[u64]) -> Result<Vec<u8>> {
        let count = if start.is_none() { self.shape() } else { count };
        let n = self.out_bytes(count)?;
        if self.what == What::Label && self.esize != 1 {
            // uint16 labelmap → uint8: every class id must fit.
            let mut wide = vec![
                0u8;
                n.checked_mul(self.esize)
                    .ok_or_else(|| usage("too large"))?
            ];
            read_patch(&self.ds, start, count, &mut wide)?;
            return narrow_u16(&wide, self.ds.dtype());
        }
        // A new (not zeroed) buffer per call, like the reference's `np.empty`.
        let out = read_patch_vec(&self.ds, start, count)?;
        if out.len() != n {
            return Err(usage(format!("read {} bytes, expected {n}", out.len())));
        }
        Ok(out)
    }
}

/// Refuse annotations that are not labelmaps (layers, bitmask, probmap
/// decoding belong to the sample reader).
fn check_labelmap(sf: &SampleFile, ds: &Dataset) -> Result<()> {
    let kind = sf
        .object_attrs(&format!("annotations/{SEG}"))?
        .into_iter()
        .find(|(n, _)| n == "kind")
        .map(|(_, v)| v);
    match kind {
        Some(super::canonical_json::Json::Str(k)) if k == "labelmap" => {}
        other => {
            return Err(usage(format!(
                "annotation {SEG}: kind {other:?} is not read as a labelmap yet"
            )))
        }
    }
    match ds.dtype() {
        Datatype::Integer {
            size: 1 | 2,
            signed: false,
            ..
        } => Ok(()),
        _ => Err(usage(format!(
            "annotation {SEG}: labelmap of an unexpected type"
        ))),
    }
}

/// uint16 elements (file byte order) → uint8, refusing values above 255.
fn narrow_u16(wide: &[u8], dt: &Datatype) -> Result<Vec<u8>> {
    let big = matches!(
        dt,
        Datatype::Integer {
            order: ByteOrder::Big,
            ..
        }
    );
    wide.chunks_exact(2)
        .map(|p| {
            let v = if big {
                u16::from_be_bytes([p[0], p[1]])
            } else {
                u16::from_le_bytes([p[0], p[1]])
            };
            u8::try_from(v).map_err(|_| usage(format!("label value {v} does not fit uint8")))
        })
        .collect()
}

fn op_read_full(a: &Args) -> Result<Value> {
    let what = What::parse(&a.what)?;
    let sf = SampleFile::open(a.file()?)?;
    let rd = Reader::new(&sf, what)?;
    let (times, last) = timed(a.warmup, a.repeats, || rd.read(None, &[]).map(|v| v.len()))?;
    Ok(json!({
        "op": "read-full",
        "what": a.what,
        "times_ms": times,
        "bytes": last.unwrap_or(0),
    }))
}

/// The `[z, y, x]` patch origins of a positions file.
pub fn load_positions(path: &Path) -> Result<Vec<Vec<u64>>> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path.display(), e))?;
    let v: Vec<Vec<u64>> = serde_json::from_slice(&bytes)?;
    if v.len() > MAX_POSITIONS {
        return Err(usage(format!("more than {MAX_POSITIONS} positions")));
    }
    Ok(v)
}

fn cube(a: &Args, rank: usize) -> Vec<u64> {
    vec![a.size; rank]
}

fn op_read_patches(a: &Args) -> Result<Value> {
    let what = What::parse(&a.what)?;
    let file = a.file()?;
    let pos = load_positions(Args::need(&a.positions, "--positions")?)?;
    let mut times = Vec::with_capacity(pos.len());
    let mut nbytes = 0usize;
    if a.fresh {
        // A new handle per patch, opened outside the timer: no decoded chunk
        // survives from one patch to the next.
        for (i, p) in pos.iter().enumerate() {
            let sf = SampleFile::open(file)?;
            let rd = Reader::new(&sf, what)?;
            let count = cube(a, p.len());
            let t = Instant::now();
            let v = rd.read(Some(p), &count)?;
            let dt = ms(t);
            if i >= a.warmup {
                times.push(dt);
                nbytes = v.len();
            }
        }
    } else {
        let sf = SampleFile::open(file)?;
        let rd = Reader::new(&sf, what)?;
        for (i, p) in pos.iter().enumerate() {
            let count = cube(a, p.len());
            let t = Instant::now();
            let v = rd.read(Some(p), &count)?;
            let dt = ms(t);
            if i >= a.warmup {
                times.push(dt);
                nbytes = v.len();
            }
        }
    }
    Ok(json!({
        "op": "read-patches",
        "what": a.what,
        "size": a.size,
        "fresh": a.fresh,
        "times_ms": times,
        "bytes": nbytes,
    }))
}

fn op_open_first_patch(a: &Args) -> Result<Value> {
    let file = a.file()?;
    let pos = load_positions(Args::need(&a.positions, "--positions")?)?;
    let mut times = Vec::with_capacity(pos.len());
    for (i, p) in pos.iter().enumerate() {
        let count = cube(a, p.len());
        let t = Instant::now();
        {
            let sf = SampleFile::open(file)?;
            let rd = Reader::new(&sf, What::Image)?;
            rd.read(Some(p), &count)?;
        }
        let dt = ms(t);
        if i >= a.warmup {
            times.push(dt);
        }
    }
    Ok(json!({"op": "open-first-patch", "size": a.size, "times_ms": times}))
}

// -- integrity ----------------------------------------------------------------

/// Bytes of the dataset an object path (`images/X`, `annotations/Y[/...]`) names.
fn object_bytes(sf: &SampleFile, obj: &str) -> Result<u64> {
    let obj = obj.trim_start_matches('/');
    let ds = match obj.split_once('/') {
        Some(("images", name)) => sf.image(name)?,
        Some(("annotations", rest)) => {
            sf.annotation_data(rest.split('/').next().unwrap_or(rest))?
        }
        _ => {
            return Err(usage(format!(
                "--partial {obj}: not an image or annotation"
            )))
        }
    };
    ds.num_elements()
        .checked_mul(ds.dtype().size())
        .ok_or_else(|| usage("dataset too large"))
}

fn op_verify(a: &Args) -> Result<Value> {
    let file = a.file()?;
    let sf = SampleFile::open(file)?;
    let nbytes = if a.partial.is_empty() {
        object_bytes(&sf, &format!("images/{CT}"))?
            + object_bytes(&sf, &format!("annotations/{SEG}"))?
    } else {
        a.partial
            .iter()
            .map(|o| object_bytes(&sf, o))
            .sum::<Result<u64>>()?
    };
    let partial = (!a.partial.is_empty()).then_some(a.partial.as_slice());
    let display = file.display().to_string();
    let (times, last) = timed(a.warmup, a.repeats, || {
        verify::verify_file(&sf.file, &display, partial).map(|r| r.ok)
    })?;
    Ok(json!({
        "op": "verify",
        "partial": a.partial,
        "times_ms": times,
        "bytes": nbytes,
        "ok": last,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn parses_flags_and_defaults() {
        let a = Args::parse(&args(
            "read-patches f.medh5 --what label --size 96 --positions p.json --warmup 5 --fresh",
        ))
        .unwrap();
        assert_eq!(a.op, "read-patches");
        assert_eq!(a.file.as_deref(), Some(Path::new("f.medh5")));
        assert_eq!(
            (a.what.as_str(), a.size, a.warmup, a.fresh),
            ("label", 96, 5, true)
        );
        assert_eq!(a.repeats, 5);
        let a = Args::parse(&args(
            "verify f --partial images/CT --partial annotations/seg",
        ))
        .unwrap();
        assert_eq!(a.partial, vec!["images/CT", "annotations/seg"]);
        assert!(Args::parse(&args("verify f --bogus")).is_err());
        assert!(Args::parse(&args("verify f --repeats x")).is_err());
        assert!(Args::parse(&args("verify f g")).is_err());
        assert!(Args::parse(&[]).is_err());
    }

    #[test]
    fn later_ops_fail_clearly() {
        let e = run(&Args::parse(&args("draw f")).unwrap()).unwrap_err();
        assert!(e.to_string().contains("not implemented"), "{e}");
        assert!(run(&Args::parse(&args("nope")).unwrap()).is_err());
    }

    #[test]
    fn titles_and_classes() {
        assert_eq!(title("kidney_left"), "Kidney Left");
        assert_eq!(title("liver"), "Liver");
        assert_eq!(present_classes(&[0, 3, 1, 3, 0]), vec![1, 3]);
        assert_eq!(organs().classes().len(), 5);
    }

    #[test]
    fn narrows_u16_labels() {
        let dt = Datatype::int(2, false);
        assert_eq!(narrow_u16(&[5, 0, 255, 0], &dt).unwrap(), vec![5, 255]);
        assert!(narrow_u16(&[0, 1], &dt).is_err());
    }

    #[test]
    fn write_then_read_and_verify_round_trip() {
        let dir = std::env::temp_dir().join(format!("purehdf-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let shape = [20u64, 24, 28];
        let n = (shape[0] * shape[1] * shape[2]) as usize;
        let img: Vec<i16> = (0..n).map(|i| (i % 2000) as i16 - 1000).collect();
        let lab: Vec<u8> = (0..n).map(|i| ((i / 500) % 3) as u8).collect();
        let (ip, lp) = (dir.join("i.npy"), dir.join("l.npy"));
        let mut b = Vec::new();
        crate::npy::write(
            &mut b,
            "<i2",
            &shape,
            &img.iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>(),
        )
        .unwrap();
        std::fs::write(&ip, &b).unwrap();
        let mut b = Vec::new();
        crate::npy::write(&mut b, "|u1", &shape, &lab).unwrap();
        std::fs::write(&lp, &b).unwrap();
        let out = dir.join("s.medh5");
        let cmd = format!(
            "write --image {} --label {} --profile training --out {} --repeats 1 --warmup 0",
            ip.display(),
            lp.display(),
            out.display()
        );
        let v = run(&Args::parse(&args(&cmd)).unwrap()).unwrap();
        assert_eq!(v["bytes"], json!(n * 3));
        assert_eq!(v["times_ms"].as_array().unwrap().len(), 1);
        assert!(v["content_id"].as_str().unwrap().starts_with("sha256:"));
        let sf = SampleFile::open(&out).unwrap();
        let rd = Reader::new(&sf, What::Label).unwrap();
        assert_eq!(rd.read(None, &[]).unwrap(), lab);
        let rd = Reader::new(&sf, What::Image).unwrap();
        let patch = rd.read(Some(&[1, 2, 3]), &[2, 2, 2]).unwrap();
        let at = (24 * 28 + 2 * 28 + 3) as usize;
        assert_eq!(i16::from_le_bytes([patch[0], patch[1]]), img[at]);
        let v = run(&Args::parse(&args(&format!(
            "verify {} --repeats 2 --warmup 0",
            out.display()
        )))
        .unwrap())
        .unwrap();
        assert_eq!(v["ok"], json!(true));
        assert_eq!(v["bytes"], json!(n * 3));
        std::fs::remove_dir_all(&dir).ok();
    }
}
