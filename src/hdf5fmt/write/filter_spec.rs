//! Filter constructors for the writer (HDF5 File Format Specification
//! IV.A.2.l, "Data Storage - Filter Pipeline Message"; the client data of
//! each filter as h5py and hdf5plugin pass it, `docs/filters-format.md`):
//! `Filter::deflate(6)`, `Filter::shuffle()`, `Filter::blosc2(codec, level,
//! shuffle)` and the others, instead of raw `cd_values`. The writer completes
//! the parameters that depend on the datatype and chunk shape when it stores
//! the pipeline (its "set local" step), so one value serves every dataset.

#![deny(missing_docs)]

use crate::error::{Error, Result};
use purehdf_filters::{ids, FilterSpec};

/// One stage of a filter pipeline, as the writer is asked to apply it: built
/// with the constructors below ([`Filter::deflate`], [`Filter::blosc2`], ...)
/// or from a stored stage ([`Filter::from_spec`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter(FilterSpec);

impl Filter {
    /// A stage exactly as stored: filter id, flags, client data and name.
    pub fn from_spec(spec: FilterSpec) -> Filter {
        Filter(spec)
    }

    /// The stored form of this stage.
    pub fn spec(&self) -> &FilterSpec {
        &self.0
    }

    /// The registered filter id (1 = deflate, 32026 = Blosc2, ...).
    pub fn id(&self) -> u32 {
        self.0.id
    }

    /// The client data values the stage stores.
    pub fn cd_values(&self) -> &[u32] {
        &self.0.cd_values
    }
}

impl From<Filter> for FilterSpec {
    fn from(f: Filter) -> FilterSpec {
        f.0
    }
}

impl From<FilterSpec> for Filter {
    fn from(spec: FilterSpec) -> Filter {
        Filter(spec)
    }
}

/// The compressor inside a Blosc2 chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Blosc2Codec {
    /// BloscLZ (Blosc's own LZ77).
    BloscLz,
    /// LZ4.
    Lz4,
    /// LZ4 high compression.
    Lz4Hc,
    /// zlib (deflate).
    Zlib,
    /// Zstandard.
    Zstd,
}

impl Blosc2Codec {
    /// The compressor code stored in the filter's client data.
    pub fn code(self) -> u32 {
        match self {
            Blosc2Codec::BloscLz => 0,
            Blosc2Codec::Lz4 => 1,
            Blosc2Codec::Lz4Hc => 2,
            Blosc2Codec::Zlib => 4,
            Blosc2Codec::Zstd => 5,
        }
    }
}

/// The byte rearrangement Blosc2 applies before compressing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Blosc2Shuffle {
    /// No rearrangement.
    None,
    /// Byte shuffle.
    Byte,
    /// Bit shuffle.
    Bit,
}

impl Blosc2Shuffle {
    /// The shuffle code stored in the filter's client data.
    pub fn code(self) -> u32 {
        match self {
            Blosc2Shuffle::None => 0,
            Blosc2Shuffle::Byte => 1,
            Blosc2Shuffle::Bit => 2,
        }
    }
}

/// A stage marked optional (pipeline flags bit 0), as h5py adds its filters:
/// a chunk the stage cannot encode is stored without it.
fn optional(id: u32, cd_values: Vec<u32>) -> Filter {
    Filter(FilterSpec {
        id,
        flags: 1,
        cd_values,
        name: None,
    })
}

/// The h5py-style check of a level argument.
fn level_in<T: PartialOrd + std::fmt::Display>(filter: &str, level: T, lo: T, hi: T) -> Result<()> {
    if level < lo || level > hi {
        return Err(Error::InvalidArgument(format!(
            "{filter} level {level} is outside {lo}..={hi}"
        )));
    }
    Ok(())
}

impl Filter {
    /// Deflate (gzip) at `level` 0–9 (h5py's `compression="gzip",
    /// compression_opts=level`); another level is an
    /// [`Error::InvalidArgument`], as h5py raises `ValueError`.
    ///
    /// ```
    /// use purehdf::Filter;
    /// assert_eq!(Filter::deflate(6)?.to_string(), "deflate(6)");
    /// assert!(Filter::deflate(10).is_err());
    /// # Ok::<(), purehdf::Error>(())
    /// ```
    pub fn deflate(level: u32) -> Result<Filter> {
        level_in("deflate", level, 0, 9)?;
        Ok(optional(ids::DEFLATE, vec![level]))
    }

    /// HDF5's byte shuffle (the element size is filled in by the writer).
    pub fn shuffle() -> Filter {
        optional(ids::SHUFFLE, Vec::new())
    }

    /// Fletcher-32 checksum of each chunk (mandatory, as libhdf5 sets it).
    pub fn fletcher32() -> Filter {
        Filter(FilterSpec {
            id: ids::FLETCHER32,
            flags: 0,
            cd_values: Vec::new(),
            name: None,
        })
    }

    /// LZ4 (hdf5plugin's `LZ4()`, default block size).
    pub fn lz4() -> Filter {
        optional(ids::LZ4, vec![0])
    }

    /// Zstandard at `level` −131072…22 (hdf5plugin's `Zstd(clevel)`);
    /// another level is an [`Error::InvalidArgument`].
    pub fn zstd(level: i32) -> Result<Filter> {
        level_in("zstd", level, -131_072, 22)?;
        Ok(optional(ids::ZSTD, vec![level as u32]))
    }

    /// Blosc2 with `codec` at `level` 0–9 after `shuffle` (hdf5plugin's
    /// `Blosc2(cname, clevel, filters)`); another level is an
    /// [`Error::InvalidArgument`].
    pub fn blosc2(codec: Blosc2Codec, level: u32, shuffle: Blosc2Shuffle) -> Result<Filter> {
        level_in("blosc2", level, 0, 9)?;
        Ok(optional(
            ids::BLOSC2,
            vec![0, 0, 0, 0, level, shuffle.code(), codec.code()],
        ))
    }

    /// Bitshuffle, followed by LZ4 when `lz4` (hdf5plugin's `Bitshuffle()`).
    pub fn bitshuffle(lz4: bool) -> Filter {
        optional(ids::BITSHUFFLE, vec![0, if lz4 { 2 } else { 0 }])
    }

    /// bzip2 at `level` 1–9 (hdf5plugin's `BZip2(blocksize)`); another level
    /// is an [`Error::InvalidArgument`].
    pub fn bzip2(level: u32) -> Result<Filter> {
        level_in("bzip2", level, 1, 9)?;
        Ok(optional(ids::BZIP2, vec![level]))
    }

    /// LZF (h5py's `compression="lzf"`).
    pub fn lzf() -> Filter {
        optional(ids::LZF, Vec::new())
    }

    /// Whether the stage is optional (pipeline flags bit 0): a chunk it
    /// cannot encode is stored without it.
    pub fn is_optional(&self) -> bool {
        self.0.flags & 1 != 0
    }
}

/// Blosc's compressor names by code (Blosc1 and Blosc2 share them).
fn blosc_codec(code: u32) -> Option<&'static str> {
    Some(match code {
        0 => "blosclz",
        1 => "lz4",
        2 => "lz4hc",
        3 => "snappy",
        4 => "zlib",
        5 => "zstd",
        _ => return None,
    })
}

/// A readable description of one stored (or to-be-stored) pipeline stage,
/// in the spelling of its constructor: `deflate(4)`, `shuffle`,
/// `fletcher32`, `blosc2(zstd, 5, bitshuffle)`, `bitshuffle(lz4)`,
/// `zstd(3)`, `lz4`, `lzf`, `bzip2(9)`, `szip(nn, 8)`, ...; a filter this
/// crate does not describe reads `filter <id> [<client data>]`. Client data
/// the writer fills in (element sizes, chunk sizes, versions) is left out.
///
/// ```
/// use purehdf::low_level::write::filter_spec::describe;
/// use purehdf::FilterSpec;
/// let sz = FilterSpec { id: 32017, flags: 1, cd_values: vec![1, 2, 3], name: None };
/// assert_eq!(describe(&sz), "filter 32017 [1, 2, 3]");
/// ```
pub fn describe(spec: &FilterSpec) -> String {
    let cd = spec.cd_values.as_slice();
    let at = |i: usize| cd.get(i).copied();
    let with_level = |name: &str, level: Option<String>| match level {
        Some(l) => format!("{name}({l})"),
        None => name.to_string(),
    };
    match spec.id {
        ids::DEFLATE => with_level("deflate", at(0).map(|l| l.to_string())),
        ids::SHUFFLE => "shuffle".to_string(),
        ids::FLETCHER32 => "fletcher32".to_string(),
        ids::SZIP => match (at(0), at(1)) {
            // H5_SZIP_NN_OPTION_MASK = 32, else entropy coding
            (Some(mask), Some(ppb)) => {
                let coding = if mask & 32 != 0 { "nn" } else { "ec" };
                format!("szip({coding}, {ppb})")
            }
            _ => "szip".to_string(),
        },
        ids::NBIT => "nbit".to_string(),
        ids::SCALEOFFSET => match (at(0), at(1)) {
            // H5Z_SO_FLOAT_DSCALE = 0, H5Z_SO_FLOAT_ESCALE = 1, H5Z_SO_INT = 2
            (Some(2), Some(f)) => format!("scaleoffset(int, {f})"),
            (Some(0 | 1), Some(f)) => format!("scaleoffset(float, {f})"),
            _ => "scaleoffset".to_string(),
        },
        ids::BZIP2 => with_level("bzip2", at(0).map(|l| l.to_string())),
        ids::ZSTD => with_level("zstd", at(0).map(|l| (l as i32).to_string())),
        ids::LZF => "lzf".to_string(),
        ids::LZ4 => match at(0) {
            Some(b) if b != 0 => format!("lz4(block {b})"),
            _ => "lz4".to_string(),
        },
        ids::BITSHUFFLE => {
            // [block, compression, level] as given, or
            // [major, minor, element size, block, compression, level] as stored
            let user = if cd.len() <= 3 { cd } else { &cd[3..] };
            match (user.get(1).copied(), user.get(2).copied()) {
                (Some(2), _) => "bitshuffle(lz4)".to_string(),
                (Some(3), Some(l)) => format!("bitshuffle(zstd, {})", l as i32),
                (Some(3), None) => "bitshuffle(zstd)".to_string(),
                _ => "bitshuffle".to_string(),
            }
        }
        ids::BLOSC | ids::BLOSC2 => {
            let name = if spec.id == ids::BLOSC {
                "blosc"
            } else {
                "blosc2"
            };
            let level = at(4).unwrap_or(5);
            let shuffle = match at(5).unwrap_or(1) {
                0 => "noshuffle".to_string(),
                1 => "shuffle".to_string(),
                2 => "bitshuffle".to_string(),
                s => format!("shuffle {s}"),
            };
            let codec = at(6).unwrap_or(0);
            let codec = blosc_codec(codec).map_or_else(|| format!("codec {codec}"), String::from);
            format!("{name}({codec}, {level}, {shuffle})")
        }
        id => format!("filter {id} {cd:?}"),
    }
}

impl std::fmt::Display for Filter {
    /// The stage as [`describe`] spells it (`deflate(4)`, `blosc2(zstd, 5,
    /// bitshuffle)`, ...).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&describe(&self.0))
    }
}

impl crate::dataset::Dataset {
    /// The stored filter pipeline, in the order the writer applied it, one
    /// [`Filter`] per stage (h5py's `compression`, `shuffle`, `fletcher32`
    /// and `_filters` together); each displays as its constructor reads.
    ///
    /// ```
    /// use purehdf::{DatasetSpec, File, FileWriter, Filter};
    /// let mut w = FileWriter::in_memory();
    /// let spec = DatasetSpec::of::<u16>(&[8]).chunked(&[4], vec![Filter::shuffle(), Filter::deflate(4)?]);
    /// w.write_dataset(w.root(), "x", spec, &[1u16; 8])?;
    /// let file = File::from_bytes(w.finish()?)?;
    /// let names: Vec<String> = file.root()?.dataset("x")?.filter_pipeline().iter().map(|f| f.to_string()).collect();
    /// assert_eq!(names, ["shuffle", "deflate(4)"]);
    /// # Ok::<(), purehdf::Error>(())
    /// ```
    pub fn filter_pipeline(&self) -> Vec<Filter> {
        self.filters().iter().cloned().map(Filter).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::Datatype;
    use crate::write::set_local::set_local;

    fn spec(id: u32, cd: &[u32]) -> FilterSpec {
        FilterSpec {
            id,
            flags: 1,
            cd_values: cd.to_vec(),
            name: None,
        }
    }

    #[test]
    fn constructors_give_the_plugin_client_data() {
        let b = Filter::blosc2(Blosc2Codec::Zstd, 3, Blosc2Shuffle::Byte).unwrap();
        assert_eq!((b.id(), b.cd_values()), (32026, &[0, 0, 0, 0, 3, 1, 5][..]));
        assert_eq!(Filter::deflate(9).unwrap().cd_values(), &[9]);
        assert_eq!(Filter::zstd(-5).unwrap().cd_values(), &[(-5i32) as u32]);
        assert_eq!(Filter::shuffle().id(), 2);
        assert_eq!(Filter::fletcher32().spec().flags, 0);
        assert!(!Filter::fletcher32().is_optional() && Filter::lzf().is_optional());
        assert_eq!(Filter::lz4().cd_values(), &[0]);
    }

    #[test]
    fn levels_are_checked_like_h5py() {
        for bad in [
            Filter::deflate(10),
            Filter::zstd(23),
            Filter::zstd(-131_073),
            Filter::blosc2(Blosc2Codec::Lz4, 10, Blosc2Shuffle::None),
            Filter::bzip2(0),
            Filter::bzip2(10),
        ] {
            match bad {
                Err(Error::InvalidArgument(msg)) => assert!(msg.contains("level"), "{msg}"),
                other => panic!("{other:?}"),
            }
        }
        for ok in [
            Filter::deflate(0),
            Filter::zstd(22),
            Filter::zstd(-131_072),
            Filter::blosc2(Blosc2Codec::Lz4, 0, Blosc2Shuffle::None),
            Filter::bzip2(1),
            Filter::bzip2(9),
        ] {
            assert!(ok.is_ok());
        }
    }

    #[test]
    fn stages_describe_as_their_constructors_read() {
        let shown = |f: Filter| f.to_string();
        let bs2 = Filter::blosc2(Blosc2Codec::Zstd, 5, Blosc2Shuffle::Bit).unwrap();
        assert_eq!(shown(bs2.clone()), "blosc2(zstd, 5, bitshuffle)");
        assert_eq!(shown(Filter::deflate(4).unwrap()), "deflate(4)");
        assert_eq!(shown(Filter::shuffle()), "shuffle");
        assert_eq!(shown(Filter::fletcher32()), "fletcher32");
        assert_eq!(shown(Filter::bitshuffle(true)), "bitshuffle(lz4)");
        assert_eq!(shown(Filter::bitshuffle(false)), "bitshuffle");
        assert_eq!(shown(Filter::zstd(3).unwrap()), "zstd(3)");
        assert_eq!(shown(Filter::zstd(-7).unwrap()), "zstd(-7)");
        assert_eq!(shown(Filter::lz4()), "lz4");
        assert_eq!(shown(Filter::lzf()), "lzf");
        assert_eq!(shown(Filter::bzip2(9).unwrap()), "bzip2(9)");
        // As stored, after the writer's set-local step: the same text.
        let i16t = Datatype::int(2, true);
        for f in [bs2, Filter::bitshuffle(true), Filter::shuffle()] {
            let stored = Filter::from(set_local(f.spec(), &i16t, &[16, 16]));
            assert_ne!(stored.cd_values(), f.cd_values());
            assert_eq!(stored.to_string(), f.to_string());
        }
        // Stored stages the writer has no constructor for.
        assert_eq!(describe(&spec(4, &[169, 8, 16, 32])), "szip(nn, 8)");
        assert_eq!(describe(&spec(4, &[141, 16])), "szip(ec, 16)");
        assert_eq!(describe(&spec(32017, &[1, 2, 3])), "filter 32017 [1, 2, 3]");
        assert_eq!(
            describe(&spec(32001, &[2, 2, 4, 4000, 5, 1, 1])),
            "blosc(lz4, 5, shuffle)"
        );
        assert_eq!(
            describe(&spec(32008, &[0, 4, 2, 0, 3, 5])),
            "bitshuffle(zstd, 5)"
        );
        assert_eq!(describe(&spec(6, &[2, 0, 0])), "scaleoffset(int, 0)");
        assert_eq!(describe(&spec(5, &[8, 0, 2])), "nbit");
        assert_eq!(
            describe(&spec(32026, &[0, 0, 0, 0, 3, 0, 9])),
            "blosc2(codec 9, 3, noshuffle)"
        );
        assert_eq!(describe(&spec(1, &[])), "deflate");
    }
}
