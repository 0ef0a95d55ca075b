//! Datasets (HDF5 File Format Specification IV.A.2.b/d/e/f/h/i/l): datatype,
//! dataspace, layout, filters and fill value, and raw reads of a selection in
//! file byte order from compact, contiguous, external and chunked storage.

use std::sync::{Arc, OnceLock};

use crate::attribute::AttrStorage;
use crate::attribute::{self, Attribute};
use crate::chunk_index::{self, ChunkIndexParams};
use crate::cursor::{bounded, Cursor};
use crate::datatype::Datatype;
use crate::error::{Error, Result};
use crate::file_core::File;
use crate::limits;
use crate::local_heap::LocalHeap;
use crate::messages::dataspace::{Dataspace, SpaceKind};
use crate::messages::external_files::ExternalFiles;
use crate::messages::fill_value::{self, FillValue};
use crate::messages::layout::Layout;
use crate::messages::{filter_pipeline, types};
use crate::object_header::{Message, ObjectHeader};
use crate::selection::Selection;
use crate::source::Source;
use crate::virtual_layout;
use purehdf_filters::FilterSpec;

/// Outputs of 1-byte elements below this size are zeroed before a chunked
/// read: the sequential zeroing pulls the buffer into the last-level cache,
/// after which the scattered chunk-row writes hit it, and blocks that hold
/// only zeros (the background of masks and labelmaps) are then skipped
/// (measured faster for the 12.5 MB uint8 labelmap and for uint8 patches
/// read from fresh handles); larger outputs do not fit, and skipping the
/// zeroing wins (25 MB int16 image: about 2.6x less CPU). See
/// `notes/perf-medh5.md`.
const PREZERO_BYTES: usize = 16 << 20;

/// Whether a new output of `n` bytes of `esize`-byte elements is zeroed
/// before a chunked read ([`PREZERO_BYTES`]). Wider elements (images) are
/// not: they seldom have all-zero blocks, and the serial zeroing cost their
/// patch reads up to 40 % on two threads (the zeroing thread's cache then
/// owns lines the other thread writes) and nothing measurable on one
/// (`notes/bench/bench-2026-12-06d.md`).
fn prezero(n: usize, esize: usize) -> bool {
    esize == 1 && n < PREZERO_BYTES
}

pub(crate) use crate::alloc::advise_huge_pages;

/// An open dataset with its metadata decoded.
#[derive(Clone, Debug)]
pub struct Dataset {
    file: File,
    path: String,
    header: Arc<ObjectHeader>,
    dtype: Datatype,
    space: Dataspace,
    layout: Layout,
    filters: Vec<FilterSpec>,
    fill: FillValue,
    external: Option<ExternalFiles>,
    /// The chunk index walked once, on the first chunked read, and shared by clones.
    chunk_map: Arc<OnceLock<Arc<chunk_index::read::ChunkMap>>>,
    /// A virtual dataset's mappings resolved against its sources, on first use.
    vplan: Arc<OnceLock<Arc<virtual_layout::Plan>>>,
    /// Decoded chunks that partial reads touched (see [`CHUNK_CACHE_BYTES`]),
    /// shared by clones.
    chunk_cache: Arc<OnceLock<chunk_index::ChunkCache>>,
}

/// Decoded bytes one dataset handle keeps of the chunks its partial reads
/// touched, so that neighbouring patches do not decode the same chunk again.
/// Reads covering whole chunks bypass the cache.
pub const CHUNK_CACHE_BYTES: u64 = 64 << 20;

fn decode_with<T>(
    file: &File,
    m: &Message,
    structure: &'static str,
    f: impl FnOnce(&mut Cursor<'_>) -> Result<T>,
) -> Result<T> {
    let body = file.message_body(m)?;
    f(&mut Cursor::new(&body, m.offset, structure))
}

impl Dataset {
    pub(crate) fn new(file: File, path: String, header: Arc<ObjectHeader>) -> Result<Self> {
        let sizes = file.sizes();
        let at = header.address;
        let missing = |what: &str| Error::malformed("dataset", at, format!("no {what} message"));
        let space = match header.first(types::DATASPACE) {
            Some(m) => decode_with(&file, m, "dataspace message", |c| {
                Dataspace::decode(c, sizes)
            })?,
            None => return Err(missing("dataspace")),
        };
        let dtype = file.datatype(
            header
                .first(types::DATATYPE)
                .ok_or_else(|| missing("datatype"))?,
        )?;
        let layout = match header.first(types::LAYOUT) {
            Some(m) => decode_with(&file, m, "layout message", |c| Layout::decode(c, sizes))?,
            None => return Err(missing("layout")),
        };
        let filters = match header.first(types::FILTER_PIPELINE) {
            Some(m) => decode_with(&file, m, "filter pipeline message", filter_pipeline::decode)?,
            None => Vec::new(),
        };
        let fill = if let Some(m) = header.first(types::FILL_VALUE) {
            decode_with(&file, m, "fill value message", fill_value::decode)?
        } else if let Some(m) = header.first(types::FILL_VALUE_OLD) {
            decode_with(&file, m, "fill value message", fill_value::decode_old)?
        } else {
            // No fill value message at all: libhdf5 reports the value undefined.
            FillValue::Undefined
        };
        let external = match header.first(types::EXTERNAL_FILES) {
            Some(m) => Some(decode_with(&file, m, "external files message", |c| {
                ExternalFiles::decode(c, sizes)
            })?),
            None => None,
        };
        Ok(Dataset {
            file,
            path,
            header,
            dtype,
            space,
            layout,
            filters,
            fill,
            external,
            chunk_map: Arc::new(OnceLock::new()),
            vplan: Arc::new(OnceLock::new()),
            chunk_cache: Arc::new(OnceLock::new()),
        })
    }

    pub(crate) fn with_path(mut self, path: String) -> Self {
        self.path = path;
        self
    }

    /// The file the dataset lives in.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Path the dataset was reached by.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The object header (internal structure; may change).
    pub fn header(&self) -> &ObjectHeader {
        &self.header
    }

    /// Object header address (relative to the base address).
    pub fn address(&self) -> u64 {
        self.header.address
    }

    /// Stored datatype.
    pub fn dtype(&self) -> &Datatype {
        &self.dtype
    }

    /// Stored dataspace (internal structure; see [`Dataset::shape`] and
    /// [`Dataset::maxshape`]).
    pub fn dataspace(&self) -> &Dataspace {
        &self.space
    }

    /// Current dimensions (empty for scalar and null datasets). For a virtual
    /// dataset, the extent recomputed from its sources, as libhdf5 reports it
    /// (the stored one when the sources cannot be resolved).
    pub fn shape(&self) -> &[u64] {
        match self.virtual_plan() {
            Ok(Some(p)) => &p.dims,
            _ => &self.space.dims,
        }
    }

    /// The resolved mappings of a virtual dataset (`None` for other layouts),
    /// computed once and shared by clones.
    pub fn virtual_plan(&self) -> Result<Option<&virtual_layout::Plan>> {
        if !matches!(self.layout, Layout::Virtual { .. }) {
            return Ok(None);
        }
        if let Some(p) = self.vplan.get() {
            return Ok(Some(p));
        }
        let p = Arc::new(virtual_layout::plan(self)?);
        Ok(Some(self.vplan.get_or_init(|| p)))
    }

    /// Maximum dimensions (`None` = unlimited).
    pub fn maxshape(&self) -> &[Option<u64>] {
        &self.space.max_dims
    }

    /// Scalar, simple or null dataspace.
    pub fn space_kind(&self) -> SpaceKind {
        self.space.kind
    }

    /// Number of elements (1 for scalar, 0 for null or when the product
    /// overflows).
    pub fn num_elements(&self) -> u64 {
        if matches!(self.layout, Layout::Virtual { .. }) && self.space.kind != SpaceKind::Null {
            return self
                .shape()
                .iter()
                .try_fold(1u64, |a, &d| a.checked_mul(d))
                .unwrap_or(0);
        }
        self.space.num_elements().unwrap_or(0)
    }

    /// Stored layout (internal structure; see [`Dataset::layout_kind`]).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// `"compact"`, `"contiguous"`, `"chunked"` or `"virtual"`.
    pub fn layout_kind(&self) -> &'static str {
        self.layout.kind_name()
    }

    /// Chunk dimensions of a chunked dataset.
    pub fn chunk_dims(&self) -> Option<&[u64]> {
        match &self.layout {
            Layout::Chunked { chunk_dims, .. } => Some(chunk_dims),
            _ => None,
        }
    }

    /// Everything the chunk index needs, for chunked datasets.
    pub fn chunk_params(&self) -> Option<ChunkIndexParams> {
        let esize = u32::try_from(self.dtype.size()).unwrap_or(u32::MAX);
        self.layout
            .chunk_params(&self.space, esize, !self.filters.is_empty())
    }

    /// The filter pipeline, in the order the writer applied it.
    pub fn filters(&self) -> &[FilterSpec] {
        &self.filters
    }

    /// The fill value message (unwritten chunks read as it).
    pub fn fill_value(&self) -> &FillValue {
        &self.fill
    }

    /// External raw-data files, when the data lives outside the HDF5 file.
    pub fn external_files(&self) -> Option<&ExternalFiles> {
        self.external.as_ref()
    }

    /// The dataset's attributes (name order).
    pub fn attributes(&self) -> Result<Vec<Attribute>> {
        attribute::read_all(&self.file, &self.header)
    }

    /// The attribute `name`, or [`crate::Error::NotFound`].
    pub fn attribute(&self, name: &str) -> Result<Attribute> {
        attribute::find(&self.file, &self.header, name)
    }

    /// Where the attributes are stored (header messages or dense storage).
    pub fn attr_storage(&self) -> AttrStorage {
        attribute::storage(&self.file, &self.header)
    }

    fn element_size(&self) -> Result<usize> {
        bounded(
            self.dtype.size(),
            limits::MAX_DECODED,
            "dataset",
            self.address(),
            "element size",
        )
    }

    /// Bytes of the whole dataset in storage order (before filters).
    fn logical_size(&self) -> Result<u64> {
        self.num_elements()
            .checked_mul(self.dtype.size())
            .ok_or(Error::Overflow {
                structure: "dataset",
                offset: self.address(),
                what: "dataset size",
            })
    }

    /// `Err(Error::OverBudget)` naming this dataset when its logical size
    /// (elements × element size) exceeds the data budget of its file
    /// (`limits::data_budget`); callers that visit a whole dataset (verify,
    /// fix, copy, index) check it first.
    pub fn check_budget(&self) -> Result<()> {
        // From the shape itself: an element count that overflows is over budget
        // (`num_elements` reads it as 0).
        let size = self
            .shape()
            .iter()
            .try_fold(self.dtype.size(), |a, &d| a.checked_mul(d))
            .unwrap_or(u64::MAX);
        limits::check_budget(self.path(), "logical size", size, self.file.source().len())
    }

    /// Bytes allocated in the file for the raw data.
    pub fn storage_size(&self) -> Result<u64> {
        match &self.layout {
            Layout::Compact { data } => Ok(data.len() as u64),
            Layout::Contiguous { address, size } => {
                if let Some(ext) = &self.external {
                    return Ok(ext
                        .slots
                        .iter()
                        .map(|s| s.size)
                        .fold(0, u64::saturating_add));
                }
                match address {
                    None => Ok(0),
                    Some(_) => match size {
                        Some(s) => Ok(*s),
                        None => self.logical_size(),
                    },
                }
            }
            Layout::Chunked { .. } => {
                let Some(params) = self.chunk_params() else {
                    return Ok(0);
                };
                if params.address.is_none() {
                    return Ok(0);
                }
                let chunks = chunk_index::chunks(self.file.source(), self.file.sizes(), &params)?;
                Ok(chunks.iter().map(|c| c.size).fold(0, u64::saturating_add))
            }
            Layout::Virtual { .. } => Ok(0),
        }
    }

    /// Read `selection` into `out`: C order, one stored element (file byte order,
    /// no conversion) per selected element. `out.len()` must be exactly
    /// `selected elements × element size`.
    pub fn read_raw(&self, selection: &Selection, out: &mut [u8]) -> Result<()> {
        self.read_raw_cached(selection, out, true)
    }

    /// [`Dataset::read_raw`] without the decoded-chunk cache, for one-pass
    /// streaming (nothing is kept, and chunk parts are decoded only once).
    pub fn read_raw_uncached(&self, selection: &Selection, out: &mut [u8]) -> Result<()> {
        self.read_raw_cached(selection, out, false)
    }

    /// Read the stepped selection `h` of a plainly chunked dataset into `out`
    /// (its dense C-order array, stored bytes): every chunk holding a
    /// selected element is decoded once and its elements gathered from it.
    /// `Ok(false)`, nothing read, for other layouts.
    pub(crate) fn read_chunked_strided(
        &self,
        h: &crate::Hyperslab,
        out: &mut [u8],
    ) -> Result<bool> {
        let plain_chunked = matches!(self.layout, Layout::Chunked { .. })
            && self.space.kind != SpaceKind::Null
            && self.virtual_plan()?.is_none();
        if !plain_chunked {
            return Ok(false);
        }
        let (map, cache) = self.chunk_parts(true)?;
        let r = chunk_index::read::read_chunked_strided(
            self.file.source(),
            &map,
            &self.filters,
            self.fill.bytes(),
            h,
            out,
            cache,
        );
        self.file.source().check()?;
        r.map_err(|e| self.name_chunk_error(e))?;
        Ok(true)
    }

    fn read_raw_cached(
        &self,
        selection: &Selection,
        out: &mut [u8],
        use_cache: bool,
    ) -> Result<()> {
        // Bytes copied from a mapping of a file truncated meanwhile are refused,
        // and a decode error caused by such bytes is reported as what it is.
        let r = self.read_raw_unchecked(selection, out, use_cache);
        self.file.source().check()?;
        r
    }

    fn read_raw_unchecked(
        &self,
        selection: &Selection,
        out: &mut [u8],
        use_cache: bool,
    ) -> Result<()> {
        let esize = self.element_size()?;
        if let Some(plan) = self.virtual_plan()? {
            return virtual_layout::read(self, plan, selection, out);
        }
        if self.space.kind == SpaceKind::Null {
            return if out.is_empty() {
                Ok(())
            } else {
                Err(Error::InvalidArgument(
                    "null dataspace holds no data".into(),
                ))
            };
        }
        let dims = &self.space.dims;
        let (start, count, need) = selection.resolve_for_buffer(dims, esize, out.len())?;
        if need == 0 {
            return Ok(());
        }
        match &self.layout {
            Layout::Compact { data } => {
                let total = self.logical_size()?;
                if (data.len() as u64) < total {
                    return Err(Error::malformed(
                        "compact layout",
                        self.address(),
                        format!("{} bytes stored, dataset needs {total}", data.len()),
                    ));
                }
                for_each_run(dims, &start, &count, esize, &mut |src_off, dst_off, len| {
                    copy_run(data, src_off, out, dst_off, len)
                })
            }
            Layout::Contiguous { address, .. } => {
                if let Some(ext) = &self.external {
                    return self.read_external(ext, dims, &start, &count, esize, out);
                }
                match address {
                    None => {
                        self.fill_buffer(out, esize);
                        Ok(())
                    }
                    Some(addr) if self.file.source().wants_prefetch() => read_contiguous_planned(
                        self.file.source(),
                        *addr,
                        dims,
                        &start,
                        &count,
                        esize,
                        out,
                    ),
                    Some(addr) => {
                        let src = self.file.source();
                        for_each_run(dims, &start, &count, esize, &mut |src_off, dst_off, len| {
                            let at = addr.checked_add(src_off).ok_or(Error::Overflow {
                                structure: "contiguous data",
                                offset: *addr,
                                what: "element address",
                            })?;
                            let dst = dst_off
                                .checked_add(len)
                                .and_then(|end| out.get_mut(dst_off..end))
                                .ok_or_else(|| {
                                    Error::malformed("dataset", *addr, "run outside output")
                                })?;
                            src.read_into("contiguous data", at, dst)
                        })
                    }
                }
            }
            Layout::Chunked { .. } => {
                let (map, cache) = self.chunk_parts(use_cache)?;
                chunk_index::read::read_chunked_with(
                    self.file.source(),
                    &map,
                    &self.filters,
                    self.fill.bytes(),
                    selection,
                    out,
                    cache,
                )
                .map_err(|e| self.name_chunk_error(e))
            }
            Layout::Virtual { .. } => Err(Error::malformed(
                "layout",
                self.address(),
                "virtual layout without a plan",
            )),
        }
    }

    /// The chunk lookup (built on first use, shared by clones) and, when
    /// `use_cache`, the decoded-chunk cache of a chunked dataset.
    fn chunk_parts(
        &self,
        use_cache: bool,
    ) -> Result<(
        Arc<chunk_index::read::ChunkMap>,
        Option<&chunk_index::ChunkCache>,
    )> {
        let params = self.chunk_params().ok_or_else(|| {
            Error::malformed("layout", self.address(), "chunked layout without params")
        })?;
        let map = match self.chunk_map.get() {
            Some(m) => m.clone(),
            None => {
                let unfiltered_edges =
                    matches!(self.layout, Layout::Chunked { flags, .. } if flags & 1 != 0);
                let m = chunk_index::read::ChunkMap::build(
                    self.file.source(),
                    self.file.sizes(),
                    &params,
                )?
                .with_unfiltered_edges(unfiltered_edges);
                self.chunk_map.get_or_init(|| Arc::new(m)).clone()
            }
        };
        let cache = use_cache.then(|| {
            self.chunk_cache.get_or_init(|| {
                let n = CHUNK_CACHE_BYTES / map.grid().chunk_bytes.max(1);
                chunk_index::ChunkCache::new(usize::try_from(n).unwrap_or(0))
            })
        });
        Ok((map, cache))
    }

    /// Read `selection` into a new buffer of exactly its size (capped by
    /// `limits::MAX_DECODED`), like [`Dataset::read_raw`]. Chunked data is
    /// decoded straight into fresh memory that is never zeroed first: the
    /// chunked reader reports that it wrote every byte before the buffer is
    /// exposed. Other layouts read into a zeroed buffer.
    pub fn read_raw_vec(&self, selection: &Selection) -> Result<Vec<u8>> {
        self.read_raw_vec_cached(selection, true)
    }

    /// [`Dataset::read_raw_vec`] without the decoded-chunk cache (see
    /// [`Dataset::read_raw_uncached`]).
    pub fn read_raw_vec_uncached(&self, selection: &Selection) -> Result<Vec<u8>> {
        self.read_raw_vec_cached(selection, false)
    }

    fn read_raw_vec_cached(&self, selection: &Selection, use_cache: bool) -> Result<Vec<u8>> {
        let esize = self.element_size()?;
        let (_, count) = selection.resolve(&self.space.dims).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "selection {selection:?} outside dataspace {:?}",
                self.space.dims
            ))
        })?;
        let total = count
            .iter()
            .try_fold(esize as u64, |a, &c| a.checked_mul(c))
            .ok_or_else(|| Error::InvalidArgument("selection too large".into()))?;
        let n = bounded(
            total,
            limits::MAX_DECODED,
            "dataset",
            self.address(),
            "selection size",
        )?;
        self.read_raw_vec_sized(selection, use_cache, n, prezero(n, esize))
    }

    /// [`Dataset::read_raw_vec`] of `n` bytes (already checked against the
    /// selection), zeroing the buffer first when `zeroed` or when the data is
    /// not plainly chunked.
    pub(crate) fn read_raw_vec_sized(
        &self,
        selection: &Selection,
        use_cache: bool,
        n: usize,
        zeroed: bool,
    ) -> Result<Vec<u8>> {
        let plain_chunked = matches!(self.layout, Layout::Chunked { .. })
            && self.space.kind != SpaceKind::Null
            && self.virtual_plan()?.is_none();
        if plain_chunked && n > 0 && zeroed {
            let (map, cache) = self.chunk_parts(use_cache)?;
            let r = chunk_index::read::read_chunked_vec_zeroed(
                self.file.source(),
                &map,
                &self.filters,
                self.fill.bytes(),
                selection,
                n,
                cache,
            );
            self.file.source().check()?;
            return r.map_err(|e| self.name_chunk_error(e));
        }
        if !plain_chunked || n == 0 {
            let mut out = vec![0u8; n];
            advise_huge_pages(&mut out);
            self.read_raw_cached(selection, &mut out, use_cache)?;
            return Ok(out);
        }
        let (map, cache) = self.chunk_parts(use_cache)?;
        let mut out: Vec<u8> = Vec::with_capacity(n);
        advise_huge_pages(&mut out);
        let spare = out.spare_capacity_mut().get_mut(..n).ok_or_else(|| {
            Error::malformed("dataset", self.address(), "output allocation too small")
        })?;
        let r = chunk_index::read::read_chunked_uninit(
            self.file.source(),
            &map,
            &self.filters,
            self.fill.bytes(),
            selection,
            spare,
            cache,
        );
        self.file.source().check()?;
        r.map_err(|e| self.name_chunk_error(e))?;
        // SAFETY: `read_chunked_uninit` returned `Ok`, which it does only when
        // all `n` bytes of `spare` (the first `n` of the capacity) were written.
        unsafe { out.set_len(n) };
        Ok(out)
    }

    /// A chunk error from the index layer, which knows only the index's
    /// address, renamed with this dataset's path.
    fn name_chunk_error(&self, e: Error) -> Error {
        match e {
            Error::Chunk { coords, source, .. } => Error::Chunk {
                dataset: self.path().to_string(),
                coords,
                source,
            },
            other => other,
        }
    }

    /// The whole dataset's raw bytes (capped by `limits::MAX_DECODED`).
    pub fn read_all_raw(&self) -> Result<Vec<u8>> {
        let total = self.logical_size()?;
        let n = bounded(
            total,
            limits::MAX_DECODED,
            "dataset",
            self.address(),
            "dataset size",
        )?;
        if self.space.kind == SpaceKind::Null {
            return Ok(vec![0u8; n]);
        }
        // `n` comes from the logical size, which for a virtual dataset with
        // unlimited mappings is the extent its sources give (not the stored
        // dims), so the buffer is sized here rather than from the selection.
        let esize = self.element_size()?;
        self.read_raw_vec_sized(&Selection::All, true, n, prezero(n, esize))
    }

    fn fill_buffer(&self, out: &mut [u8], esize: usize) {
        match self.fill.bytes() {
            Some(f) if f.len() == esize && esize > 0 => {
                for chunk in out.chunks_mut(esize) {
                    let n = chunk.len();
                    chunk.copy_from_slice(f.get(..n).unwrap_or(f));
                }
            }
            _ => out.fill(0),
        }
    }

    fn read_external(
        &self,
        ext: &ExternalFiles,
        dims: &[u64],
        start: &[u64],
        count: &[u64],
        esize: usize,
        out: &mut [u8],
    ) -> Result<()> {
        let heap = LocalHeap::read(self.file.source(), self.file.sizes(), ext.heap_address)?;
        let mut opened: Vec<Option<Arc<dyn Source>>> = ext.slots.iter().map(|_| None).collect();
        for_each_run(dims, start, count, esize, &mut |src_off, dst_off, len| {
            let mut logical = src_off;
            let mut written = 0usize;
            let mut slot_start = 0u64;
            for (i, slot) in ext.slots.iter().enumerate() {
                if written == len {
                    break;
                }
                let slot_end = slot_start.saturating_add(slot.size);
                if logical >= slot_start && logical < slot_end {
                    let within = logical - slot_start;
                    let n = ((slot_end - logical) as usize).min(len - written);
                    if opened.get(i).is_some_and(Option::is_none) {
                        let name = heap.string(slot.name_offset)?;
                        let src = self.file.open_raw_file(&name)?;
                        if let Some(o) = opened.get_mut(i) {
                            *o = Some(src);
                        }
                    }
                    let src = opened
                        .get(i)
                        .and_then(Option::as_ref)
                        .ok_or_else(|| Error::NotFound("external file".into()))?;
                    let at = slot.file_offset.saturating_add(within);
                    let bytes = src.read("external raw data", at, n as u64)?;
                    copy_run(&bytes, 0, out, dst_off + written, n)?;
                    written += n;
                    logical += n as u64;
                }
                slot_start = slot_end;
            }
            if written < len {
                return Err(Error::malformed(
                    "external files",
                    self.address(),
                    "external files do not cover the dataset",
                ));
            }
            Ok(())
        })
    }
}

fn copy_run(src: &[u8], src_off: u64, out: &mut [u8], dst_off: usize, len: usize) -> Result<()> {
    let s = usize::try_from(src_off).ok();
    let piece = s
        .and_then(|s| src.get(s..s.checked_add(len)?))
        .ok_or(Error::Truncated {
            structure: "raw data",
            offset: src_off,
            needed: len as u64,
            available: src.len() as u64,
        })?;
    let dst = dst_off
        .checked_add(len)
        .and_then(|e| out.get_mut(dst_off..e))
        .ok_or_else(|| Error::InvalidArgument("output buffer too small".into()))?;
    dst.copy_from_slice(piece);
    Ok(())
}

/// Most runs of a contiguous read planned as one window.
const MAX_WINDOW_RUNS: usize = 1 << 16;

/// The selection's runs of contiguous data at `addr`, read from a source that
/// plans its reads: a window of runs (at most the source's prefetch window in
/// bytes, [`MAX_WINDOW_RUNS`] runs; longer runs split) is prefetched as one
/// batch, copied out, and released before the next.
fn read_contiguous_planned(
    src: &dyn crate::source::Source,
    addr: u64,
    dims: &[u64],
    start: &[u64],
    count: &[u64],
    esize: usize,
    out: &mut [u8],
) -> Result<()> {
    let window = src.prefetch_window().max(1);
    let step = usize::try_from(window).unwrap_or(usize::MAX);
    let max_runs = if window == u64::MAX {
        // One window per read (no fetcher: a read restarts from the top).
        MAX_WINDOW_RUNS << 4
    } else {
        MAX_WINDOW_RUNS
    };
    let mut runs: Vec<(u64, usize, usize)> = Vec::new();
    let mut bytes = 0u64;
    for_each_run(dims, start, count, esize, &mut |src_off, dst_off, len| {
        let at = addr.checked_add(src_off).ok_or(Error::Overflow {
            structure: "contiguous data",
            offset: addr,
            what: "element address",
        })?;
        let mut done = 0usize;
        while done < len {
            let n = (len - done).min(step);
            let full = bytes.saturating_add(n as u64) > window || runs.len() >= max_runs;
            if !runs.is_empty() && full {
                read_window(src, &mut runs, out)?;
                bytes = 0;
            }
            // `done < len` and `len` fits the output, so these do not overflow.
            runs.push((
                at.saturating_add(done as u64),
                dst_off.saturating_add(done),
                n,
            ));
            bytes = bytes.saturating_add(n as u64);
            done += n;
        }
        Ok(())
    })?;
    if runs.is_empty() {
        return Ok(());
    }
    read_window(src, &mut runs, out)
}

/// Prefetch, copy out and release one window of contiguous runs
/// `(source offset, output offset, length)`; `runs` is emptied.
fn read_window(
    src: &dyn crate::source::Source,
    runs: &mut Vec<(u64, usize, usize)>,
    out: &mut [u8],
) -> Result<()> {
    use crate::fetch::ByteRange;
    let mut ranges: Vec<ByteRange> = Vec::new();
    for &(at, _, n) in runs.iter() {
        match ranges.last_mut() {
            Some(r) if r.end() == Some(at) => r.len = r.len.saturating_add(n as u64),
            _ => ranges.push(ByteRange::new(at, n as u64)),
        }
    }
    src.prefetch(&ranges)?;
    let r = runs.iter().try_for_each(|&(at, d, n)| {
        let dst = d
            .checked_add(n)
            .and_then(|end| out.get_mut(d..end))
            .ok_or_else(|| Error::malformed("dataset", at, "run outside output"))?;
        src.read_into("contiguous data", at, dst)
    });
    if !r.as_ref().is_err_and(|e| e.needed_ranges().is_some()) {
        src.release(&ranges);
    }
    runs.clear();
    r
}

/// Visit the contiguous byte runs of a box selection over a C-ordered array:
/// `f(source byte offset, destination byte offset, length)`.
pub(crate) fn for_each_run(
    dims: &[u64],
    start: &[u64],
    count: &[u64],
    esize: usize,
    f: &mut dyn FnMut(u64, usize, usize) -> Result<()>,
) -> Result<()> {
    let overflow = || Error::Overflow {
        structure: "selection",
        offset: 0,
        what: "run offset",
    };
    let rank = dims.len();
    if start.len() != rank || count.len() != rank {
        return Err(Error::InvalidArgument(
            "selection rank differs from the dataspace".into(),
        ));
    }
    if count.contains(&0) {
        return Ok(());
    }
    // stride[i]: elements between consecutive indices along dimension i.
    let mut stride = vec![1u64; rank];
    for i in (0..rank.saturating_sub(1)).rev() {
        stride[i] = stride[i + 1]
            .checked_mul(dims[i + 1])
            .ok_or_else(overflow)?;
    }
    // Merge trailing dimensions that are selected whole into one run.
    let whole = |d: usize| start[d] == 0 && count[d] == dims[d];
    let mut j = rank.saturating_sub(1);
    while j > 0 && whole(j) {
        j -= 1;
    }
    let (run_elems, outer) = if rank == 0 {
        (1u64, 0usize)
    } else {
        (count[j].checked_mul(stride[j]).ok_or_else(overflow)?, j)
    };
    let run_len = usize::try_from(run_elems.checked_mul(esize as u64).ok_or_else(overflow)?)
        .map_err(|_| overflow())?;
    let mut idx = vec![0u64; outer];
    let mut dst = 0usize;
    loop {
        let mut off = if rank == 0 {
            0
        } else {
            start[outer] * stride[outer]
        };
        for d in 0..outer {
            let e = (start[d] + idx[d])
                .checked_mul(stride[d])
                .ok_or_else(overflow)?;
            off = off.checked_add(e).ok_or_else(overflow)?;
        }
        let byte_off = off.checked_mul(esize as u64).ok_or_else(overflow)?;
        f(byte_off, dst, run_len)?;
        dst = dst.checked_add(run_len).ok_or_else(overflow)?;
        // Advance the odometer over the outer dimensions.
        let mut d = outer;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < count[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(dims: &[u64], start: &[u64], count: &[u64]) -> Vec<(u64, usize, usize)> {
        let mut v = Vec::new();
        for_each_run(dims, start, count, 2, &mut |s, d, l| {
            v.push((s, d, l));
            Ok(())
        })
        .unwrap();
        v
    }

    #[test]
    fn runs_merge_whole_dimensions() {
        assert_eq!(runs(&[4, 5], &[0, 0], &[4, 5]), vec![(0, 0, 40)]);
        assert_eq!(runs(&[4, 5], &[1, 0], &[2, 5]), vec![(10, 0, 20)]);
        assert_eq!(
            runs(&[4, 5], &[1, 1], &[2, 3]),
            vec![(12, 0, 6), (22, 6, 6)]
        );
        assert_eq!(runs(&[], &[], &[]), vec![(0, 0, 2)]);
        assert_eq!(runs(&[3, 2, 2], &[1, 0, 0], &[1, 2, 2]), vec![(8, 0, 8)]);
        assert_eq!(
            runs(&[3, 2, 2], &[0, 1, 0], &[2, 1, 2]),
            vec![(4, 0, 4), (12, 4, 4)]
        );
        assert!(runs(&[4, 5], &[0, 0], &[0, 5]).is_empty());
    }
}
