//! Stored elements to what numpy holds: the same bytes when the layouts
//! agree (no copy), converted bytes for the few types whose numpy layout
//! differs, and Python objects for variable-length data and references.

use crate::dtype::{describe, numpy_members};
use crate::errors::IntoPy;
use purehdf::low_level::datatype::enum_value;
use purehdf::{Datatype, File, ReferenceKind, StringPad};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

/// True when numpy holds `dt` in exactly its stored bytes.
pub(crate) fn same_layout(dt: &Datatype) -> bool {
    match dt {
        Datatype::String { pad, .. } => *pad == StringPad::NullPad,
        Datatype::Integer {
            size,
            bit_offset,
            precision,
            ..
        } => *bit_offset == 0 && u32::from(*precision) == size * 8,
        Datatype::Enum { base, .. } => !dt.is_bool_enum() || base.size() == 1,
        Datatype::Compound { size, members } => {
            dt.numpy_itemsize() == Some(u64::from(*size))
                && members.iter().all(|m| same_layout(&m.dtype))
        }
        Datatype::Array { base, .. } => same_layout(base),
        Datatype::VarString { .. } | Datatype::VarSequence { .. } | Datatype::Reference { .. } => {
            false
        }
        Datatype::Float { size, layout, .. } => layout.numpy_float_size(*size) == Some(*size),
        _ => true,
    }
}

/// True when numpy holds `dt` as Python objects somewhere inside.
pub(crate) fn has_objects(dt: &Datatype) -> bool {
    dt.has_vlen_or_ref()
}

fn elem_err(what: &str) -> PyErr {
    PyTypeError::new_err(format!("cannot convert {what}"))
}

/// Convert one stored element `src` of a type without objects into its
/// numpy layout `dst` (`numpy_itemsize` bytes).
pub(crate) fn convert_elem(dt: &Datatype, src: &[u8], dst: &mut [u8]) -> PyResult<()> {
    if same_layout(dt) {
        let n = dst.len().min(src.len());
        dst[..n].copy_from_slice(&src[..n]);
        return Ok(());
    }
    match dt {
        Datatype::String { pad, .. } => {
            let n = dst.len().min(src.len());
            dst[..n].copy_from_slice(&src[..n]);
            match pad {
                StringPad::SpacePad => {
                    let end = dst.iter().rposition(|&b| b != b' ').map_or(0, |p| p + 1);
                    dst[end..].fill(0);
                }
                // libhdf5 hands h5py the bytes up to the terminator, zeros after
                StringPad::NullTerm => {
                    if let Some(z) = dst.iter().position(|&b| b == 0) {
                        dst[z..].fill(0);
                    }
                }
                StringPad::NullPad => {}
            }
        }
        Datatype::Integer {
            size,
            order,
            signed,
            bit_offset,
            precision,
        } => {
            // the significant bits, shifted down and sign-extended (N-bit data)
            let n = (*size as usize).min(16).min(src.len()).min(dst.len());
            let mut le = [0u8; 16];
            le[..n].copy_from_slice(&src[..n]);
            if *order == purehdf::ByteOrder::Big {
                le[..n].reverse();
            }
            let v = u128::from_le_bytes(le) >> bit_offset.min(&127);
            let p = u32::from(*precision).clamp(1, 128);
            let mask = if p >= 128 {
                u128::MAX
            } else {
                (1u128 << p) - 1
            };
            let mut v = v & mask;
            if *signed && p < 128 && (v >> (p - 1)) & 1 == 1 {
                v |= !mask;
            }
            let mut out = v.to_le_bytes();
            if *order == purehdf::ByteOrder::Big {
                out[..n].reverse();
            }
            dst[..n].copy_from_slice(&out[..n]);
        }
        Datatype::Enum { base, .. } => {
            let v = enum_value(base, src).unwrap_or(0);
            if let Some(d) = dst.first_mut() {
                *d = u8::from(v != 0);
            }
        }
        Datatype::Compound { members, .. } => {
            for (name, off, mdt) in numpy_members(dt) {
                let m = members
                    .iter()
                    .find(|m| m.name == name)
                    .ok_or_else(|| elem_err("compound"))?;
                let s = m.offset as usize;
                let len = m.dtype.size() as usize;
                let nlen = mdt.numpy_itemsize().unwrap_or(0) as usize;
                let o = off as usize;
                let (Some(src), Some(dst)) = (src.get(s..s + len), dst.get_mut(o..o + nlen)) else {
                    return Err(elem_err("compound member"));
                };
                convert_elem(mdt, src, dst)?;
            }
        }
        Datatype::Array { base, .. } => {
            let (bs, bn) = (
                base.size() as usize,
                base.numpy_itemsize().unwrap_or(0) as usize,
            );
            if bs == 0 || bn == 0 {
                return Ok(());
            }
            for (s, d) in src.chunks_exact(bs).zip(dst.chunks_exact_mut(bn)) {
                convert_elem(base, s, d)?;
            }
        }
        _ => {
            let n = dst.len().min(src.len());
            dst[..n].copy_from_slice(&src[..n]);
        }
    }
    Ok(())
}

/// `raw` (stored elements of `dt`) in numpy layout.
pub(crate) fn convert_all(dt: &Datatype, raw: &[u8], out: &mut [u8]) -> PyResult<()> {
    let (s, n) = (
        dt.size() as usize,
        dt.numpy_itemsize().unwrap_or(0) as usize,
    );
    if s == 0 || n == 0 {
        return Ok(());
    }
    for (a, b) in raw.chunks_exact(s).zip(out.chunks_exact_mut(n)) {
        convert_elem(dt, a, b)?;
    }
    Ok(())
}

/// One stored element of a type with objects, as a Python value; `make`
/// builds what the Python layer owns: `make("plain", bytes, desc)` a numpy
/// value of a plain part, `make("vlen", bytes, desc)` a sequence,
/// `make("ref", address | None)`, `make("regref", bytes)`.
pub(crate) fn elem_to_py<'py>(
    py: Python<'py>,
    file: &File,
    dt: &Datatype,
    src: &[u8],
    make: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    match dt {
        Datatype::VarString { .. } => {
            let mut b = file.vlen_bytes(src).py_err()?;
            while b.last() == Some(&0) {
                b.pop();
            }
            Ok(PyBytes::new(py, &b).into_any())
        }
        Datatype::VarSequence { base, .. } => {
            let b = file.vlen_bytes(src).py_err()?;
            if has_objects(base) {
                let bs = base.size() as usize;
                let list = PyList::empty(py);
                if bs > 0 {
                    for e in b.chunks_exact(bs) {
                        list.append(elem_to_py(py, file, base, e, make)?)?;
                    }
                }
                return make.call1(("vlist", list, describe(py, base)?));
            }
            let n = b.len() / (base.size().max(1) as usize);
            let mut out = vec![0u8; n * base.numpy_itemsize().unwrap_or(0) as usize];
            convert_all(base, &b, &mut out)?;
            make.call1(("vlen", PyBytes::new(py, &out), describe(py, base)?))
        }
        Datatype::Reference { kind, .. } => match kind {
            ReferenceKind::Object => {
                let a = file.object_reference(src).py_err()?;
                make.call1(("ref", a))
            }
            ReferenceKind::Region => make.call1(("regref", PyBytes::new(py, src))),
            _ => make.call1(("ref", None::<u64>)),
        },
        Datatype::Compound { members, .. } if has_objects(dt) => {
            let mut vals = Vec::new();
            for m in members {
                let s = m.offset as usize;
                let e = s + m.dtype.size() as usize;
                let part = src.get(s..e).ok_or_else(|| elem_err("compound member"))?;
                vals.push(elem_to_py(py, file, &m.dtype, part, make)?);
            }
            Ok(PyTuple::new(py, vals)?.into_any())
        }
        Datatype::Array { base, .. } if has_objects(dt) => {
            let bs = base.size() as usize;
            let list = PyList::empty(py);
            if bs > 0 {
                for e in src.chunks_exact(bs) {
                    list.append(elem_to_py(py, file, base, e, make)?)?;
                }
            }
            make.call1(("olist", list, describe(py, dt)?))
        }
        _ => {
            let mut out = vec![0u8; dt.numpy_itemsize().unwrap_or(0) as usize];
            convert_elem(dt, src, &mut out)?;
            make.call1(("plain", PyBytes::new(py, &out), describe(py, dt)?))
        }
    }
}

/// Every element of `raw` as Python values (see [`elem_to_py`]).
pub(crate) fn all_to_py<'py>(
    py: Python<'py>,
    file: &File,
    dt: &Datatype,
    raw: &[u8],
    make: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let s = dt.size() as usize;
    let list = PyList::empty(py);
    if s == 0 {
        return Ok(list);
    }
    for e in raw.chunks_exact(s) {
        list.append(elem_to_py(py, file, dt, e, make)?)?;
    }
    Ok(list)
}
