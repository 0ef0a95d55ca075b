//! Variable-length string datasets: read whole and inlined as one chunk in
//! numcodecs' `vlen-utf8` / `vlen-bytes` encoding (a little-endian `u32`
//! count, then a `u32` length and the bytes of each item), as kerchunk
//! embeds them.

use super::{refuse, ChunkEntry, ChunkLocation, ChunkManifest, ElementKind};
use crate::dataset::Dataset;
use crate::datatype::{CharSet, Datatype};
use crate::error::Result;

/// Largest vlen string dataset inlined, in stored element bytes.
const MAX_INLINE: u64 = 64 << 20;

/// `Some(kind)` when the dataset holds variable-length strings.
pub(crate) fn kind(ds: &Dataset) -> Result<Option<ElementKind>> {
    Ok(match ds.dtype() {
        Datatype::VarString { cset, .. } => Some(match cset {
            CharSet::Utf8 => ElementKind::VlenUtf8,
            CharSet::Ascii => ElementKind::VlenBytes,
        }),
        _ => None,
    })
}

/// The dataset's strings as one inlined chunk.
pub(crate) fn inline(ds: &Dataset, kind: ElementKind) -> Result<ChunkManifest> {
    let esize = ds.dtype().size();
    let n = ds.num_elements();
    if n.saturating_mul(esize) > MAX_INLINE {
        return Err(refuse(ds, "variable-length strings too many to inline"));
    }
    let raw = ds.read_all_raw()?;
    let count = u32::try_from(n).map_err(|_| refuse(ds, "too many strings"))?;
    let mut out = count.to_le_bytes().to_vec();
    let step = usize::try_from(esize).map_err(|_| refuse(ds, "element size"))?;
    for el in raw.chunks_exact(step.max(1)).take(count as usize) {
        let mut s = ds.file().vlen_bytes(el)?;
        if let Some(nul) = s.iter().position(|&b| b == 0) {
            s.truncate(nul);
        }
        if kind == ElementKind::VlenUtf8 && std::str::from_utf8(&s).is_err() {
            return Err(refuse(ds, "a UTF-8 string that is not valid UTF-8"));
        }
        let len = u32::try_from(s.len()).map_err(|_| refuse(ds, "string too long"))?;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&s);
    }
    let shape = ds.shape().to_vec();
    let chunk_shape: Vec<u64> = shape.iter().map(|&d| d.max(1)).collect();
    let chunks = if n == 0 {
        Vec::new()
    } else {
        vec![ChunkEntry {
            coords: vec![0; shape.len()],
            location: ChunkLocation::Inline(out),
        }]
    };
    Ok(ChunkManifest {
        shape,
        chunk_shape,
        element: kind,
        fill: Vec::new(),
        codecs: Vec::new(),
        chunks,
        layout: "inline",
    })
}
