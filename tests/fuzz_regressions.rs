//! Inputs the fuzz targets found (`fuzz/regressions/<target>/`), replayed
//! through the product API with the outcome each must keep.

use purehdf_filters::zstd_decode::decompress_append;

/// f_zstd_own (issue 16 item 4 campaign): a frame without a content checksum
/// whose 4-stream Huffman literals were shuffled so that the codes no longer
/// use up the streams' bits. libzstd 1.5.4 (`zstd -d`) and ruzstd decode it
/// to 8192 bytes of garbage (their fast Huffman loops check only the output
/// length); ours must keep refusing it as corrupt.
#[test]
fn zstd_huffman_stream_not_consumed_exactly_is_refused() {
    let input =
        include_bytes!("../fuzz/regressions/f_zstd_own/huffman-stream-not-consumed-exactly.bin");
    // byte 0: the target's mode (even = the rest is a frame as is)
    assert_eq!(input[0] & 1, 0);
    let frame = &input[1..];
    assert_eq!(frame[4] & 4, 0, "no content checksum");
    let mut out = Vec::new();
    let e = decompress_append(frame, &mut out, 1 << 20).unwrap_err();
    assert!(
        e.to_string()
            .contains("Huffman stream not consumed exactly"),
        "{e}"
    );
}
