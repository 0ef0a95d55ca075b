//! Digests of re-encoded datasets, taken by the copier from the decoded
//! source bytes it encodes anyway (`h5 recompress`'s verification, issue 15):
//! one SHA-256 per written chunk over the whole chunk as handed to the
//! pipeline (edge chunks padded with the fill value), combined per dataset in
//! chunk-coordinate order. The verifier decodes every stored chunk of the
//! output once and computes the same digest, so equal digests mean the output
//! holds exactly these chunks, each decoding to the bytes read from the source.

use sha2::{Digest, Sha256};

/// SHA-256 of one whole decoded chunk.
pub fn chunk_sha(raw: &[u8]) -> [u8; 32] {
    Sha256::digest(raw).into()
}

/// The chunk digests of one dataset, in any order until [`DatasetDigest::finish`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DatasetDigest {
    chunks: Vec<(Vec<u64>, [u8; 32])>,
}

impl DatasetDigest {
    /// Record the chunk at scaled coordinates `coords`.
    pub fn push(&mut self, coords: Vec<u64>, sha: [u8; 32]) {
        self.chunks.push((coords, sha));
    }

    /// Chunks recorded.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// True when no chunk was recorded.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The dataset digest: SHA-256 over (rank, coordinates, chunk SHA-256) of
    /// every chunk in coordinate order, as lowercase hex.
    pub fn finish(mut self) -> String {
        self.chunks.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut h = Sha256::new();
        h.update((self.chunks.len() as u64).to_le_bytes());
        for (c, s) in &self.chunks {
            h.update((c.len() as u64).to_le_bytes());
            for x in c {
                h.update(x.to_le_bytes());
            }
            h.update(s);
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_of_pushes_does_not_matter_but_content_and_coords_do() {
        let (a, b) = (chunk_sha(b"one"), chunk_sha(b"two"));
        let mut x = DatasetDigest::default();
        x.push(vec![0, 1], a);
        x.push(vec![0, 0], b);
        let mut y = DatasetDigest::default();
        y.push(vec![0, 0], b);
        y.push(vec![0, 1], a);
        assert_eq!(x.clone().finish(), y.finish());
        let mut z = DatasetDigest::default();
        z.push(vec![0, 0], a);
        z.push(vec![0, 1], b);
        assert_ne!(x.clone().finish(), z.finish());
        let mut w = DatasetDigest::default();
        w.push(vec![0, 1], a);
        assert_ne!(x.finish(), w.finish());
    }
}
