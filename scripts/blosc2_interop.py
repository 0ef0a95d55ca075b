"""Interop check between purehdf's Blosc2 and C-Blosc2 (python-blosc2).

Called by tests/blosc_vectors.rs with a work directory:
  DIR/ours/<name>.bin + <name>.raw   written by purehdf; every .bin is decoded
      here (chunk_* with blosc2.decompress2, frame_* with
      blosc2.schunk_from_cframe, b2nd_* with blosc2.ndarray_from_cframe) and
      compared with the .raw bytes;
  DIR/theirs/<name>.bin + <name>.raw  written here by python-blosc2 for
      purehdf to decode (bare chunks with several codecs/filters, multi-chunk
      frames, single-chunk B2ND frames).
Prints one JSON object: {"checked": N, "failures": [...]}.
"""
import json
import sys
from pathlib import Path

import blosc2
import numpy as np


def check_ours(d: Path):
    failures, n = [], 0
    for b in sorted((d / "ours").glob("*.bin")):
        raw = b.with_suffix(".raw").read_bytes()
        buf = b.read_bytes()
        name = b.stem
        try:
            if name.startswith("chunk_"):
                got = blosc2.decompress2(buf)
            elif name.startswith("frame_"):
                sc = blosc2.schunk_from_cframe(buf, copy=True)
                got = b"".join(sc.decompress_chunk(i) for i in range(sc.nchunks))
            else:
                arr = blosc2.ndarray_from_cframe(buf, copy=True)
                got = arr[...].tobytes()
            if bytes(got) != raw:
                failures.append(f"{name}: C decodes different bytes")
        except Exception as e:  # noqa: BLE001
            failures.append(f"{name}: {e!r}")
        n += 1
    return n, failures


def write_theirs(d: Path):
    out = d / "theirs"
    out.mkdir(exist_ok=True)
    rng = np.random.default_rng(3)
    ct = (rng.normal(0, 30, (24, 40, 50)).cumsum(axis=2) / 8).astype("<i2")
    f32 = np.sin(np.arange(30001, dtype="<f4") / 100)
    cases = []
    for codec in (blosc2.Codec.BLOSCLZ, blosc2.Codec.LZ4, blosc2.Codec.LZ4HC, blosc2.Codec.ZLIB, blosc2.Codec.ZSTD):
        for filt in (blosc2.Filter.NOFILTER, blosc2.Filter.SHUFFLE, blosc2.Filter.BITSHUFFLE, blosc2.Filter.DELTA):
            for arr in (ct, f32):
                cp = {"codec": codec, "clevel": 5, "filters": [0, 0, 0, 0, 0, filt], "filters_meta": [0] * 6,
                      "typesize": arr.itemsize}
                c = blosc2.compress2(arr.tobytes(), **cp)
                cases.append((f"chunk_{codec.name}_{filt.name}_{arr.dtype.str[1:]}", c, arr.tobytes()))
    sc = blosc2.SChunk(chunksize=40000, data=f32.tobytes(),
                       cparams={"codec": blosc2.Codec.ZSTD, "clevel": 3, "typesize": 4})
    cases.append(("frame_zstd_multichunk_f32", sc.to_cframe(), f32.tobytes()))
    z = np.zeros(20000, "<i2")
    sc = blosc2.SChunk(chunksize=8000, data=z.tobytes(), cparams={"codec": blosc2.Codec.LZ4, "typesize": 2})
    cases.append(("frame_lz4_zeros_i16", sc.to_cframe(), z.tobytes()))
    for blocks in ((24, 40, 50), (8, 16, 16), (5, 7, 9)):
        a = blosc2.asarray(ct, chunks=ct.shape, blocks=blocks,
                           cparams={"codec": blosc2.Codec.LZ4, "clevel": 1})
        cases.append((f"b2nd_lz4_blocks_{'x'.join(map(str, blocks))}", a.to_cframe(), ct.tobytes()))
    # other ranks: 1-D, 5-D and 8-D single-chunk arrays with padded blocks
    for shape, blocks in (((1001,), (128,)), ((3, 4, 5, 6, 7), (2, 3, 2, 4, 5)),
                          ((2, 3, 2, 3, 2, 3, 2, 5), (1, 2, 2, 2, 1, 2, 2, 3))):
        a = (np.arange(int(np.prod(shape)), dtype="<u4") * 2654435761 % 1000).astype("<i4").reshape(shape)
        arr = blosc2.asarray(a, chunks=shape, blocks=blocks,
                             cparams={"codec": blosc2.Codec.ZSTD, "clevel": 3,
                                      "filters": [0, 0, 0, 0, 0, blosc2.Filter.BITSHUFFLE]})
        cases.append((f"b2nd_rank{len(shape)}", arr.to_cframe(), a.tobytes()))
    for name, buf, raw in cases:
        (out / f"{name}.bin").write_bytes(buf)
        (out / f"{name}.raw").write_bytes(raw)
    return len(cases)


def main():
    d = Path(sys.argv[1])
    n, failures = check_ours(d)
    m = write_theirs(d)
    print(json.dumps({"checked": n, "written": m, "failures": failures}))


if __name__ == "__main__":
    main()
