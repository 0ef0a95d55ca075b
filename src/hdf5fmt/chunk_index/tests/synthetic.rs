//! A hand-built extensible array and a proptest of hyperslab reads.

use proptest::prelude::*;

use super::*;

const HDR: u64 = 0;

fn ea_block(sig: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut v = sig.to_vec();
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(&HDR.to_le_bytes());
    v.extend_from_slice(body);
    seal(v)
}

fn addrs(a: &[u64]) -> Vec<u8> {
    a.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// idx_blk_elmts 2, data block min 2, super block min pointers 2, 10 bits, no paging.
/// Element `i` holds address 1000 + 10 i; element 1 is unwritten.
fn extensible_array(max_idx_set: u64) -> Vec<u8> {
    let u = u64::MAX;
    let el = |i: u64| 1000 + 10 * i;
    let mut f = Vec::new();
    let mut h = b"EAHD".to_vec();
    h.extend_from_slice(&[0, 0, 8, 10, 2, 2, 2, 10]);
    for v in [0u64, 0, 0, 0, max_idx_set, max_idx_set, 200] {
        h.extend_from_slice(&v.to_le_bytes());
    }
    place(&mut f, 0, &seal(h));
    // Index block: 2 elements, 2 data block addresses, 8 super block addresses.
    let mut ib = addrs(&[el(0), u]);
    ib.extend(addrs(&[400, 500]));
    ib.extend(addrs(&[600, u, u, u, u, u, u, u]));
    place(&mut f, 200, &ea_block(b"EAIB", &ib));
    // Data blocks of super blocks 0 (2 elements) and 1 (4 elements); 2-byte offsets.
    let mut d0 = 0u16.to_le_bytes().to_vec();
    d0.extend(addrs(&[el(2), el(3)]));
    place(&mut f, 400, &ea_block(b"EADB", &d0));
    let mut d1 = 2u16.to_le_bytes().to_vec();
    d1.extend(addrs(&[el(4), el(5), el(6), el(7)]));
    place(&mut f, 500, &ea_block(b"EADB", &d1));
    // Super block 2: two data blocks of 4 elements.
    let mut sb = 6u16.to_le_bytes().to_vec();
    sb.extend(addrs(&[700, 800]));
    place(&mut f, 600, &ea_block(b"EASB", &sb));
    let mut d2 = 6u16.to_le_bytes().to_vec();
    d2.extend(addrs(&[el(8), el(9), el(10), el(11)]));
    place(&mut f, 700, &ea_block(b"EADB", &d2));
    let mut d3 = 10u16.to_le_bytes().to_vec();
    d3.extend(addrs(&[el(12), el(13), el(14), el(15)]));
    place(&mut f, 800, &ea_block(b"EADB", &d3));
    f
}

fn ea_params(n: u64) -> ChunkIndexParams {
    let mut p = params(
        ChunkIndexKind::ExtensibleArray {
            max_bits: 10,
            index_elements: 2,
            min_pointers: 2,
            min_elements: 2,
            page_bits: 10,
        },
        0,
        &[n],
        &[1],
    );
    p.max_dims = vec![None];
    p
}

#[test]
fn extensible_array_walks_every_block() {
    let f = extensible_array(14);
    let src = MemSource::new(f.clone());
    let got = chunks(&src, S, &ea_params(14)).unwrap();
    let want: Vec<(u64, u64)> = (0..14)
        .filter(|&i| i != 1)
        .map(|i| (i, 1000 + 10 * i))
        .collect();
    assert_eq!(
        got.iter()
            .map(|r| (r.offset[0], r.address))
            .collect::<Vec<_>>(),
        want
    );
    // More elements set than the dataspace now holds chunks (a dataset shrunk
    // along its unlimited dimension): those past the extent are ignored, as
    // libhdf5 ignores them.
    let shrunk = chunks(&src, S, &ea_params(10)).unwrap();
    assert_eq!(
        shrunk.iter().map(|r| r.offset[0]).collect::<Vec<_>>(),
        [0, 2, 3, 4, 5, 6, 7, 8, 9]
    );
    // A corrupt super block.
    let mut bad = f.clone();
    bad[620] ^= 1;
    assert!(matches!(
        chunks(&MemSource::new(bad), S, &ea_params(14)),
        Err(Error::Checksum { offset: 600, .. })
    ));
    // A data block claiming another owner.
    let mut bad = f;
    place(&mut bad, 500, &{
        let mut v = b"EADB".to_vec();
        v.extend_from_slice(&[0, 0]);
        v.extend_from_slice(&8u64.to_le_bytes());
        v.extend_from_slice(&[0; 2 + 32]);
        seal(v)
    });
    assert!(matches!(
        chunks(&MemSource::new(bad), S, &ea_params(14)),
        Err(Error::Malformed { .. })
    ));
}

#[test]
fn extensible_array_two_dims_swizzled() {
    // 2-D, unlimited dim 1, chunk grid 2 rows (fixed) x n columns: element index
    // = col * 2 + row.
    let f = extensible_array(8);
    let mut p = ea_params(8);
    p.chunk_dims = vec![1, 1];
    p.dataset_dims = vec![2, 4];
    p.max_dims = vec![Some(2), None];
    let got = chunks(&MemSource::new(f), S, &p).unwrap();
    let got: Vec<(Vec<u64>, u64)> = got.into_iter().map(|r| (r.offset, r.address)).collect();
    assert_eq!(got[0], (vec![0, 0], 1000));
    assert_eq!(got[1], (vec![0, 1], 1020)); // element 2
    assert_eq!(got[2], (vec![1, 1], 1030)); // element 3
    assert_eq!(got.len(), 7);
}

/// A file whose implicit index holds chunks of `elem`-byte values equal to the
/// element's row-major index in the dataspace (garbage outside the dataspace).
fn implicit_file(dims: &[u64], chunk: &[u64], elem: usize) -> (Vec<u8>, ChunkIndexParams) {
    let mut p = params(ChunkIndexKind::Implicit, 64, dims, chunk);
    p.element_size = elem as u32;
    let g = grid::Grid::new(&p).unwrap();
    let n: u64 = g.per_dim.iter().product();
    let mut f = vec![0u8; 64];
    for i in 0..n {
        let scaled = grid::unravel(i, &g.per_dim).unwrap();
        let origin: Vec<u64> = scaled.iter().zip(chunk).map(|(s, c)| s * c).collect();
        let cn: u64 = chunk.iter().product();
        for j in 0..cn {
            let local = grid::unravel(j, chunk).unwrap();
            let x: Vec<u64> = origin.iter().zip(&local).map(|(o, l)| o + l).collect();
            let inside = x.iter().zip(dims).all(|(a, d)| a < d);
            let v = if inside {
                grid::ravel(&x, dims).unwrap()
            } else {
                0xeeee_eeee
            };
            f.extend_from_slice(&v.to_le_bytes()[..elem]);
        }
    }
    (f, p)
}

fn expected(dims: &[u64], start: &[u64], count: &[u64], elem: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let hi: Vec<u64> = start.iter().zip(count).map(|(s, c)| s + c).collect();
    crate::selection::for_each_in_box::<()>(start, &hi, |x| {
        let v = grid::ravel(x, dims).unwrap();
        out.extend_from_slice(&v.to_le_bytes()[..elem]);
        Ok(())
    })
    .unwrap();
    out
}

fn case() -> impl Strategy<Value = (Vec<u64>, Vec<u64>, Vec<u64>, Vec<u64>, usize)> {
    (1usize..=3)
        .prop_flat_map(|rank| {
            (
                proptest::collection::vec(1u64..10, rank),
                proptest::collection::vec(1u64..5, rank),
                prop_oneof![Just(1usize), Just(2), Just(4)],
            )
        })
        .prop_flat_map(|(dims, chunk, elem)| {
            let starts: Vec<_> = dims.iter().map(|&d| 0..d).collect();
            (Just(dims), Just(chunk), starts, Just(elem))
        })
        .prop_flat_map(|(dims, chunk, start, elem)| {
            let counts: Vec<_> = dims.iter().zip(&start).map(|(&d, &s)| 1..=d - s).collect();
            (Just(dims), Just(chunk), Just(start), counts, Just(elem))
        })
}

proptest! {
    #[test]
    fn hyperslab_equals_slice_of_full_read((dims, chunk, start, count, elem) in case()) {
        let (f, p) = implicit_file(&dims, &chunk, elem);
        let src = MemSource::new(f);
        let total: u64 = dims.iter().product();
        let mut full = vec![0u8; total as usize * elem];
        read_chunked(&src, S, &p, &[], None, &Selection::All, &mut full).unwrap();
        prop_assert_eq!(&full, &expected(&dims, &vec![0; dims.len()], &dims, elem));
        let n: u64 = count.iter().product();
        let mut part = vec![0u8; n as usize * elem];
        let sel = Selection::Hyperslab { start: start.clone(), count: count.clone() };
        let cache = ChunkCache::new(4);
        let map = ChunkMap::build(&src, S, &p).unwrap();
        read_chunked_with(&src, &map, &[], None, &sel, &mut part, Some(&cache)).unwrap();
        prop_assert_eq!(part, expected(&dims, &start, &count, elem));
    }
}

fn mutate(mut f: Vec<u8>, edits: &[(usize, u8)]) -> Vec<u8> {
    for &(at, v) in edits {
        if !f.is_empty() {
            let i = at % f.len();
            f[i] = v;
        }
    }
    f
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Any corruption of an index is an error or a (possibly different) answer,
    /// never a panic or a hang.
    #[test]
    fn corrupted_indexes_never_panic(
        edits in proptest::collection::vec((0usize..4096, any::<u8>()), 1..6),
        cut in 0usize..4096,
    ) {
        let ea = mutate(extensible_array(14), &edits);
        let src = MemSource::new(ea.clone());
        let _ = chunks(&src, S, &ea_params(14));
        let short = MemSource::new(ea[..cut.min(ea.len())].to_vec());
        let _ = chunks(&short, S, &ea_params(14));
        let mut p = ea_params(14);
        p.max_dims = vec![Some(14)];
        let _ = read_chunked(&src, S, &p, &[], None, &Selection::All, &mut [0u8; 14]);

        let els: Vec<Vec<u8>> = (0..6u64).map(|i| (1000 + i).to_le_bytes().to_vec()).collect();
        let fa = mutate(super::fixed_array(0, 8, 1, &els, Some(0xff)), &edits);
        let fp = params(ChunkIndexKind::FixedArray { page_bits: 1 }, 0, &[12], &[2]);
        let _ = chunks(&MemSource::new(fa), S, &fp);
    }
}

/// A paged data block: prefix (with its block offset) sealed, then one sealed
/// page of elements per entry of `pages` (`None` leaves the page unwritten).
fn paged_dblock(offset: u16, pages: &[Option<Vec<u64>>]) -> Vec<u8> {
    let mut v = ea_block(b"EADB", &offset.to_le_bytes());
    for p in pages {
        match p {
            Some(els) => v.extend(seal(addrs(els))),
            None => v.extend(vec![0u8; 2 * 8 + 4]),
        }
    }
    v
}

#[test]
fn extensible_array_with_paged_data_blocks() {
    // As `extensible_array` but pages of 2 elements (page bits 1).
    let u = u64::MAX;
    let el = |i: u64| 1000 + 10 * i;
    let mut f = Vec::new();
    let mut h = b"EAHD".to_vec();
    h.extend_from_slice(&[0, 0, 8, 10, 2, 2, 2, 1]);
    for v in [0u64, 0, 0, 0, 16, 16, 200] {
        h.extend_from_slice(&v.to_le_bytes());
    }
    place(&mut f, 0, &seal(h));
    let mut ib = addrs(&[el(0), u]);
    ib.extend(addrs(&[400, 500]));
    ib.extend(addrs(&[600, u, u, u, u, u, u, u]));
    place(&mut f, 200, &ea_block(b"EAIB", &ib));
    let mut d0 = 0u16.to_le_bytes().to_vec();
    d0.extend(addrs(&[el(2), el(3)]));
    place(&mut f, 400, &ea_block(b"EADB", &d0));
    // Data block of super block 1 (in the index block): 4 elements in 2 pages.
    place(
        &mut f,
        500,
        &paged_dblock(2, &[Some(vec![el(4), el(5)]), Some(vec![el(6), el(7)])]),
    );
    // Super block 2: page bits numbered across its data blocks (block 0: both
    // pages, bits 0-1; block 1: page 0 only, bit 2).
    let mut sb = 6u16.to_le_bytes().to_vec();
    sb.extend_from_slice(&[0b1110_0000, 0]);
    sb.extend(addrs(&[700, 800]));
    place(&mut f, 600, &ea_block(b"EASB", &sb));
    place(
        &mut f,
        700,
        &paged_dblock(6, &[Some(vec![el(8), el(9)]), Some(vec![el(10), el(11)])]),
    );
    place(
        &mut f,
        800,
        &paged_dblock(10, &[Some(vec![el(12), el(13)]), None]),
    );
    let got = chunks(&MemSource::new(f.clone()), S, &ea_params(16)).unwrap();
    let want: Vec<u64> = (0..14).filter(|&i| i != 1).collect();
    assert_eq!(got.iter().map(|r| r.offset[0]).collect::<Vec<_>>(), want);
    assert_eq!(got[4].address, el(5));
    // Mark the unwritten page as written: its (zero) checksum is refused.
    let mut bad = f;
    let mut sb = 6u16.to_le_bytes().to_vec();
    sb.extend_from_slice(&[0b1111_0000, 0]);
    sb.extend(addrs(&[700, 800]));
    place(&mut bad, 600, &ea_block(b"EASB", &sb));
    assert!(matches!(
        chunks(&MemSource::new(bad), S, &ea_params(16)),
        Err(Error::Checksum { .. })
    ));
}
