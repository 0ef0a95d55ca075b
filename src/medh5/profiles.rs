//! Codec profiles and the exact filter pipelines they store (see
//! `docs/medh5-format.md` §6.1), plus the contiguous threshold (§6.2) and the
//! pipeline description strings `medh5 info`/`tree` print.

use crate::error::{Error, Result};
use purehdf_filters::{ids, FilterSpec};

/// Datasets smaller than this many raw bytes are stored contiguous, unfiltered.
pub const COMPRESS_MIN_BYTES: u64 = 65_536;
/// Datasets at least this large are "bulk" (W902 wants them chunked and filtered).
pub const BULK_MIN_BYTES: u64 = 1_048_576;
/// Pipeline flags the reference stores: bit 0 = optional.
pub const OPTIONAL: u16 = 1;

/// A named codec profile (§6.1): which codec chunked datasets get, per
/// [`Role`] ([`codec`](Self::codec)). The name is not recorded in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Profile {
    /// Fastest decode for training loops: Blosc2 lz4, clevel 1, byte shuffle,
    /// for images and labels alike.
    Training,
    /// The default: Blosc2 zstd clevel 3, byte shuffle for images and
    /// bitshuffle for labels.
    #[default]
    Balanced,
    /// Smallest files: Blosc2 zstd clevel 9 with bitshuffle for everything.
    Archive,
    /// Readable by any HDF5 build without plugins: HDF5 shuffle then deflate
    /// level 4.
    Portable,
}

/// What a dataset holds, which picks the codec inside a profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// `images/…` and any dataset outside `annotations/`, `transforms/`, `index/`.
    Image,
    /// `annotations/…`, `transforms/…`, `index/…`.
    Label,
}

/// Blosc2 compressor codes as stored in `cd_values[6]` (the discriminant is
/// the stored code). The profiles use only [`Lz4`](Self::Lz4) and
/// [`Zstd`](Self::Zstd); the others can appear in files from other writers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Blosc2Compressor {
    /// Blosc's own LZ77 codec (code 0).
    BloscLz = 0,
    /// LZ4 (code 1).
    Lz4 = 1,
    /// LZ4 high-compression mode (code 2).
    Lz4Hc = 2,
    /// zlib/deflate (code 4).
    Zlib = 4,
    /// Zstandard (code 5).
    Zstd = 5,
}

impl Blosc2Compressor {
    /// The C-Blosc2 compressor name (`blosclz`, `lz4`, `lz4hc`, `zlib`,
    /// `zstd`), as used in pipeline descriptions.
    pub fn name(self) -> &'static str {
        match self {
            Blosc2Compressor::BloscLz => "blosclz",
            Blosc2Compressor::Lz4 => "lz4",
            Blosc2Compressor::Lz4Hc => "lz4hc",
            Blosc2Compressor::Zlib => "zlib",
            Blosc2Compressor::Zstd => "zstd",
        }
    }
    fn from_code(code: u32) -> Option<Self> {
        Some(match code {
            0 => Blosc2Compressor::BloscLz,
            1 => Blosc2Compressor::Lz4,
            2 => Blosc2Compressor::Lz4Hc,
            4 => Blosc2Compressor::Zlib,
            5 => Blosc2Compressor::Zstd,
            _ => return None,
        })
    }
}

/// Blosc2 pre-filter, `cd_values[5]` (the discriminant is the stored value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shuffle {
    /// No pre-filter (`noshuffle`).
    None = 0,
    /// Byte shuffle: byte `i` of every element grouped together (`shuffle`).
    Byte = 1,
    /// Bit shuffle: bit planes grouped together (`bitshuffle`); what
    /// `balanced` uses for labels and `archive` for everything.
    Bit = 2,
}

/// One codec setting: what a profile applies to a chunked dataset.
/// [`pipeline`](Self::pipeline) gives the exact stored filters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Codec {
    /// The single Blosc2 filter (id 32026, optional).
    Blosc2 {
        /// Compressor inside Blosc2.
        compressor: Blosc2Compressor,
        /// Compression level 0–9 (`cd_values[4]`).
        clevel: u8,
        /// Pre-filter applied before compressing.
        shuffle: Shuffle,
    },
    /// HDF5 shuffle then deflate at `level`.
    GzipShuffle {
        /// Deflate level 0–9 (the deflate filter's only `cd_value`).
        level: u8,
    },
}

impl Profile {
    /// All profiles.
    pub const ALL: [Profile; 4] = [
        Profile::Training,
        Profile::Balanced,
        Profile::Archive,
        Profile::Portable,
    ];

    /// The profile's name on the command line (`training`, `balanced`,
    /// `archive`, `portable`).
    pub fn name(self) -> &'static str {
        match self {
            Profile::Training => "training",
            Profile::Balanced => "balanced",
            Profile::Archive => "archive",
            Profile::Portable => "portable",
        }
    }

    /// The profile named `name` (`None` = `balanced`).
    ///
    /// # Errors
    ///
    /// An invalid-input error for a name that is not one of [`Profile::ALL`].
    pub fn from_name(name: Option<&str>) -> Result<Self> {
        match name {
            None => Ok(Profile::Balanced),
            Some(n) => Profile::ALL
                .into_iter()
                .find(|p| p.name() == n)
                .ok_or_else(|| Error::invalid(format!("unknown codec profile {n:?}"))),
        }
    }

    /// The codec this profile uses for `role` (§6.1 table).
    pub fn codec(self, role: Role) -> Codec {
        use Blosc2Compressor::{Lz4, Zstd};
        let b = |compressor, clevel, shuffle| Codec::Blosc2 {
            compressor,
            clevel,
            shuffle,
        };
        match (self, role) {
            (Profile::Training, _) => b(Lz4, 1, Shuffle::Byte),
            (Profile::Balanced, Role::Image) => b(Zstd, 3, Shuffle::Byte),
            (Profile::Balanced, Role::Label) => b(Zstd, 3, Shuffle::Bit),
            (Profile::Archive, _) => b(Zstd, 9, Shuffle::Bit),
            (Profile::Portable, _) => Codec::GzipShuffle { level: 4 },
        }
    }
}

impl Role {
    /// The role of the dataset at sample-relative `path`.
    pub fn for_path(path: &str) -> Role {
        let top = path.trim_start_matches('/').split('/').next().unwrap_or("");
        match top {
            "annotations" | "transforms" | "index" => Role::Label,
            _ => Role::Image,
        }
    }
}

impl Codec {
    /// The filter pipeline stored for a chunked dataset with `element_size`-byte
    /// elements and chunk `dims`, as HDF5 reports it after set-local (§6.1).
    /// Blosc2 `cd_values` carry rank and dims only for ranks 2–16.
    ///
    /// # Errors
    ///
    /// An invalid-input error, for Blosc2 only, when the chunk's byte size
    /// or one of its extents does not fit in a `u32`.
    pub fn pipeline(self, element_size: u32, chunk_dims: &[u64]) -> Result<Vec<FilterSpec>> {
        match self {
            Codec::Blosc2 {
                compressor,
                clevel,
                shuffle,
            } => {
                let chunk_bytes = chunk_dims
                    .iter()
                    .try_fold(u64::from(element_size), |acc, &d| acc.checked_mul(d))
                    .and_then(|b| u32::try_from(b).ok())
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "Blosc2 chunk {chunk_dims:?} x {element_size} B exceeds 4 GiB"
                        ))
                    })?;
                let mut cd = vec![
                    1,
                    0,
                    element_size,
                    chunk_bytes,
                    u32::from(clevel),
                    shuffle as u32,
                    compressor as u32,
                ];
                if (2..=16).contains(&chunk_dims.len()) {
                    cd.push(chunk_dims.len() as u32);
                    for &d in chunk_dims {
                        cd.push(u32::try_from(d).map_err(|_| {
                            Error::invalid(format!("chunk extent {d} exceeds u32"))
                        })?);
                    }
                }
                Ok(vec![FilterSpec {
                    id: ids::BLOSC2,
                    flags: OPTIONAL,
                    cd_values: cd,
                    name: Some("blosc2".to_string()),
                }])
            }
            Codec::GzipShuffle { level } => Ok(vec![
                FilterSpec {
                    id: ids::SHUFFLE,
                    flags: OPTIONAL,
                    cd_values: vec![element_size],
                    name: Some("shuffle".to_string()),
                },
                FilterSpec {
                    id: ids::DEFLATE,
                    flags: OPTIONAL,
                    cd_values: vec![u32::from(level)],
                    name: Some("deflate".to_string()),
                },
            ]),
        }
    }

    /// The codec's description (`blosc2:zstd:3+shuffle`, `gzip:4+shuffle`).
    pub fn describe(self) -> String {
        match self {
            Codec::Blosc2 {
                compressor,
                clevel,
                shuffle,
            } => format!(
                "blosc2:{}:{clevel}+{}",
                compressor.name(),
                shuffle_name(shuffle)
            ),
            Codec::GzipShuffle { level } => format!("gzip:{level}+shuffle"),
        }
    }
}

fn shuffle_name(s: Shuffle) -> &'static str {
    match s {
        Shuffle::None => "noshuffle",
        Shuffle::Byte => "shuffle",
        Shuffle::Bit => "bitshuffle",
    }
}

/// Whether a dataset of `shape` with `element_size`-byte elements is stored
/// contiguous and unfiltered (§6.2): raw size below 64 KiB, or a zero extent.
pub fn is_contiguous(shape: &[u64], element_size: u64) -> bool {
    if shape.contains(&0) {
        return true;
    }
    match shape
        .iter()
        .try_fold(element_size, |acc, &d| acc.checked_mul(d))
    {
        Some(bytes) => bytes < COMPRESS_MIN_BYTES,
        None => false,
    }
}

/// Whether a dataset trips W902 (§6.2): outside `meta` and `index/`, raw size
/// ≥ 1 MiB (vlen strings count 8 bytes per element) and stored unchunked or
/// unfiltered; or a stacked annotation `data` whose first chunk extent is not 1.
pub fn is_w902(
    path: &str,
    shape: &[u64],
    element_size: u64,
    chunks: Option<&[u64]>,
    filtered: bool,
    stacked: bool,
) -> bool {
    let p = path.trim_start_matches('/');
    if p == "meta" || p == "index" || p.starts_with("index/") {
        return false;
    }
    if stacked {
        if let Some(c) = chunks {
            if c.first().is_some_and(|&f| f != 1) {
                return true;
            }
        }
    }
    let bytes = shape
        .iter()
        .try_fold(element_size, |acc, &d| acc.checked_mul(d))
        .unwrap_or(u64::MAX);
    bytes >= BULK_MIN_BYTES && (chunks.is_none() || !filtered)
}

/// Describe a stored pipeline the way `medh5 info` does: `contiguous` for no
/// layout filters, `blosc2:<cname>:<clevel>+<shuffle>`, `gzip:<level>[+shuffle]`,
/// `zstd:<level>`, `lzf`, `szip`, else `filter:<id>`; stages joined by `+`.
pub fn describe_pipeline(filters: &[FilterSpec]) -> String {
    if filters.is_empty() {
        return "contiguous".to_string();
    }
    let has_shuffle = filters.iter().any(|f| f.id == ids::SHUFFLE);
    let mut parts = Vec::new();
    for f in filters {
        let cd = &f.cd_values;
        match f.id {
            ids::SHUFFLE => {}
            ids::BLOSC2 => {
                let clevel = cd.get(4).copied().unwrap_or(5);
                let shuffle = match cd.get(5).copied().unwrap_or(1) {
                    0 => Shuffle::None,
                    2 => Shuffle::Bit,
                    _ => Shuffle::Byte,
                };
                let cname = cd
                    .get(6)
                    .and_then(|&c| Blosc2Compressor::from_code(c))
                    .map_or("unknown", Blosc2Compressor::name);
                parts.push(format!("blosc2:{cname}:{clevel}+{}", shuffle_name(shuffle)));
            }
            ids::DEFLATE => {
                let level = cd.first().copied().unwrap_or(0);
                if has_shuffle {
                    parts.push(format!("gzip:{level}+shuffle"));
                } else {
                    parts.push(format!("gzip:{level}"));
                }
            }
            ids::ZSTD => parts.push(format!("zstd:{}", cd.first().copied().unwrap_or(3))),
            ids::LZF => parts.push("lzf".to_string()),
            ids::SZIP => parts.push("szip".to_string()),
            id => parts.push(format!("filter:{id}")),
        }
    }
    if parts.is_empty() {
        "shuffle".to_string()
    } else {
        parts.join("+")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cd(p: Profile, role: Role, es: u32, dims: &[u64]) -> Vec<u32> {
        let f = p.codec(role).pipeline(es, dims).unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].id, f[0].flags), (32026, 1));
        f[0].cd_values.clone()
    }

    #[test]
    fn spec_examples() {
        assert_eq!(
            cd(Profile::Balanced, Role::Image, 2, &[16, 32, 32]),
            [1, 0, 2, 32768, 3, 1, 5, 3, 16, 32, 32]
        );
        assert_eq!(
            cd(Profile::Balanced, Role::Label, 1, &[16, 32, 32]),
            [1, 0, 1, 16384, 3, 2, 5, 3, 16, 32, 32]
        );
        assert_eq!(
            cd(Profile::Training, Role::Label, 1, &[16, 32, 32])[4..7],
            [1, 1, 1]
        );
        assert_eq!(
            cd(Profile::Archive, Role::Image, 2, &[16, 32, 32])[4..7],
            [9, 2, 5]
        );
        assert_eq!(
            cd(Profile::Balanced, Role::Label, 8, &[1, 8, 32, 32]),
            [1, 0, 8, 65536, 3, 2, 5, 4, 1, 8, 32, 32]
        );
        assert_eq!(
            cd(Profile::Balanced, Role::Label, 4, &[4096]),
            [1, 0, 4, 16384, 3, 2, 5]
        );
        let p = Profile::Portable
            .codec(Role::Image)
            .pipeline(2, &[16, 32, 32])
            .unwrap();
        assert_eq!(
            p.iter()
                .map(|f| (f.id, f.flags, f.cd_values.clone()))
                .collect::<Vec<_>>(),
            vec![(2, 1, vec![2]), (1, 1, vec![4])]
        );
        assert_eq!(describe_pipeline(&p), "gzip:4+shuffle");
        assert_eq!(
            describe_pipeline(
                &Profile::Archive
                    .codec(Role::Label)
                    .pipeline(1, &[8, 8])
                    .unwrap()
            ),
            "blosc2:zstd:9+bitshuffle"
        );
        assert_eq!(describe_pipeline(&[]), "contiguous");
    }

    #[test]
    fn bulk_warning() {
        assert!(is_w902("images/CT", &[64, 128, 128], 1, None, false, false));
        assert!(!is_w902(
            "images/CT",
            &[64, 128, 128],
            1,
            Some(&[64, 64, 64]),
            true,
            false
        ));
        assert!(is_w902(
            "images/CT",
            &[64, 128, 128],
            1,
            Some(&[64, 64, 64]),
            false,
            false
        ));
        assert!(!is_w902(
            "images/CT",
            &[64, 128, 127],
            1,
            None,
            false,
            false
        ));
        assert!(!is_w902(
            "index/a/occupancy",
            &[64, 128, 128],
            1,
            None,
            false,
            false
        ));
        assert!(is_w902(
            "annotations/l/data",
            &[2, 8, 8, 8],
            1,
            Some(&[2, 8, 8, 8]),
            true,
            true
        ));
        assert!(!is_w902(
            "annotations/l/data",
            &[2, 8, 8, 8],
            1,
            Some(&[1, 8, 8, 8]),
            true,
            true
        ));
    }

    #[test]
    fn too_large_chunk_is_refused() {
        assert!(Profile::Balanced
            .codec(Role::Image)
            .pipeline(8, &[1 << 20, 1 << 20])
            .is_err());
    }

    #[test]
    fn roles_and_thresholds() {
        assert_eq!(Role::for_path("images/CT"), Role::Image);
        assert_eq!(Role::for_path("x_site/data"), Role::Image);
        assert_eq!(Role::for_path("/annotations/a/data"), Role::Label);
        assert_eq!(Role::for_path("index/a/occupancy"), Role::Label);
        assert!(is_contiguous(&[8, 16, 16], 2));
        assert!(is_contiguous(&[0, 1 << 40], 8));
        assert!(!is_contiguous(&[16, 64, 64], 1));
        assert!(is_contiguous(&[16, 64, 63], 1));
        assert_eq!(Profile::from_name(None).unwrap(), Profile::Balanced);
        assert!(Profile::from_name(Some("fast")).is_err());
        assert_eq!(
            Profile::Balanced.codec(Role::Label).describe(),
            "blosc2:zstd:3+bitshuffle"
        );
    }
}
