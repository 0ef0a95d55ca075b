//! Datatypes as plain Python tuples (the descriptor the Python layer turns
//! into a numpy dtype as h5py does), and back (for writing).
//!
//! Descriptors:
//! `("num", "<i4")` numbers, complex, bitfields; `("bool",)`;
//! `("enum", "<i4", [(name, value), ...])`; `("S", size, pad, utf8)`;
//! `("vstr", utf8)`; `("vlen", base)`; `("ref", kind)`; `("opaque", size, tag)`;
//! `("compound", itemsize, [(name, offset, desc), ...])` with numpy offsets;
//! `("array", base, dims)`; `("none", name)` for types numpy cannot hold.

use purehdf::low_level::datatype::enum_value;
use purehdf::{ByteOrder, CharSet, Datatype, FloatLayout, ReferenceKind, StringPad};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

fn pad_code(p: StringPad) -> u8 {
    match p {
        StringPad::NullTerm => 0,
        StringPad::NullPad => 1,
        StringPad::SpacePad => 2,
    }
}

/// The descriptor of `dt`.
pub(crate) fn describe<'py>(py: Python<'py>, dt: &Datatype) -> PyResult<Bound<'py, PyAny>> {
    let t = match dt {
        Datatype::VarString { cset, .. } => ("vstr", *cset == CharSet::Utf8).into_pyobject(py)?,
        Datatype::VarSequence { base, .. } => ("vlen", describe(py, base)?).into_pyobject(py)?,
        Datatype::Reference { kind, .. } => {
            let k = match kind {
                ReferenceKind::Object => "object",
                ReferenceKind::Region => "region",
                _ => "other",
            };
            ("ref", k).into_pyobject(py)?
        }
        Datatype::String { size, pad, cset } => {
            ("S", *size, pad_code(*pad), *cset == CharSet::Utf8).into_pyobject(py)?
        }
        Datatype::Opaque { size, tag } => match dt.numpy_str() {
            Some(s) if tag.starts_with("NUMPY:") => ("num", s).into_pyobject(py)?,
            _ => ("opaque", *size, tag.clone()).into_pyobject(py)?,
        },
        Datatype::Enum { base, members } if !dt.is_bool_enum() => {
            let Some(np) = base.numpy_str() else {
                return Ok(("none", dt.to_string()).into_pyobject(py)?.into_any());
            };
            let list = PyList::empty(py);
            for m in members {
                let v = enum_value(base, &m.value).unwrap_or(0);
                list.append((m.name.clone(), v))?;
            }
            ("enum", np, list).into_pyobject(py)?
        }
        Datatype::Enum { .. } => PyTuple::new(py, ["bool"])?,
        Datatype::Compound { members, .. } if dt.complex_compound_part().is_none() => {
            let Some(itemsize) = dt.numpy_itemsize() else {
                return Ok(("none", dt.to_string()).into_pyobject(py)?.into_any());
            };
            let list = PyList::empty(py);
            for (name, off, m) in numpy_members(dt) {
                list.append((name, off, describe(py, m)?))?;
            }
            let _ = members;
            ("compound", itemsize, list).into_pyobject(py)?
        }
        Datatype::Array { base, dims } => {
            ("array", describe(py, base)?, dims.clone()).into_pyobject(py)?
        }
        _ => match dt.numpy_str() {
            Some(s) => ("num", s).into_pyobject(py)?,
            None => ("none", dt.to_string()).into_pyobject(py)?,
        },
    };
    Ok(t.into_any())
}

/// A compound's members with their numpy offsets (the file offset plus the
/// growth of the members stored before it, as libhdf5's memory type lays
/// them out for h5py).
pub(crate) fn numpy_members(dt: &Datatype) -> Vec<(String, u64, &Datatype)> {
    let Datatype::Compound { members, .. } = dt else {
        return Vec::new();
    };
    let mut order: Vec<&purehdf::CompoundMember> = members.iter().collect();
    order.sort_by_key(|m| m.offset);
    let mut shift = 0i64;
    let mut out = Vec::new();
    for m in order {
        let off = (i64::from(m.offset) + shift).max(0) as u64;
        shift += m.dtype.memory_size_delta();
        out.push((m.name.clone(), off, &m.dtype));
    }
    // h5py lists fields in the stored member order
    let pos = |n: &str| members.iter().position(|m| m.name == n).unwrap_or(0);
    out.sort_by_key(|(n, _, _)| pos(n));
    out
}

fn order_of(c: char) -> ByteOrder {
    if c == '>' {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    }
}

/// The datatype of a descriptor (for writing); `TypeError` for one that
/// has no HDF5 type here.
pub(crate) fn from_desc(d: &Bound<'_, PyAny>) -> PyResult<Datatype> {
    let kind: String = d.get_item(0)?.extract()?;
    let bad = || PyTypeError::new_err(format!("no HDF5 type for descriptor {d}"));
    Ok(match kind.as_str() {
        "num" => {
            let s: String = d.get_item(1)?.extract()?;
            let mut ch = s.chars();
            let (o, k) = (ch.next().ok_or_else(bad)?, ch.next().ok_or_else(bad)?);
            let n: u32 = ch.as_str().parse().map_err(|_| bad())?;
            let order = order_of(o);
            match k {
                'i' | 'u' => Datatype::Integer {
                    size: n,
                    order,
                    signed: k == 'i',
                    bit_offset: 0,
                    precision: (n * 8) as u16,
                },
                'f' if matches!(n, 2 | 4 | 8) => Datatype::Float {
                    size: n,
                    order,
                    layout: FloatLayout::ieee(n),
                },
                'c' if matches!(n, 8 | 16) => {
                    let part = Datatype::Float {
                        size: n / 2,
                        order,
                        layout: FloatLayout::ieee(n / 2),
                    };
                    Datatype::Compound {
                        size: n,
                        members: vec![
                            purehdf::CompoundMember {
                                name: "r".into(),
                                offset: 0,
                                dtype: part.clone(),
                            },
                            purehdf::CompoundMember {
                                name: "i".into(),
                                offset: n / 2,
                                dtype: part,
                            },
                        ],
                    }
                }
                _ => return Err(bad()),
            }
        }
        "bool" => Datatype::Enum {
            base: Box::new(Datatype::int(1, true)),
            members: vec![
                purehdf::EnumMember {
                    name: "FALSE".into(),
                    value: vec![0],
                },
                purehdf::EnumMember {
                    name: "TRUE".into(),
                    value: vec![1],
                },
            ],
        },
        "enum" => {
            let base = from_desc(&("num", d.get_item(1)?).into_pyobject(d.py())?.into_any())?;
            let size = base.size() as usize;
            let big = matches!(
                base,
                Datatype::Integer {
                    order: ByteOrder::Big,
                    ..
                }
            );
            let mut members = Vec::new();
            for item in d.get_item(2)?.try_iter()? {
                let (name, v): (String, i128) = item?.extract()?;
                let le = v.to_le_bytes();
                let mut value = le[..size.min(16)].to_vec();
                if big {
                    value.reverse();
                }
                members.push(purehdf::EnumMember { name, value });
            }
            Datatype::Enum {
                base: Box::new(base),
                members,
            }
        }
        "S" => {
            let size: u32 = d.get_item(1)?.extract()?;
            let utf8: bool = d.get_item(3)?.extract()?;
            Datatype::String {
                size: size.max(1),
                pad: StringPad::NullPad,
                cset: if utf8 { CharSet::Utf8 } else { CharSet::Ascii },
            }
        }
        "vstr" => {
            let utf8: bool = d.get_item(1)?.extract()?;
            Datatype::VarString {
                size: 16,
                pad: StringPad::NullTerm,
                cset: if utf8 { CharSet::Utf8 } else { CharSet::Ascii },
            }
        }
        "opaque" => {
            let size: u32 = d.get_item(1)?.extract()?;
            let tag: String = d.get_item(2)?.extract()?;
            Datatype::Opaque { size, tag }
        }
        "compound" => {
            let size: u32 = d.get_item(1)?.extract()?;
            let mut members = Vec::new();
            for item in d.get_item(2)?.try_iter()? {
                let item = item?;
                let name: String = item.get_item(0)?.extract()?;
                let offset: u32 = item.get_item(1)?.extract()?;
                let dtype = from_desc(&item.get_item(2)?)?;
                members.push(purehdf::CompoundMember {
                    name,
                    offset,
                    dtype,
                });
            }
            Datatype::Compound { size, members }
        }
        "array" => {
            let base = from_desc(&d.get_item(1)?)?;
            let dims: Vec<u64> = d.get_item(2)?.extract()?;
            Datatype::Array {
                base: Box::new(base),
                dims,
            }
        }
        _ => return Err(bad()),
    })
}
