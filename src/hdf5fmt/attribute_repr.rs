//! An attribute's value as Python prints what h5py returns for
//! `obj.attrs[name]` (h5py 3, numpy 2): arrays as numpy's `repr`
//! (`array([0.75, 0.75])`, `array([1, 2], dtype=int32)`, aligned columns,
//! lines wrapped at 75 characters, more than 1,000 elements summarised
//! with `...`), variable-length strings as Python `str` (`'mm'`),
//! fixed-length strings as `bytes` (`b'XYZ'`), numbers as their value
//! (`7`, `0.125`, `True` — numpy's `str`, without numpy 2's `np.float64(..)`
//! wrapper), compounds as tuples, a null dataspace as h5py's `Empty`.
//!
//! The formatting follows numpy's `arrayprint` (`_formatArray`,
//! `FloatingFormat` in `maxprec` mode with precision 8, `IntegerFormat`,
//! `BoolFormat`, `StructuredVoidFormat`) step by step.

use crate::attribute::Attribute;
use crate::convert::{strip_padding, Context, Elements, H5Read};
use crate::datatype::{quote, shape_tuple, Datatype, ReferenceKind};
use crate::error::{Error, Result};
use crate::file::File;
use crate::messages::dataspace::SpaceKind;

/// numpy's default `linewidth`.
const LINE_WIDTH: usize = 75;
/// numpy's default `threshold`: larger arrays are summarised.
const THRESHOLD: u64 = 1000;
/// numpy's default `edgeitems`.
const EDGE: usize = 3;
/// numpy's default float `precision` (fractional digits at most).
const PRECISION: usize = 8;
/// Most elements a sequence attribute may expand to while printing.
const MAX_PRINTED: u64 = 1 << 20;

struct Env<'a> {
    file: Option<&'a File>,
    name: &'a str,
}

impl Env<'_> {
    fn unsupported(&self, dt: &Datatype) -> Error {
        Error::InvalidArgument(format!(
            "attribute {}: no printed form for type {dt}",
            self.name
        ))
    }

    fn vlen(&self, el: &[u8]) -> Result<Vec<u8>> {
        let file = self.file.ok_or_else(|| {
            Error::InvalidArgument(format!(
                "attribute {}: variable-length data needs the file",
                self.name
            ))
        })?;
        file.vlen_bytes(el)
    }

    fn numbers<T: H5Read>(&self, dt: &Datatype, els: &[&[u8]]) -> Result<Vec<T>> {
        let ctx = Context {
            file: self.file,
            object: self.name,
        };
        let size = dt.size() as usize;
        let mut bytes = Vec::with_capacity(els.len() * size);
        for e in els {
            bytes.extend_from_slice(e);
        }
        let mut out = vec![T::default(); els.len()];
        T::convert(&ctx, dt, Elements::packed(&bytes, size), &mut out)?;
        Ok(out)
    }
}

/// The printed value of `a` (see the module documentation).
pub(crate) fn repr(a: &Attribute) -> Result<String> {
    let env = Env {
        file: a.file(),
        name: &a.name,
    };
    let (base, array_dims) = expand(&a.dtype);
    if a.space.kind == SpaceKind::Null {
        return Ok(format!("Empty(dtype=dtype({}))", long_repr(&a.dtype)));
    }
    let mut shape = a.space.dims.clone();
    shape.extend_from_slice(&array_dims);
    let size = base.size() as usize;
    let n = shape
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| Error::InvalidArgument(format!("attribute {}: size overflows", a.name)))?;
    if size == 0 || (a.data.len() as u64) < n.saturating_mul(size as u64) {
        return Err(Error::InvalidArgument(format!(
            "attribute {}: {} value bytes for {n} elements of {size}",
            a.name,
            a.data.len()
        )));
    }
    let els: Vec<&[u8]> = a.data.chunks_exact(size).take(n as usize).collect();
    if shape.is_empty() {
        let el = els.first().copied().unwrap_or(&[]);
        return scalar(&env, base, el);
    }
    array_repr(&env, base, &els, &shape)
}

/// The element type and the dimensions an array type adds (numpy folds a
/// subarray type into the array's shape).
fn expand(dt: &Datatype) -> (&Datatype, Vec<u64>) {
    let mut dims = Vec::new();
    let mut base = dt;
    while let Datatype::Array { base: b, dims: d } = base {
        dims.extend_from_slice(d);
        base = b;
    }
    (base, dims)
}

/// A scalar attribute's value.
fn scalar(env: &Env<'_>, dt: &Datatype, el: &[u8]) -> Result<String> {
    match dt {
        Datatype::Float { .. } => {
            let v = env.numbers::<f64>(dt, &[el])?;
            Ok(scalar_float(v[0], float_kind(dt)))
        }
        _ if complex_parts(dt).is_some() => {
            let (re, im, kind) = complex_values(env, dt, &[el])?;
            Ok(scalar_complex(re[0], im[0], kind))
        }
        // numpy's `str` of a structured scalar: each field as its own scalar
        Datatype::Compound { members, .. } => {
            let mut parts = Vec::with_capacity(members.len());
            for m in members {
                let at = m.offset as usize;
                let field = el
                    .get(at..at + m.dtype.size() as usize)
                    .ok_or_else(|| env.unsupported(dt))?;
                parts.push(match &m.dtype {
                    Datatype::Array { .. } => subarray_column(env, &m.dtype, &[field])?.remove(0),
                    d => scalar(env, d, field)?,
                });
            }
            Ok(match parts.as_slice() {
                [one] => format!("({one},)"),
                _ => format!("({})", parts.join(", ")),
            })
        }
        Datatype::VarSequence { base, .. } => sequence(env, base, el),
        _ => Ok(column(env, dt, &[el], true)?.remove(0)),
    }
}

/// numpy's float kind: the itemsize of the numpy float h5py reads into.
fn float_kind(dt: &Datatype) -> u32 {
    match dt {
        Datatype::Float { size, layout, .. } => layout.numpy_float_size(*size).unwrap_or(8),
        _ => 8,
    }
}

/// The float part type and the byte offsets of the real and imaginary
/// parts of a complex type (class 11, or h5py's `r`/`i` compound).
fn complex_parts(dt: &Datatype) -> Option<(&Datatype, usize, usize)> {
    match dt {
        Datatype::Complex { base, .. } => {
            let half = base.size() as usize;
            Some((base, 0, half))
        }
        Datatype::Compound { members, .. } if dt.complex_compound_part().is_some() => {
            let (r, i) = (members.first()?, members.get(1)?);
            Some((&r.dtype, r.offset as usize, i.offset as usize))
        }
        _ => None,
    }
}

type Parts = (Vec<f64>, Vec<f64>, u32);

fn complex_values(env: &Env<'_>, dt: &Datatype, els: &[&[u8]]) -> Result<Parts> {
    let (part, r_at, i_at) = complex_parts(dt).ok_or_else(|| env.unsupported(dt))?;
    let psize = part.size() as usize;
    let slice = |e: &[u8], at: usize| e.get(at..at + psize).map(<[u8]>::to_vec);
    let mut re = Vec::with_capacity(els.len());
    let mut im = Vec::with_capacity(els.len());
    for e in els {
        re.push(slice(e, r_at).ok_or_else(|| env.unsupported(dt))?);
        im.push(slice(e, i_at).ok_or_else(|| env.unsupported(dt))?);
    }
    let re: Vec<&[u8]> = re.iter().map(Vec::as_slice).collect();
    let im: Vec<&[u8]> = im.iter().map(Vec::as_slice).collect();
    Ok((
        env.numbers::<f64>(part, &re)?,
        env.numbers::<f64>(part, &im)?,
        float_kind(part),
    ))
}

/// Every element of one column (all of one type), formatted as numpy's
/// format function for that data formats it; `zero_d` for a scalar
/// (numpy's 0-d formatting: `True` without the aligning space).
fn column(env: &Env<'_>, dt: &Datatype, els: &[&[u8]], zero_d: bool) -> Result<Vec<String>> {
    if complex_parts(dt).is_some() {
        let (re, im, kind) = complex_values(env, dt, els)?;
        let rf = FloatFormat::new(&re, kind, false);
        let imf = FloatFormat::new(&im, kind, true);
        return Ok(re
            .iter()
            .zip(&im)
            .map(|(&r, &i)| {
                let i = imf.format(i);
                let sp = i.trim_end().len();
                format!("{}{}j{}", rf.format(r), &i[..sp], &i[sp..])
            })
            .collect());
    }
    match dt {
        Datatype::Enum { .. } if dt.is_bool_enum() => {
            let t = if zero_d { "True" } else { " True" };
            Ok(env
                .numbers::<i64>(dt, els)?
                .into_iter()
                .map(|v| if v != 0 { t } else { "False" }.to_string())
                .collect())
        }
        Datatype::Integer { .. } | Datatype::Bitfield { .. } | Datatype::Enum { .. } => {
            let signed = matches!(integer_of(dt), Some(Datatype::Integer { signed: true, .. }));
            let text: Vec<String> = if signed {
                env.numbers::<i64>(dt, els)?
                    .iter()
                    .map(i64::to_string)
                    .collect()
            } else {
                env.numbers::<u64>(dt, els)?
                    .iter()
                    .map(u64::to_string)
                    .collect()
            };
            Ok(right_align(text))
        }
        Datatype::Float { .. } => {
            let v = env.numbers::<f64>(dt, els)?;
            let f = FloatFormat::new(&v, float_kind(dt), false);
            Ok(v.iter().map(|&x| f.format(x)).collect())
        }
        Datatype::String { pad, .. } => Ok(els
            .iter()
            .map(|e| bytes_repr(strip_padding(e, *pad), false))
            .collect()),
        Datatype::VarString { .. } => els
            .iter()
            .map(|e| Ok(quote(&String::from_utf8_lossy(&env.vlen(e)?))))
            .collect(),
        Datatype::Opaque { .. } => Ok(els.iter().map(|e| bytes_repr(e, true)).collect()),
        Datatype::Reference { kind, .. } => Ok(els
            .iter()
            .map(|e| {
                let what = match kind {
                    ReferenceKind::Region | ReferenceKind::RegionV2 => "region",
                    _ => "object",
                };
                let null = if e.iter().all(|&b| b == 0) {
                    " (null)"
                } else {
                    ""
                };
                format!("<HDF5 {what} reference{null}>")
            })
            .collect()),
        Datatype::VarSequence { base, .. } => els.iter().map(|e| sequence(env, base, e)).collect(),
        Datatype::Compound { members, .. } => {
            let mut fields: Vec<Vec<String>> = Vec::with_capacity(members.len());
            for m in members {
                let at = m.offset as usize;
                let len = m.dtype.size() as usize;
                let sub: Vec<&[u8]> = els
                    .iter()
                    .map(|e| e.get(at..at + len).ok_or_else(|| env.unsupported(dt)))
                    .collect::<Result<_>>()?;
                fields.push(match &m.dtype {
                    Datatype::Array { .. } => subarray_column(env, &m.dtype, &sub)?,
                    d => column(env, d, &sub, zero_d)?,
                });
            }
            Ok((0..els.len())
                .map(|k| {
                    let parts: Vec<&str> = fields.iter().map(|f| f[k].as_str()).collect();
                    match parts.as_slice() {
                        [one] => format!("({one},)"),
                        _ => format!("({})", parts.join(", ")),
                    }
                })
                .collect())
        }
        Datatype::Array { .. } => subarray_column(env, dt, els),
        _ => Err(env.unsupported(dt)),
    }
}

/// The integer type an integer, bitfield or enum is stored as.
fn integer_of(dt: &Datatype) -> Option<&Datatype> {
    match dt {
        Datatype::Integer { .. } => Some(dt),
        Datatype::Enum { base, .. } => integer_of(base),
        _ => None,
    }
}

fn right_align(text: Vec<String>) -> Vec<String> {
    let w = text.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    text.into_iter().map(|s| format!("{s:>w$}")).collect()
}

/// A subarray field of every element: one format function over all the
/// field's values, nested `[a, b]` per element (numpy's `SubArrayFormat`).
fn subarray_column(env: &Env<'_>, dt: &Datatype, els: &[&[u8]]) -> Result<Vec<String>> {
    let (base, dims) = expand(dt);
    let bsize = base.size() as usize;
    let per: u64 = dims.iter().product();
    if bsize == 0 || per.saturating_mul(els.len() as u64) > MAX_PRINTED {
        return Err(env.unsupported(dt));
    }
    let flat: Vec<&[u8]> = els
        .iter()
        .flat_map(|e| e.chunks_exact(bsize).take(per as usize))
        .collect();
    let text = column(env, base, &flat, false)?;
    let mut out = Vec::with_capacity(els.len());
    for k in 0..els.len() {
        let start = k * per as usize;
        out.push(nest(&text[start..start + per as usize], &dims));
    }
    Ok(out)
}

fn nest(text: &[String], dims: &[u64]) -> String {
    match dims.split_first() {
        None => text.first().cloned().unwrap_or_default(),
        Some((&d, rest)) => {
            let step = rest.iter().product::<u64>() as usize;
            let parts: Vec<String> = (0..d as usize)
                .map(|i| nest(&text[i * step..(i + 1) * step], rest))
                .collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

/// One variable-length sequence: a numpy array of its base type, as h5py
/// returns it (`array([1, 2], dtype=int32)`).
fn sequence(env: &Env<'_>, base: &Datatype, el: &[u8]) -> Result<String> {
    let bytes = env.vlen(el)?;
    let (b, dims) = expand(base);
    let bsize = b.size() as usize;
    if bsize == 0 || bytes.len() as u64 > MAX_PRINTED * 8 {
        return Err(env.unsupported(base));
    }
    let mut shape = vec![(bytes.len() / base.size().max(1) as usize) as u64];
    shape.extend_from_slice(&dims);
    let els: Vec<&[u8]> = bytes.chunks_exact(bsize).collect();
    array_repr(env, b, &els, &shape)
}

/// Python's `repr` of a `bytes` value (`all_hex`: every byte escaped, as
/// numpy prints a void value).
fn bytes_repr(b: &[u8], all_hex: bool) -> String {
    let q = if !all_hex && b.contains(&b'\'') && !b.contains(&b'"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::from("b");
    out.push(q);
    for &c in b {
        match c {
            _ if all_hex => out.push_str(&format!("\\x{c:02x}")),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            c if c as char == q => {
                out.push('\\');
                out.push(q);
            }
            0x20..=0x7e => out.push(c as char),
            c => out.push_str(&format!("\\x{c:02x}")),
        }
    }
    out.push(q);
    out
}

// --- arrays -----------------------------------------------------------------

/// numpy's `repr` of an array of `dt` with `shape` whose elements (C order)
/// are `els`.
fn array_repr(env: &Env<'_>, dt: &Datatype, els: &[&[u8]], shape: &[u64]) -> Result<String> {
    let size: u64 = shape.iter().product();
    let summarize = size > THRESHOLD;
    let body = if size == 0 {
        "[]".to_string()
    } else {
        // only the corners numpy shows are decoded and measured
        let vshape: Vec<usize> = shape
            .iter()
            .map(|&d| {
                if summarize && d > 2 * EDGE as u64 {
                    2 * EDGE
                } else {
                    d as usize
                }
            })
            .collect();
        let shown = corner_indices(shape, &vshape);
        let picked: Vec<&[u8]> = shown
            .iter()
            .map(|&i| {
                els.get(i as usize)
                    .copied()
                    .ok_or_else(|| env.unsupported(dt))
            })
            .collect::<Result<_>>()?;
        let text = column(env, dt, &picked, false)?;
        let grid = Grid {
            text: &text,
            shape,
            vshape: &vshape,
            summarize,
        };
        grid.format("       ", LINE_WIDTH - 1)
    };
    let mut extras = Vec::new();
    if (size == 0 && shape != [0]) || summarize {
        extras.push(format!("shape={}", shape_tuple(shape)));
    }
    match dtype_suffix(dt) {
        Some(d) => extras.push(format!("dtype={d}")),
        None if size == 0 => extras.push(format!("dtype={}", numpy_name(dt))),
        None => {}
    }
    if extras.is_empty() {
        return Ok(format!("array({body})"));
    }
    let arr = format!("array({body},");
    let extra = format!("{})", extras.join(", "));
    let last_line = arr.len() - arr.rfind('\n').map_or(0, |p| p + 1);
    let spacer = if chars(&arr[arr.len() - last_line..]) + chars(&extra) + 1 > LINE_WIDTH {
        "\n      "
    } else {
        " "
    };
    Ok(format!("{arr}{spacer}{extra}"))
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// Flat indices (C order) of the elements a summarised array shows: along
/// each dimension longer than `vshape`, the first and last `EDGE`.
fn corner_indices(shape: &[u64], vshape: &[usize]) -> Vec<u64> {
    let mut out = vec![0u64];
    for (&d, &v) in shape.iter().zip(vshape) {
        let along: Vec<u64> = if (v as u64) < d {
            (0..EDGE as u64).chain(d - EDGE as u64..d).collect()
        } else {
            (0..d).collect()
        };
        out = out
            .iter()
            .flat_map(|&base| along.iter().map(move |&i| base * d + i))
            .collect();
    }
    out
}

/// The shown elements as text, in a grid of `vshape` standing for `shape`.
struct Grid<'a> {
    text: &'a [String],
    shape: &'a [u64],
    vshape: &'a [usize],
    summarize: bool,
}

impl Grid<'_> {
    fn format(&self, prefix: &str, width: usize) -> String {
        self.recurse(&mut Vec::new(), prefix, width)
    }

    /// numpy's `_formatArray.recurser` (`index` over the shown grid).
    fn recurse(&self, index: &mut Vec<usize>, hanging: &str, width: usize) -> String {
        let axis = index.len();
        if axis == self.shape.len() {
            let mut flat = 0usize;
            for (i, &v) in index.iter().zip(self.vshape) {
                flat = flat * v + i;
            }
            return self.text[flat].clone();
        }
        let axes_left = self.shape.len() - axis;
        let next_hanging = format!("{hanging} ");
        let next_width = width.saturating_sub(1);
        let a_len = self.shape[axis];
        let v_len = self.vshape[axis];
        let show_summary = self.summarize && (2 * EDGE as u64) < a_len;
        let (leading, trailing) = if show_summary {
            (EDGE, EDGE)
        } else {
            (0, v_len)
        };
        let sub = |i: usize, idx: &mut Vec<usize>| {
            idx.push(i);
            let s = self.recurse(idx, &next_hanging, next_width);
            idx.pop();
            s
        };
        let mut s = String::new();
        if axes_left == 1 {
            let elem_width = width.saturating_sub(1);
            let mut line = hanging.to_string();
            for i in 0..leading {
                let word = sub(i, index);
                extend_pretty(&mut s, &mut line, &word, elem_width, hanging);
                line.push_str(", ");
            }
            if show_summary {
                extend(&mut s, &mut line, "...", elem_width, hanging);
                line.push_str(", ");
            }
            for i in (2..=trailing).rev() {
                let word = sub(v_len - i, index);
                extend_pretty(&mut s, &mut line, &word, elem_width, hanging);
                line.push_str(", ");
            }
            let word = sub(v_len - 1, index);
            extend_pretty(&mut s, &mut line, &word, elem_width, hanging);
            s.push_str(&line);
        } else {
            let line_sep = format!(",{}", "\n".repeat(axes_left - 1));
            for i in 0..leading {
                let nested = sub(i, index);
                s.push_str(hanging);
                s.push_str(&nested);
                s.push_str(&line_sep);
            }
            if show_summary {
                s.push_str(hanging);
                s.push_str("...");
                s.push_str(&line_sep);
            }
            for i in (2..=trailing).rev() {
                let nested = sub(v_len - i, index);
                s.push_str(hanging);
                s.push_str(&nested);
                s.push_str(&line_sep);
            }
            let nested = sub(v_len - 1, index);
            s.push_str(hanging);
            s.push_str(&nested);
        }
        format!("[{}]", &s[hanging.len()..])
    }
}

/// numpy's `_extendLine`.
fn extend(s: &mut String, line: &mut String, word: &str, width: usize, prefix: &str) {
    let needs_wrap = chars(line) + chars(word) > width && chars(line) > chars(prefix);
    if needs_wrap {
        s.push_str(line.trim_end());
        s.push('\n');
        *line = prefix.to_string();
    }
    line.push_str(word);
}

/// numpy's `_extendLine_pretty` (words of several lines stay aligned).
fn extend_pretty(s: &mut String, line: &mut String, word: &str, width: usize, prefix: &str) {
    let words: Vec<&str> = word.lines().collect();
    if words.len() <= 1 {
        return extend(s, line, word, width, prefix);
    }
    let max_len = words.iter().map(|w| chars(w)).max().unwrap_or(0);
    let indent;
    if chars(line) + max_len > width && chars(line) > chars(prefix) {
        s.push_str(line.trim_end());
        s.push('\n');
        *line = format!("{prefix}{}", words[0]);
        indent = prefix.to_string();
    } else {
        indent = " ".repeat(chars(line));
        line.push_str(words[0]);
    }
    for w in &words[1..] {
        s.push_str(line.trim_end());
        s.push('\n');
        *line = format!("{indent}{w}");
    }
    let pad = max_len - chars(words[words.len() - 1]);
    line.push_str(&" ".repeat(pad));
}

/// numpy's name of the dtype h5py reads `dt` into (`float32`, `int8`,
/// `object`, `'|S5'`, `'>i4'`, a structured list), as `dtype=` shows it.
fn numpy_name(dt: &Datatype) -> String {
    if matches!(dt, Datatype::Compound { .. }) && dt.complex_compound_part().is_none() {
        return dt.to_string();
    }
    let s = match dt {
        Datatype::Reference { .. } => "|O".to_string(),
        _ => dt.numpy_str().unwrap_or_else(|| dt.to_string()),
    };
    let (order, rest) = s.split_at(1.min(s.len()));
    let kind = rest.chars().next().unwrap_or('V');
    let bits = rest
        .get(1..)
        .and_then(|n| n.parse::<u32>().ok())
        .map(|n| n * 8);
    match (order, kind, bits) {
        ("|", 'O', _) => "object".to_string(),
        ("|", 'b', _) => "bool".to_string(),
        (">", ..) => format!("'{s}'"),
        (_, 'i', Some(b)) => format!("int{b}"),
        (_, 'u', Some(b)) => format!("uint{b}"),
        (_, 'f', Some(b)) => format!("float{b}"),
        (_, 'c', Some(b)) => format!("complex{b}"),
        _ => format!("'{s}'"),
    }
}

/// The `dtype=` part of an array's repr, or `None` when numpy leaves it out
/// (native `int64`, `float64`, `complex128`, `bool`).
fn dtype_suffix(dt: &Datatype) -> Option<String> {
    let name = numpy_name(dt);
    (!matches!(name.as_str(), "int64" | "float64" | "complex128" | "bool")).then_some(name)
}

/// `dtype('...')` of h5py's `Empty`: numpy's long construction form.
fn long_repr(dt: &Datatype) -> String {
    match dt {
        Datatype::Array { .. } => dt.to_string(),
        Datatype::Compound { .. } if dt.complex_compound_part().is_none() => dt.to_string(),
        _ => {
            let name = numpy_name(dt);
            match name.as_str() {
                "object" => "'O'".to_string(),
                n if n.starts_with('\'') => n.replacen("'|", "'", 1),
                n => format!("'{n}'"),
            }
        }
    }
}

// --- floats -----------------------------------------------------------------

/// The shortest decimal digits that read back as `x` in a float of `kind`
/// bytes (2, 4 or 8), and the decimal exponent of the first: `x` is
/// `d.ddd × 10^exp`. `x` is finite and not zero.
fn shortest(x: f64, kind: u32) -> (String, i32) {
    let text = match kind {
        2 => half_shortest(x),
        4 => format!("{:e}", x.abs() as f32),
        _ => format!("{:e}", x.abs()),
    };
    split_exp(&text)
}

/// `d.ddde±N` -> (`dddd`, N).
fn split_exp(text: &str) -> (String, i32) {
    let (m, e) = text.split_once('e').unwrap_or((text, "0"));
    let digits: String = m.chars().filter(char::is_ascii_digit).collect();
    (digits, e.parse().unwrap_or(0))
}

/// The shortest `{:e}` text of the half-precision value `x` (held exactly
/// in an f64) that rounds back to it.
fn half_shortest(x: f64) -> String {
    let a = x.abs();
    for p in 0..8 {
        let t = format!("{a:.p$e}");
        if let Ok(back) = t.parse::<f64>() {
            if round_half(back) == a {
                return t;
            }
        }
    }
    format!("{a:e}")
}

/// `v` rounded to the nearest IEEE half (ties to even), as an f64.
fn round_half(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    // spacing of halves around v: 2^(e-10) for normal, 2^-24 below 2^-14
    let e = v.abs().log2().floor() as i32;
    let ulp = 2f64.powi(e.max(-14) - 10);
    let q = v / ulp;
    let r = q.round();
    let r = if (q - q.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - q.signum()
    } else {
        r
    };
    r * ulp
}

/// Digits of `x` positionally: (integer part with its sign, fraction), at
/// most `PRECISION` fractional digits (rounded), trailing zeros dropped.
fn positional(x: f64, kind: u32, plus: bool) -> (String, String) {
    let sign = if x.is_sign_negative() {
        "-"
    } else if plus {
        "+"
    } else {
        ""
    };
    if x == 0.0 {
        return (format!("{sign}0"), String::new());
    }
    let (digits, exp) = shortest(x, kind);
    let frac_len = digits.len() as i64 - 1 - i64::from(exp);
    let (int, frac) = if frac_len > PRECISION as i64 {
        let t = format!("{:.*}", PRECISION, x.abs());
        let (i, f) = t.split_once('.').unwrap_or((&t, ""));
        (i.to_string(), f.trim_end_matches('0').to_string())
    } else if exp >= 0 {
        let e = exp as usize;
        let mut int = digits.chars().take(e + 1).collect::<String>();
        while int.len() < e + 1 {
            int.push('0');
        }
        (int, digits.chars().skip(e + 1).collect())
    } else {
        let zeros = "0".repeat((-exp - 1) as usize);
        ("0".to_string(), format!("{zeros}{digits}"))
    };
    (format!("{sign}{int}"), frac)
}

/// Digits of `x` in scientific notation: (mantissa's integer digit with
/// its sign, mantissa fraction, exponent), at most `PRECISION` fractional
/// digits, trailing zeros dropped.
fn scientific(x: f64, kind: u32, plus: bool) -> (String, String, i32) {
    let sign = if x.is_sign_negative() {
        "-"
    } else if plus {
        "+"
    } else {
        ""
    };
    if x == 0.0 {
        return (format!("{sign}0"), String::new(), 0);
    }
    let (mut digits, mut exp) = shortest(x, kind);
    if digits.len() - 1 > PRECISION {
        let (d, e) = split_exp(&format!("{:.*e}", PRECISION, x.abs()));
        digits = d.trim_end_matches('0').to_string();
        exp = e;
    }
    let (first, rest) = digits.split_at(1);
    (format!("{sign}{first}"), rest.to_string(), exp)
}

fn exp_text(exp: i32, width: usize) -> String {
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{sign}{:0width$}", exp.unsigned_abs())
}

/// numpy's `FloatingFormat` (`floatmode='maxprec'`, precision 8, sign `-`,
/// or `+` for the imaginary parts of complex numbers).
struct FloatFormat {
    exp: bool,
    pad_left: usize,
    pad_right: usize,
    precision: usize,
    exp_size: usize,
    kind: u32,
    plus: bool,
}

impl FloatFormat {
    fn new(values: &[f64], kind: u32, plus: bool) -> FloatFormat {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let nonzero: Vec<f64> = finite
            .iter()
            .map(|v| v.abs())
            .filter(|&v| v != 0.0)
            .collect();
        let mut f = FloatFormat {
            exp: false,
            pad_left: 0,
            pad_right: 0,
            precision: 0,
            exp_size: 0,
            kind,
            plus,
        };
        if let (Some(max), Some(min)) = (
            nonzero.iter().copied().reduce(f64::max),
            nonzero.iter().copied().reduce(f64::min),
        ) {
            let digits = match kind {
                2 => 3,
                4 => 6,
                _ => 8,
            };
            f.exp = max >= 10f64.powi(digits) || min < 1e-4 || max / min > 1e3;
        }
        if f.exp {
            for &x in &finite {
                let (i, fr, e) = scientific(x, kind, plus);
                f.pad_left = f.pad_left.max(i.len());
                f.precision = f.precision.max(fr.len());
                f.exp_size = f.exp_size.max(e.unsigned_abs().to_string().len().max(2));
            }
            f.pad_right = f.exp_size + 2 + f.precision;
        } else {
            for &x in &finite {
                let (i, fr) = positional(x, kind, plus);
                f.pad_left = f.pad_left.max(i.len());
                f.pad_right = f.pad_right.max(fr.len());
            }
        }
        if finite.len() != values.len() {
            let neginf = plus || values.contains(&f64::NEG_INFINITY);
            let offset = f.pad_right + 1;
            f.pad_left = f
                .pad_left
                .max(3usize.saturating_sub(offset))
                .max((3 + usize::from(neginf)).saturating_sub(offset));
        }
        f
    }

    fn format(&self, x: f64) -> String {
        if !x.is_finite() {
            let ret = if x.is_nan() {
                format!("{}nan", if self.plus { "+" } else { "" })
            } else if x < 0.0 {
                "-inf".to_string()
            } else {
                format!("{}inf", if self.plus { "+" } else { "" })
            };
            let w = self.pad_left + self.pad_right + 1;
            return format!("{ret:>w$}");
        }
        if self.exp {
            let (i, fr, e) = scientific(x, self.kind, self.plus);
            let (pl, p) = (self.pad_left, self.precision);
            format!("{i:>pl$}.{fr:0<p$}e{}", exp_text(e, self.exp_size))
        } else {
            let (i, fr) = positional(x, self.kind, self.plus);
            let (pl, pr) = (self.pad_left, self.pad_right);
            format!("{i:>pl$}.{fr:<pr$}")
        }
    }
}

/// A float scalar as numpy's `str` prints it (Python's `repr` rules:
/// positional from 1e-4 up to 1e16 — 1e6 for float32, 1e3 for float16 —
/// else scientific with a two-digit exponent at least).
fn scalar_float(x: f64, kind: u32) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x == 0.0 {
        return format!("{sign}0.0");
    }
    let upper = match kind {
        2 => 1e3,
        4 => 1e6,
        _ => 1e16,
    };
    let (digits, exp) = shortest(x, kind);
    if (1e-4..upper).contains(&x.abs()) {
        let (int, frac) = if exp >= 0 {
            let e = exp as usize;
            let mut int: String = digits.chars().take(e + 1).collect();
            while int.len() < e + 1 {
                int.push('0');
            }
            (int, digits.chars().skip(e + 1).collect::<String>())
        } else {
            let zeros = "0".repeat((-exp - 1) as usize);
            ("0".to_string(), format!("{zeros}{digits}"))
        };
        let frac = if frac.is_empty() {
            "0".to_string()
        } else {
            frac
        };
        format!("{sign}{int}.{frac}")
    } else {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        format!("{sign}{first}{dot}{rest}e{}", exp_text(exp, 2))
    }
}

/// A complex scalar as Python prints it: `(1+2j)`, `(1.5-0.5j)`, `2j`.
fn scalar_complex(re: f64, im: f64, kind: u32) -> String {
    let part = |v: f64| {
        let s = scalar_float(v, kind);
        s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
    };
    let imag = part(im.abs());
    let isign = if im.is_sign_negative() && !im.is_nan() {
        '-'
    } else {
        '+'
    };
    if re == 0.0 && !re.is_sign_negative() {
        let s = if isign == '-' { "-" } else { "" };
        return format!("{s}{imag}j");
    }
    format!("({}{isign}{imag}j)", part(re))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(v: &[f64], kind: u32) -> Vec<String> {
        let f = FloatFormat::new(v, kind, false);
        v.iter().map(|&x| f.format(x)).collect()
    }

    #[test]
    fn floats_format_as_numpy() {
        assert_eq!(floats(&[1.0, 2.5, 0.75], 8), ["1.  ", "2.5 ", "0.75"]);
        assert_eq!(floats(&[1.0, 2.0], 8), ["1.", "2."]);
        assert_eq!(floats(&[1e-5, 1.0], 8), ["1.e-05", "1.e+00"]);
        assert_eq!(
            floats(&[1e-5, 1.0, 123.25], 8),
            ["1.0000e-05", "1.0000e+00", "1.2325e+02"]
        );
        assert_eq!(floats(&[1.5e10, -2.0], 8), [" 1.5e+10", "-2.0e+00"]);
        assert_eq!(floats(&[0.1 + 0.2], 8), ["0.3"]);
        assert_eq!(
            floats(&[f64::NAN, 1.5, f64::NEG_INFINITY], 8),
            [" nan", " 1.5", "-inf"]
        );
        assert_eq!(floats(&[1e-5, f64::NAN], 8), ["1.e-05", "   nan"]);
        assert_eq!(floats(&[-0.0, 1.5], 8), ["-0. ", " 1.5"]);
        assert_eq!(floats(&[f64::from(0.1f32)], 4), ["0.1"]);
        assert_eq!(floats(&[1e6, 2.0], 4), ["1.e+06", "2.e+00"]);
        assert_eq!(floats(&[0.0999755859375], 2), ["0.1"]);
    }

    #[test]
    fn scalars_format_as_numpy_str() {
        let f64s = [
            (1e-4, "0.0001"),
            (9e-5, "9e-05"),
            (1.0, "1.0"),
            (123.5, "123.5"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (-0.0, "-0.0"),
            (0.1, "0.1"),
            (1.5e-7, "1.5e-07"),
        ];
        for (x, want) in f64s {
            assert_eq!(scalar_float(x, 8), want);
        }
        assert_eq!(scalar_float(f64::from(1e-4f32), 4), "1e-04");
        assert_eq!(scalar_float(1e6, 4), "1e+06");
        assert_eq!(scalar_float(1e5, 4), "100000.0");
        assert_eq!(scalar_float(f64::from(0.1f32), 4), "0.1");
        assert_eq!(scalar_float(1000.0, 2), "1e+03");
        assert_eq!(scalar_complex(1.0, 2.0, 8), "(1+2j)");
        assert_eq!(scalar_complex(1.5, -0.5, 8), "(1.5-0.5j)");
        assert_eq!(scalar_complex(0.0, 2.0, 8), "2j");
        assert_eq!(bytes_repr(b"it's", false), "b\"it's\"");
        assert_eq!(bytes_repr(b"\x01\x02a", true), "b'\\x01\\x02\\x61'");
    }
}
