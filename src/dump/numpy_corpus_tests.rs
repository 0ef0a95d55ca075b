//! Table test over the whole shared corpus: every (HDF5 type description, numpy
//! dtype string) pair that the oracle recorded in `expected/*.json` is rebuilt as a
//! [`Datatype`] and mapped with [`Datatype::numpy_str`]. Skipped when the corpus is absent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use purehdf::low_level::datatype::{
    ByteOrder, CharSet, CompoundMember, Datatype, EnumMember, FloatLayout, ReferenceKind, StringPad,
};

fn corpus() -> Option<PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    Some(here.join("../shared/corpus")).filter(|p| p.join("expected").is_dir())
}

fn order(t: &Value) -> ByteOrder {
    match t.get("order").and_then(Value::as_str) {
        Some("be") => ByteOrder::Big,
        Some("other") => ByteOrder::Vax,
        _ => ByteOrder::Little,
    }
}

/// The datatype an `h5t` description stands for (`None` when it lacks the facts).
/// Enums get members `FALSE`/`TRUE` = 0/1 when `bool_enum`, other names otherwise.
fn datatype(t: &Value, bool_enum: bool) -> Option<Datatype> {
    let size = t.get("size")?.as_u64()? as u32;
    Some(match t.get("class")?.as_str()? {
        "integer" => Datatype::Integer {
            size,
            order: order(t),
            signed: t.get("signed")?.as_bool()?,
            bit_offset: t.get("bit_offset").and_then(Value::as_u64).unwrap_or(0) as u16,
            precision: t
                .get("precision")
                .and_then(Value::as_u64)
                .unwrap_or(u64::from(size) * 8) as u16,
        },
        "float" => {
            let mut layout = FloatLayout::ieee(size);
            if let Some(f) = t.get("nonstandard_layout").and_then(Value::as_array) {
                let v: Vec<u8> = f
                    .iter()
                    .filter_map(Value::as_u64)
                    .map(|x| x as u8)
                    .collect();
                let [s, ep, es, mp, ms] = v.as_slice() else {
                    return None;
                };
                layout.sign_pos = *s;
                layout.exp_pos = *ep;
                layout.exp_size = *es;
                layout.mant_pos = *mp;
                layout.mant_size = *ms;
                layout.exp_bias = (1u32 << (es - 1)) - 1;
            }
            Datatype::Float {
                size,
                order: order(t),
                layout,
            }
        }
        "string" => {
            let cset = if t.get("cset")?.as_str()? == "utf8" {
                CharSet::Utf8
            } else {
                CharSet::Ascii
            };
            let pad = StringPad::NullPad;
            if t.get("variable")?.as_bool()? {
                Datatype::VarString { size, pad, cset }
            } else {
                Datatype::String { size, pad, cset }
            }
        }
        "compound" => {
            let mut members = Vec::new();
            for m in t.get("members")?.as_array()? {
                members.push(CompoundMember {
                    name: m.get("name")?.as_str()?.to_string(),
                    offset: m.get("offset")?.as_u64()? as u32,
                    dtype: datatype(m.get("type")?, false)?,
                });
            }
            Datatype::Compound { size, members }
        }
        "enum" => {
            let base = datatype(t.get("base")?, false)?;
            let n = t.get("nmembers")?.as_u64()?;
            let names: Vec<String> = if bool_enum && n == 2 {
                vec!["FALSE".into(), "TRUE".into()]
            } else {
                (0..n).map(|i| format!("M{i}")).collect()
            };
            let bsize = base.size() as usize;
            let members = names
                .into_iter()
                .enumerate()
                .map(|(i, name)| {
                    let mut value = vec![0u8; bsize];
                    if order(t.get("base").unwrap_or(&Value::Null)) == ByteOrder::Big {
                        if let Some(b) = value.last_mut() {
                            *b = i as u8;
                        }
                    } else if let Some(b) = value.first_mut() {
                        *b = i as u8;
                    }
                    EnumMember { name, value }
                })
                .collect();
            Datatype::Enum {
                base: Box::new(base),
                members,
            }
        }
        "array" => Datatype::Array {
            base: Box::new(datatype(t.get("base")?, false)?),
            dims: t
                .get("dims")?
                .as_array()?
                .iter()
                .filter_map(Value::as_u64)
                .collect(),
        },
        "vlen_sequence" => Datatype::VarSequence {
            size: 16,
            base: Box::new(datatype(t.get("base")?, false)?),
        },
        "reference_object" => Datatype::Reference {
            size,
            kind: ReferenceKind::Object,
        },
        "reference_region" => Datatype::Reference {
            size,
            kind: ReferenceKind::Region,
        },
        "reference_h5r" => Datatype::Reference {
            size,
            kind: ReferenceKind::ObjectV2,
        },
        "opaque" => Datatype::Opaque {
            size,
            tag: t
                .get("tag")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        },
        "bitfield" => Datatype::Bitfield {
            size,
            order: order(t),
            bit_offset: 0,
            precision: (size * 8) as u16,
        },
        "time" => Datatype::Time {
            size,
            order: ByteOrder::Little,
            precision: (size * 8) as u16,
        },
        "complex" => {
            // the description has no base; h5py's dtype tells the parts' order
            let half = size / 2;
            Datatype::Complex {
                size,
                base: Box::new(Datatype::float(half)),
            }
        }
        _ => return None,
    })
}

fn visit(v: &Value, out: &mut Vec<(Value, Option<String>)>) {
    if let Some(objs) = v.get("objects").and_then(Value::as_array) {
        for o in objs {
            let mut items = vec![o];
            if let Some(a) = o.get("attrs").and_then(Value::as_object) {
                items.extend(a.values());
            }
            for it in items {
                if let Some(t) = it.get("h5t") {
                    if it.get("dtype").is_some()
                        || it.get("h5py_dtype_error").is_some()
                        || o.get("kind").and_then(Value::as_str) == Some("dataset")
                    {
                        let d = it.get("dtype").and_then(Value::as_str).map(str::to_string);
                        out.push((t.clone(), d));
                    }
                }
            }
        }
    }
}

fn walk(dir: &Path, out: &mut Vec<(Value, Option<String>)>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            if let Some(v) = std::fs::read_to_string(&p)
                .ok()
                .and_then(|s| serde_json::from_str(&s).ok())
            {
                visit(&v, out);
            }
        }
    }
}

/// True when the description misses facts the mapping needs (compound members cut
/// at depth 8, big-endian complex parts, enums named like booleans).
fn ambiguous(t: &Value) -> bool {
    let c = t.get("class").and_then(Value::as_str).unwrap_or("");
    if c == "complex" {
        return true;
    }
    if let Some(ms) = t.get("members").and_then(Value::as_array) {
        if ms.iter().any(|m| m.get("type").is_none_or(ambiguous)) {
            return true;
        }
    }
    t.get("base").is_some_and(ambiguous)
}

#[test]
fn every_corpus_dtype_string_maps_like_h5py() {
    let Some(dir) = corpus() else {
        println!("skipped: ../shared/corpus absent");
        return;
    };
    let mut pairs = Vec::new();
    walk(&dir.join("expected"), &mut pairs);
    let mut distinct: BTreeMap<String, (Value, Option<String>)> = BTreeMap::new();
    for (t, d) in pairs {
        distinct.entry(format!("{t}|{d:?}")).or_insert((t, d));
    }
    let (mut checked, mut wrong) = (0, Vec::new());
    for (t, want) in distinct.values() {
        if ambiguous(t) {
            continue;
        }
        let is_enum2 = t.get("class").and_then(Value::as_str) == Some("enum")
            && t.get("nmembers").and_then(Value::as_u64) == Some(2);
        let Some(dt) = datatype(t, is_enum2 && want.as_deref() == Some("|b1")) else {
            continue;
        };
        checked += 1;
        let got = dt.numpy_str();
        if got.as_deref() != want.as_deref() {
            wrong.push(format!("{t} -> {got:?}, oracle {want:?}"));
        }
    }
    println!("checked {checked} distinct type descriptions");
    assert!(checked > 100, "too few descriptions checked: {checked}");
    assert!(
        wrong.is_empty(),
        "{} mismatches:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
