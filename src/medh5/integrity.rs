//! Integrity (`docs/medh5-format.md` §5): digest strings (§5.1),
//! per-dataset digests (§5.2), which datasets are stamped (§5.3), the
//! `content_id` Merkle root (§5.4) and the index `source_digest` group digest
//! (§6.8). Pure functions over paths, dtype descriptions, shapes and
//! decompressed little-endian bytes; no HDF5 I/O.

use blake2::Blake2b512;
use sha2::{Digest, Sha256, Sha512};

use super::canonical_json::Json;
use crate::error::{Error, Result};
use purehdf::low_level::datatype::{ByteOrder, Datatype};

/// A digest algorithm a file may name in `digest_algo` or a digest prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum DigestAlgo {
    /// SHA-256 (64 hex digits); the default, and what a file without
    /// `digest_algo` uses.
    #[default]
    Sha256,
    /// SHA-512 (128 hex digits).
    Sha512,
    /// BLAKE2b-512, unkeyed (Python `hashlib.new("blake2b")`).
    Blake2b,
}

impl DigestAlgo {
    /// The name used in `digest_algo` and as the digest prefix.
    pub fn name(self) -> &'static str {
        match self {
            DigestAlgo::Sha256 => "sha256",
            DigestAlgo::Sha512 => "sha512",
            DigestAlgo::Blake2b => "blake2b",
        }
    }

    /// The algorithm named `name` (exact, lowercase), if known.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "sha256" => Some(DigestAlgo::Sha256),
            "sha512" => Some(DigestAlgo::Sha512),
            "blake2b" => Some(DigestAlgo::Blake2b),
            _ => None,
        }
    }

    /// Number of hex characters in a canonical digest.
    pub fn hex_len(self) -> usize {
        match self {
            DigestAlgo::Sha256 => 64,
            DigestAlgo::Sha512 | DigestAlgo::Blake2b => 128,
        }
    }
}

/// An incremental hash in one of the three algorithms.
#[derive(Clone)]
pub enum Hasher {
    /// A [`DigestAlgo::Sha256`] state.
    Sha256(Sha256),
    /// A [`DigestAlgo::Sha512`] state.
    Sha512(Sha512),
    /// A [`DigestAlgo::Blake2b`] (512-bit, unkeyed) state.
    Blake2b(Blake2b512),
}

impl Hasher {
    /// A fresh hash state (nothing fed yet) in `algo`.
    pub fn new(algo: DigestAlgo) -> Self {
        match algo {
            DigestAlgo::Sha256 => Hasher::Sha256(Sha256::new()),
            DigestAlgo::Sha512 => Hasher::Sha512(Sha512::new()),
            DigestAlgo::Blake2b => Hasher::Blake2b(Blake2b512::new()),
        }
    }

    /// The algorithm this state hashes in.
    pub fn algo(&self) -> DigestAlgo {
        match self {
            Hasher::Sha256(_) => DigestAlgo::Sha256,
            Hasher::Sha512(_) => DigestAlgo::Sha512,
            Hasher::Blake2b(_) => DigestAlgo::Blake2b,
        }
    }

    /// Feed `bytes`; calls concatenate, so feeding in pieces gives the same
    /// result as feeding the whole at once.
    pub fn update(&mut self, bytes: &[u8]) {
        match self {
            Hasher::Sha256(h) => h.update(bytes),
            Hasher::Sha512(h) => h.update(bytes),
            Hasher::Blake2b(h) => h.update(bytes),
        }
    }

    /// Lowercase hex of the hash.
    pub fn finish_hex(self) -> String {
        match self {
            Hasher::Sha256(h) => to_hex(&h.finalize()),
            Hasher::Sha512(h) => to_hex(&h.finalize()),
            Hasher::Blake2b(h) => to_hex(&h.finalize()),
        }
    }

    /// `<algo>:<hex>`.
    pub fn finish(self) -> String {
        let algo = self.algo();
        format!("{}:{}", algo.name(), self.finish_hex())
    }
}

fn to_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 15)]));
    }
    s
}

/// Bare lowercase hex hash of `bytes`.
pub fn hex_digest(algo: DigestAlgo, bytes: &[u8]) -> String {
    let mut h = Hasher::new(algo);
    h.update(bytes);
    h.finish_hex()
}

/// The digest string `<algo>:<hex>` of `bytes`.
pub fn digest_bytes(algo: DigestAlgo, bytes: &[u8]) -> String {
    format!("{}:{}", algo.name(), hex_digest(algo, bytes))
}

/// Parse a digest string, requiring the canonical form (§5.1): a known
/// algorithm, `:`, and exactly the algorithm's number of lowercase hex digits.
/// Anything else is E703.
pub fn parse_digest(s: &str) -> Result<(DigestAlgo, &str)> {
    let bad = |why: &str| Error::Code {
        code: "E703".to_string(),
        message: format!("malformed digest {s:?}: {why}"),
    };
    let (name, hex) = s
        .split_once(':')
        .ok_or_else(|| bad("no algorithm prefix"))?;
    let algo = DigestAlgo::from_name(name).ok_or_else(|| bad("unknown algorithm"))?;
    if hex.len() != algo.hex_len() {
        return Err(bad("wrong length"));
    }
    if !hex
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(bad("not lowercase hex"));
    }
    Ok((algo, hex))
}

/// The NumPy dtype string hashed for a dataset of type `dt` (§5.2), always in
/// little-endian notation: `|b1` for the FALSE/TRUE enum, `|i1`…`<f8` for
/// numbers (other enums hash as their base), `|O` for strings, `|V<n>` for
/// other fixed-size types. `None` when the type gets no digest (vlen data
/// other than strings, references, or anything containing them).
pub fn dtype_descr(dt: &Datatype) -> Option<String> {
    match dt {
        Datatype::Integer { size, signed, .. } => {
            let k = if *signed { 'i' } else { 'u' };
            Some(numeric_descr(k, *size))
        }
        Datatype::Float { size, .. } => Some(numeric_descr('f', *size)),
        Datatype::Enum { base, members } => {
            if is_bool_enum(base, members) {
                Some("|b1".to_string())
            } else {
                dtype_descr(base)
            }
        }
        Datatype::String { .. } | Datatype::VarString { .. } => Some("|O".to_string()),
        Datatype::VarSequence { .. } | Datatype::Reference { .. } => None,
        other if other.has_vlen_or_ref() => None,
        other => Some(format!("|V{}", other.size())),
    }
}

fn numeric_descr(kind: char, size: u32) -> String {
    let order = if size == 1 { '|' } else { '<' };
    format!("{order}{kind}{size}")
}

/// True for the h5py/NumPy bool enum: a 1-byte signed base with members
/// `FALSE` = 0 and `TRUE` = 1.
pub fn is_bool_enum(base: &Datatype, members: &[purehdf::low_level::datatype::EnumMember]) -> bool {
    let base_ok = matches!(
        base,
        Datatype::Integer {
            size: 1,
            signed: true,
            ..
        }
    );
    base_ok
        && members.len() == 2
        && members.iter().any(|m| m.name == "FALSE" && m.value == [0])
        && members.iter().any(|m| m.name == "TRUE" && m.value == [1])
}

/// Byte-swap big-endian numeric elements in place so they can be hashed as
/// little-endian (§1.2: a big-endian dataset digests like its little-endian twin).
pub fn to_little_endian(dt: &Datatype, bytes: &mut [u8]) {
    let (size, order) = match dt {
        Datatype::Integer { size, order, .. } | Datatype::Float { size, order, .. } => {
            (*size as usize, *order)
        }
        Datatype::Enum { base, .. } => return to_little_endian(base, bytes),
        _ => return,
    };
    if order == ByteOrder::Big && size > 1 {
        for el in bytes.chunks_exact_mut(size) {
            el.reverse();
        }
    }
}

/// Streaming per-dataset digest (§5.2):
/// `H(path 0x00 dtype 0x00 shape_csv 0x00 values)`. Feed the decompressed
/// C-order little-endian element bytes with [`DatasetHasher::update`] in order
/// (any split), or string elements with [`DatasetHasher::update_string`].
#[derive(Clone)]
pub struct DatasetHasher {
    inner: Hasher,
    zero_extent: bool,
}

impl DatasetHasher {
    /// Start the digest of the dataset at sample-relative `path` (no leading
    /// `/`) with dtype string `dtype` (see [`dtype_descr`]) and `shape`
    /// (empty for a scalar).
    pub fn new(algo: DigestAlgo, path: &str, dtype: &str, shape: &[u64]) -> Self {
        let mut inner = Hasher::new(algo);
        inner.update(path.trim_start_matches('/').as_bytes());
        inner.update(&[0]);
        inner.update(dtype.as_bytes());
        inner.update(&[0]);
        let csv: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        inner.update(csv.join(",").as_bytes());
        inner.update(&[0]);
        DatasetHasher {
            inner,
            zero_extent: shape.contains(&0),
        }
    }

    /// Feed element bytes (ignored for a dataset with a zero extent).
    pub fn update(&mut self, values: &[u8]) {
        if !self.zero_extent {
            self.inner.update(values);
        }
    }

    /// Feed one string element: its bytes (fixed-length padding removed by the
    /// caller) followed by one NUL.
    pub fn update_string(&mut self, element: &[u8]) {
        if !self.zero_extent {
            self.inner.update(element);
            self.inner.update(&[0]);
        }
    }

    /// The digest string `<algo>:<hex>`.
    pub fn finish(self) -> String {
        self.inner.finish()
    }
}

/// The digest of a whole numeric dataset held in memory.
pub fn dataset_digest(
    algo: DigestAlgo,
    path: &str,
    dtype: &str,
    shape: &[u64],
    values: &[u8],
) -> String {
    let mut h = DatasetHasher::new(algo, path, dtype, shape);
    h.update(values);
    h.finish()
}

/// Whether the writer stamps a `digest` on the dataset at sample-relative
/// `path` (§5.3): every dataset except `meta` and anything under the
/// top-level `index` group.
pub fn is_stamped_path(path: &str) -> bool {
    let p = path.trim_start_matches('/');
    p != "meta" && p != "index" && !p.starts_with("index/")
}

/// Covered root attributes (§5.4).
pub const ROOT_COVERED: &[&str] = &["medh5_version", "medh5_kind", "medh5_profiles"];
/// Covered grid attributes.
pub const GRID_COVERED: &[&str] = &[
    "shape",
    "axis_names",
    "axis_kinds",
    "spacing",
    "origin",
    "direction",
    "coord_system",
    "units",
    "timepoint",
    "frame_uid",
    "time_values",
    "time_units",
    "chunk_hint",
    "patch_hint",
];
/// Covered image attributes.
pub const IMAGE_COVERED: &[&str] = &[
    "grid",
    "modality",
    "value_type",
    "channel_names",
    "rescale_slope",
    "rescale_intercept",
    "value_units",
    "window_center",
    "window_width",
    "valid_mask",
    "prov",
    "levels",
    "downsample_factors",
    "downsample_method",
    "grid_levels",
];
/// Covered annotation attributes.
pub const ANNOTATION_COVERED: &[&str] = &[
    "kind",
    "task",
    "grid",
    "timepoints",
    "space",
    "frame_uid",
    "class_ids",
    "annotated_class_ids",
    "closure",
    "ignore_id",
    "ignore_mask",
    "prov",
    "quality",
    "derived_from",
    "scope",
    "scope_ids",
    "multilabel",
    "normalized",
    "threshold",
    "skeleton",
];
/// Covered transform attributes.
pub const TRANSFORM_COVERED: &[&str] = &[
    "kind",
    "from_frame",
    "to_frame",
    "from_grid",
    "to_grid",
    "units",
    "invertible",
    "inverse_id",
    "prov",
    "metrics",
    "field_grid",
    "vector_space",
    "interpolation",
    "extrapolation",
    "cp_grid",
    "order",
    "components",
];

/// The covered attribute names of the object at sample-relative `path`:
/// the root (`""`) or a direct member of `grids`, `images`, `annotations`,
/// `transforms`. `None` for any other object (it has no attribute line).
pub fn covered_names(path: &str) -> Option<&'static [&'static str]> {
    let p = path.trim_start_matches('/');
    if p.is_empty() {
        return Some(ROOT_COVERED);
    }
    let (group, member) = p.split_once('/')?;
    if member.is_empty() || member.contains('/') {
        return None;
    }
    match group {
        "grids" => Some(GRID_COVERED),
        "images" => Some(IMAGE_COVERED),
        "annotations" => Some(ANNOTATION_COVERED),
        "transforms" => Some(TRANSFORM_COVERED),
        _ => None,
    }
}

/// Canonical JSON (§5.5) of the covered attributes among `attrs` (name and
/// value already rendered as JSON). `digest` is never covered.
pub fn canonical_attrs(covered: &[&str], attrs: &[(String, Json)]) -> String {
    let mut obj = Json::object();
    for (name, value) in attrs {
        if name != "digest" && covered.contains(&name.as_str()) && obj.get(name).is_none() {
            obj.push(name.clone(), value.clone());
        }
    }
    obj.to_canonical()
}

/// `<algo>:<hex>` of the canonical JSON of an object's covered attributes.
pub fn attrs_digest(algo: DigestAlgo, covered: &[&str], attrs: &[(String, Json)]) -> String {
    digest_bytes(algo, canonical_attrs(covered, attrs).as_bytes())
}

/// Everything `content_id` depends on (§5.4).
#[derive(Clone, Debug, Default)]
pub struct ContentIdInput {
    /// The root's `digest_algo`.
    pub algo: DigestAlgo,
    /// `(sample-relative path, stored digest string)` of every dataset that
    /// carries a `digest`, each at its first path, `index/**` excluded.
    pub datasets: Vec<(String, String)>,
    /// The stored `/meta` string bytes.
    pub meta: Vec<u8>,
    /// `(sample-relative path, canonical JSON of covered attributes)` for the
    /// root (path `""`) and every member of `grids`, `images`, `annotations`,
    /// `transforms`.
    pub attribute_objects: Vec<(String, String)>,
}

impl ContentIdInput {
    /// The hashed payload: sorted dataset lines, the meta line, sorted
    /// attribute lines.
    pub fn payload(&self) -> String {
        let algo = self.algo;
        let mut lines: Vec<String> = self
            .datasets
            .iter()
            .filter(|(p, _)| is_stamped_path(p))
            .map(|(p, d)| format!("{}\t{d}\n", p.trim_start_matches('/')))
            .collect();
        lines.sort();
        let mut attrs: Vec<String> = self
            .attribute_objects
            .iter()
            .map(|(p, canon)| {
                format!(
                    "@{}\t{}\n",
                    p.trim_start_matches('/'),
                    digest_bytes(algo, canon.as_bytes())
                )
            })
            .collect();
        attrs.sort();
        let mut payload = lines.concat();
        payload.push_str(&format!("meta\t{}\n", hex_digest(algo, &self.meta)));
        payload.push_str(&attrs.concat());
        payload
    }

    /// `content_id` = `<algo>:` + hex(H(payload)).
    pub fn content_id(&self) -> String {
        digest_bytes(self.algo, self.payload().as_bytes())
    }
}

/// An annotation's group digest (§6.8, the index `source_digest`): over the
/// direct child datasets `(name, digest)` in byte order of name, the text
/// `"<name>\t<digest>\n"` each, hashed.
pub fn group_digest(algo: DigestAlgo, children: &[(String, String)]) -> String {
    let mut sorted: Vec<&(String, String)> = children.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let text: String = sorted.iter().map(|(n, d)| format!("{n}\t{d}\n")).collect();
    digest_bytes(algo, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn abc_vectors() {
        assert_eq!(
            digest_bytes(DigestAlgo::Sha256, b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(digest_bytes(DigestAlgo::Sha512, b"abc").starts_with("sha512:ddaf35a193617aba"));
        assert!(digest_bytes(DigestAlgo::Blake2b, b"abc").starts_with("blake2b:ba80a53f981c4d0d"));
    }

    #[test]
    fn parse_digest_requires_canonical_form() {
        let good = digest_bytes(DigestAlgo::Sha256, b"x");
        assert_eq!(parse_digest(&good).unwrap().0, DigestAlgo::Sha256);
        for bad in [
            good.to_uppercase(),
            good.replace("sha256:", "sha256:0x"),
            good[..good.len() - 1].to_string(),
            good.replace("sha256", "md5"),
            format!("{good} "),
            "sha256".to_string(),
        ] {
            match parse_digest(&bad) {
                Err(Error::Code { code, .. }) => assert_eq!(code, "E703"),
                other => panic!("{bad:?} gave {other:?}"),
            }
        }
        let b2 = digest_bytes(DigestAlgo::Blake2b, b"x");
        assert_eq!(parse_digest(&b2).unwrap().1.len(), 128);
    }

    #[test]
    fn dtype_strings() {
        assert_eq!(dtype_descr(&Datatype::int(2, true)).unwrap(), "<i2");
        assert_eq!(dtype_descr(&Datatype::int(1, false)).unwrap(), "|u1");
        assert_eq!(dtype_descr(&Datatype::float(2)).unwrap(), "<f2");
        assert_eq!(dtype_descr(&Datatype::int(8, false)).unwrap(), "<u8");
        let b = Datatype::Enum {
            base: Box::new(Datatype::int(1, true)),
            members: vec![
                purehdf::low_level::datatype::EnumMember {
                    name: "FALSE".into(),
                    value: vec![0],
                },
                purehdf::low_level::datatype::EnumMember {
                    name: "TRUE".into(),
                    value: vec![1],
                },
            ],
        };
        assert_eq!(dtype_descr(&b).unwrap(), "|b1");
        assert_eq!(
            dtype_descr(&Datatype::Opaque {
                size: 6,
                tag: String::new()
            })
            .unwrap(),
            "|V6"
        );
        assert!(dtype_descr(&Datatype::Reference {
            size: 8,
            kind: purehdf::low_level::datatype::ReferenceKind::Object
        })
        .is_none());
    }

    #[test]
    fn zero_extent_hashes_header_only() {
        let a = dataset_digest(DigestAlgo::Sha256, "x", "|u1", &[0, 3], &[1, 2, 3]);
        let b = digest_bytes(DigestAlgo::Sha256, b"x\0|u1\x000,3\0");
        assert_eq!(a, b);
    }

    #[test]
    fn stamped_paths() {
        assert!(!is_stamped_path("meta"));
        assert!(!is_stamped_path("index/lay/class_ids"));
        assert!(is_stamped_path("images/CT"));
        assert!(is_stamped_path("indexes/x"));
        assert!(is_stamped_path("x_site/meta"));
    }

    #[test]
    fn covered_name_lookup() {
        assert_eq!(covered_names(""), Some(ROOT_COVERED));
        assert_eq!(covered_names("grids/ct"), Some(GRID_COVERED));
        assert_eq!(covered_names("annotations/a/data"), None);
        assert_eq!(covered_names("x_site/notes"), None);
    }

    #[test]
    fn big_endian_swaps() {
        let be = Datatype::Integer {
            size: 2,
            order: ByteOrder::Big,
            signed: true,
            bit_offset: 0,
            precision: 16,
        };
        let mut v = vec![0x01, 0x02, 0x03, 0x04];
        to_little_endian(&be, &mut v);
        assert_eq!(v, [0x02, 0x01, 0x04, 0x03]);
    }

    proptest! {
        #[test]
        fn streaming_equals_one_shot(data in proptest::collection::vec(any::<u8>(), 0..3000),
                                      cut in 0usize..3000) {
            let cut = cut.min(data.len());
            let whole = dataset_digest(DigestAlgo::Sha512, "images/a", "|u1", &[data.len() as u64], &data);
            let mut h = DatasetHasher::new(DigestAlgo::Sha512, "images/a", "|u1", &[data.len() as u64]);
            h.update(&data[..cut]);
            h.update(&data[cut..]);
            prop_assert_eq!(h.finish(), whole);
        }
    }
}
