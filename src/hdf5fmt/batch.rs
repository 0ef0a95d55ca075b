//! Batch decode into one buffer (`docs/neighbours.md` row I7): many chunks
//! (or, in `records`, many records) decoded by `workers` threads straight
//! into their slots of one caller buffer, no lock and no per-item output
//! vector shared between threads.

use crate::error::{Error, Result};
use crate::raw_chunks::ChunkReader;

/// Threads to use for `workers` (0 = the crate's thread policy,
/// [`purehdf_filters::threads::threads`]), never more than `items`.
pub(crate) fn worker_count(workers: usize, items: usize) -> usize {
    let n = if workers == 0 {
        purehdf_filters::threads::threads()
    } else {
        workers
    };
    n.clamp(1, items.max(1))
}

/// Run `job(i, slot_i)` for every item, where `slots` are the disjoint output
/// slots in item order; items are split into `workers` runs of consecutive
/// items, one scoped thread each (the calling thread takes the first run).
/// The first error in item order is returned.
pub(crate) fn fill_slots<'o, F>(slots: Vec<&'o mut [u8]>, workers: usize, job: F) -> Result<()>
where
    F: Fn(usize, &mut [u8]) -> Result<()> + Sync,
{
    let n = slots.len();
    let workers = worker_count(workers, n);
    if workers <= 1 || cfg!(target_family = "wasm") {
        return slots
            .into_iter()
            .enumerate()
            .try_for_each(|(i, s)| job(i, s));
    }
    let per = n.div_ceil(workers);
    let mut runs: Vec<(usize, Vec<&'o mut [u8]>)> = Vec::with_capacity(workers);
    let mut it = slots.into_iter();
    let mut first = 0;
    while first < n {
        let run: Vec<&mut [u8]> = it.by_ref().take(per).collect();
        let len = run.len();
        runs.push((first, run));
        first += len;
    }
    let job = &job;
    let run_one = move |(first, run): (usize, Vec<&mut [u8]>)| -> Result<()> {
        run.into_iter()
            .enumerate()
            .try_for_each(|(k, s)| job(first + k, s))
    };
    std::thread::scope(|scope| {
        let mut runs = runs.into_iter();
        let head = runs.next();
        let handles: Vec<_> = runs.map(|r| scope.spawn(move || run_one(r))).collect();
        let mut result = head.map_or(Ok(()), run_one);
        for h in handles {
            let r = h
                .join()
                .unwrap_or_else(|_| Err(Error::InvalidArgument("a decode thread panicked".into())));
            if result.is_ok() {
                result = r;
            }
        }
        result
    })
}

impl ChunkReader {
    /// Decode the chunks at `coords` (in order, duplicates kept) into one
    /// buffer, chunk `i` at `i × chunk_bytes`, on `workers` threads (0 = the
    /// crate's thread policy). Unwritten chunks read as the dataset's fill
    /// value. With `verify`, Fletcher-32 is checked as in
    /// [`ChunkReader::raw_chunk`].
    pub fn decode_chunks<C: AsRef<[u64]> + Sync>(
        &self,
        coords: &[C],
        verify: bool,
        workers: usize,
    ) -> Result<Vec<u8>> {
        let grid = self.map.grid();
        let chunk = usize::try_from(grid.chunk_bytes)
            .map_err(|_| Error::InvalidArgument("chunk size".into()))?;
        let total = chunk
            .checked_mul(coords.len())
            .filter(|&t| t as u64 <= crate::limits::MAX_DECODED)
            .ok_or(Error::Limit {
                structure: "chunk batch",
                offset: 0,
                what: "decoded bytes",
                value: grid.chunk_bytes.saturating_mul(coords.len() as u64),
                limit: crate::limits::MAX_DECODED,
            })?;
        for c in coords {
            self.check(c.as_ref())?;
        }
        let mut out = vec![0u8; total];
        let fill = self.ds.fill_value().bytes().map(<[u8]>::to_vec);
        let slots: Vec<&mut [u8]> = if chunk == 0 {
            Vec::new()
        } else {
            out.chunks_mut(chunk).collect()
        };
        fill_slots(slots, workers, |i, slot| {
            let c = coords[i].as_ref();
            match self.raw_chunk(c, verify)? {
                None => {
                    if let Some(f) = fill.as_deref().filter(|f| !f.is_empty()) {
                        for (d, s) in slot.iter_mut().zip(f.iter().cycle()) {
                            *d = *s;
                        }
                    }
                    Ok(())
                }
                Some(raw) => {
                    let dec = self.decode(&raw)?;
                    if dec.len() != slot.len() {
                        return Err(self.wrap(
                            c,
                            Error::InvalidArgument(format!(
                                "chunk decoded to {} bytes, expected {}",
                                dec.len(),
                                slot.len()
                            )),
                        ));
                    }
                    slot.copy_from_slice(&dec);
                    Ok(())
                }
            }
        })?;
        self.ds.file().source().check()?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::file::File;
    use crate::write::{DatasetSpec, FileWriter};
    use crate::Filter;

    #[test]
    fn batch_decode_equals_one_by_one_for_any_worker_count() {
        let mut w = FileWriter::in_memory();
        let data: Vec<u32> = (0..4096u32)
            .map(|i| i.wrapping_mul(2654435761) >> 7)
            .collect();
        let spec = DatasetSpec::of::<u32>(&[64, 64]).chunked(
            &[8, 16],
            vec![
                Filter::shuffle(),
                Filter::zstd(3).unwrap(),
                Filter::fletcher32(),
            ],
        );
        w.write_dataset(w.root(), "x", spec, &data).unwrap();
        let file = File::from_bytes(w.finish().unwrap()).unwrap();
        let r = file
            .root()
            .unwrap()
            .dataset("x")
            .unwrap()
            .chunk_reader()
            .unwrap();
        let coords: Vec<[u64; 2]> = (0..40u64).map(|i| [(i * 5) % 8, (i * 3) % 4]).collect();
        let mut want = Vec::new();
        for c in &coords {
            let raw = r.raw_chunk(c, true).unwrap().unwrap();
            want.extend(r.decode(&raw).unwrap());
        }
        for workers in [1, 2, 3, 7] {
            assert_eq!(r.decode_chunks(&coords, true, workers).unwrap(), want);
        }
        assert!(r.decode_chunks(&[[9u64, 0]], false, 2).is_err());
    }
}
