//! The record-store reader: the index (`offset`, `length`, `crc32`,
//! `decoded_length`) parsed and bounds-checked once per file identity and
//! shared through [`MetaCache::global`]; records served as views into the
//! mapping, gathered into one buffer with offsets, or decoded in parallel
//! into one buffer, each optionally checked against its CRC-32.

use std::path::Path;
use std::sync::Arc;

use super::crc32::crc32;
use super::layout::{FORMAT, FORMAT_VERSION};
use crate::batch::fill_slots;
use crate::error::{Error, Result};
use crate::file::File;
use crate::group::Group;
use crate::meta_cache::MetaCache;
use crate::views::ByteView;

/// The parsed index of one store.
struct Index {
    offset: Vec<u64>,
    length: Vec<u64>,
    crc: Vec<u32>,
    decoded: Option<Vec<u64>>,
    codec: String,
    payload_type: String,
    data_address: u64,
    data_len: u64,
}

impl Index {
    fn bytes(&self) -> usize {
        self.offset.len() * 20 + self.decoded.as_ref().map_or(0, |d| d.len() * 8) + 256
    }
}

/// An open record store (see [`crate::low_level::records`] for the layout).
/// Cheap to clone; `Send + Sync`, so loader threads share one.
#[derive(Clone)]
pub struct RecordStore {
    file: File,
    path: String,
    data: ByteView,
    index: Arc<Index>,
}

impl std::fmt::Debug for RecordStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordStore")
            .field("path", &self.path)
            .field("records", &self.len())
            .field("codec", &self.index.codec)
            .finish()
    }
}

impl RecordStore {
    /// Open the store at the root of the file at `path` (mapped).
    pub fn open(path: impl AsRef<Path>) -> Result<RecordStore> {
        RecordStore::from_group(&File::open(path)?.root()?)
    }

    /// True when `group` carries the record-store `format` attribute.
    pub fn is_store(group: &Group) -> bool {
        group
            .attribute("format")
            .and_then(|a| a.read_scalar::<String>())
            .is_ok_and(|f| f == FORMAT)
    }

    /// The store in `group`. The index is taken from the process-wide
    /// metadata cache when this file (same identity) was opened before.
    pub fn from_group(group: &Group) -> Result<RecordStore> {
        let file = group.file().clone();
        let key = format!("records:{}", group.path());
        let id = file.identity();
        let cached = id.and_then(|id| MetaCache::global().get::<Index>(&id, &key));
        let index = match cached {
            Some(ix) => ix,
            None => {
                let ix = Arc::new(parse(group)?);
                if let Some(id) = id {
                    MetaCache::global().insert(&id, &key, Arc::clone(&ix), ix.bytes());
                }
                ix
            }
        };
        let data = ByteView::new(
            file.source_arc(),
            "record data",
            index.data_address,
            index.data_len,
        )?;
        Ok(RecordStore {
            file,
            path: group.path().to_string(),
            data,
            index,
        })
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.index.offset.len()
    }

    /// True when the store holds no record.
    pub fn is_empty(&self) -> bool {
        self.index.offset.is_empty()
    }

    /// The `codec` attribute (`none` or `zstd`).
    pub fn codec(&self) -> &str {
        &self.index.codec
    }

    /// The `payload_type` attribute.
    pub fn payload_type(&self) -> &str {
        &self.index.payload_type
    }

    /// File address of the `data` dataset (a multiple of 64 for stores this
    /// crate writes).
    pub fn data_address(&self) -> u64 {
        self.index.data_address
    }

    /// The whole data segment as one view (shared with the mapping).
    pub fn data(&self) -> &ByteView {
        &self.data
    }

    /// The file the store lives in.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// A metadata column (`meta/<name>`).
    pub fn column(&self, name: &str) -> Result<crate::dataset::Dataset> {
        self.file
            .root()?
            .dataset(&format!("{}/meta/{name}", self.path.trim_end_matches('/')))
    }

    fn span(&self, i: u64) -> Result<(usize, usize)> {
        let n = self.len() as u64;
        let k = usize::try_from(i).ok().filter(|_| i < n).ok_or_else(|| {
            Error::InvalidArgument(format!("{}: record {i} outside 0..{n}", self.path))
        })?;
        // checked against the data length when the index was parsed
        let s = self.index.offset[k] as usize;
        Ok((s, s + self.index.length[k] as usize))
    }

    fn check_crc(&self, i: u64, bytes: &[u8]) -> Result<()> {
        let k = i as usize;
        let computed = crc32(bytes);
        let stored = self.index.crc[k];
        if computed != stored {
            return Err(Error::RecordChecksum {
                store: self.path.clone(),
                record: i,
                offset: self.index.offset[k],
                stored,
                computed,
            });
        }
        Ok(())
    }

    /// The stored bytes of record `i` as a view into the mapping (no copy);
    /// with `verify`, checked against its CRC-32 first.
    pub fn record(&self, i: u64, verify: bool) -> Result<ByteView> {
        let (s, e) = self.span(i)?;
        let v = self.data.slice(s, e)?;
        if verify {
            self.check_crc(i, &v)?;
        }
        Ok(v)
    }

    /// [`RecordStore::record`] for each index, in order, duplicates kept.
    pub fn views(&self, idx: &[u64], verify: bool) -> Result<Vec<ByteView>> {
        idx.iter().map(|&i| self.record(i, verify)).collect()
    }

    /// The stored bytes of records `idx` (in order, duplicates kept)
    /// gathered into one buffer with `idx.len() + 1` offsets: record `k` is
    /// `buf[off[k]..off[k + 1]]`. With `verify`, every record's CRC-32 is
    /// checked and a mismatch is [`Error::RecordChecksum`] naming it.
    pub fn read_records(&self, idx: &[u64], verify: bool) -> Result<(Vec<u8>, Vec<u64>)> {
        let (mut buf, mut off) = (Vec::new(), Vec::new());
        self.read_records_into(idx, verify, &mut buf, &mut off)?;
        Ok((buf, off))
    }

    /// [`RecordStore::read_records`] into the caller's buffers (cleared
    /// first), so a loader that reuses them allocates nothing per batch.
    pub fn read_records_into(
        &self,
        idx: &[u64],
        verify: bool,
        buf: &mut Vec<u8>,
        off: &mut Vec<u64>,
    ) -> Result<()> {
        self.plan_into(idx, |k| self.index.length[k], off)?;
        let all = self.data.as_bytes();
        buf.clear();
        buf.reserve(*off.last().unwrap_or(&0) as usize);
        for &i in idx {
            let (s, e) = self.span(i)?;
            let rec = &all[s..e];
            if verify {
                self.check_crc(i, rec)?;
            }
            buf.extend_from_slice(rec);
        }
        self.data.check()
    }

    /// Spans of `idx` and the output offsets given each record's output size.
    fn plan_into(
        &self,
        idx: &[u64],
        size: impl Fn(usize) -> u64,
        off: &mut Vec<u64>,
    ) -> Result<()> {
        off.clear();
        off.reserve(idx.len() + 1);
        let mut total = 0u64;
        off.push(0);
        for &i in idx {
            self.span(i)?;
            total = total
                .checked_add(size(i as usize))
                .filter(|&t| t <= crate::limits::MAX_DECODED)
                .ok_or(Error::Limit {
                    structure: "record batch",
                    offset: 0,
                    what: "gathered bytes",
                    value: total,
                    limit: crate::limits::MAX_DECODED,
                })?;
            off.push(total);
        }
        Ok(())
    }

    /// Records `idx` decoded with the store's codec into one buffer with
    /// offsets (as [`RecordStore::read_records`]), on `workers` threads (0 =
    /// the crate's thread policy), each straight into its slot. For codec
    /// `none` this is the gather.
    pub fn decode_records(
        &self,
        idx: &[u64],
        verify: bool,
        workers: usize,
    ) -> Result<(Vec<u8>, Vec<u64>)> {
        let (mut buf, mut off) = (Vec::new(), Vec::new());
        self.decode_records_into(idx, verify, workers, &mut buf, &mut off)?;
        Ok((buf, off))
    }

    /// [`RecordStore::decode_records`] into the caller's buffers (cleared first).
    pub fn decode_records_into(
        &self,
        idx: &[u64],
        verify: bool,
        workers: usize,
        out: &mut Vec<u8>,
        off: &mut Vec<u64>,
    ) -> Result<()> {
        let Some(decoded) = &self.index.decoded else {
            return self.read_records_into(idx, verify, out, off);
        };
        if self.index.codec != "zstd" {
            return Err(Error::Unsupported {
                structure: "record store",
                offset: self.index.data_address,
                what: format!("record codec {:?}", self.index.codec),
            });
        }
        self.plan_into(idx, |k| decoded[k], off)?;
        let spans = idx
            .iter()
            .map(|&i| self.span(i))
            .collect::<Result<Vec<_>>>()?;
        size_output(out, *off.last().unwrap_or(&0) as usize);
        let mut slots = Vec::with_capacity(idx.len());
        let mut rest = out.as_mut_slice();
        for w in off.windows(2) {
            let (head, tail) = rest.split_at_mut((w[1] - w[0]) as usize);
            slots.push(head);
            rest = tail;
        }
        let all = self.data.as_bytes();
        let filled = fill_slots(slots, workers, |k, slot| {
            let (s, e) = spans[k];
            let rec = &all[s..e];
            if verify {
                self.check_crc(idx[k], rec)?;
            }
            if rec.is_empty() && slot.is_empty() {
                return Ok(());
            }
            purehdf_filters::zstd_codec::Decoder::new()
                .decode_exact(rec, slot, "record zstd")
                .map_err(|e| Error::Chunk {
                    dataset: format!("{}/data", self.path.trim_end_matches('/')),
                    coords: vec![idx[k]],
                    source: Box::new(e.into()),
                })
        });
        if filled.is_err() {
            // no stale bytes of an earlier call survive a failed one
            out.clear();
        }
        filled?;
        self.data.check()
    }

    /// Check every record against its CRC-32 (and decode every record of a
    /// compressed store); the first failure is returned.
    pub fn verify_all(&self) -> Result<()> {
        let all: Vec<u64> = (0..self.len() as u64).collect();
        for part in all.chunks(4096) {
            self.decode_records(part, true, 0)?;
        }
        Ok(())
    }
}

fn attr_string(g: &Group, name: &str) -> Result<String> {
    g.attribute(name)?.read_scalar::<String>()
}

fn parse(g: &Group) -> Result<Index> {
    let fmt = attr_string(g, "format")?;
    if fmt != FORMAT {
        return Err(Error::InvalidArgument(format!(
            "{}: format {fmt:?} is not {FORMAT:?}",
            g.path()
        )));
    }
    let version: i64 = g.attribute("format_version")?.read_scalar()?;
    if version != FORMAT_VERSION {
        return Err(Error::Unsupported {
            structure: "record store",
            offset: 0,
            what: format!("format_version {version}"),
        });
    }
    let codec = attr_string(g, "codec")?;
    let payload_type = attr_string(g, "payload_type").unwrap_or_default();
    let data = g.dataset("data")?;
    let offset: Vec<u64> = g.dataset("offset")?.read()?;
    let length: Vec<u64> = g.dataset("length")?.read()?;
    let crc: Vec<u32> = g.dataset("crc32")?.read()?;
    let decoded: Option<Vec<u64>> = if codec == "none" {
        None
    } else {
        Some(g.dataset("decoded_length")?.read()?)
    };
    let n = offset.len();
    if length.len() != n || crc.len() != n || decoded.as_ref().is_some_and(|d| d.len() != n) {
        return Err(Error::malformed(
            "record store",
            g.address(),
            "offset, length, crc32 and decoded_length differ in length",
        ));
    }
    let view = data.contiguous_view()?;
    let (data_address, data_len) = match (data.layout(), &view) {
        (
            crate::messages::layout::Layout::Contiguous {
                address: Some(a), ..
            },
            Some(v),
        ) => (*a, v.len() as u64),
        _ if data.shape() == [0] => (0, 0),
        _ => {
            return Err(Error::malformed(
                "record store",
                data.address(),
                "data is not a contiguous dataset in this file",
            ))
        }
    };
    for (k, (&o, &l)) in offset.iter().zip(&length).enumerate() {
        if o.checked_add(l).is_none_or(|e| e > data_len) {
            return Err(Error::malformed(
                "record store",
                data_address,
                format!("record {k} ({l} bytes at {o}) past the {data_len}-byte data"),
            ));
        }
    }
    Ok(Index {
        offset,
        length,
        crc,
        decoded,
        codec,
        payload_type,
        data_address,
        data_len,
    })
}

/// Make `out` hold `len` bytes for the decoders to overwrite (every slot is
/// filled exactly, or the call fails), without a serial pass over them: a
/// buffer that must grow is replaced by a fresh zeroed allocation (zero pages
/// the kernel maps lazily, faulted in by the workers that write them), and a
/// buffer large enough keeps its old bytes instead of being zeroed again
/// (issue 46, row I6: the single-threaded `resize` was a serial part of
/// every multi-thread decode).
fn size_output(out: &mut Vec<u8>, len: usize) {
    if out.capacity() < len {
        *out = vec![0u8; len];
    } else {
        out.truncate(len);
        out.resize(len, 0);
    }
}
