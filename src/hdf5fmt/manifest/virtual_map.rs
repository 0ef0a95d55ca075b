//! Virtual datasets as Zarr chunks (HDF5 File Format Specification IV.A.2.i
//! layout class 3, `docs/filters-format.md` for the chunk bytes): each
//! mapping resolved as libhdf5 resolves it, and the stored chunks of its
//! source dataset placed in the virtual dataset's chunk grid — when every
//! mapping is one box onto one box of the same shape, aligned to one chunk
//! shape shared by all sources, with one codec list and one element type.
//! Anything else is refused by name: the bytes would need re-chunking.

use std::collections::BTreeMap;
use std::path::Path;

use super::{refuse, ChunkEntry, ChunkLocation, ChunkManifest};
use crate::dataset::Dataset;
use crate::error::Result;
use crate::virtual_layout::resolve::{plan, Piece};

/// A virtual dataset's chunks, as its sources store them.
pub(crate) struct VirtualChunks {
    /// The current extent.
    pub(crate) dims: Vec<u64>,
    /// The sources' shared chunk shape.
    pub(crate) chunk_shape: Vec<u64>,
    /// The chunks, in grid order.
    pub(crate) chunks: Vec<ChunkEntry>,
    /// The first source's own manifest (codecs, element type), if any.
    pub(crate) source: Option<ChunkManifest>,
}

/// The chunks of the virtual dataset `ds` whose fill bytes are `fill`.
pub(crate) fn entries(ds: &Dataset, fill: &[u8]) -> Result<VirtualChunks> {
    let plan = plan(ds).map_err(|e| refuse(ds, format!("virtual dataset sources: {e}")))?;
    if let Some(m) = plan.missing.first() {
        return Err(refuse(
            ds,
            format!(
                "virtual dataset source {}:{} is missing ({})",
                m.source_file, m.source_dataset, m.reason
            ),
        ));
    }
    let own = ds.file().path().map(canonical);
    let mut first: Option<ChunkManifest> = None;
    let mut grid: BTreeMap<Vec<u64>, ChunkLocation> = BTreeMap::new();
    for piece in &plan.pieces {
        let m = source_manifest(ds, piece)?;
        if let Some(f) = &first {
            if f.chunk_shape != m.chunk_shape || f.codecs != m.codecs || f.element != m.element {
                return Err(refuse(
                    ds,
                    "virtual dataset sources differ in chunk shape, codecs or element type",
                ));
            }
        }
        place(ds, piece, &m, fill, own.as_deref(), &plan.dims, &mut grid)?;
        first.get_or_insert(m);
    }
    let chunk_shape = match &first {
        Some(m) => m.chunk_shape.clone(),
        // no mapping: every chunk reads as the fill value
        None => plan.dims.iter().map(|&d| d.max(1)).collect(),
    };
    let chunks = grid
        .into_iter()
        .map(|(coords, location)| ChunkEntry { coords, location })
        .collect();
    Ok(VirtualChunks {
        dims: plan.dims.clone(),
        chunk_shape,
        chunks,
        source: first,
    })
}

fn canonical(p: &Path) -> std::path::PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The source's own manifest, refused when it is virtual itself.
fn source_manifest(ds: &Dataset, piece: &Piece) -> Result<ChunkManifest> {
    if piece.source.nested.is_some() {
        return Err(refuse(ds, "a virtual dataset source is virtual itself"));
    }
    piece.source.dataset.chunk_manifest().map_err(|e| {
        refuse(
            ds,
            format!(
                "virtual dataset source {}: {e}",
                piece.source.dataset.path()
            ),
        )
    })
}

/// Put the source chunks of `piece` that its box covers into `grid`.
fn place(
    ds: &Dataset,
    piece: &Piece,
    m: &ChunkManifest,
    fill: &[u8],
    own: Option<&Path>,
    vdims: &[u64],
    grid: &mut BTreeMap<Vec<u64>, ChunkLocation>,
) -> Result<()> {
    let not_aligned = |why: &str| {
        refuse(
            ds,
            format!("virtual dataset mapping is not chunk-aligned: {why}"),
        )
    };
    let (Some((vs, vc)), Some((ss, sc))) =
        (piece.virtual_select.as_box(), piece.source_select.as_box())
    else {
        return Err(not_aligned("a selection is not one box"));
    };
    if vc != sc || vs.len() != m.chunk_shape.len() {
        return Err(not_aligned("source and virtual boxes differ in shape"));
    }
    let sdims = &piece.source.dims;
    for i in 0..vs.len() {
        let c = m.chunk_shape[i].max(1);
        let (s_end, v_end) = (ss[i].saturating_add(sc[i]), vs[i].saturating_add(vc[i]));
        let whole_chunks = sc[i] % c == 0;
        let both_edges = s_end == sdims[i] && v_end == vdims[i];
        if ss[i] % c != 0 || vs[i] % c != 0 || !(whole_chunks || both_edges) {
            return Err(not_aligned(
                "a box does not start and end on chunk boundaries",
            ));
        }
    }
    let file = piece.source.dataset.file();
    let other = match (file.path().map(canonical), own) {
        (Some(p), Some(o)) if p == o => None,
        (Some(p), _) => Some(p.to_string_lossy().into_owned()),
        (None, _) => return Err(refuse(ds, "virtual dataset source has no file path")),
    };
    let mut placed = 0u64;
    for e in &m.chunks {
        let start: Vec<u64> = e
            .coords
            .iter()
            .zip(&m.chunk_shape)
            .map(|(&q, &c)| q.saturating_mul(c))
            .collect();
        if start
            .iter()
            .zip(&ss)
            .zip(&sc)
            .any(|((&p, &s), &n)| p < s || p >= s.saturating_add(n))
        {
            continue;
        }
        let coords: Vec<u64> = start
            .iter()
            .zip(&ss)
            .zip(&vs)
            .zip(&m.chunk_shape)
            .map(|(((&p, &s), &v), &c)| (p - s + v) / c.max(1))
            .collect();
        let location = match (&e.location, &other) {
            (ChunkLocation::Range { offset, length }, Some(f)) => ChunkLocation::File {
                file: f.clone(),
                offset: *offset,
                length: *length,
            },
            (loc, _) => loc.clone(),
        };
        if grid.insert(coords, location).is_some() {
            return Err(refuse(ds, "virtual dataset mappings overlap"));
        }
        placed += 1;
    }
    // chunks of the box the source never wrote read as the source's fill
    // value through libhdf5, as the virtual dataset's own through Zarr
    let in_box = sc
        .iter()
        .zip(&m.chunk_shape)
        .try_fold(1u64, |a, (&n, &c)| a.checked_mul(n.div_ceil(c.max(1))));
    if in_box != Some(placed) && m.fill != fill {
        return Err(refuse(
            ds,
            "a virtual dataset source has unwritten chunks and another fill value",
        ));
    }
    Ok(())
}
