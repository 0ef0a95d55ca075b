//! The writer's stand-in for each filter's HDF5 "set local" callback: completes
//! `cd_values` from the datatype and chunk shape exactly as libhdf5 and the
//! hdf5plugin filters store them (`docs/filters-format.md`, per-filter tables),
//! so that files read back in libhdf5 carry the parameters its decoders expect.

use crate::datatype::Datatype;
use purehdf_filters::{ids, FilterSpec};

/// Size of the element the filter sees as a "type": array types count their base.
fn type_size(dtype: &Datatype) -> u32 {
    match dtype {
        Datatype::Array { base, .. } => type_size(base),
        other => other.size().min(u64::from(u32::MAX)) as u32,
    }
}

/// Complete `spec`'s client data for a dataset of `dtype` with `chunk_dims`.
pub fn set_local(spec: &FilterSpec, dtype: &Datatype, chunk_dims: &[u64]) -> FilterSpec {
    let elem = dtype.size().min(u64::from(u32::MAX)) as u32;
    let chunk_bytes = chunk_dims
        .iter()
        .try_fold(dtype.size(), |a, &d| a.checked_mul(d))
        .unwrap_or(0)
        .min(u64::from(u32::MAX)) as u32;
    let mut out = spec.clone();
    let cd = &mut out.cd_values;
    match spec.id {
        // libhdf5 leaves shuffle's client data empty for variable-length
        // strings and sequences (a compound holding them gets its size)
        ids::SHUFFLE
            if matches!(
                dtype,
                Datatype::VarString { .. } | Datatype::VarSequence { .. }
            ) => {}
        ids::SHUFFLE => *cd = vec![elem],
        ids::BLOSC => {
            let user: Vec<u32> = cd.iter().skip(4).copied().collect();
            let ts = type_size(dtype);
            let ts = if ts > 255 { 1 } else { ts };
            *cd = vec![2, 2, ts, chunk_bytes];
            cd.extend(user.iter().take(3));
        }
        ids::BLOSC2 => {
            let user: Vec<u32> = cd.iter().skip(4).take(3).copied().collect();
            let block = cd.get(1).copied().unwrap_or(0);
            *cd = vec![1, block, type_size(dtype), chunk_bytes];
            let defaults = [5, 1, 0];
            for (i, d) in defaults.iter().enumerate() {
                cd.push(user.get(i).copied().unwrap_or(*d));
            }
            let rank = chunk_dims.len();
            if (2..=16).contains(&rank) {
                cd.push(rank as u32);
                cd.extend(
                    chunk_dims
                        .iter()
                        .map(|&d| d.min(u64::from(u32::MAX)) as u32),
                );
            }
        }
        ids::BITSHUFFLE => {
            if cd.len() <= 3 {
                let user = cd.clone();
                *cd = vec![0, 4, elem];
                cd.extend(user);
            } else if let Some(e) = cd.get_mut(2) {
                *e = elem;
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: u32, cd: Vec<u32>) -> FilterSpec {
        FilterSpec {
            id,
            flags: 0,
            cd_values: cd,
            name: None,
        }
    }

    #[test]
    fn matches_the_documented_examples() {
        let i16t = Datatype::int(2, true);
        // Blosc2: int16 1-D chunk of 4096, zstd:3 shuffle.
        let b2 = set_local(
            &spec(ids::BLOSC2, vec![0, 0, 0, 0, 3, 1, 5]),
            &i16t,
            &[4096],
        );
        assert_eq!(b2.cd_values, vec![1, 0, 2, 8192, 3, 1, 5]);
        let b2 = set_local(
            &spec(ids::BLOSC2, vec![0, 0, 0, 0, 3, 1, 5]),
            &i16t,
            &[10, 50, 100],
        );
        assert_eq!(
            b2.cd_values,
            vec![1, 0, 2, 100_000, 3, 1, 5, 3, 10, 50, 100]
        );
        // Blosc1: int16 chunk of 4096, lz4:5.
        let b1 = set_local(&spec(ids::BLOSC, vec![0, 0, 0, 0, 5, 1, 1]), &i16t, &[4096]);
        assert_eq!(b1.cd_values, vec![2, 2, 2, 8192, 5, 1, 1]);
        // Bitshuffle with lz4.
        let bs = set_local(&spec(ids::BITSHUFFLE, vec![0, 2]), &i16t, &[100]);
        assert_eq!(bs.cd_values, vec![0, 4, 2, 0, 2]);
        let sh = set_local(&spec(ids::SHUFFLE, vec![]), &Datatype::float(8), &[10]);
        assert_eq!(sh.cd_values, vec![8]);
    }
}
