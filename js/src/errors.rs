//! Library errors as JavaScript `Error`s: the library's message, a `kind`
//! naming the variant's family, and for [`purehdf::Error::NeedBytes`] the
//! byte ranges the host must fetch before it retries (`ranges`, an array of
//! `[offset, length]` pairs).

use purehdf::ByteRange;
use wasm_bindgen::JsValue;

/// The `kind` of a library error.
fn kind(e: &purehdf::Error) -> &'static str {
    use purehdf::Error as E;
    match e {
        E::NotFound(_) => "NotFound",
        E::InvalidArgument(_) => "InvalidArgument",
        E::Conversion { .. } => "Conversion",
        E::Unsupported { .. } | E::UnsupportedFilter { .. } | E::UnsupportedCodec { .. } => {
            "Unsupported"
        }
        E::Limit { .. } | E::OverBudget { .. } => "Limit",
        E::Remote { .. } => "Remote",
        E::StaleSnapshot { .. } => "StaleSnapshot",
        _ => "Corrupt",
    }
}

/// A JavaScript `Error` with `message` and `kind`.
pub(crate) fn js_error(kind: &str, message: &str) -> JsValue {
    let e = js_sys::Error::new(message);
    let _ = js_sys::Reflect::set(&e, &"kind".into(), &kind.into());
    e.into()
}

/// The `NeedBytes` error asking the host for `ranges`.
pub(crate) fn need_bytes(ranges: &[ByteRange]) -> JsValue {
    let e = js_sys::Error::new(&format!("need {} byte ranges", ranges.len()));
    let list = js_sys::Array::new();
    for r in ranges {
        let pair = js_sys::Array::of2(&(r.offset as f64).into(), &(r.len as f64).into());
        list.push(&pair);
    }
    let _ = js_sys::Reflect::set(&e, &"kind".into(), &"NeedBytes".into());
    let _ = js_sys::Reflect::set(&e, &"ranges".into(), &list);
    e.into()
}

/// The JavaScript error for a library error.
pub(crate) fn to_js(e: purehdf::Error) -> JsValue {
    if let Some(r) = e.needed_ranges() {
        return need_bytes(r);
    }
    js_error(kind(&e), &e.to_string())
}

/// The JavaScript error for a medh5 error.
pub(crate) fn medh5_to_js(e: purehdf_medh5::Error) -> JsValue {
    match e {
        purehdf_medh5::Error::Hdf5(h) => to_js(h),
        other => js_error("Medh5", &other.to_string()),
    }
}

/// An `InvalidArgument` error.
pub(crate) fn invalid(message: &str) -> JsValue {
    js_error("InvalidArgument", message)
}
