"""Blosc/Blosc2 corruption parity: what C (h5py + hdf5plugin) makes of damaged chunks.

Usage: blosc_parity.py OUTDIR [--all] [--sample KIND=FILE.medh5 ...]

Writes small one-chunk datasets of several kinds (B2ND frames like the medh5
profiles, plain 1-D Blosc2 frames, Blosc1 chunks, special-value chunks) with
hdf5plugin, then, for every byte outside the codec payloads (frame header and
metalayers, chunk header, block starts, stream sizes and run tokens, offsets
chunk, trailer) -- every byte with --all -- a copy of the chunk with that byte
xor 0x01 and xor 0xFF, each as its own dataset of OUTDIR/flips.h5 (written with
write_direct_chunk). Each copy is read back with h5py and classed `same`
(decodes to the original values), `diff` (decodes to other values) or `err`.

OUTDIR/parity.json: {"kinds": [{"name", "size", "payload": [[a, b], ...],
"flips": [[dataset, pos, xor, class, field], ...]}]}, and OUTDIR/NAME.chunk
(the stored chunk) and OUTDIR/NAME.raw (its decoded values) per kind.
"""

import hashlib
import json
import os
import struct
import sys

import h5py
import hdf5plugin
import numpy as np


def data(shape, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    base = (np.arange(n) // 7 % 300).astype(np.int64) * 3 - 400
    noise = rng.integers(-6, 7, size=n)
    return (base + noise).astype("<i2").reshape(shape)


def kinds():
    b2 = hdf5plugin.Blosc2
    b1 = hdf5plugin.Blosc
    cube = (16, 32, 32)
    line = (16384,)
    z = np.zeros(cube, "<i2")
    half = data(cube, 5)
    half[:8] = 7
    return [
        ("b2nd_zstd_shuffle", data(cube, 1), b2(cname="zstd", clevel=3, filters=b2.SHUFFLE)),
        ("b2nd_lz4_shuffle", data(cube, 2), b2(cname="lz4", clevel=1, filters=b2.SHUFFLE)),
        ("b2nd_zstd_bitshuffle", data(cube, 3), b2(cname="zstd", clevel=9, filters=b2.BITSHUFFLE)),
        ("b2nd_zeros", z, b2(cname="zstd", clevel=3, filters=b2.SHUFFLE)),
        ("b2nd_runs", half, b2(cname="lz4", clevel=1, filters=b2.SHUFFLE)),
        ("plain_lz4_shuffle", data(line, 6), b2(cname="lz4", clevel=5, filters=b2.SHUFFLE)),
        ("plain_zstd_bitshuffle", data(line, 7), b2(cname="zstd", clevel=5, filters=b2.BITSHUFFLE)),
        ("plain_const", np.full(line, 7, "<i2"), b2(cname="zstd", clevel=5, filters=b2.SHUFFLE)),
        ("blosc1_lz4_shuffle", data(line, 8), b1(cname="lz4", clevel=5, shuffle=b1.SHUFFLE)),
        ("blosc1_zstd_bitshuffle", data(line, 9), b1(cname="zstd", clevel=5, shuffle=b1.BITSHUFFLE)),
    ]


def le32(b, p):
    return struct.unpack_from("<i", b, p)[0]


def chunk_payload(b, base, out):
    """Append the [a, b) codec payload ranges of the Blosc chunk at `base`."""
    if len(b) < base + 16:
        return
    version, flags, ts = b[base], b[base + 2], max(b[base + 3], 1)
    nbytes, bs, cbytes = le32(b, base + 4), le32(b, base + 8), le32(b, base + 12)
    ext = version >= 3 and flags & 5 == 5
    hl = 32 if ext else 16
    special = ext and (b[base + 31] >> 4) & 7
    if flags & 2 or special:
        out.append([base + hl, base + cbytes])
        return
    bs = min(bs, nbytes)
    nblocks = -(-nbytes // bs)
    for k in range(nblocks):
        start = le32(b, base + hl + 4 * k)
        bsize = bs if k + 1 < nblocks or nbytes % bs == 0 else nbytes % bs
        leftover = bsize != bs
        dont_split = flags & 0x10
        if version <= 2:
            split = not dont_split and ts <= 16 and bs // ts >= 128 and not leftover
        else:
            split = not dont_split and not leftover
        p = base + start
        for _ in range(ts if split else 1):
            cs = le32(b, p)
            p += 4
            if cs > 0:
                out.append([p, p + cs])
                p += cs
            elif cs < 0:
                p += 1


def payload_ranges(b):
    out = []
    if b[:10] == b"\x9e\xa8b2frame\x00":
        header_len = struct.unpack_from(">I", b, 11)[0]
        cbytes = struct.unpack_from(">q", b, 39)[0]
        if cbytes > 0:
            chunk_payload(b, header_len, out)
    else:
        chunk_payload(b, 0, out)
    return out


FRAME_FIELDS = [(0, "magic"), (10, "header_len"), (15, "frame_len"), (24, "flags"),
                (29, "nbytes"), (38, "cbytes"), (47, "typesize"), (52, "blocksize"),
                (57, "chunksize"), (62, "nthreads"), (68, "vlmeta_flag"), (69, "filters"),
                (87, "metalayers")]
CHUNK_FIELDS = [(0, "version"), (1, "versionlz"), (2, "flags"), (3, "typesize"),
                (4, "nbytes"), (8, "blocksize"), (12, "cbytes"), (16, "filters"),
                (22, "codec"), (23, "codec_meta"), (24, "filters_meta"), (30, "flags2"),
                (31, "blosc2_flags")]


def label(b, pos):
    """Which structure byte `pos` of the stored chunk belongs to."""
    base, where = 0, "chunk"
    if b[:10] == b"\x9e\xa8b2frame\x00":
        header_len = struct.unpack_from(">I", b, 11)[0]
        cbytes = struct.unpack_from(">q", b, 39)[0]
        tlen = struct.unpack_from(">I", b, len(b) - 22)[0]
        if pos < header_len:
            return "frame." + [n for o, n in FRAME_FIELDS if o <= pos][-1]
        if pos >= len(b) - tlen:
            return "trailer"
        if pos >= header_len + cbytes:
            return "offsets"
        base = header_len
    r = pos - base
    ext = b[base] >= 3 and b[base + 2] & 5 == 5
    if r < (32 if ext else 16):
        return where + "." + [n for o, n in CHUNK_FIELDS if o <= r][-1]
    return where + ".streams"


def classify(v, want):
    return "same" if hashlib.sha256(v.tobytes()).hexdigest() == want else "diff"


def main():
    outdir = sys.argv[1]
    every = "--all" in sys.argv
    os.makedirs(outdir, exist_ok=True)
    src = os.path.join(outdir, "src.h5")
    ks = kinds()
    with h5py.File(src, "w") as f:
        for name, arr, comp in ks:
            f.create_dataset(name, data=arr, chunks=arr.shape, **comp)
    for a in sys.argv[2:]:
        if a.startswith("--sample="):
            name, path = a[len("--sample="):].split("=", 1)
            with h5py.File(path, "r") as g:
                d = g["images/CT"]
                ks.append((name, d[0:d.chunks[0], 0:d.chunks[1], 0:d.chunks[2]], None))
                raw = d.id.read_direct_chunk((0, 0, 0))
                plist = d.id.get_create_plist()
                with h5py.File(src, "a") as f:
                    x = f.create_dataset(name, shape=d.chunks, chunks=d.chunks, dtype=d.dtype,
                                         compression=plist.get_filter(0)[0],
                                         compression_opts=plist.get_filter(0)[2])
                    x.id.write_direct_chunk((0, 0, 0), raw[1], raw[0])
    doc = {"kinds": []}
    flips = os.path.join(outdir, "flips.h5")
    with h5py.File(src, "r") as f, h5py.File(flips, "w") as g:
        for name, arr, _ in ks:
            d = f[name]
            mask, raw = d.id.read_direct_chunk((0,) * d.ndim)
            want = hashlib.sha256(np.ascontiguousarray(d[...]).tobytes()).hexdigest()
            plist = d.id.get_create_plist()
            fid, _, cd, _ = plist.get_filter(0)
            pay = payload_ranges(raw)
            inside = set()
            for a, b in pay:
                inside.update(range(a, b))
            grp = g.create_group(name)
            kind = {"name": name, "size": len(raw), "filter": fid, "cd_values": list(cd),
                    "payload": pay, "flips": []}
            todo = []
            for pos in range(len(raw)):
                if pos in inside and not every:
                    continue
                for x in (0x01, 0xFF):
                    buf = bytearray(raw)
                    buf[pos] ^= x
                    dn = f"{pos}_{x}"
                    ds = grp.create_dataset(dn, shape=d.shape, chunks=d.chunks, dtype=d.dtype,
                                            compression=fid, compression_opts=cd)
                    ds.id.write_direct_chunk((0,) * d.ndim, bytes(buf), mask)
                    todo.append((f"{name}/{dn}", pos, x))
            g.flush()
            for dn, pos, x in todo:
                try:
                    c = classify(np.ascontiguousarray(g[dn][...]), want)
                except Exception:
                    c = "err"
                kind["flips"].append([dn, pos, x, c, label(raw, pos)])
            kind["sha256"] = want
            kind["dtype_size"] = d.dtype.itemsize
            kind["mask"] = mask
            open(os.path.join(outdir, name + ".chunk"), "wb").write(raw)
            open(os.path.join(outdir, name + ".raw"), "wb").write(
                np.ascontiguousarray(d[...]).tobytes())
            doc["kinds"].append(kind)
    with open(os.path.join(outdir, "parity.json"), "w") as o:
        json.dump(doc, o)


if __name__ == "__main__":
    main()
