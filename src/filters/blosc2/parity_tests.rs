//! What the Blosc2 filter accepts and refuses in a damaged frame, following
//! C-Blosc2 as hdf5plugin 7.1 reads it (`tests/blosc2_parity.rs` checks the
//! same against the C library itself).

use super::*;

const DIMS: [usize; 3] = [8, 16, 16];

fn cd() -> Vec<u32> {
    vec![1, 0, 2, 4096, 5, 1, 1, 3, 8, 16, 16]
}

fn values() -> Vec<u8> {
    (0..4096)
        .map(|i| ((i / 2 % 61) as u8) ^ (i as u8 & 3))
        .collect()
}

fn ctx() -> ChunkContext {
    ChunkContext::new(2, 4096)
}

/// A B2ND frame as the HDF5 filter writes it.
fn b2nd_frame() -> Vec<u8> {
    encode(&values(), &cd(), &ctx()).unwrap()
}

/// A plain (1-D) frame.
fn plain_frame() -> Vec<u8> {
    encode(&values(), &cd()[..7], &ctx()).unwrap()
}

fn header_len(f: &[u8]) -> usize {
    u32::from_be_bytes(f[11..15].try_into().unwrap()) as usize
}

/// Where the `b2nd` metalayer content starts.
fn meta_at(f: &[u8]) -> usize {
    let name = f.windows(5).position(|w| w == b"\xa4b2nd").unwrap();
    u32::from_be_bytes(f[name + 6..name + 10].try_into().unwrap()) as usize + 5
}

fn dec(f: &[u8], cd: &[u32]) -> Result<Vec<u8>> {
    decode(f, cd, &ctx())
}

fn flipped(f: &[u8], pos: usize, x: u8) -> Vec<u8> {
    let mut g = f.to_vec();
    g[pos] ^= x;
    g
}

#[test]
fn msgpack_markers_are_not_checked() {
    for f in [b2nd_frame(), plain_frame()] {
        let cd = if f == b2nd_frame() {
            cd()
        } else {
            cd()[..7].to_vec()
        };
        for pos in [0, 1, 10, 15, 29, 38, 47, 52, 57, 87, 88] {
            assert_eq!(
                dec(&flipped(&f, pos, 0xff), &cd).unwrap(),
                values(),
                "{pos}"
            );
        }
        assert!(dec(&flipped(&f, 5, 1), &cd).is_err(), "the name is checked");
    }
}

#[test]
fn header_fields_c_validates() {
    let f = b2nd_frame();
    let mut g = f.clone();
    g[70] = 7; // more filters than Blosc2 has slots
    assert!(dec(&g, &cd()).is_err());
    assert!(
        dec(&flipped(&f, 48, 0x80), &cd()).is_err(),
        "negative typesize"
    );
    assert!(
        dec(&flipped(&f, 58, 0x80), &cd()).is_err(),
        "negative chunk size"
    );
    // nbytes only counts chunks: a smaller value giving one chunk still reads
    let mut g = f.clone();
    g[36] ^= 0x01; // nbytes 4096 -> 4352: two chunks, one offset
    assert!(dec(&g, &cd()).is_err());
    let mut g = f.clone();
    g[37] = 0xff; // 4096 -> 4351: still one chunk
    g[36] = 0x0f;
    assert_eq!(dec(&g, &cd()).unwrap(), values());
}

#[test]
fn trailer_is_validated() {
    for f in [b2nd_frame(), plain_frame()] {
        let cd = if f == b2nd_frame() {
            cd()
        } else {
            cd()[..7].to_vec()
        };
        let n = f.len();
        assert!(dec(&flipped(&f, n - 23, 1), &cd).is_err(), "length marker");
        assert!(dec(&flipped(&f, n - 19, 1), &cd).is_err(), "length");
        assert!(
            dec(&flipped(&f, n - 29, 1), &cd).is_err(),
            "vl metalayer map"
        );
        assert!(dec(&flipped(&f, n - 27, 1), &cd).is_err(), "vl metalayers");
        // version, array marker, fingerprint: not read
        for pos in [n - 34, n - 33, n - 1, n - 10] {
            assert_eq!(dec(&flipped(&f, pos, 0xff), &cd).unwrap(), values());
        }
    }
}

#[test]
fn offsets_chunk_is_validated() {
    let f = b2nd_frame();
    let at = f.len() - 35 - 40;
    assert!(dec(&flipped(&f, at + 3, 1), &cd()).is_err(), "typesize 9");
    assert!(
        dec(&flipped(&f, at + 12, 1), &cd()).is_err(),
        "overlaps the trailer"
    );
    assert!(
        dec(&flipped(&f, at + 31, 1), &cd()).is_err(),
        "dictionary bit"
    );
}

#[test]
fn special_offset_kinds_by_bit() {
    let f = b2nd_frame();
    let top = f.len() - 35 - 1; // most significant byte of the offset
                                // 0xff..: the zeros bit is set
    assert_eq!(dec(&flipped(&f, top, 0xff), &cd()).unwrap(), vec![0; 4096]);
    let z = encode(&[0u8; 4096], &cd(), &ctx()).unwrap();
    let top = z.len() - 35 - 1;
    assert_eq!(z[top], 0x81);
    assert!(dec(&flipped(&z, top, 0x01), &cd()).is_err(), "kind 0");
    assert_eq!(dec(&z, &cd()).unwrap(), vec![0; 4096]);
}

#[test]
fn metalayer_content_must_lie_in_the_header() {
    let f = b2nd_frame();
    let len_at = meta_at(&f) - 1; // low byte of the content length
    assert!(dec(&flipped(&f, len_at, 1), &cd()).is_err());
}

#[test]
fn b2nd_metalayer_read_at_fixed_offsets() {
    let f = b2nd_frame();
    let m = meta_at(&f);
    // array head, shape array marker, int64 and int32 markers: skipped
    for off in [0, 3, 4, 31, 32, 47] {
        assert_eq!(
            dec(&flipped(&f, m + off, 0xff), &cd()).unwrap(),
            values(),
            "{off}"
        );
    }
    let dtype = m + 3 + 1 + 27 + 1 + 15 + 1 + 15 + 1;
    assert_eq!(f[dtype], 0xdb);
    assert!(dec(&flipped(&f, dtype, 1), &cd()).is_err(), "dtype marker");
    assert!(
        dec(&flipped(&f, dtype + 4, 0xff), &cd()).is_err(),
        "dtype length"
    );
}

#[test]
fn b2nd_checked_against_the_filter_values() {
    let f = b2nd_frame();
    let m = meta_at(&f);
    // shape[0] = 9: not the filter's chunk dims
    assert!(dec(&flipped(&f, m + 12, 1), &cd()).is_err());
    // typesize 3 in the frame
    assert!(dec(&flipped(&f, 51, 1), &cd()).is_err());
}

#[test]
fn b2nd_geometry_as_c_reads_it() {
    let f = b2nd_frame();
    let m = meta_at(&f);
    let chunk0 = m + 4 + 27 + 1 + 1; // int32 chunkshape[0]
    let block0 = chunk0 + 15;
    let meta = Frame::parse(&f, FRAME_CAP)
        .ok()
        .and_then(|fr| fr.metalayer("b2nd").map(|c| b2nd::Meta::parse(c).unwrap()))
        .unwrap();
    assert_eq!(meta.chunkshape, DIMS.to_vec());
    let mut g = f.clone();
    // a leading block extent past the chunk: the same item order
    g[block0 + 3] = 9;
    assert_eq!(dec(&g, &cd()).unwrap(), values());
    // a chunk shape other than the array's: refused
    let mut g = f.clone();
    g[chunk0 + 3] = 9;
    assert!(dec(&g, &cd()).is_err());
}

#[test]
fn stored_chunk_bounds() {
    // B2ND: a chunk claiming one byte more than the data section holds
    let f = b2nd_frame();
    let hl = header_len(&f);
    assert!(dec(&flipped(&f, hl + 12, 1), &cd()).is_err());
    // plain frame: C reads it (the offsets chunk follows)
    let p = plain_frame();
    let hl = header_len(&p);
    if p[hl + 12] & 1 == 0 {
        assert_eq!(dec(&flipped(&p, hl + 12, 1), &cd()[..7]).unwrap(), values());
    }
    // any chunk format version from 3 on
    assert_eq!(dec(&flipped(&f, hl, 0xff), &cd()).unwrap(), values());
}

#[test]
fn blosc1_flags_with_both_shuffles_undo_the_byte_shuffle() {
    let mut c = vec![2, 1, 0x05, 2, 8, 0, 0, 0, 8, 0, 0, 0, 24, 0, 0, 0];
    c.extend_from_slice(&[0; 8]);
    let h = chunk::Header::parse(&c).unwrap();
    assert_eq!(h.filters[5], chunk::filter::SHUFFLE);
    c[2] = 0x04;
    let h = chunk::Header::parse(&c).unwrap();
    assert_eq!(h.filters[5], chunk::filter::BITSHUFFLE);
}

#[test]
fn special_chunk_needs_the_padded_block_count() {
    // zeros whose frame block size splits the chunk into two blocks, where
    // the B2ND geometry has one: C refuses it (it reads the special chunk
    // with a block mask of the padded chunk's block count)
    let z = encode(&[0u8; 4096], &cd(), &ctx()).unwrap();
    let f = Frame::parse(&z, FRAME_CAP).unwrap();
    assert_eq!(f.blocksize, 4096);
    let mut g = z.clone();
    g[55] = 0x08; // block size 2048
    g[56] = 0x00;
    assert!(dec(&g, &cd()).is_err());
    let mut g = z.clone();
    g[53] ^= 0x80; // negative
    assert!(dec(&g, &cd()).is_err());
}
