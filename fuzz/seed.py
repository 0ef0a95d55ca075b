"""Write seed corpora for the fuzz targets (python3, stdlib only).

Usage: python3 fuzz/seed.py OUTDIR [SHARED]
OUTDIR/<target>/ gets one file per seed, in the input layout each target
reads (see fuzz_targets/common.rs `filter`, f_lz4.rs, f_blosc2.rs,
read_chunked.rs; open_walk and medh5_verify take whole files). SHARED defaults to ../shared beside the checkout: the filter vectors give
the stored chunks with their cd values, the corpus gives small chunked files.
"""
import csv
import json
import struct
import sys
from pathlib import Path

TARGET = {1: "f_deflate", 2: "f_shuffle", 3: "f_fletcher32", 4: "f_szip", 5: "f_nbit",
          6: "f_scaleoffset", 307: "f_bzip2", 32000: "f_lzf", 32001: "f_blosc1",
          32004: "f_lz4", 32008: "f_bitshuffle", 32015: "f_zstd", 32026: "f_blosc2"}
MODE = {"f_lz4": b"\x00", "f_blosc2": b"\x00"}
ELEM = [1, 2, 4, 8, 3, 12, 16, 0]
FEATURES = ["superblock", "group_storage", "object_headers", "layouts", "chunk_index", "filters",
            "datatypes", "attr_storage", "links", "other_features"]


def cd_bytes(v):
    if v < 64:
        return bytes([v])
    if v < 65536:
        return bytes([192, v >> 8, v & 255])
    return bytes([224]) + struct.pack("<I", v)


def filter_seed(cd, elem, nbytes, payload):
    head = bytes([len(cd)]) + b"".join(cd_bytes(v) for v in cd)
    sel = ELEM.index(elem) if elem in ELEM else 0
    return head + bytes([sel]) + struct.pack("<I", nbytes & 0xFFFFF) + payload


def main():
    out = Path(sys.argv[1])
    default = Path(__file__).resolve().parent.parent.parent / "shared"
    shared = Path(sys.argv[2]) if len(sys.argv) > 2 else default
    vec = shared / "vectors" / "filters"
    m = json.loads((vec / "manifest.json").read_text())
    count = {}

    def put(target, name, data):
        d = out / target
        d.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(data)
        count[target] = count.get(target, 0) + 1

    for c in m["chunks"]:
        stored = (vec / c["file"]).read_bytes()
        inp = m["inputs"][c["input"]]
        raw = (vec / inp["file"]).read_bytes()
        elem = int(inp["dtype"][2:])
        pipe = c["pipeline"]
        for i, stage in enumerate(pipe):
            t = TARGET.get(stage["id"])
            if t is None:
                continue
            # The last stage decodes the stored bytes; earlier ones get the input.
            payload = stored if i == len(pipe) - 1 else raw
            seed = filter_seed(stage["cd_values"], elem, len(raw), payload)
            put(t, f"{c['name']}.{i}", MODE.get(t, b"") + seed)
            if stage["id"] == 32015 and i == len(pipe) - 1:
                # f_zstd_own / f_zstd_diff: mode 0 = a bare frame, mode 1 =
                # level, flip position, flip mask, then a payload to compress.
                for z in ("f_zstd_own", "f_zstd_diff"):
                    put(z, f"{c['name']}.frame", b"\x00" + stored)
                    put(z, f"{c['name']}.enc", b"\x01\x03\x10\x01" + raw[:4096])
    for c in m["blosc2_chunks"]:
        put("f_blosc2", c["name"], b"\x01" + (vec / c["file"]).read_bytes())
    # Raw LZ4 blocks for the differential half of f_lz4: a few hand-made ones.
    for i, blk in enumerate([bytes([0x40]) + b"abcd", bytes([0x11, 0x61, 1, 0, 0x10]) + b"xyz"]):
        put("f_lz4", f"raw{i}", b"\x01" + struct.pack("<H", 64) + blk)
    files = [vec / h["file"] for h in m["h5"]]
    # open_walk: the smallest corpus file (<= 16 KiB, small inputs fuzz
    # faster) of each distinct feature combination.
    walk = {}
    with open(shared / "corpus" / "MANIFEST.tsv") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            size = int(row["size"])
            if "chunked" in row["layouts"] and size <= 16 * 1024:
                files.append(shared / "corpus" / row["path"])
            key = tuple(row[k] for k in FEATURES)
            if size <= 16 * 1024 and (key not in walk or size < walk[key][0]):
                walk[key] = (size, shared / "corpus" / row["path"])
    for p in files[:200]:
        if p.exists():
            put("read_chunked", p.name, b"\x01" * 8 + p.read_bytes())
    for i, (_, p) in enumerate(sorted(walk.values())[:300]):
        if p.exists():
            put("open_walk", f"{i:03}-{p.name}", p.read_bytes())
    for p in files[: len(m["h5"])]:
        put("open_walk", p.name, p.read_bytes())
    # medh5_verify: the reference samples of shared/vectors/medh5 (besides
    # the tiny committed ones in fuzz/seeds/medh5_verify).
    for p in sorted((shared / "vectors" / "medh5").glob("*.medh5")):
        put("medh5_verify", p.name, p.read_bytes())
    print(json.dumps(count, sort_keys=True))


if __name__ == "__main__":
    main()
