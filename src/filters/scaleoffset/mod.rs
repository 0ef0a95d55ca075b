//! Filter `scaleoffset` (id 6): libhdf5's scale-offset filter, `docs/filters-format.md` §2.6.
//!
//! `cd_values` has 20 entries: scale type (0 float D-scale, 1 E-scale — rejected
//! like libhdf5 does, 2 integer), scale factor, elements, class (0 integer, 1
//! float), size, sign, byte order, fill-value flag and the fill value bytes
//! (packed little-endian, four per value, from index 8). The stored chunk is a
//! 21-byte header (u32 `minbits`, a size byte, u64 `minval`, zero padding) and
//! then `minbits` bits per element, MSB first. Integers decode to
//! `(v + minval) mod 2^bits`; floats to `v / 10^D + min` computed in the element's
//! own precision with `powf`/`pow`, exactly as libhdf5 does; the all-ones code
//! stands for the fill value when one is defined.

use crate::error::{Error, Result};
use crate::nbit::bitstream::{BitReader, BitWriter};
use crate::ChunkContext;

const NAME: &str = "scaleoffset";
/// Size of the header before the packed values.
const HEADER: usize = 21;
const CD_LEN: usize = 20;

fn err(reason: impl std::fmt::Display) -> Error {
    Error::filter(0, NAME, reason)
}

/// What the stage does with a chunk, from `cd_values`.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// Integers; `minbits` requested by the user (0 = automatic).
    Int { signed: bool, minbits: u32 },
    /// Floats with `D` decimal digits kept.
    Float { d: i32 },
}

#[derive(Clone, Copy, Debug)]
struct Params {
    kind: Kind,
    elements: usize,
    size: usize,
    big_endian: bool,
    /// The fill value's bytes as a little-endian integer, when defined.
    fill: Option<u64>,
}

impl Params {
    fn bits(&self) -> u32 {
        self.size as u32 * 8
    }

    fn mask(&self) -> u64 {
        mask(self.bits())
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Parse `cd_values`; `None` means the stage passes data through (integer
/// scale factor equal to the full width).
fn params(cd: &[u32]) -> Result<Option<Params>> {
    let cd: &[u32; CD_LEN] = cd
        .try_into()
        .map_err(|_| err(format!("{} cd_values, 20 expected", cd.len())))?;
    let [scale_type, factor, elements, class, size, sign, order, filavail, ..] = *cd;
    let size_ok = match class {
        0 => matches!(size, 1 | 2 | 4 | 8),
        1 => matches!(size, 4 | 8),
        _ => false,
    };
    if !size_ok {
        return Err(err(format!("unsupported class {class} of size {size}")));
    }
    let kind = match (class, scale_type) {
        (0, 2) => {
            let minbits = (factor as i32).max(0) as u32;
            if minbits > size * 8 {
                return Err(err("minimum number of bits exceeds the type size"));
            }
            if minbits == size * 8 {
                return Ok(None);
            }
            Kind::Int {
                signed: sign == 1,
                minbits,
            }
        }
        (1, 0) => Kind::Float { d: factor as i32 },
        (1, 1) => {
            return Err(err(
                "E-scale method is not supported (libhdf5 rejects it too)",
            ))
        }
        _ => {
            return Err(err(format!(
                "scale type {scale_type} invalid for class {class}"
            )))
        }
    };
    let fill = (filavail == 1).then(|| {
        let bytes: Vec<u8> = cd[8..].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut le = [0u8; 8];
        le[..size as usize].copy_from_slice(&bytes[..size as usize]);
        u64::from_le_bytes(le)
    });
    Ok(Some(Params {
        kind,
        elements: elements as usize,
        size: size as usize,
        big_endian: order == 1,
        fill,
    }))
}

fn read_elem(p: &Params, e: &[u8]) -> u64 {
    let mut le = [0u8; 8];
    le[..p.size].copy_from_slice(e);
    if p.big_endian {
        le[..p.size].reverse();
    }
    u64::from_le_bytes(le)
}

fn write_elem(p: &Params, e: &mut [u8], v: u64) {
    let le = v.to_le_bytes();
    e.copy_from_slice(&le[..p.size]);
    if p.big_endian {
        e.reverse();
    }
}

/// Undo the filter.
pub fn decode(input: &[u8], cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let Some(p) = params(cd_values)? else {
        return Ok(input.to_vec());
    };
    let minbits_bytes: [u8; 4] = input
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| err("chunk shorter than its header"))?;
    let minbits = u32::from_le_bytes(minbits_bytes);
    if minbits > p.bits() {
        return Err(err(format!("minbits {minbits} exceeds the type size")));
    }
    let minval_size = usize::from(
        *input
            .get(4)
            .ok_or_else(|| err("chunk shorter than its header"))?,
    )
    .min(8);
    let minval_bytes = input
        .get(5..5 + minval_size)
        .ok_or_else(|| err("chunk shorter than its header"))?;
    let mut le = [0u8; 8];
    le[..minval_size].copy_from_slice(minval_bytes);
    let minval = u64::from_le_bytes(le);

    let total = p
        .elements
        .checked_mul(p.size)
        .filter(|&n| n <= ctx.max_output)
        .ok_or_else(|| err("decoded size exceeds the chunk bound"))?;
    if minbits == p.bits() {
        // Stored raw in little-endian memory order after the header.
        let raw = input
            .get(HEADER..HEADER + total)
            .ok_or_else(|| err("raw data truncated"))?;
        let mut out = raw.to_vec();
        if p.big_endian {
            out.chunks_exact_mut(p.size).for_each(<[u8]>::reverse);
        }
        return Ok(out);
    }
    let packed = if minbits == 0 {
        &[][..]
    } else {
        input
            .get(HEADER..)
            .ok_or_else(|| err("packed data truncated"))?
    };
    let needed = (p.elements as u64).saturating_mul(u64::from(minbits));
    if needed > (packed.len() as u64).saturating_mul(8) {
        return Err(err("packed data truncated"));
    }
    let mut r = BitReader::new(packed);
    let code_fill = mask(minbits);
    let mut out = vec![0u8; total];
    for e in out.chunks_exact_mut(p.size) {
        let v = r
            .read(minbits)
            .ok_or_else(|| err("packed data truncated"))?;
        let value = match (p.fill, v == code_fill) {
            (Some(fill), true) => fill,
            _ => match p.kind {
                Kind::Int { .. } => v.wrapping_add(minval) & p.mask(),
                Kind::Float { d } => unscale(p.size, v, minval, d),
            },
        };
        write_elem(&p, e, value);
    }
    Ok(out)
}

/// `v / 10^D + min` in the element's precision; returns the float's bits.
fn unscale(size: usize, v: u64, minval: u64, d: i32) -> u64 {
    if size == 4 {
        let min = f32::from_bits(minval as u32);
        let x = (v as i32) as f32 / 10f32.powf(d as f32) + min;
        u64::from(x.to_bits())
    } else {
        let min = f64::from_bits(minval);
        let x = (v as i64) as f64 / 10f64.powf(f64::from(d)) + min;
        x.to_bits()
    }
}

/// libhdf5's bit count for a span: `ceil(log2(num))`, with 0 giving 1.
fn log2_ceil(num: u64) -> u32 {
    if num == 0 {
        return 1;
    }
    let floor = 63 - num.leading_zeros();
    if num.is_power_of_two() {
        floor
    } else {
        floor + 1
    }
}

/// Apply the filter.
pub fn encode(input: &[u8], cd_values: &[u32], _ctx: &ChunkContext) -> Result<Vec<u8>> {
    let Some(p) = params(cd_values)? else {
        return Ok(input.to_vec());
    };
    if p.elements.checked_mul(p.size) != Some(input.len()) {
        return Err(err(format!(
            "input of {} bytes is not {} elements of {} bytes",
            input.len(),
            p.elements,
            p.size
        )));
    }
    let values: Vec<u64> = input
        .chunks_exact(p.size)
        .map(|e| read_elem(&p, e))
        .collect();
    let (minbits, minval, codes) = match p.kind {
        Kind::Int { signed, minbits } => precompress_int(&p, &values, signed, minbits),
        Kind::Float { d } => precompress_float(&p, &values, d),
    };
    let mut out = Vec::with_capacity(HEADER + input.len() + 1);
    out.extend_from_slice(&minbits.to_le_bytes());
    out.push(8);
    out.extend_from_slice(&minval.to_le_bytes());
    out.resize(HEADER, 0);
    if minbits == p.bits() {
        // Raw values in little-endian memory order.
        for v in &values {
            out.extend_from_slice(&v.to_le_bytes()[..p.size]);
        }
        return Ok(out);
    }
    let mut w = BitWriter::with_capacity(input.len() + 1);
    if minbits > 0 {
        for c in codes {
            w.write(c & mask(minbits), minbits);
        }
    }
    out.extend(w.finish_with_spare_byte());
    Ok(out)
}

/// Returns (minbits, minval, codes) for integers as libhdf5's precompress does.
fn precompress_int(
    p: &Params,
    values: &[u64],
    signed: bool,
    user_bits: u32,
) -> (u32, u64, Vec<u64>) {
    let bits = p.bits();
    let key = |v: u64| -> i128 {
        if signed && bits < 64 && v >> (bits - 1) & 1 == 1 {
            i128::from((v | !p.mask()) as i64)
        } else if signed {
            i128::from(v as i64)
        } else {
            i128::from(v)
        }
    };
    let counted = values.iter().filter(|&&v| Some(v) != p.fill);
    let min = counted
        .clone()
        .min_by_key(|&&v| key(v))
        .copied()
        .unwrap_or(0);
    let max = counted.max_by_key(|&&v| key(v)).copied().unwrap_or(0);
    let minbits = if user_bits == 0 {
        let diff = max.wrapping_sub(min) & p.mask();
        if diff > p.mask() - 2 {
            return (bits, 0, Vec::new());
        }
        let span = diff + 1;
        log2_ceil(if p.fill.is_some() { span + 1 } else { span })
    } else {
        user_bits
    };
    let minval = if signed { key(min) as i64 as u64 } else { min };
    let codes = values
        .iter()
        .map(|&v| match p.fill {
            Some(f) if v == f => mask(minbits),
            _ => v.wrapping_sub(min) & p.mask(),
        })
        .collect();
    (minbits, minval, codes)
}

/// Returns (minbits, minval, codes) for D-scaled floats as libhdf5's precompress does.
fn precompress_float(p: &Params, values: &[u64], d: i32) -> (u32, u64, Vec<u64>) {
    if p.size == 4 {
        let fs: Vec<f32> = values.iter().map(|&v| f32::from_bits(v as u32)).collect();
        let fill = p.fill.map(|f| f32::from_bits(f as u32));
        let tol = 10f64.powf(-f64::from(d));
        let is_fill = |x: f32| fill.is_some_and(|f| f64::from(x - f).abs() < tol);
        let kept = fs.iter().copied().filter(|&x| !is_fill(x));
        let min = kept
            .clone()
            .fold(None, |m: Option<f32>, x| {
                Some(m.map_or(x, |m| if x < m { x } else { m }))
            })
            .unwrap_or(0.0);
        let max = kept
            .fold(None, |m: Option<f32>, x| {
                Some(m.map_or(x, |m| if x > m { x } else { m }))
            })
            .unwrap_or(0.0);
        let scale = 10f32.powf(d as f32);
        if (max * scale - min * scale).round() > 2f32.powf(31.0) {
            return (32, 0, Vec::new());
        }
        let span = ((max * scale - min * scale).round() as i64 as u64).wrapping_add(1);
        let minbits = log2_ceil(if fill.is_some() {
            span.wrapping_add(1)
        } else {
            span
        });
        if minbits == 32 {
            return (32, u64::from(min.to_bits()), Vec::new());
        }
        let tol32 = 10f32.powf(-d as f32);
        let codes = fs
            .iter()
            .map(|&x| match fill {
                Some(f) if (x - f).abs() < tol32 => mask(minbits),
                _ => u64::from(((x * scale - min * scale).round() as i64 as i32) as u32),
            })
            .collect();
        (minbits, u64::from(min.to_bits()), codes)
    } else {
        let fs: Vec<f64> = values.iter().map(|&v| f64::from_bits(v)).collect();
        let fill = p.fill.map(f64::from_bits);
        let tol = 10f64.powf(-f64::from(d));
        let is_fill = |x: f64| fill.is_some_and(|f| (x - f).abs() < tol);
        let kept = fs.iter().copied().filter(|&x| !is_fill(x));
        let min = kept
            .clone()
            .fold(None, |m: Option<f64>, x| {
                Some(m.map_or(x, |m| if x < m { x } else { m }))
            })
            .unwrap_or(0.0);
        let max = kept
            .fold(None, |m: Option<f64>, x| {
                Some(m.map_or(x, |m| if x > m { x } else { m }))
            })
            .unwrap_or(0.0);
        let scale = 10f64.powf(f64::from(d));
        if (max * scale - min * scale).round() > 2f64.powf(63.0) {
            return (64, 0, Vec::new());
        }
        let span = ((max * scale - min * scale).round() as i64 as u64).wrapping_add(1);
        let minbits = log2_ceil(if fill.is_some() {
            span.wrapping_add(1)
        } else {
            span
        });
        if minbits == 64 {
            return (64, min.to_bits(), Vec::new());
        }
        let codes = fs
            .iter()
            .map(|&x| match fill {
                Some(f) if (x - f).abs() < tol => mask(minbits),
                _ => (x * scale - min * scale).round() as i64 as u64,
            })
            .collect();
        (minbits, min.to_bits(), codes)
    }
}

/// The 20 `cd_values` libhdf5's set-local stores, for a writer.
/// `fill` holds the fill value's bytes little-endian (ignored when `None`).
pub fn cd_values(
    float_digits: Option<i32>,
    int_minbits: u32,
    elements: u32,
    size: u32,
    signed: bool,
    big_endian: bool,
    fill: Option<u64>,
) -> Vec<u32> {
    let mut cd = vec![0u32; CD_LEN];
    match float_digits {
        Some(d) => {
            cd[0] = 0;
            cd[1] = d as u32;
            cd[3] = 1;
        }
        None => {
            cd[0] = 2;
            cd[1] = int_minbits;
            cd[3] = 0;
        }
    }
    cd[2] = elements;
    cd[4] = size;
    cd[5] = u32::from(signed);
    cd[6] = u32::from(big_endian);
    if let Some(f) = fill {
        cd[7] = 1;
        cd[8] = f as u32;
        cd[9] = (f >> 32) as u32;
    }
    cd
}

#[cfg(test)]
mod tests;
