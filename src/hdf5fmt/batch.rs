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

/// Items one worker takes from the shared queue at a time: about eight
/// grabs per worker, so a worker that the machine slows down (another
/// process on its core) leaves its share to the others instead of holding
/// the whole batch back, as fixed halves did (issue 46, row I6).
fn grab_len(items: usize, workers: usize) -> usize {
    (items / workers.saturating_mul(8).max(1)).clamp(1, 64)
}

/// Run `job(i, slot_i)` for every item, where `slots` are the disjoint output
/// slots in item order, on `workers` threads (the calling thread is one of
/// them) taking runs of consecutive items from one queue in item order. The
/// first error in item order is returned: a worker finishes the run it took
/// (runs taken earlier hold earlier items) and no run is taken after an error.
pub(crate) fn fill_slots<F>(slots: Vec<&mut [u8]>, workers: usize, job: F) -> Result<()>
where
    F: Fn(usize, &mut [u8]) -> Result<()> + Sync,
{
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;

    let n = slots.len();
    let workers = worker_count(workers, n);
    if workers <= 1 || cfg!(target_family = "wasm") {
        return slots
            .into_iter()
            .enumerate()
            .try_for_each(|(i, s)| job(i, s));
    }
    let grab = grab_len(n, workers);
    let queue = Mutex::new(slots.into_iter().enumerate());
    let failed = AtomicBool::new(false);
    let (job, queue, failed) = (&job, &queue, &failed);
    // the first failing item of one worker, with its index
    let work = move || -> Option<(usize, Error)> {
        let mut first: Option<(usize, Error)> = None;
        let mut run: Vec<(usize, &mut [u8])> = Vec::with_capacity(grab);
        while !failed.load(Ordering::Relaxed) {
            run.clear();
            match queue.lock() {
                Ok(mut q) => run.extend(q.by_ref().take(grab)),
                Err(_) => break,
            }
            if run.is_empty() {
                break;
            }
            for (i, slot) in run.drain(..) {
                if let Err(e) = job(i, slot) {
                    failed.store(true, Ordering::Relaxed);
                    first = Some((i, e));
                    break;
                }
            }
            if first.is_some() {
                break;
            }
        }
        first
    };
    let mut errors: Vec<(usize, Error)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (1..workers).map(|_| scope.spawn(work)).collect();
        let mut errors: Vec<(usize, Error)> = work().into_iter().collect();
        for h in handles {
            match h.join() {
                Ok(r) => errors.extend(r),
                Err(_) => errors.push((
                    usize::MAX,
                    Error::InvalidArgument("a decode thread panicked".into()),
                )),
            }
        }
        errors
    });
    errors.sort_by_key(|(i, _)| *i);
    match errors.into_iter().next() {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
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
    #[test]
    fn fill_slots_returns_the_first_error_in_item_order() {
        for workers in [1, 2, 3, 7] {
            let mut out = vec![0u8; 300];
            let slots: Vec<&mut [u8]> = out.chunks_mut(1).collect();
            let r = super::fill_slots(slots, workers, |i, s| {
                if i == 137 || i == 250 {
                    return Err(crate::error::Error::InvalidArgument(format!("item {i}")));
                }
                s[0] = (i % 251) as u8 + 1;
                Ok(())
            });
            assert_eq!(
                r.unwrap_err().to_string(),
                "invalid argument: item 137",
                "{workers}"
            );
            // every item before the first failure was filled
            assert!(out[..137]
                .iter()
                .enumerate()
                .all(|(i, &b)| b == (i % 251) as u8 + 1));
        }
        let mut out = vec![0u8; 1000];
        let slots: Vec<&mut [u8]> = out.chunks_mut(10).collect();
        super::fill_slots(slots, 2, |i, s| {
            s.fill(i as u8);
            Ok(())
        })
        .unwrap();
        assert!(out.iter().enumerate().all(|(k, &b)| b == (k / 10) as u8));
    }

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
