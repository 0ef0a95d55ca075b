"""A schema-1 VneuroTK recording read with h5py + pandas as the seed's reader does (V8).

Usage: vneurotk_schema1.py read FILE

VneuroTK's schema-1 reader is on its main branch only (PyPI has 0.0.1, schema
0), so this follows the documented layout: the header gate, dense or COO
`neuro` (checked against `neuro_info/shape`), typed-scalar sequences, the
ordered `stimuli_db` entries, and `trial_meta` rebuilt as a pandas DataFrame
(categoricals via pandas.Categorical.from_codes, tz-aware datetimes via
DatetimeTZDtype). Prints the same JSON as read_v1 in tests/vneurotk/schema1.rs,
taken from the pandas objects.
"""
import hashlib
import json
import sys

import h5py
import numpy as np
import pandas as pd

def text(v):
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def seq(g):
    assert text(g.attrs["encoding"]) == "vneurotk_scalar_v1"
    out = []
    for c, t in zip(g["types"][:], g["values"][:]):
        t = text(t)
        out.append({1: lambda: t == "1", 2: lambda: int(t), 3: lambda: float.fromhex(t),
                    4: lambda: t, 5: lambda: None}[int(c)]())
    return out


def datetimes(g):
    assert text(g.attrs["unit"]) == "ns"
    tz = text(g.attrs["tz"])
    ns = g["values"][:].astype("i8")
    idx = pd.DatetimeIndex(ns.view("M8[ns]"))  # int64 min is NaT
    return idx.tz_localize("UTC").tz_convert(tz) if tz else idx


def dt_json(values):
    ns = [None if pd.isna(v) else int(v.value) for v in values]
    return {"dtype": str(values.dtype), "ns": ns}


def column(c, n):
    kind = text(c.attrs["kind"])
    if kind == "numpy":
        s = pd.Series(c["values"][:])
        return s, {"dtype": s.dtype.str, "values": s.tolist()}
    if kind == "datetime":
        s = pd.Series(datetimes(c))
        return s, dt_json(s)
    if kind == "categorical":
        g = c["categories"]
        cats = pd.Index(seq(g)) if "encoding" in g.attrs else datetimes(g)
        cat = pd.Categorical.from_codes(c["codes"][:].astype("i8"), categories=cats,
                                        ordered=bool(c.attrs["ordered"]))
        s = pd.Series(cat)
        dc = s.dtype.categories
        cj = dt_json(dc) if isinstance(dc, pd.DatetimeIndex) else dc.tolist()
        return s, {"dtype": str(s.dtype), "ordered": bool(s.dtype.ordered), "categories": cj,
                   "codes": s.cat.codes.astype(int).tolist()}
    raise ValueError(f"column {n}: unknown kind {kind}")


def read(path):
    with h5py.File(path, "r") as f:
        a = f.attrs
        assert text(a["vneurotk_format"]) == "recording"
        v = a["vneurotk_schema_version"]
        assert isinstance(v, np.integer) and not isinstance(v, np.bool_) and v == 1, repr(v)
        out = {k: text(a[k]) for k in ("vneurotk_format", "writer_version", "data_mode", "neuro_format")}
        out["schema"] = int(v)
        assert out["data_mode"] in ("continuous", "epochs", "patterns")
        shape = [int(x) for x in f["neuro_info"].attrs["shape"]]
        if out["neuro_format"] == "coo":
            assert [int(x) for x in a["neuro_shape"]] == shape and len(shape) == 3
            dense = np.zeros(shape, dtype=text(a["neuro_dtype"]))
            r, c, d = f["neuro_row"][:], f["neuro_col"][:], f["neuro_data"][:]
            flat = dense.reshape(shape[0] * shape[1], shape[2])
            np.add.at(flat, (r, c), d)
        else:
            dense = f["neuro"][()]
            assert list(dense.shape) == shape
        out["neuro"] = {"shape": shape, "dtype": str(dense.dtype),
                        "sha256": hashlib.sha256(dense.astype("<f4").tobytes()).hexdigest()}
        for t in ("trial", "trial_starts", "trial_ends", "vision_onsets"):
            out[t] = f[t][:].tolist()
        out["stim_labels"] = seq(f["stim_labels"])
        assert [len(out["stim_labels"])] == [int(x) for x in a["stim_labels_shape"]]
        out["stim_ids"] = seq(f["vision_info/stim_ids"])
        db = f["stimuli_db"]
        assert text(db.attrs["encoding"]) == "ordered_entries_v1"
        images = []
        for i in range(len(db)):
            e = db[str(i)]
            img = e["image"]
            images.append({"id": seq(e["id"])[0], "shape": list(img.shape),
                           "kind": text(img.attrs["kind"]),
                           "sha256": hashlib.sha256(np.ascontiguousarray(img[()]).tobytes()).hexdigest()})
        out["images"] = images
        tm = f["trial_meta"]
        assert text(tm.attrs["encoding"]) == "pandas_v1"
        names = seq(tm["column_index"])
        index = seq(tm["index"])
        series, data = {}, {}
        for i, n in enumerate(names):
            series[n], data[n] = column(tm["columns"][str(i)], n)
        df = pd.DataFrame(series)
        df.index = pd.Index(index)
        assert list(df.columns) == names and len(df) == len(index)
        out["trial_meta"] = {"columns": names, "index": index, "data": data,
                             "pandas_dtypes": {n: str(t) for n, t in df.dtypes.items()}}
    print(json.dumps(out))


if __name__ == "__main__":
    {"read": lambda: read(sys.argv[2])}[sys.argv[1]]()
