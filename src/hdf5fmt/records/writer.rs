//! The record-store writer: records streamed to a spill file beside the
//! target (memory holds only the index), then written as the version-1
//! layout through [`FileWriter`] and renamed into place atomically.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::crc32::crc32;
use super::layout::{DATA_ALIGN, FORMAT, FORMAT_VERSION};
use crate::datatype::Datatype;
use crate::error::{Error, Result};
use crate::write::{AttrValue, DatasetData, DatasetSpec, Element, FileWriter, GroupId};

/// How each record is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordCodec {
    /// The bytes as given.
    None,
    /// One zstd frame per record at this level (with its content size).
    Zstd(i32),
}

impl RecordCodec {
    /// The `codec` attribute's value.
    pub fn name(self) -> &'static str {
        match self {
            RecordCodec::None => "none",
            RecordCodec::Zstd(_) => "zstd",
        }
    }
}

/// Options of a [`RecordWriter`].
#[derive(Clone, Debug)]
pub struct RecordOptions {
    /// How records are stored.
    pub codec: RecordCodec,
    /// Free text stored as the `payload_type` attribute.
    pub payload_type: String,
    /// Replace an existing target (default: refuse it).
    pub overwrite: bool,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            codec: RecordCodec::None,
            payload_type: String::new(),
            overwrite: false,
        }
    }
}

type Column = Box<dyn FnOnce(&mut FileWriter, GroupId) -> Result<()> + Send>;

/// Writes a record store one record at a time; [`RecordWriter::finish`]
/// puts the file in place atomically (nothing appears at the target before,
/// and a failure leaves any previous file untouched).
pub struct RecordWriter {
    target: PathBuf,
    opts: RecordOptions,
    spill_path: PathBuf,
    spill: std::io::BufWriter<std::fs::File>,
    offset: Vec<u64>,
    length: Vec<u64>,
    crc: Vec<u32>,
    decoded: Vec<u64>,
    pos: u64,
    columns: Vec<(String, usize, Column)>,
}

impl RecordWriter {
    /// Start a store that will be put at `target`. Refused when `target`
    /// exists unless `opts.overwrite`.
    pub fn create(target: impl AsRef<Path>, opts: RecordOptions) -> Result<RecordWriter> {
        let target = target.as_ref().to_path_buf();
        if !opts.overwrite && target.exists() {
            return Err(Error::io(
                target.display(),
                std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "exists (set overwrite to replace it)",
                ),
            ));
        }
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut n = 0u32;
        let (spill_path, file) = loop {
            let p = dir.join(format!(".{name}.records-{}-{n}", std::process::id()));
            match std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&p)
            {
                Ok(f) => break (p, f),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
                Err(e) => return Err(Error::io(p.display(), e)),
            }
        };
        Ok(RecordWriter {
            target,
            opts,
            spill_path,
            spill: std::io::BufWriter::with_capacity(1 << 20, file),
            offset: Vec::new(),
            length: Vec::new(),
            crc: Vec::new(),
            decoded: Vec::new(),
            pos: 0,
            columns: Vec::new(),
        })
    }

    /// Records pushed so far.
    pub fn len(&self) -> usize {
        self.offset.len()
    }

    /// True when no record was pushed.
    pub fn is_empty(&self) -> bool {
        self.offset.is_empty()
    }

    /// Append one record (encoded with the store's codec); returns its index.
    pub fn push(&mut self, record: &[u8]) -> Result<u64> {
        match self.opts.codec {
            RecordCodec::None => self.append(record, record.len() as u64),
            RecordCodec::Zstd(level) => {
                let z = purehdf_filters::zstd_codec::compress(record, level);
                self.append(&z, record.len() as u64)
            }
        }
    }

    /// Append one record already encoded with the store's codec (e.g. a
    /// zstd frame made elsewhere) that decodes to `decoded_len` bytes. The
    /// frame is not checked here; reads that decode it are.
    pub fn push_encoded(&mut self, stored: &[u8], decoded_len: u64) -> Result<u64> {
        if self.opts.codec == RecordCodec::None && decoded_len != stored.len() as u64 {
            return Err(Error::InvalidArgument(
                "codec none: the decoded length is the stored length".into(),
            ));
        }
        self.append(stored, decoded_len)
    }

    fn append(&mut self, stored: &[u8], decoded_len: u64) -> Result<u64> {
        let len = stored.len() as u64;
        self.spill
            .write_all(stored)
            .map_err(|e| Error::io(self.spill_path.display(), e))?;
        let i = self.offset.len() as u64;
        self.offset.push(self.pos);
        self.length.push(len);
        self.crc.push(crc32(stored));
        if self.opts.codec != RecordCodec::None {
            self.decoded.push(decoded_len);
        }
        self.pos = self
            .pos
            .checked_add(len)
            .ok_or_else(|| Error::InvalidArgument("record store larger than 2^64 bytes".into()))?;
        Ok(i)
    }

    /// Add a metadata column `meta/<name>` with one value per record (checked
    /// against the record count at [`RecordWriter::finish`]).
    pub fn column<T: Element + Send + 'static>(&mut self, name: &str, values: Vec<T>) {
        let n = values.len();
        let col: Column = Box::new({
            let name = name.to_string();
            move |w: &mut FileWriter, g: GroupId| {
                w.write_dataset(g, &name, DatasetSpec::of::<T>(&[n as u64]), &values)
                    .map(|_| ())
            }
        });
        self.columns.push((name.to_string(), n, col));
    }

    /// Write the file and rename it into place.
    pub fn finish(mut self) -> Result<()> {
        self.spill
            .flush()
            .map_err(|e| Error::io(self.spill_path.display(), e))?;
        let n = self.offset.len();
        if let Some((name, len, _)) = self.columns.iter().find(|(_, len, _)| *len != n) {
            return Err(Error::InvalidArgument(format!(
                "column {name} has {len} values for {n} records"
            )));
        }
        if !self.opts.overwrite && self.target.exists() {
            return Err(Error::io(
                self.target.display(),
                std::io::Error::new(std::io::ErrorKind::AlreadyExists, "exists"),
            ));
        }
        let mut w = FileWriter::create(&self.target)?;
        let root = w.root();
        w.align_next_raw(DATA_ALIGN)?;
        let u8t = Datatype::int(1, false);
        if self.pos == 0 {
            w.create_dataset(root, "data", DatasetSpec::new(u8t, &[0]), Vec::<u8>::new())?;
        } else {
            let data = w.create_dataset(
                root,
                "data",
                DatasetSpec::new(u8t, &[self.pos]),
                DatasetData::None,
            )?;
            let mut spill = std::fs::File::open(&self.spill_path)
                .map_err(|e| Error::io(self.spill_path.display(), e))?;
            let mut buf = vec![0u8; 4 << 20];
            loop {
                let k = spill
                    .read(&mut buf)
                    .map_err(|e| Error::io(self.spill_path.display(), e))?;
                if k == 0 {
                    break;
                }
                w.write_contiguous_part(data, &buf[..k])?;
            }
        }
        let nn = n as u64;
        w.write_dataset(root, "offset", DatasetSpec::of::<u64>(&[nn]), &self.offset)?;
        w.write_dataset(root, "length", DatasetSpec::of::<u64>(&[nn]), &self.length)?;
        w.write_dataset(root, "crc32", DatasetSpec::of::<u32>(&[nn]), &self.crc)?;
        if self.opts.codec != RecordCodec::None {
            w.write_dataset(
                root,
                "decoded_length",
                DatasetSpec::of::<u64>(&[nn]),
                &self.decoded,
            )?;
        }
        let meta = w.create_group(root, "meta")?;
        for (_, _, col) in self.columns.drain(..) {
            col(&mut w, meta)?;
        }
        w.set_attr(root, "format", AttrValue::string(FORMAT))?;
        w.set_attr(root, "format_version", AttrValue::scalar(FORMAT_VERSION))?;
        w.set_attr(root, "codec", AttrValue::string(self.opts.codec.name()))?;
        w.set_attr(
            root,
            "payload_type",
            AttrValue::string(&self.opts.payload_type),
        )?;
        w.set_attr(root, "num_records", AttrValue::scalar(nn))?;
        w.set_attr(root, "data_alignment", AttrValue::scalar(DATA_ALIGN))?;
        w.commit()
    }
}

impl Drop for RecordWriter {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.spill_path);
    }
}
