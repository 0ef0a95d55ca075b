//! The format core below the handles (HDF5 File Format Specification II–IV
//! as a whole): an open file's byte source and base-address shift, its
//! superblock, object-header reading, shared-message resolution, global-heap
//! lookups for variable-length data and references, the caches they share,
//! and the files an external link or a virtual dataset names. `Group`,
//! `Dataset`, `Attribute` and links hold a [`File`] and build on this module;
//! the user's entry points that return handles (`File::root`,
//! `File::object`) live above them in `file`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use crate::cache_image::{CacheImage, CacheImageMessage, OverlaySource};
use crate::cursor::Cursor;
use crate::datatype::Datatype;
use crate::error::{Error, Result};
use crate::fractal_heap::FractalHeap;
use crate::global_heap::{Collection, HeapId, VlenRef};
use crate::messages::link::LinkMessage;
use crate::messages::shared::{decode_table_message, SharedRef, SohmTable};
use crate::messages::{datatype, types};
use crate::object_header::{Message, ObjectHeader};
use crate::source::{Identity, MemSource, PreadSource, Source};
use crate::superblock::Superblock;
use crate::virtual_layout::locate::PrefixKind;
use crate::Sizes;

/// Most global-heap collections kept parsed at once.
const GHEAP_CACHE: usize = 256;
/// Deepest chain of shared messages pointing at shared messages.
const MAX_SHARED_DEPTH: usize = 8;
/// Most groups whose sorted link lists are kept at once.
const LINK_CACHE: usize = 64;

/// A source seen from the base address: offset 0 is the superblock's base.
struct BasedSource {
    inner: Arc<dyn Source>,
    base: u64,
}

impl Source for BasedSource {
    fn len(&self) -> u64 {
        self.inner.len().saturating_sub(self.base)
    }
    fn as_slice(&self) -> Option<&[u8]> {
        let all = self.inner.as_slice()?;
        all.get(usize::try_from(self.base).ok()?..)
    }
    fn check(&self) -> Result<()> {
        self.inner.check()
    }
    fn identity(&self) -> Option<crate::source::Identity> {
        self.inner.identity()
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let at = offset.checked_add(self.base).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "offset overflow")
        })?;
        self.inner.read_exact_at(at, buf)
    }
    // Sources that plan their reads (remote ones) get the reads, with their
    // typed errors, and the plans shifted by the base; local sources keep the
    // default paths above.
    fn read(&self, structure: &'static str, offset: u64, len: u64) -> Result<Cow<'_, [u8]>> {
        if !self.inner.wants_prefetch() {
            return crate::source::read_default(self, structure, offset, len);
        }
        crate::source::in_bounds(structure, offset, len, self.len())?;
        self.inner.read(structure, self.shift(offset)?, len)
    }
    fn read_into(&self, structure: &'static str, offset: u64, out: &mut [u8]) -> Result<()> {
        if !self.inner.wants_prefetch() {
            return crate::source::read_into_default(self, structure, offset, out);
        }
        crate::source::in_bounds(structure, offset, out.len() as u64, self.len())?;
        self.inner.read_into(structure, self.shift(offset)?, out)
    }
    fn wants_prefetch(&self) -> bool {
        self.inner.wants_prefetch()
    }
    fn prefetch_window(&self) -> u64 {
        self.inner.prefetch_window()
    }
    fn pipeline_step(&self) -> Option<u64> {
        self.inner.pipeline_step()
    }
    fn pipeline_depth(&self) -> usize {
        self.inner.pipeline_depth()
    }
    fn prefetch(&self, ranges: &[crate::fetch::ByteRange]) -> Result<()> {
        self.inner.prefetch(&self.shift_all(ranges))
    }
    fn release(&self, ranges: &[crate::fetch::ByteRange]) {
        self.inner.release(&self.shift_all(ranges))
    }
}

impl BasedSource {
    fn shift(&self, offset: u64) -> Result<u64> {
        offset.checked_add(self.base).ok_or(Error::Overflow {
            structure: "based read",
            offset,
            what: "offset plus base address",
        })
    }

    /// `ranges` as offsets of the inner source (ranges that overflow dropped).
    fn shift_all(&self, ranges: &[crate::fetch::ByteRange]) -> Vec<crate::fetch::ByteRange> {
        ranges
            .iter()
            .filter_map(|r| {
                Some(crate::fetch::ByteRange::new(
                    self.shift(r.offset).ok()?,
                    r.len,
                ))
            })
            .collect()
    }
}

struct Inner {
    src: Arc<dyn Source>,
    path: Option<PathBuf>,
    superblock: Superblock,
    // Read-mostly: readers share the read lock on hits (neighbours I6).
    gheap: RwLock<HashMap<u64, Arc<Collection>>>,
    sohm: OnceLock<Option<SohmTable>>,
    links: RwLock<HashMap<u64, Arc<Vec<LinkMessage>>>>,
    /// Identity of each file opened through an external link or VDS mapping,
    /// by path: a later open that finds another file is refused.
    externals: Mutex<HashMap<PathBuf, Identity>>,
    /// How this file's virtual datasets are read (`None`: the process default).
    virtual_options: Mutex<Option<crate::virtual_layout::locate::VirtualOptions>>,
    /// For a remote object: how the files named beside it are reached.
    remote: OnceLock<Arc<dyn Siblings>>,
}

/// An open HDF5 file. Cheap to clone (shared handle).
#[derive(Clone)]
pub struct File {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("File")
            .field("path", &self.inner.path)
            .field("superblock", &self.inner.superblock)
            .finish()
    }
}

/// How a file opened from a remote object reaches the files named beside it
/// (`fetch::sibling::RemoteOrigin`): the core names only this seam, so it
/// stays below the remote reader that implements it.
pub(crate) trait Siblings: Send + Sync {
    /// Open the file `name` that `holder` (an external link, a virtual
    /// dataset mapping) names.
    fn open_file(&self, holder: &File, name: &str, kind: PrefixKind) -> Result<File>;
    /// Open the external raw-data file `name` as a byte source.
    fn open_raw(&self, name: &str) -> Result<Arc<dyn Source>>;
}

/// A decoded HDF5 1.12+ reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RevisedReference {
    /// 2 object, 3 dataset region, 4 attribute (`H5R_type_t`).
    pub kind: u8,
    /// The file the object lives in, when not this one.
    pub external_file: Option<String>,
    /// Object header address of the referenced object.
    pub address: Option<u64>,
    /// Attribute name, for attribute references.
    pub attribute: Option<String>,
}

impl File {
    /// Open `path` (memory-mapped with the `mmap` feature, positional reads otherwise).
    /// A map keeps the opened inode (a file replaced by rename reads as it was);
    /// a file truncated in place under it gives [`Error::SourceChanged`], not
    /// SIGBUS (see `hdf5fmt::mapguard` and the README).
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        #[cfg(feature = "mmap")]
        {
            let src = crate::source::MmapSource::open(path)?;
            Self::from_source(Arc::new(src), Some(path.to_path_buf()))
        }
        #[cfg(not(feature = "mmap"))]
        {
            Self::open_pread(path)
        }
    }

    /// Open `path` with positional reads (safe against files changing underneath).
    pub fn open_pread(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let src = PreadSource::open(path)?;
        Self::from_source(Arc::new(src), Some(path.to_path_buf()))
    }

    /// A file held in memory (no path: external links and files cannot resolve).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self> {
        Self::from_source(Arc::new(MemSource::new(bytes)), None)
    }

    /// For a file opened from a remote object: how the files named beside
    /// it are reached.
    pub(crate) fn remote_origin(&self) -> Option<&dyn Siblings> {
        self.inner.remote.get().map(|r| &**r)
    }

    /// Make `siblings` how this file (opened from a remote object) reaches
    /// the files named beside it; only the first call sets it.
    pub(crate) fn set_siblings(&self, siblings: Arc<dyn Siblings>) {
        let _ = self.inner.remote.set(siblings);
    }

    /// A file over any byte source; `path` anchors external links and raw-data files.
    /// A file shorter than the end-of-file address its superblock stores is
    /// refused with [`Error::TruncatedFile`], as libhdf5 refuses it.
    pub fn from_source(src: Arc<dyn Source>, path: Option<PathBuf>) -> Result<Self> {
        Self::from_source_checked(src, path, true)
    }

    /// [`File::open`] of a file that may be cut short (a copy interrupted, a
    /// writer killed): what lies inside the file reads as usual, anything
    /// past its end is a typed error when it is reached.
    pub fn open_truncated(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let src = PreadSource::open(path)?;
        Self::from_source_checked(Arc::new(src), Some(path.to_path_buf()), false)
    }

    pub(crate) fn from_source_checked(
        src: Arc<dyn Source>,
        path: Option<PathBuf>,
        refuse_truncated: bool,
    ) -> Result<Self> {
        let superblock = Superblock::find(src.as_ref())?;
        if refuse_truncated {
            superblock.check_length(src.len())?;
        }
        let src: Arc<dyn Source> = if superblock.base_address == 0 {
            src
        } else {
            Arc::new(BasedSource {
                inner: src,
                base: superblock.base_address,
            })
        };
        let src = with_cache_image(src, &superblock)?;
        Ok(File {
            inner: Arc::new(Inner {
                src,
                path,
                superblock,
                gheap: RwLock::new(HashMap::new()),
                sohm: OnceLock::new(),
                links: RwLock::new(HashMap::new()),
                externals: Mutex::new(HashMap::new()),
                virtual_options: Mutex::new(None),
                remote: OnceLock::new(),
            }),
        })
    }

    /// The bytes, seen from the base address (what every stored address is relative to).
    pub fn source(&self) -> &dyn Source {
        self.inner.src.as_ref()
    }

    /// The shared byte source (seen from the base address), for views that
    /// outlive the handles they came from ([`crate::ByteView`]).
    pub fn source_arc(&self) -> Arc<dyn Source> {
        Arc::clone(&self.inner.src)
    }

    /// Path the file was opened from, if any.
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// Identity (device, inode, size, times) of the file as opened, from the
    /// opened descriptor; `None` for in-memory sources.
    pub fn identity(&self) -> Option<Identity> {
        self.inner.src.identity()
    }

    /// True when the path this file was opened from now names another file or
    /// the file's size or times changed (replaced, truncated or rewritten), or
    /// the path is gone. A reader keeps reading its own snapshot either way
    /// (a map keeps the old inode); this tells the caller it is stale.
    pub fn is_replaced(&self) -> bool {
        match (self.path(), self.identity()) {
            (Some(p), Some(id)) => Identity::of_path(p).map_or(true, |now| now != id),
            _ => false,
        }
    }

    /// A new handle on the same path, refused with [`Error::StaleSnapshot`] when
    /// the path now names another file than this one (so two handles never
    /// read from two versions).
    pub fn reopen(&self) -> Result<File> {
        let p = self
            .path()
            .ok_or_else(|| Error::InvalidArgument("file has no path to reopen".into()))?;
        let f = if self.inner.src.as_slice().is_some() {
            File::open(p)?
        } else {
            File::open_pread(p)?
        };
        if f.identity() != self.identity() {
            return Err(Error::StaleSnapshot(format!(
                "{} was replaced or changed since it was opened",
                p.display()
            )));
        }
        Ok(f)
    }

    /// `Err(Error::SourceChanged)` when bytes read so far may not be the
    /// file's (it was truncated while mapped); see [`Source::check`].
    pub fn check_unchanged(&self) -> Result<()> {
        self.inner.src.check()
    }

    /// The superblock (internal structure; may change).
    pub fn superblock(&self) -> &Superblock {
        &self.inner.superblock
    }

    /// Sizes of offsets and lengths in this file.
    pub fn sizes(&self) -> Sizes {
        self.inner.superblock.sizes
    }

    /// Read the object header at `address`.
    pub fn header(&self, address: u64) -> Result<ObjectHeader> {
        ObjectHeader::read(self.source(), self.sizes(), address)
    }

    /// The same bytes seen with the group whose header is at `address` as the
    /// root (a member of a medh5 collection read as an ordinary sample); caches
    /// start empty, the byte source is shared.
    pub fn rerooted(&self, address: u64) -> File {
        let mut superblock = self.inner.superblock.clone();
        superblock.root_address = address;
        File {
            inner: Arc::new(Inner {
                src: Arc::clone(&self.inner.src),
                path: self.inner.path.clone(),
                superblock,
                gheap: RwLock::new(HashMap::new()),
                sohm: OnceLock::new(),
                links: RwLock::new(HashMap::new()),
                externals: Mutex::new(
                    self.inner
                        .externals
                        .lock()
                        .map(|m| m.clone())
                        .unwrap_or_default(),
                ),
                virtual_options: Mutex::new(self.own_virtual_options()),
                remote: self.inner.remote.clone(),
            }),
        }
    }

    /// The body of `msg`, with a shared-message reference resolved.
    pub fn message_body<'m>(&self, msg: &'m Message) -> Result<Cow<'m, [u8]>> {
        if !msg.is_shared() {
            return Ok(Cow::Borrowed(&msg.data));
        }
        let r = SharedRef::decode(&mut msg.cursor("shared message"), self.sizes())?;
        Ok(Cow::Owned(self.resolve_shared(msg.mtype, &r)?))
    }

    /// The body of the message of type `mtype` that a shared reference points at.
    pub fn resolve_shared(&self, mtype: u16, r: &SharedRef) -> Result<Vec<u8>> {
        self.resolve_shared_depth(mtype, r, 0)
    }

    fn resolve_shared_depth(&self, mtype: u16, r: &SharedRef, depth: usize) -> Result<Vec<u8>> {
        if depth > MAX_SHARED_DEPTH {
            return Err(Error::Cycle {
                structure: "shared message",
                offset: 0,
            });
        }
        match r {
            SharedRef::ObjectHeader(addr) => {
                let h = self.header(*addr)?;
                let m = h.first(mtype).ok_or_else(|| {
                    Error::malformed(
                        "shared message",
                        *addr,
                        format!("referenced header has no message of type {mtype}"),
                    )
                })?;
                if m.is_shared() {
                    let r2 = SharedRef::decode(&mut m.cursor("shared message"), self.sizes())?;
                    self.resolve_shared_depth(mtype, &r2, depth + 1)
                } else {
                    Ok(m.data.clone())
                }
            }
            SharedRef::Heap(id) => {
                let table = self.sohm_table().ok_or_else(|| {
                    Error::malformed("shared message", 0, "no shared message table in this file")
                })?;
                let heap = table.heap_for(mtype).ok_or_else(|| {
                    Error::malformed(
                        "shared message table",
                        0,
                        format!("no index for message type {mtype}"),
                    )
                })?;
                let fh = FractalHeap::open(self.source(), self.sizes(), heap)?;
                fh.object(self.source(), self.sizes(), id)
            }
        }
    }

    /// The shared object header message table, when the file has one.
    pub fn sohm_table(&self) -> Option<&SohmTable> {
        self.inner
            .sohm
            .get_or_init(|| self.load_sohm().ok().flatten())
            .as_ref()
    }

    fn load_sohm(&self) -> Result<Option<SohmTable>> {
        let Some(ext) = self.inner.superblock.extension else {
            return Ok(None);
        };
        let h = self.header(ext)?;
        let Some(m) = h.first(types::SHARED_MSG_TABLE) else {
            return Ok(None);
        };
        let sizes = self.sizes();
        let (addr, n) = decode_table_message(&mut m.cursor("shared message table message"), sizes)?;
        let per = 16 + 2 * u64::from(sizes.offset);
        let len = 8 + per * u64::from(n);
        let bytes = self.source().read("shared message table", addr, len)?;
        let t = SohmTable::decode(
            &mut Cursor::new(&bytes, addr, "shared message table"),
            sizes,
            usize::from(n),
        )?;
        Ok(Some(t))
    }

    /// Decode a datatype message (shared or not).
    pub fn datatype(&self, msg: &Message) -> Result<Datatype> {
        let body = self.message_body(msg)?;
        datatype::decode(&mut Cursor::new(&body, msg.offset, "datatype message"))
    }

    /// The parsed global heap collection at `address` (cached).
    pub fn collection(&self, address: u64) -> Result<Arc<Collection>> {
        if let Ok(cache) = self.inner.gheap.read() {
            if let Some(c) = cache.get(&address) {
                return Ok(Arc::clone(c));
            }
        }
        let c = Arc::new(Collection::read(self.source(), self.sizes(), address)?);
        if let Ok(mut cache) = self.inner.gheap.write() {
            if cache.len() >= GHEAP_CACHE {
                cache.clear();
            }
            cache.insert(address, Arc::clone(&c));
        }
        Ok(c)
    }

    /// The bytes of the global heap object `id` (empty for a null ID).
    pub fn heap_object(&self, id: HeapId) -> Result<Vec<u8>> {
        match id.collection {
            None | Some(0) => Ok(Vec::new()),
            Some(a) => Ok(self.collection(a)?.object(id.index)?.to_vec()),
        }
    }

    /// The heap bytes of one stored variable-length element (`4 + offset + 4`
    /// bytes: element count, collection address, object index). For strings the
    /// result is the string's bytes; for sequences, `count × base size` bytes.
    pub fn vlen_bytes(&self, element: &[u8]) -> Result<Vec<u8>> {
        let r = VlenRef::decode(element, self.sizes())?;
        if r.length == 0 {
            return Ok(Vec::new());
        }
        self.heap_object(r.id)
    }

    /// The object header address an old-style (`H5R_OBJECT1`) object reference
    /// holds; `None` for a null reference.
    pub fn object_reference(&self, element: &[u8]) -> Result<Option<u64>> {
        let mut c = Cursor::new(element, 0, "object reference");
        Ok(c.addr(self.sizes().offset)?.filter(|&a| a != 0))
    }

    /// Decode an HDF5 1.12+ revised reference (`H5T_STD_REF`, datatype version 4).
    /// A local object reference is stored inline as `type, flags, token size,
    /// token`; the others as `type, flags, length (4), global heap ID`, the heap
    /// blob holding `type, flags, [u16-length file name], token size, token,
    /// [attribute name]`.
    pub fn revised_reference(&self, element: &[u8]) -> Result<RevisedReference> {
        let sizes = self.sizes();
        let mut c = Cursor::new(element, 0, "revised reference");
        let kind = c.u8()?;
        let flags = c.u8()?;
        if kind == 2 && flags & 0x01 == 0 {
            return Self::decode_reference_body(&mut c, kind, flags, sizes);
        }
        let _len = c.u32()?;
        let id = HeapId::decode(&mut c, sizes)?;
        let blob = self.heap_object(id)?;
        let mut c = Cursor::new(&blob, id.collection.unwrap_or(0), "revised reference blob");
        let kind = c.u8()?;
        let flags = c.u8()?;
        Self::decode_reference_body(&mut c, kind, flags, sizes)
    }

    fn decode_reference_body(
        c: &mut Cursor<'_>,
        kind: u8,
        flags: u8,
        sizes: Sizes,
    ) -> Result<RevisedReference> {
        let string = |c: &mut Cursor<'_>| -> Result<String> {
            let n = c.u16()?;
            Ok(String::from_utf8_lossy(c.bytes(usize::from(n))?).into_owned())
        };
        let external_file = if flags & 0x01 != 0 {
            Some(string(c)?)
        } else {
            None
        };
        let token_len = usize::from(c.u8()?);
        let token = c.bytes(token_len)?;
        let n = usize::from(sizes.offset).min(token.len());
        let address = Some(crate::cursor::le_uint(token.get(..n).unwrap_or(&[])))
            .filter(|&a| !crate::cursor::is_undefined(a, n));
        let attribute = if kind == 4 { Some(string(c)?) } else { None };
        Ok(RevisedReference {
            kind,
            external_file,
            address,
            attribute,
        })
    }

    /// Open the file an external link names, relative to this file's folder.
    pub(crate) fn open_external(&self, name: &str) -> Result<File> {
        self.open_referenced(name, PrefixKind::ExternalLink)
    }

    /// Open the file `name` referenced by an external link or a virtual
    /// dataset mapping, searched where libhdf5 searches it
    /// ([`crate::virtual_layout::locate`]): the first candidate that opens as
    /// HDF5 wins, it inherits this file's virtual-dataset options, and a file
    /// that differs from the one first opened under that path is refused.
    pub(crate) fn open_referenced(&self, name: &str, kind: PrefixKind) -> Result<File> {
        if let Some(r) = self.remote_origin() {
            return r.open_file(self, name, kind);
        }
        let opts = self.virtual_options();
        let candidates = crate::virtual_layout::locate::candidates(
            name,
            self.path(),
            kind,
            opts.prefix.as_deref(),
        );
        let mut last_err = None;
        for c in &candidates {
            if !c.is_file() {
                continue;
            }
            let f = match File::open(c) {
                Ok(f) => f,
                Err(e) => {
                    last_err = Some(format!("{}: {e}", c.display()));
                    continue;
                }
            };
            if let Some(own) = self.own_virtual_options() {
                f.set_virtual_options(own);
            }
            if let Some(id) = f.identity() {
                let key = std::fs::canonicalize(c).unwrap_or(c.clone());
                let mut seen = self
                    .inner
                    .externals
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                match seen.get(&key) {
                    Some(first) if *first != id => {
                        return Err(Error::StaleSnapshot(format!(
                            "external file {} changed since this file first opened it",
                            c.display()
                        )))
                    }
                    Some(_) => {}
                    None => {
                        seen.insert(key, id);
                    }
                }
            }
            return Ok(f);
        }
        let tried: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
        Err(Error::NotFound(match last_err {
            Some(e) => format!("external file {name} (not HDF5: {e})"),
            None => format!("external file {name} (tried {})", tried.join(", ")),
        }))
    }

    /// Set how this file's virtual datasets are read (missing sources, the
    /// source prefix), overriding the process default
    /// ([`crate::virtual_layout::locate::set_default_options`]). Set it before
    /// the first read of a virtual dataset; files opened through its mappings
    /// and external links inherit it.
    pub fn set_virtual_options(&self, options: crate::virtual_layout::locate::VirtualOptions) {
        *self
            .inner
            .virtual_options
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(options);
    }

    /// How this file's virtual datasets are read: its own options, else the
    /// process default.
    pub fn virtual_options(&self) -> crate::virtual_layout::locate::VirtualOptions {
        self.own_virtual_options()
            .unwrap_or_else(crate::virtual_layout::locate::default_options)
    }

    fn own_virtual_options(&self) -> Option<crate::virtual_layout::locate::VirtualOptions> {
        self.inner
            .virtual_options
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Resolve a file name stored in the file (external raw data) against its folder.
    pub(crate) fn resolve_sibling(&self, name: &str) -> Result<PathBuf> {
        let p = Path::new(name);
        if p.is_absolute() && p.is_file() {
            return Ok(p.to_path_buf());
        }
        let dir = self
            .path()
            .and_then(Path::parent)
            .ok_or_else(|| Error::NotFound(format!("external file {name} (file has no path)")))?;
        let c = dir.join(p);
        if c.is_file() {
            Ok(c)
        } else {
            Err(Error::NotFound(format!("external file {}", c.display())))
        }
    }

    /// The name-sorted links of the group whose header is at `address`, from the
    /// cache or computed by `load` (path lookups in big groups stay cheap).
    pub(crate) fn cached_links(
        &self,
        address: u64,
        load: impl FnOnce() -> Result<Vec<LinkMessage>>,
    ) -> Result<Arc<Vec<LinkMessage>>> {
        if let Ok(cache) = self.inner.links.read() {
            if let Some(v) = cache.get(&address) {
                return Ok(Arc::clone(v));
            }
        }
        let mut v = load()?;
        v.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        let v = Arc::new(v);
        if let Ok(mut cache) = self.inner.links.write() {
            if cache.len() >= LINK_CACHE {
                cache.clear();
            }
            cache.insert(address, Arc::clone(&v));
        }
        Ok(v)
    }
}

/// `src` seen through the metadata cache image the superblock extension names,
/// if any: metadata a writer left only in the image is read from there. A
/// superblock extension that cannot be read is ignored here (as it is for the
/// shared message table); a cache image message or block that is broken is an
/// error, since the file's metadata cannot be trusted without it.
fn with_cache_image(src: Arc<dyn Source>, sb: &Superblock) -> Result<Arc<dyn Source>> {
    let Some(ext) = sb.extension else {
        return Ok(src);
    };
    let h = match ObjectHeader::read(src.as_ref(), sb.sizes, ext) {
        Ok(h) => h,
        // A source without a fetcher must get these bytes first: opening
        // without the image would read stale metadata.
        Err(e) if e.needed_ranges().is_some() => return Err(e),
        Err(_) => return Ok(src),
    };
    let Some(m) = h.first(types::MDC_IMAGE) else {
        return Ok(src);
    };
    let msg = CacheImageMessage::decode(&mut m.cursor("metadata cache image message"), sb.sizes)?;
    match CacheImage::read(src.as_ref(), sb.sizes, &msg)? {
        Some(image) => Ok(Arc::new(OverlaySource::new(src, image))),
        None => Ok(src),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn based_source_shifts() {
        let inner: Arc<dyn Source> = Arc::new(MemSource::new(vec![0u8, 1, 2, 3, 4, 5]));
        let b = BasedSource { inner, base: 2 };
        assert_eq!(b.len(), 4);
        assert_eq!(&*b.read("t", 1, 2).unwrap(), &[3, 4]);
        assert!(b.read("t", 3, 2).is_err());
        let mut buf = [0u8; 2];
        b.read_exact_at(0, &mut buf).unwrap();
        assert_eq!(buf, [2, 3]);
    }

    /// A remote source behind a base address: reads keep their typed errors
    /// and prefetches are shifted by the base.
    #[test]
    fn based_source_forwards_plans_shifted() {
        use crate::fetch::{ByteRange, RangeOptions, RangeSource};
        let opts = RangeOptions {
            block_size: 4,
            first_read: 0,
            tail_read: 0,
            ..RangeOptions::default()
        };
        let rs = Arc::new(RangeSource::without_fetcher(100, "host://b", opts).unwrap());
        let b = BasedSource {
            inner: rs.clone(),
            base: 10,
        };
        assert!(b.wants_prefetch());
        let e = b.read("t", 2, 3).unwrap_err();
        assert_eq!(e.needed_ranges(), Some(&[ByteRange::new(12, 4)][..]));
        let e = b.prefetch(&[ByteRange::new(50, 5)]).unwrap_err();
        assert_eq!(e.needed_ranges(), Some(&[ByteRange::new(60, 5)][..]));
        rs.supply(ByteRange::new(60, 5), (60..65).collect())
            .unwrap();
        b.prefetch(&[ByteRange::new(50, 5)]).unwrap();
        let mut out = [0u8; 3];
        b.read_into("t", 51, &mut out).unwrap();
        assert_eq!(out, [61, 62, 63]);
        assert!(b.read("t", 89, 2).is_err()); // past the end seen from the base
    }

    /// A v2 object header holding `msgs` (type, body), with its checksum.
    fn ohdr(msgs: &[(u8, Vec<u8>)]) -> Vec<u8> {
        let mut body = Vec::new();
        for (t, d) in msgs {
            body.push(*t);
            body.extend_from_slice(&(d.len() as u16).to_le_bytes());
            body.push(0);
            body.extend_from_slice(d);
        }
        let mut h = b"OHDR".to_vec();
        h.extend_from_slice(&[2, 0, body.len() as u8]);
        h.extend(body);
        let ck = crate::checksum::metadata_checksum(&h);
        h.extend_from_slice(&ck.to_le_bytes());
        h
    }

    /// A file whose root group header (at 0x200) exists only in a metadata cache
    /// image at 0x300, named by the superblock extension at 0x100. `image` edits
    /// the image block before it is placed.
    fn file_with_cache_image(mdci: bool, image: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
        use crate::checksum::metadata_checksum;
        // Root: compact storage (link info with no heap) and a hard link "x".
        let mut link_info = vec![0u8, 0];
        link_info.extend_from_slice(&[0xff; 16]);
        let mut link = vec![1u8, 0, 1, b'x'];
        link.extend_from_slice(&0x200u64.to_le_bytes());
        let root = ohdr(&[(0x02, link_info), (0x06, link)]);
        // Image block with one entry: the root header.
        let mut entries = vec![5u8, 0x01, 1, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff];
        entries.extend_from_slice(&0x200u64.to_le_bytes());
        entries.extend_from_slice(&(root.len() as u64).to_le_bytes());
        entries.extend_from_slice(&root);
        let total = 18 + entries.len() + 4;
        let mut img = b"MDCI".to_vec();
        img.extend_from_slice(&[0, 0]);
        img.extend_from_slice(&(total as u64).to_le_bytes());
        img.extend_from_slice(&1u32.to_le_bytes());
        img.extend(entries);
        let ck = metadata_checksum(&img);
        img.extend_from_slice(&ck.to_le_bytes());
        image(&mut img);
        // Superblock extension: the cache image message (or a harmless one).
        let mut m = vec![0u8];
        m.extend_from_slice(&0x300u64.to_le_bytes());
        m.extend_from_slice(&(img.len() as u64).to_le_bytes());
        let ext = ohdr(&[(if mdci { 0x18 } else { 0x0d }, m)]);
        let mut f = crate::superblock::SIGNATURE.to_vec();
        f.extend_from_slice(&[2, 8, 8, 0]);
        for a in [0u64, 0x100, 0x300 + img.len() as u64, 0x200] {
            f.extend_from_slice(&a.to_le_bytes());
        }
        let ck = metadata_checksum(&f);
        f.extend_from_slice(&ck.to_le_bytes());
        f.resize(0x100, 0);
        f.extend(ext);
        f.resize(0x300, 0); // the root header's own bytes stay zero
        f.extend(img);
        f
    }

    #[test]
    fn root_header_read_from_cache_image() {
        let f = File::from_bytes(file_with_cache_image(true, |_| {})).unwrap();
        let root = f.root().unwrap();
        let links = root.links().unwrap();
        assert_eq!(links.len(), 1);
        assert_eq!(links[0].0, "x");
        // Without the cache image message the root header is all zeros.
        let f = File::from_bytes(file_with_cache_image(false, |_| {})).unwrap();
        assert!(f.root().is_err());
    }

    #[test]
    fn broken_cache_image_is_a_typed_error() {
        let bad_sum = file_with_cache_image(true, |img| img[20] ^= 1);
        match File::from_bytes(bad_sum) {
            Err(Error::Checksum {
                structure, offset, ..
            }) => {
                assert_eq!((structure, offset), ("metadata cache image", 0x300));
            }
            other => panic!("{other:?}"),
        }
        let bad_sig = file_with_cache_image(true, |img| img[0] = b'X');
        assert!(matches!(
            File::from_bytes(bad_sig),
            Err(Error::Malformed {
                structure: "metadata cache image",
                ..
            })
        ));
    }

    #[test]
    fn not_hdf5_is_an_error() {
        assert!(File::from_bytes(b"hello world".to_vec()).is_err());
        assert!(File::from_bytes(Vec::new()).is_err());
    }
}
