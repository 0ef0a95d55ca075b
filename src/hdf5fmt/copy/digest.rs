//! Digests of re-encoded datasets for `h5 recompress`'s verification (issue
//! 15, issue 47): the copier encodes each chunk, decodes the result at once
//! and compares it with the source bytes it still holds (a chunk that does not
//! decode to them is an error, see `chunkwise`), then takes a SHA-256 of the
//! chunk's *stored* bytes. Per dataset these are combined in chunk-coordinate
//! order with each chunk's filter mask, and bound to what the chunks decode
//! with: the pipeline (ids, optional flags, client data), the chunk shape and
//! the element size. The verifier reads every stored chunk of the output and
//! computes the same digest from the output's own pipeline and chunk shape, so
//! equal digests mean the output holds exactly the chunks that were decoded
//! and found equal to the source, decoded the same way (no second decode and
//! no SHA-256 of decoded bytes).

use purehdf_filters::FilterSpec;
use sha2::{Digest, Sha256};

/// SHA-256 of one chunk's bytes (the stored bytes, for [`DatasetDigest`]).
pub fn chunk_sha(raw: &[u8]) -> [u8; 32] {
    Sha256::digest(raw).into()
}

/// The chunk digests of one dataset, in any order until
/// [`DatasetDigest::finish`], and what its chunks decode with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DatasetDigest {
    /// Pipeline, chunk shape and element size, as hashed.
    decode: Vec<u8>,
    chunks: Vec<(Vec<u64>, u32, [u8; 32])>,
}

impl DatasetDigest {
    /// Bind the digest to the chunks' decoding: `filters` (each stage's id,
    /// optional flag and client data, in order; as the filter plugins read
    /// them), the chunk shape `chunk` and the element size `elem`.
    pub fn bind(&mut self, filters: &[FilterSpec], chunk: &[u64], elem: usize) {
        let mut d = Vec::new();
        d.extend_from_slice(&(chunk.len() as u64).to_le_bytes());
        for c in chunk {
            d.extend_from_slice(&c.to_le_bytes());
        }
        d.extend_from_slice(&(elem as u64).to_le_bytes());
        d.extend_from_slice(&(filters.len() as u64).to_le_bytes());
        for f in filters {
            d.extend_from_slice(&f.id.to_le_bytes());
            d.extend_from_slice(&(f.flags & 1).to_le_bytes());
            d.extend_from_slice(&(f.cd_values.len() as u64).to_le_bytes());
            for v in &f.cd_values {
                d.extend_from_slice(&v.to_le_bytes());
            }
        }
        self.decode = d;
    }

    /// Record the chunk at scaled coordinates `coords`, stored with filter
    /// mask `mask`, whose stored bytes have SHA-256 `sha`.
    pub fn push(&mut self, coords: Vec<u64>, mask: u32, sha: [u8; 32]) {
        self.chunks.push((coords, mask, sha));
    }

    /// Chunks recorded.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// True when no chunk was recorded.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The dataset digest: SHA-256 over the binding of [`DatasetDigest::bind`]
    /// and (rank, coordinates, filter mask, chunk SHA-256) of every chunk in
    /// coordinate order, as lowercase hex.
    pub fn finish(mut self) -> String {
        self.chunks.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut h = Sha256::new();
        h.update(b"purehdf stored-chunk digest v2");
        h.update((self.decode.len() as u64).to_le_bytes());
        h.update(&self.decode);
        h.update((self.chunks.len() as u64).to_le_bytes());
        for (c, mask, s) in &self.chunks {
            h.update((c.len() as u64).to_le_bytes());
            for x in c {
                h.update(x.to_le_bytes());
            }
            h.update(mask.to_le_bytes());
            h.update(s);
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: u32, flags: u16, cd: &[u32]) -> FilterSpec {
        FilterSpec {
            id,
            flags,
            name: None,
            cd_values: cd.to_vec(),
        }
    }

    #[test]
    fn order_of_pushes_does_not_matter_but_content_coords_and_masks_do() {
        let (a, b) = (chunk_sha(b"one"), chunk_sha(b"two"));
        let mut x = DatasetDigest::default();
        x.push(vec![0, 1], 0, a);
        x.push(vec![0, 0], 0, b);
        let mut y = DatasetDigest::default();
        y.push(vec![0, 0], 0, b);
        y.push(vec![0, 1], 0, a);
        assert_eq!(x.clone().finish(), y.finish());
        let mut z = DatasetDigest::default();
        z.push(vec![0, 0], 0, a);
        z.push(vec![0, 1], 0, b);
        assert_ne!(x.clone().finish(), z.finish());
        let mut w = DatasetDigest::default();
        w.push(vec![0, 1], 0, a);
        assert_ne!(x.clone().finish(), w.finish());
        let mut m = DatasetDigest::default();
        m.push(vec![0, 1], 1, a);
        m.push(vec![0, 0], 0, b);
        assert_ne!(x.finish(), m.finish());
    }

    #[test]
    fn the_binding_counts_pipeline_chunk_shape_and_element_size() {
        let sha = chunk_sha(b"chunk");
        let digest = |filters: &[FilterSpec], chunk: &[u64], elem: usize| {
            let mut d = DatasetDigest::default();
            d.bind(filters, chunk, elem);
            d.push(vec![0], 0, sha);
            d.finish()
        };
        let p = [spec(2, 1, &[2]), spec(1, 0, &[4])];
        let base = digest(&p, &[8], 2);
        // the name and the non-optional flag bits do not change the decode
        let mut named = p.clone();
        named[0].name = Some("shuffle".into());
        named[1].flags = 0x8000;
        assert_eq!(digest(&named, &[8], 2), base);
        assert_ne!(digest(&p[1..], &[8], 2), base);
        assert_ne!(digest(&[spec(2, 1, &[2]), spec(1, 0, &[6])], &[8], 2), base);
        assert_ne!(digest(&[spec(2, 0, &[2]), spec(1, 0, &[4])], &[8], 2), base);
        assert_ne!(digest(&p, &[4, 2], 2), base);
        assert_ne!(digest(&p, &[8], 4), base);
        let mut unbound = DatasetDigest::default();
        unbound.push(vec![0], 0, sha);
        assert_ne!(unbound.finish(), base);
    }
}
