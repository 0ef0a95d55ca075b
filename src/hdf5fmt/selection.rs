//! Selections on a dataspace: the whole extent or one hyperslab (start, count; unit
//! stride and block), and the plans that map a selection onto storage pieces.

/// What part of a dataset to read or write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// Every element.
    All,
    /// A box: `start[i] .. start[i] + count[i]` along each dimension.
    Hyperslab { start: Vec<u64>, count: Vec<u64> },
}

impl Selection {
    /// Number of elements selected in a dataspace of `dims`.
    pub fn num_elements(&self, dims: &[u64]) -> Option<u64> {
        let counts: &[u64] = match self {
            Selection::All => dims,
            Selection::Hyperslab { count, .. } => count,
        };
        counts.iter().try_fold(1u64, |acc, &c| acc.checked_mul(c))
    }

    /// The selection as explicit start/count for a dataspace of `dims`, checked to lie inside it.
    pub fn resolve(&self, dims: &[u64]) -> Option<(Vec<u64>, Vec<u64>)> {
        match self {
            Selection::All => Some((vec![0; dims.len()], dims.to_vec())),
            Selection::Hyperslab { start, count } => {
                if start.len() != dims.len() || count.len() != dims.len() {
                    return None;
                }
                for ((&s, &c), &d) in start.iter().zip(count).zip(dims) {
                    if s.checked_add(c)? > d {
                        return None;
                    }
                }
                Some((start.clone(), count.clone()))
            }
        }
    }
}
