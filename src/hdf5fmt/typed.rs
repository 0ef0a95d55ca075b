//! Typed reads of datasets and attributes (HDF5 File Format Specification
//! IV.A.2.b/d dataspace and datatype, IV.A.2.m attribute): whole, into a
//! caller's buffer, or through a strided [`Slice`]; numbers converted as
//! [`crate::convert`] describes, strings as [`String`], compound
//! fields by name.
//!
//! Memory stays bounded: a read converts at most [`SLAB_BYTES`] of stored
//! bytes at a time (aligned to chunk rows for chunked data). A strided read
//! of chunked data decodes each chunk holding a selected element once and
//! gathers from it; of other layouts it gathers from unit-stride boxes of at
//! most [`GATHER_BYTES`], splitting a sparser selection dimension by
//! dimension.

#![deny(missing_docs)]

use crate::attribute::Attribute;
use crate::convert::{Context, Elements, H5Read};
use crate::cursor::bounded;
use crate::dataset::Dataset;
use crate::datatype::Datatype;
use crate::error::{Error, Result};
use crate::file::File;
use crate::limits;
use crate::messages::dataspace::SpaceKind;
use crate::selection::Selection;
use crate::slice::{Hyperslab, Slice};
use crate::write::{AttrData, AttrValue};

/// Stored bytes converted per step of a typed read.
pub const SLAB_BYTES: u64 = 16 << 20;
/// Largest unit-stride box a strided read reads at once to gather from.
pub const GATHER_BYTES: u64 = 16 << 20;

fn overflow(what: &'static str) -> Error {
    Error::Overflow {
        structure: "typed read",
        offset: 0,
        what,
    }
}

fn product(v: &[u64]) -> Option<u64> {
    v.iter().try_fold(1u64, |a, &b| a.checked_mul(b))
}

/// Room for `n` values of `T`, refused past [`limits::MAX_DECODED`] bytes.
fn alloc<T: Clone + Default>(n: u64, at: u64) -> Result<Vec<T>> {
    let bytes = n
        .checked_mul(std::mem::size_of::<T>() as u64)
        .ok_or_else(|| overflow("output size"))?;
    bounded(bytes, limits::MAX_DECODED, "typed read", at, "output bytes")?;
    let n = usize::try_from(n).map_err(|_| overflow("output length"))?;
    let mut v = vec![T::default(); n];
    crate::alloc::advise_huge_pages(&mut v);
    Ok(v)
}

impl Dataset {
    /// Every element converted to `T` (C order).
    ///
    /// ```
    /// # use purehdf::{File, FileWriter, DatasetSpec};
    /// # let mut w = FileWriter::in_memory();
    /// # w.write_dataset(w.root(), "x", DatasetSpec::of::<i16>(&[2, 3]), &[1i16, 2, 3, 4, 5, 6]).unwrap();
    /// # let file = File::from_bytes(w.finish().unwrap()).unwrap();
    /// let ds = file.root()?.dataset("x")?;
    /// assert_eq!(ds.read::<f64>()?, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    /// assert!(ds.read::<String>().is_err()); // numbers are not text
    /// # Ok::<(), purehdf::Error>(())
    /// ```
    pub fn read<T: H5Read>(&self) -> Result<Vec<T>> {
        self.read_slice(&Slice::all())
    }

    /// Every element converted into `out`, whose length must equal
    /// [`Dataset::num_elements`].
    pub fn read_into<T: H5Read>(&self, out: &mut [T]) -> Result<()> {
        self.read_slice_into(&Slice::all(), out)
    }

    /// The only element of a scalar (or one-element) dataset.
    pub fn read_scalar<T: H5Read>(&self) -> Result<T> {
        let v: Vec<T> = self.read()?;
        match <[T; 1]>::try_from(v) {
            Ok([x]) => Ok(x),
            Err(v) => Err(Error::InvalidArgument(format!(
                "{}: {} elements, not one",
                self.path(),
                v.len()
            ))),
        }
    }

    /// The elements `slice` selects (C order over the selection).
    ///
    /// ```
    /// # use purehdf::{s, File, FileWriter, DatasetSpec};
    /// # let mut w = FileWriter::in_memory();
    /// # let v: Vec<u16> = (0..20).collect();
    /// # w.write_dataset(w.root(), "x", DatasetSpec::of::<u16>(&[4, 5]), &v).unwrap();
    /// # let file = File::from_bytes(w.finish().unwrap()).unwrap();
    /// let ds = file.root()?.dataset("x")?;
    /// // rows 1 and 3, every second column
    /// assert_eq!(ds.read_slice::<u8>(&s![1..4; 2, ..; 2])?, vec![5, 7, 9, 15, 17, 19]);
    /// # Ok::<(), purehdf::Error>(())
    /// ```
    pub fn read_slice<T: H5Read>(&self, slice: &Slice) -> Result<Vec<T>> {
        let h = self.hyperslab(slice)?;
        let mut out = alloc(
            h.num_elements().ok_or_else(|| overflow("selection"))?,
            self.address(),
        )?;
        self.read_converted(&h, self.dtype(), 0, &mut out)?;
        Ok(out)
    }

    /// [`Dataset::read_slice`] into `out`, whose length must equal the
    /// number of selected elements.
    pub fn read_slice_into<T: H5Read>(&self, slice: &Slice, out: &mut [T]) -> Result<()> {
        let h = self.hyperslab(slice)?;
        self.read_converted(&h, self.dtype(), 0, out)
    }

    /// Field `name` of every element of a compound dataset, converted to `T`.
    pub fn read_field<T: H5Read>(&self, name: &str) -> Result<Vec<T>> {
        self.read_field_slice(name, &Slice::all())
    }

    /// Field `name` of the elements `slice` selects.
    pub fn read_field_slice<T: H5Read>(&self, name: &str, slice: &Slice) -> Result<Vec<T>> {
        let Datatype::Compound { members, .. } = self.dtype() else {
            return Err(Error::InvalidArgument(format!(
                "{} is not a compound dataset",
                self.path()
            )));
        };
        let m = members
            .iter()
            .find(|m| m.name == name)
            .ok_or_else(|| Error::NotFound(format!("field {name} of {}", self.path())))?;
        let h = self.hyperslab(slice)?;
        let mut out = alloc(
            h.num_elements().ok_or_else(|| overflow("selection"))?,
            self.address(),
        )?;
        self.read_converted(&h, &m.dtype, m.offset as usize, &mut out)?;
        Ok(out)
    }

    /// The names of a compound dataset's fields (empty for other types).
    pub fn field_names(&self) -> Vec<&str> {
        match self.dtype() {
            Datatype::Compound { members, .. } => members.iter().map(|m| m.name.as_str()).collect(),
            _ => Vec::new(),
        }
    }

    /// `slice` resolved against this dataset's shape.
    pub fn hyperslab(&self, slice: &Slice) -> Result<Hyperslab> {
        slice.resolve(self.shape())
    }

    /// The stored bytes (file byte order) of the elements `h` selects, into
    /// `out` (exactly selected elements × element size): unit-stride boxes go
    /// straight to [`Dataset::read_raw`]; strided ones of chunked data are
    /// gathered from each touched chunk as it is decoded (once), those of
    /// other layouts from boxes of at most `GATHER_BYTES`.
    pub fn read_hyperslab_raw(&self, h: &Hyperslab, out: &mut [u8]) -> Result<()> {
        let esize = usize::try_from(self.dtype().size()).map_err(|_| overflow("element size"))?;
        if h.start.is_empty() {
            return self.read_raw(&Selection::All, out);
        }
        if h.num_elements() == Some(0) {
            return Ok(());
        }
        if h.is_unit_stride() {
            let sel = Selection::Hyperslab {
                start: h.start.clone(),
                count: h.count.clone(),
            };
            return self.read_raw(&sel, out);
        }
        if self.read_chunked_strided(h, out)? {
            return Ok(());
        }
        let bbox = h.bounding_box();
        let Selection::Hyperslab { count: bcount, .. } = &bbox else {
            return Err(overflow("bounding box"));
        };
        let bbytes = product(bcount)
            .and_then(|n| n.checked_mul(esize as u64))
            .ok_or_else(|| overflow("bounding box"))?;
        if bbytes <= GATHER_BYTES {
            let mut scratch = vec![0u8; bbytes as usize];
            self.read_raw(&bbox, &mut scratch)?;
            return gather(&scratch, bcount, h, esize, out);
        }
        // Too sparse to read as one box: split the first dimension that
        // selects more than one index (every one before it selects one, so
        // each piece is a contiguous run of `out`).
        let d = h.count.iter().position(|&c| c > 1).unwrap_or(0);
        let n = h.count.get(d).copied().unwrap_or(1);
        let piece = out.len() / usize::try_from(n.max(1)).map_err(|_| overflow("piece"))?;
        for (k, part) in out.chunks_mut(piece.max(1)).enumerate() {
            self.read_hyperslab_raw(&h.sub(d, k as u64, 1), part)?;
        }
        Ok(())
    }

    /// Read `h` in slabs along its first dimension, converting the member of
    /// `dtype` at byte `offset` of each stored element into `out`.
    fn read_converted<T: H5Read>(
        &self,
        h: &Hyperslab,
        dtype: &Datatype,
        offset: usize,
        out: &mut [T],
    ) -> Result<()> {
        let n = h.num_elements().ok_or_else(|| overflow("selection"))?;
        if out.len() as u64 != n {
            return Err(Error::InvalidArgument(format!(
                "{}: output holds {} elements, the selection {n}",
                self.path(),
                out.len()
            )));
        }
        if self.space_kind() == SpaceKind::Null || n == 0 {
            return Ok(());
        }
        let esize = usize::try_from(self.dtype().size()).map_err(|_| overflow("element size"))?;
        if offset == 0 && dtype.size() as usize == esize {
            // Stored bytes identical to `T`'s: read straight into `out`
            // (no slab scratch, no conversion pass).
            if let Some(bytes) = T::as_stored_bytes(dtype, out) {
                return self.read_hyperslab_raw(h, bytes);
            }
        }
        let ctx = Context {
            file: Some(self.file()),
            object: self.path(),
        };
        let rows = h.count.first().copied().unwrap_or(1);
        let row_elems = n / rows.max(1);
        let row_bytes = row_elems
            .checked_mul(esize as u64)
            .ok_or_else(|| overflow("row size"))?
            .max(1);
        let mut per = (SLAB_BYTES / row_bytes).max(1);
        if let (Some(&c0), Some(&st)) = (self.chunk_dims().and_then(|c| c.first()), h.step.first())
        {
            // Whole chunk rows per slab (a zero chunk dimension from a
            // malformed file is refused by the chunked reader, not here):
            // with a step, the selected rows one chunk row holds.
            let unit = c0.div_ceil(st.max(1));
            if unit > 0 && per > unit {
                per -= per % unit;
            }
        }
        let mut scratch = Vec::new();
        let mut r0 = 0u64;
        while r0 < rows {
            let nr = per.min(rows - r0);
            let sub = if h.start.is_empty() {
                h.clone()
            } else {
                h.sub(0, r0, nr)
            };
            let elems = usize::try_from(nr * row_elems).map_err(|_| overflow("slab"))?;
            let first = usize::try_from(r0 * row_elems).map_err(|_| overflow("slab"))?;
            scratch.resize(elems.checked_mul(esize).ok_or_else(|| overflow("slab"))?, 0);
            self.read_hyperslab_raw(&sub, &mut scratch)?;
            let dst = out
                .get_mut(first..first + elems)
                .ok_or_else(|| overflow("slab"))?;
            let src = Elements {
                bytes: &scratch,
                stride: esize,
                offset,
            };
            T::convert(&ctx, dtype, src, dst)?;
            r0 += nr;
        }
        Ok(())
    }
}

/// Copy the elements `h` selects out of `bbox`, the C-order box of shape
/// `bshape` starting at `h.start`, into `out`.
fn gather(bbox: &[u8], bshape: &[u64], h: &Hyperslab, esize: usize, out: &mut [u8]) -> Result<()> {
    let rank = bshape.len();
    let short = || overflow("gather");
    let mut bstride = vec![1u64; rank];
    for i in (0..rank.saturating_sub(1)).rev() {
        bstride[i] = bstride[i + 1] * bshape[i + 1];
    }
    let last = rank - 1;
    let (n_last, step_last) = (h.count[last], h.step[last]);
    let mut idx = vec![0u64; rank];
    let mut dst = 0usize;
    loop {
        let base: u64 = (0..last).map(|d| idx[d] * h.step[d] * bstride[d]).sum();
        for k in 0..n_last {
            let s = usize::try_from((base + k * step_last) * esize as u64).map_err(|_| short())?;
            let from = bbox.get(s..s + esize).ok_or_else(short)?;
            out.get_mut(dst..dst + esize)
                .ok_or_else(short)?
                .copy_from_slice(from);
            dst += esize;
        }
        let mut d = last;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < h.count[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

impl Attribute {
    /// Every element converted to `T` (C order): numbers from any stored
    /// numeric type (as [`crate::convert`] describes), `String` from
    /// fixed- and variable-length strings alike (the attribute resolves
    /// variable-length data through the file it was read from).
    ///
    /// ```
    /// # use purehdf::{File, FileWriter, AttrValue, CharSet};
    /// # let mut w = FileWriter::in_memory();
    /// # let root = w.root();
    /// # w.set_attr(root, "spacing", AttrValue::array(&[2.5f32, 0.75])).unwrap();
    /// # w.set_attr(root, "units", AttrValue::string("mm")).unwrap();
    /// # w.set_attr(root, "axes", AttrValue::strings(&["z", "y", "x"], CharSet::Utf8)).unwrap();
    /// # let file = File::from_bytes(w.finish().unwrap()).unwrap();
    /// let root = file.root()?;
    /// assert_eq!(root.attribute("spacing")?.read::<f64>()?, vec![2.5, 0.75]);
    /// assert_eq!(root.attribute("units")?.read_scalar::<String>()?, "mm");
    /// assert_eq!(root.attribute("axes")?.read::<String>()?, ["z", "y", "x"]);
    /// assert!(root.attribute("units")?.read::<f32>().is_err()); // text is not a number
    /// # Ok::<(), purehdf::Error>(())
    /// ```
    pub fn read<T: H5Read>(&self) -> Result<Vec<T>> {
        self.convert_with(self.file())
    }

    /// The only element of a scalar (or one-element) attribute, converted
    /// to `T` as [`Attribute::read`] does (`String` for any string kind).
    pub fn read_scalar<T: H5Read>(&self) -> Result<T> {
        one(self.read()?, &self.name)
    }

    /// Every element converted to `T`.
    #[deprecated(note = "use `Attribute::read`, which also reads variable-length strings")]
    pub fn read_vec<T: H5Read>(&self) -> Result<Vec<T>> {
        self.read()
    }

    /// A scalar string attribute, fixed or variable length (`file` holds the
    /// variable-length bytes; [`Attribute::read_scalar`] needs no file).
    pub fn read_string_in(&self, file: &File) -> Result<String> {
        one(self.convert_with(Some(file))?, &self.name)
    }

    /// Every element of a string attribute.
    #[deprecated(note = "use `Attribute::read::<String>`, which needs no file")]
    pub fn read_strings_in(&self, file: &File) -> Result<Vec<String>> {
        self.convert_with(Some(file))
    }

    /// A scalar string attribute.
    #[deprecated(note = "use `Attribute::read_scalar::<String>`")]
    pub fn read_string(&self) -> Result<String> {
        self.read_scalar()
    }

    /// The value in the form the writer takes it ([`FileWriter::set_attr`]):
    /// datatype, shape and data, variable-length strings as
    /// [`AttrData::VarStrings`], variable-length sequences of fixed-size
    /// values as [`AttrData::VarSequences`], everything else as the stored
    /// bytes ([`AttrData::Raw`]). So an attribute copies to another file as
    /// `w.set_attr(obj, &a.name, a.value()?)`. References and
    /// variable-length data nested in compounds or arrays have no such
    /// form: an [`Error::InvalidArgument`] names the type.
    ///
    /// [`FileWriter::set_attr`]: crate::FileWriter::set_attr
    /// [`AttrData::VarStrings`]: crate::write::AttrData::VarStrings
    /// [`AttrData::VarSequences`]: crate::write::AttrData::VarSequences
    /// [`AttrData::Raw`]: crate::write::AttrData::Raw
    ///
    /// ```
    /// use purehdf::{AttrValue, File, FileWriter};
    /// let mut w = FileWriter::in_memory();
    /// let root = w.root();
    /// let spacing = AttrValue::array(&[0.75f32, 0.5]);
    /// w.set_attr(root, "spacing", spacing.clone())?;
    /// w.set_attr(root, "units", AttrValue::string("mm"))?;
    /// let file = File::from_bytes(w.finish()?)?;
    /// let root = file.root()?;
    /// assert_eq!(root.attribute("spacing")?.value()?, spacing);
    /// assert_eq!(root.attribute("units")?.value()?, AttrValue::string("mm"));
    /// # Ok::<(), purehdf::Error>(())
    /// ```
    pub fn value(&self) -> Result<AttrValue> {
        let elem = usize::try_from(self.dtype.size()).map_err(|_| overflow("element size"))?;
        let n = usize::try_from(self.num_elements()).map_err(|_| overflow("elements"))?;
        let stored = self
            .data
            .get(..n.checked_mul(elem).ok_or_else(|| overflow("value size"))?)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "attribute {}: {} value bytes for {n} elements of {elem}",
                    self.name,
                    self.data.len()
                ))
            })?;
        let (dtype, data) = match &self.dtype {
            Datatype::VarString { pad, cset, .. } => (
                Datatype::VarString {
                    size: 16,
                    pad: *pad,
                    cset: *cset,
                },
                AttrData::VarStrings(self.read::<String>()?),
            ),
            Datatype::VarSequence { base, .. } if !base.has_vlen_or_ref() => {
                let file = self.file().ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "attribute {}: variable-length data needs the file",
                        self.name
                    ))
                })?;
                let seqs = stored
                    .chunks_exact(elem.max(1))
                    .map(|e| file.vlen_bytes(e))
                    .collect::<Result<Vec<_>>>()?;
                (
                    Datatype::VarSequence {
                        size: 16,
                        base: base.clone(),
                    },
                    AttrData::VarSequences(seqs),
                )
            }
            d if d.has_vlen_or_ref() => {
                let what = match d {
                    Datatype::Reference { kind, .. } => format!("{kind:?} reference"),
                    Datatype::VarSequence { base, .. } => {
                        format!("variable-length sequence of {base}")
                    }
                    d => format!("{d}"),
                };
                return Err(Error::InvalidArgument(format!(
                    "attribute {}: the {what} type has no AttrValue form (references, or \
                     variable-length data inside a compound or array)",
                    self.name
                )));
            }
            d => (d.clone(), AttrData::Raw(stored.to_vec())),
        };
        Ok(AttrValue {
            dtype,
            shape: self.space.clone(),
            data,
        })
    }

    fn convert_with<T: H5Read>(&self, file: Option<&File>) -> Result<Vec<T>> {
        let n = self.num_elements();
        let mut out = alloc(n.min(limits::MAX_ELEMENTS.saturating_add(1)), 0)?;
        if n > limits::MAX_ELEMENTS {
            return Err(Error::Limit {
                structure: "attribute",
                offset: 0,
                what: "elements",
                value: n,
                limit: limits::MAX_ELEMENTS,
            });
        }
        let ctx = Context {
            file,
            object: &self.name,
        };
        let size = usize::try_from(self.dtype.size()).map_err(|_| overflow("element size"))?;
        T::convert(
            &ctx,
            &self.dtype,
            Elements::packed(&self.data, size),
            &mut out,
        )?;
        Ok(out)
    }
}

fn one<T>(v: Vec<T>, name: &str) -> Result<T> {
    let n = v.len();
    match <[T; 1]>::try_from(v) {
        Ok([x]) => Ok(x),
        Err(_) => Err(Error::InvalidArgument(format!(
            "{name}: {n} elements, not one"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::s;
    use crate::write::{AttrValue, DatasetSpec, FileWriter};

    fn file_with(spec: DatasetSpec, data: &[i32]) -> File {
        let mut w = FileWriter::in_memory();
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        let d = w.create_dataset(w.root(), "x", spec, bytes).unwrap();
        w.set_attr(d, "n", AttrValue::scalar(7u16)).unwrap();
        w.set_attr(
            d,
            "names",
            AttrValue::strings(&["a", "bc"], crate::datatype::CharSet::Utf8),
        )
        .unwrap();
        File::from_bytes(w.finish().unwrap()).unwrap()
    }

    /// The reference answer for a strided slice of a C-order array.
    fn reference(v: &[i32], shape: &[u64], h: &Hyperslab) -> Vec<i32> {
        let mut out = Vec::new();
        let n = h.num_elements().unwrap();
        for flat in 0..n {
            let mut rem = flat;
            let mut src = 0u64;
            for d in (0..shape.len()).rev() {
                let k = rem % h.count[d];
                rem /= h.count[d];
                let i = h.start[d] + k * h.step[d];
                let stride: u64 = shape[d + 1..].iter().product();
                src += i * stride;
            }
            out.push(v[src as usize]);
        }
        out
    }

    #[test]
    fn strided_reads_match_reference_on_every_layout() {
        let shape = [7u64, 6, 5];
        let v: Vec<i32> = (0..210).map(|i| i * 3 - 100).collect();
        let specs = [
            DatasetSpec::new(Datatype::int(4, true), &shape),
            DatasetSpec::new(Datatype::int(4, true), &shape).chunked(&[3, 4, 2], vec![]),
            DatasetSpec::new(Datatype::int(4, true), &shape).compact(),
        ];
        for spec in specs {
            let f = file_with(spec, &v);
            let ds = f.root().unwrap().dataset("x").unwrap();
            assert_eq!(ds.read::<i32>().unwrap(), v);
            for sl in [
                s![1..7; 2, .., 4],
                s![.., 1..6; 3, 0..5; 2],
                s![6, 5, 4],
                s![0..7; 7],
                s![2..2],
            ] {
                let h = sl.resolve(&shape).unwrap();
                let want = reference(&v, &shape, &h);
                assert_eq!(ds.read_slice::<i32>(&sl).unwrap(), want, "{sl:?}");
                let wide: Vec<f64> = ds.read_slice(&sl).unwrap();
                assert_eq!(wide, want.iter().map(|&x| f64::from(x)).collect::<Vec<_>>());
            }
            // out-of-range conversion is a typed error
            assert!(matches!(ds.read::<u8>(), Err(Error::Conversion { .. })));
            let mut buf = vec![0i64; 3];
            assert!(ds.read_into(&mut buf).is_err());
            let a = ds.attribute("n").unwrap();
            assert_eq!(a.read_scalar::<f32>().unwrap(), 7.0);
            let names = ds.attribute("names").unwrap();
            assert_eq!(names.read::<String>().unwrap(), vec!["a", "bc"]);
            assert_eq!(names.read_string_in(&f).ok(), None); // two elements
            assert!(names.read::<f64>().is_err());
        }
    }

    #[test]
    fn attribute_values_read_back_as_written() {
        use crate::datatype::{CharSet, StringPad};
        use crate::messages::dataspace::Dataspace;
        let values = [
            ("i16", AttrValue::scalar(-7i16)),
            ("f64s", AttrValue::array(&[0.5f64, 1.5, 2.5])),
            ("bools", AttrValue::array(&[true, false])),
            ("utf8", AttrValue::string("αβ")),
            ("ascii", AttrValue::ascii("mm")),
            ("names", AttrValue::strings(&["z", "y", "x"], CharSet::Utf8)),
            (
                "fixed",
                AttrValue::fixed_string("CT", 4, StringPad::NullPad, CharSet::Ascii),
            ),
            (
                "grid",
                AttrValue::raw(
                    Datatype::int(2, false),
                    Dataspace::simple(&[2, 2]),
                    vec![1, 0, 2, 0, 3, 0, 4, 0],
                ),
            ),
            (
                "seqs",
                AttrValue {
                    dtype: Datatype::VarSequence {
                        size: 16,
                        base: Box::new(Datatype::int(1, false)),
                    },
                    shape: Dataspace::simple(&[2]),
                    data: AttrData::VarSequences(vec![vec![1, 2, 3], vec![]]),
                },
            ),
        ];
        let mut w = FileWriter::in_memory();
        let root = w.root();
        for (name, v) in &values {
            w.set_attr(root, name, v.clone()).unwrap();
        }
        let f = File::from_bytes(w.finish().unwrap()).unwrap();
        let g = f.root().unwrap();
        for (name, v) in &values {
            let a = g.attribute(name).unwrap();
            assert_eq!(&a.value().unwrap(), v, "{name}");
        }
        // every string kind reads as String without naming the file
        assert_eq!(
            g.attribute("utf8")
                .unwrap()
                .read_scalar::<String>()
                .unwrap(),
            "αβ"
        );
        assert_eq!(
            g.attribute("fixed")
                .unwrap()
                .read_scalar::<String>()
                .unwrap(),
            "CT"
        );
        assert_eq!(
            g.attribute("names").unwrap().read::<String>().unwrap(),
            ["z", "y", "x"]
        );
        assert_eq!(
            g.attribute("grid").unwrap().read::<u8>().unwrap(),
            [1, 2, 3, 4]
        );
        assert_eq!(
            g.attribute("grid").unwrap().to_string(),
            "array([[1, 2],\n       [3, 4]], dtype=uint16)"
        );
        assert_eq!(
            g.attribute("seqs").unwrap().to_string(),
            "array([array([1, 2, 3], dtype=uint8), array([], dtype=uint8)],\n      dtype=object)"
        );
        // a bare message has no file: vlen strings then need one
        let bare = Attribute::from(crate::messages::attribute::AttributeMessage {
            name: "utf8".into(),
            dtype: g.attribute("utf8").unwrap().dtype,
            space: Dataspace::scalar(),
            data: g.attribute("utf8").unwrap().data,
        });
        assert!(bare.file().is_none() && bare.read::<String>().is_err());
        assert_eq!(bare.read_string_in(&f).unwrap(), "αβ");
        assert_eq!(bare, g.attribute("utf8").unwrap());
    }

    #[test]
    fn references_have_no_attr_value_form() {
        let a = Attribute::from(crate::messages::attribute::AttributeMessage {
            name: "r".into(),
            dtype: Datatype::Reference {
                size: 8,
                kind: crate::datatype::ReferenceKind::Object,
            },
            space: crate::messages::dataspace::Dataspace::scalar(),
            data: vec![0; 8],
        });
        match a.value() {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("Object reference type"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(a.to_string(), "<HDF5 object reference (null)>");
    }

    #[test]
    fn sparse_selection_splits_instead_of_reading_the_box() {
        // 2 x 1.5M u64: the bounding box of the step-700k selection over both
        // rows (22 MB) exceeds GATHER_BYTES, one row's (11 MB) does not.
        let n = 1_500_000u64;
        let mut w = FileWriter::in_memory();
        let data: Vec<u8> = (0..2 * n).flat_map(|i| i.to_le_bytes()).collect();
        w.create_dataset(
            w.root(),
            "x",
            DatasetSpec::new(Datatype::int(8, false), &[2, n]).chunked(&[1, 1 << 18], vec![]),
            data,
        )
        .unwrap();
        let f = File::from_bytes(w.finish().unwrap()).unwrap();
        let ds = f.root().unwrap().dataset("x").unwrap();
        let h = s![.., ..; 700_000].resolve(ds.shape()).unwrap();
        assert!(product(&[2, 1_400_001, 8]).unwrap() > GATHER_BYTES);
        let got = ds.read_slice::<u64>(&s![.., ..; 700_000]).unwrap();
        assert_eq!(h.count, vec![2, 3]);
        assert_eq!(
            got,
            vec![0, 700_000, 1_400_000, n, n + 700_000, n + 1_400_000]
        );
    }
}
