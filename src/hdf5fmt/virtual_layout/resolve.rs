//! Resolving a virtual dataset's mappings against its sources (HDF5 File
//! Format Specification IV.A.2.i, with libhdf5's default access properties:
//! the "last available" view and a printf gap of 0): open each source file
//! (`.` = the virtual dataset's own file, other names relative to its folder,
//! as external links), open the source dataset, compute the current extent of
//! the virtual dataset from its unlimited mappings, and clip every selection.
//! A source that cannot be opened is missing: the plan records it, and a read
//! that touches its elements fails unless the file's options ask for the fill
//! value (libhdf5 always fills). Printf mappings end at their first missing
//! source, as in libhdf5. Sources that are virtual themselves are resolved in turn, under a
//! depth limit and with cycle detection.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::extent::{block_end, extent_for_slices, slices_below, unlimited_block, update_min_dims};
use super::locate::PrefixKind;
use super::mapping::{decode_mappings, Mapping};
use super::source_name::SourceName;
use crate::dataset::Dataset;
use crate::dataspace_selection::rows::Placed;
use crate::dataspace_selection::DataspaceSelection;
use crate::error::{Error, Result};
use crate::file_core::File;
use crate::global_heap::HeapId;
use crate::group::{root_group, Object};
use crate::limits;
use crate::messages::layout::Layout;

/// Most source datasets probed for one printf-style mapping.
const MAX_PRINTF_SOURCES: u64 = 1 << 20;

/// A virtual dataset resolved against its sources.
#[derive(Debug)]
pub struct Plan {
    /// The current extent (recomputed from unlimited mappings).
    pub dims: Vec<u64>,
    /// The mappings whose source exists, in mapping order.
    pub pieces: Vec<Piece>,
    /// The mappings whose source file or dataset cannot be opened.
    pub missing: Vec<Missing>,
}

/// A mapping whose source cannot be opened.
#[derive(Debug)]
pub struct Missing {
    /// The source file name as stored.
    pub source_file: String,
    /// The source dataset name as stored.
    pub source_dataset: String,
    /// Why it cannot be opened.
    pub reason: String,
    /// The virtual elements it covers (`None` for an unlimited mapping, whose
    /// extent a missing source cannot tell: every read counts as touching it).
    pub virtual_select: Option<Placed>,
}

/// One mapping (or one block of a printf mapping) with an open source.
#[derive(Debug)]
pub struct Piece {
    /// Where the elements go, in virtual dataset coordinates.
    pub virtual_select: Placed,
    /// Where they come from, in source coordinates.
    pub source_select: Placed,
    /// The opened source dataset the elements are read from.
    pub source: Source,
}

/// An open source dataset.
#[derive(Debug)]
pub struct Source {
    /// The source dataset, opened from its file and path.
    pub dataset: Dataset,
    /// Its current extent.
    pub dims: Vec<u64>,
    /// When it is virtual itself, its own plan.
    pub nested: Option<Arc<Plan>>,
}

/// Virtual datasets being resolved, outermost first (cycle detection).
#[derive(Default)]
pub struct Walk {
    stack: Vec<(Option<PathBuf>, u64)>,
}

/// The mapping list of a virtual dataset.
pub fn mappings(ds: &Dataset) -> Result<Vec<Mapping>> {
    let Layout::Virtual {
        heap_address,
        index,
    } = ds.layout()
    else {
        return Err(Error::InvalidArgument(format!(
            "{} is not a virtual dataset",
            ds.path()
        )));
    };
    let Some(collection) = *heap_address else {
        return Ok(Vec::new());
    };
    let block = ds.file().heap_object(HeapId {
        collection: Some(collection),
        index: *index,
    })?;
    decode_mappings(&block, collection, ds.file().sizes())
}

/// Resolve `ds` (a virtual dataset) from the top.
pub fn plan(ds: &Dataset) -> Result<Plan> {
    plan_in(ds, &mut Walk::default())
}

fn plan_in(ds: &Dataset, walk: &mut Walk) -> Result<Plan> {
    let path = ds
        .file()
        .path()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf()));
    let key = (path, ds.address());
    if walk.stack.contains(&key) {
        return Err(Error::Cycle {
            structure: "virtual dataset source",
            offset: ds.address(),
        });
    }
    if walk.stack.len() >= limits::MAX_LINK_HOPS {
        return Err(Error::Limit {
            structure: "virtual dataset source",
            offset: ds.address(),
            what: "nested virtual datasets",
            value: walk.stack.len() as u64 + 1,
            limit: limits::MAX_LINK_HOPS as u64,
        });
    }
    walk.stack.push(key);
    let r = Resolver {
        ds,
        files: HashMap::new(),
    }
    .run(walk);
    walk.stack.pop();
    r
}

/// What one mapping became before the extent is known.
enum Pending {
    /// Limited mapping (`Err`: why the source is missing).
    Fixed(std::result::Result<Box<Source>, String>),
    /// Unlimited in both selections: virtual and source clip sizes.
    Unlimited(std::result::Result<Box<(Source, u64, u64)>, String>),
    /// Printf mapping: the sources of blocks `0..n`.
    Printf(Vec<Source>),
}

struct Resolver<'a> {
    ds: &'a Dataset,
    files: HashMap<String, std::result::Result<File, String>>,
}

impl Resolver<'_> {
    fn run(mut self, walk: &mut Walk) -> Result<Plan> {
        let maps = mappings(self.ds)?;
        let stored = self.ds.dataspace().dims.clone();
        let rank = stored.len();
        let mut min_dims = vec![0u64; rank];
        let mut new_dims: Vec<Option<u64>> = vec![None; rank];
        let mut pending = Vec::with_capacity(maps.len());
        for m in &maps {
            let vu = m.virtual_select.unlimited_dim();
            let su = m.source_select.unlimited_dim();
            update_min_dims(&mut min_dims, &m.virtual_select, vu);
            let file = SourceName::parse(&m.source_file)?;
            let dset = SourceName::parse(&m.source_dataset)?;
            let printf = file.has_substitutions() || dset.has_substitutions();
            let p = match (vu, su) {
                (None, None) if !printf => {
                    Pending::Fixed(self.source(&file, &dset, 0, walk)?.map(Box::new))
                }
                (Some(v), Some(s)) if !printf => {
                    let vd = dim(&m.virtual_select, v)?;
                    let sd = dim(&m.source_select, s)?;
                    let opened = self.source(&file, &dset, 0, walk)?;
                    Pending::Unlimited(opened.map(|src| {
                        let e = src.dims.get(s).copied().unwrap_or(0);
                        let clip_v = extent_for_slices(&vd, slices_below(&sd, e));
                        Box::new((src, clip_v, e))
                    }))
                }
                (Some(v), None) if printf => {
                    let vd = dim(&m.virtual_select, v)?;
                    if vd.block.is_none() {
                        return Err(invalid(self.ds, "printf mapping with an unlimited block"));
                    }
                    let mut found = Vec::new();
                    for j in 0..MAX_PRINTF_SOURCES {
                        match self.source(&file, &dset, j, walk)? {
                            Ok(s) => found.push(s),
                            Err(_) => break,
                        }
                    }
                    if found.len() as u64 >= MAX_PRINTF_SOURCES {
                        return Err(Error::Limit {
                            structure: "virtual dataset mapping",
                            offset: self.ds.address(),
                            what: "printf source datasets",
                            value: found.len() as u64,
                            limit: MAX_PRINTF_SOURCES,
                        });
                    }
                    let n = found.len() as u64;
                    let clip = if n == 0 {
                        0
                    } else {
                        block_end(&vd, n - 1)
                            .ok_or_else(|| invalid(self.ds, "printf block past 2^64"))?
                    };
                    raise(&mut new_dims, v, clip);
                    Pending::Printf(found)
                }
                _ => return Err(invalid(self.ds, "selections of different kinds")),
            };
            if let Pending::Unlimited(ref o) = p {
                if let Some(v) = vu {
                    raise(&mut new_dims, v, o.as_ref().map_or(0, |x| x.1));
                }
            }
            pending.push(p);
        }
        let dims: Vec<u64> = (0..rank)
            .map(|i| match new_dims.get(i).copied().flatten() {
                Some(n) => n.max(min_dims.get(i).copied().unwrap_or(0)),
                None => stored.get(i).copied().unwrap_or(0),
            })
            .collect();
        let mut pieces = Vec::new();
        let mut missing = Vec::new();
        for (m, p) in maps.iter().zip(pending) {
            self.place(m, p, &dims, &mut pieces, &mut missing)?;
        }
        Ok(Plan {
            dims,
            pieces,
            missing,
        })
    }

    /// Turn a resolved mapping into pieces placed on the final extent.
    fn place(
        &self,
        m: &Mapping,
        p: Pending,
        dims: &[u64],
        pieces: &mut Vec<Piece>,
        missing: &mut Vec<Missing>,
    ) -> Result<()> {
        let lost = |reason: String, virtual_select: Option<Placed>| Missing {
            source_file: m.source_file.clone(),
            source_dataset: m.source_dataset.clone(),
            reason,
            virtual_select,
        };
        match p {
            Pending::Fixed(Err(why)) => {
                missing.push(lost(why, Some(Placed::new(&m.virtual_select, dims, None)?)))
            }
            Pending::Unlimited(Err(why)) => missing.push(lost(why, None)),
            Pending::Fixed(Ok(source)) => pieces.push(Piece {
                virtual_select: Placed::new(&m.virtual_select, dims, None)?,
                source_select: Placed::new(&m.source_select, &source.dims, None)?,
                source: *source,
            }),
            Pending::Unlimited(Ok(b)) => {
                let (source, clip_v, clip_s) = *b;
                let vu = m.virtual_select.unlimited_dim();
                let su = m.source_select.unlimited_dim();
                pieces.push(Piece {
                    virtual_select: Placed::new(&m.virtual_select, dims, vu.map(|d| (d, clip_v)))?,
                    source_select: Placed::new(
                        &m.source_select,
                        &source.dims,
                        su.map(|d| (d, clip_s)),
                    )?,
                    source,
                });
            }
            Pending::Printf(found) => {
                let (Some(v), Some(hd)) =
                    (m.virtual_select.unlimited_dim(), m.virtual_select.regular())
                else {
                    return Ok(());
                };
                for (j, source) in (0u64..).zip(found) {
                    let block = unlimited_block(hd, v, j)
                        .ok_or_else(|| invalid(self.ds, "printf block past 2^64"))?;
                    pieces.push(Piece {
                        virtual_select: Placed::new(
                            &DataspaceSelection::Regular(block),
                            dims,
                            None,
                        )?,
                        source_select: Placed::new(&m.source_select, &source.dims, None)?,
                        source,
                    });
                }
            }
        }
        Ok(())
    }

    /// Open the source for block `j` (names built from printf patterns);
    /// `Ok(Err(why))` when the file or dataset is missing or cannot be opened.
    fn source(
        &mut self,
        file: &SourceName,
        dset: &SourceName,
        j: u64,
        walk: &mut Walk,
    ) -> Result<std::result::Result<Source, String>> {
        let fname = file.build(j);
        let f = match self.files.get(&fname) {
            Some(f) => f.clone(),
            None => {
                let f = if fname == "." {
                    Ok(self.ds.file().clone())
                } else if self.ds.file().path().is_none()
                    && self.ds.file().remote_origin().is_none()
                    && !Path::new(&fname).is_absolute()
                {
                    Err("the virtual dataset's file has no path to resolve it against".into())
                } else {
                    match self.ds.file().open_referenced(&fname, PrefixKind::Vds) {
                        Ok(f) => Ok(f),
                        // Another file than the one read before: never mix them.
                        Err(e @ crate::error::Error::StaleSnapshot(_)) => return Err(e),
                        Err(e) => Err(e.to_string()),
                    }
                };
                self.files.insert(fname, f.clone());
                f
            }
        };
        let f = match f {
            Ok(f) => f,
            Err(why) => return Ok(Err(why)),
        };
        let dname = dset.build(j);
        let dataset = match root_group(&f).and_then(|root| root.open(&dname)) {
            Ok(Object::Dataset(d)) => *d,
            Ok(o) => return Ok(Err(format!("{dname} is a {}", o.kind_name()))),
            Err(e) => return Ok(Err(format!("dataset {dname}: {e}"))),
        };
        let (dims, nested) = if let Layout::Virtual { .. } = dataset.layout() {
            let p = plan_in(&dataset, walk)?;
            (p.dims.clone(), Some(Arc::new(p)))
        } else {
            (dataset.dataspace().dims.clone(), None)
        };
        Ok(Ok(Source {
            dataset,
            dims,
            nested,
        }))
    }
}

fn dim(sel: &DataspaceSelection, d: usize) -> Result<crate::dataspace_selection::HyperDim> {
    sel.regular()
        .and_then(|r| r.get(d).copied())
        .ok_or_else(|| Error::malformed("virtual dataset mapping", 0, "no unlimited dimension"))
}

fn raise(dims: &mut [Option<u64>], d: usize, v: u64) {
    if let Some(slot) = dims.get_mut(d) {
        *slot = Some(slot.map_or(v, |x| x.max(v)));
    }
}

fn invalid(ds: &Dataset, why: &str) -> Error {
    Error::malformed("virtual dataset mapping", ds.address(), why)
}
