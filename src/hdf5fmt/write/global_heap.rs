//! Global heap collection writer (HDF5 File Format Specification III.E, "Global
//! Heap"): collections of at least 4096 bytes holding variable-length data, each
//! object 8-byte aligned, the tail described by a free-space object (index 0).

use super::sink::Sink;
use crate::error::{Error, Result};
use crate::global_heap::{HeapId, VlenRef};
use crate::signature;

/// Smallest collection libhdf5 reads comfortably.
pub const MIN_COLLECTION: u64 = 4096;
const HEADER: u64 = 16;
const OBJ_HEADER: u64 = 16;

fn align8(n: u64) -> u64 {
    n.div_ceil(8) * 8
}

struct Collection {
    addr: u64,
    cap: u64,
    buf: Vec<u8>,
    next_index: u16,
}

impl Collection {
    fn fits(&self, len: u64) -> bool {
        let need = OBJ_HEADER + align8(len);
        self.next_index < u16::MAX && self.buf.len() as u64 + need <= self.cap
    }
}

/// Appends objects to collections reserved at the end of the file; a collection is
/// written in place when full or on [`GlobalHeap::flush`].
#[derive(Default)]
pub struct GlobalHeap {
    current: Option<Collection>,
}

impl GlobalHeap {
    /// Store `data`, returning where it lives.
    pub fn add(&mut self, sink: &mut Sink, data: &[u8]) -> Result<HeapId> {
        let len = data.len() as u64;
        if !self.current.as_ref().is_some_and(|c| c.fits(len)) {
            self.flush(sink)?;
            // Leave room for the object and a trailing free-space header.
            let cap = align8(HEADER + OBJ_HEADER + align8(len) + OBJ_HEADER).max(MIN_COLLECTION);
            let addr = sink.reserve(cap)?;
            let mut buf = Vec::with_capacity(cap as usize);
            buf.extend_from_slice(signature::GCOL);
            buf.extend_from_slice(&[1, 0, 0, 0]);
            buf.extend_from_slice(&cap.to_le_bytes());
            self.current = Some(Collection {
                addr,
                cap,
                buf,
                next_index: 1,
            });
        }
        let c = self
            .current
            .as_mut()
            .ok_or_else(|| Error::InvalidArgument("global heap state".into()))?;
        let index = c.next_index;
        c.next_index += 1;
        c.buf.extend_from_slice(&index.to_le_bytes());
        c.buf.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        c.buf.extend_from_slice(&len.to_le_bytes());
        c.buf.extend_from_slice(data);
        c.buf.resize(c.buf.len() + (align8(len) - len) as usize, 0);
        Ok(HeapId {
            collection: Some(c.addr),
            index: u32::from(index),
        })
    }

    /// Write the open collection (with its free-space object) into its reserved place.
    pub fn flush(&mut self, sink: &mut Sink) -> Result<()> {
        if let Some(mut c) = self.current.take() {
            let free = c.cap - c.buf.len() as u64;
            if free >= OBJ_HEADER {
                c.buf.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
                c.buf.extend_from_slice(&free.to_le_bytes());
            }
            c.buf.resize(c.cap as usize, 0);
            sink.write_at(c.addr, &c.buf)?;
        }
        Ok(())
    }
}

/// Encode one variable-length element pointer: length, collection address, index.
pub fn vlen_pointer(len: u32, r: HeapId) -> [u8; 16] {
    let mut b = Vec::with_capacity(16);
    VlenRef { length: len, id: r }.encode(super::sizes::WRITER_SIZES, &mut b);
    let mut out = [0u8; 16];
    out.copy_from_slice(&b);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collection_layout() {
        let mut sink = Sink::memory();
        sink.append(&[0xAA; 8]).unwrap();
        let mut gh = GlobalHeap::default();
        let a = gh.add(&mut sink, b"hello").unwrap();
        let b = gh.add(&mut sink, b"").unwrap();
        gh.flush(&mut sink).unwrap();
        let bytes = sink.into_bytes().unwrap();
        assert_eq!(a.collection, Some(8));
        assert_eq!((a.index, b.index), (1, 2));
        assert_eq!(bytes.len(), 8 + 4096);
        let c = &bytes[8..];
        assert_eq!(&c[..8], b"GCOL\x01\0\0\0");
        assert_eq!(u64::from_le_bytes(c[8..16].try_into().unwrap()), 4096);
        assert_eq!(&c[16..18], &[1, 0]);
        assert_eq!(u64::from_le_bytes(c[24..32].try_into().unwrap()), 5);
        assert_eq!(&c[32..37], b"hello");
        assert_eq!(&c[40..42], &[2, 0]);
        // Free space object after the empty object: index 0, size = rest.
        assert_eq!(&c[56..58], &[0, 0]);
        assert_eq!(u64::from_le_bytes(c[64..72].try_into().unwrap()), 4096 - 56);
    }

    #[test]
    fn big_object_gets_big_collection() {
        let mut sink = Sink::memory();
        let mut gh = GlobalHeap::default();
        let data = vec![7u8; 10_000];
        let r = gh.add(&mut sink, &data).unwrap();
        gh.flush(&mut sink).unwrap();
        let bytes = sink.into_bytes().unwrap();
        assert_eq!(r.collection, Some(0));
        assert!(bytes.len() as u64 >= 10_000 + 48);
        assert_eq!(&bytes[32..32 + 10_000], &data[..]);
    }

    proptest::proptest! {
        #[test]
        fn objects_are_found_by_collection_and_index(
            objs in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..3000), 1..60),
        ) {
            let mut sink = Sink::memory();
            let mut gh = GlobalHeap::default();
            let refs: Vec<HeapId> = objs.iter().map(|o| gh.add(&mut sink, o).unwrap()).collect();
            gh.flush(&mut sink).unwrap();
            let b = sink.into_bytes().unwrap();
            for (o, r) in objs.iter().zip(&refs) {
                let c = r.collection.unwrap_or(u64::MAX) as usize;
                proptest::prop_assert_eq!(&b[c..c + 4], b"GCOL");
                let size = u64::from_le_bytes(b[c + 8..c + 16].try_into().unwrap()) as usize;
                proptest::prop_assert!(size >= 4096);
                let mut p = c + 16;
                let mut found = None;
                while p + 16 <= c + size {
                    let idx = u16::from_le_bytes([b[p], b[p + 1]]);
                    let len = u64::from_le_bytes(b[p + 8..p + 16].try_into().unwrap()) as usize;
                    if idx == 0 {
                        proptest::prop_assert_eq!(p + len, c + size);
                        break;
                    }
                    if u32::from(idx) == r.index {
                        found = Some(b[p + 16..p + 16 + len].to_vec());
                    }
                    p += 16 + len.div_ceil(8) * 8;
                }
                proptest::prop_assert_eq!(found.as_deref(), Some(&o[..]));
            }
        }
    }
}
