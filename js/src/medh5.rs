//! medh5 calls on an open file: the sample check (self-contained), its
//! identity and members, labelmaps over a box, verification and validation.

use crate::errors::{invalid, medh5_to_js};
use crate::file::WasmFile;
use purehdf_medh5::Sample;
use wasm_bindgen::prelude::*;

type JsResult<T> = Result<T, JsValue>;

fn set(o: &js_sys::Object, k: &str, v: impl Into<JsValue>) {
    let _ = js_sys::Reflect::set(o, &k.into(), &v.into());
}

fn strings(v: &[String]) -> js_sys::Array {
    v.iter().map(|s| JsValue::from(s.as_str())).collect()
}

fn json(v: &serde_json::Value) -> JsResult<JsValue> {
    js_sys::JSON::parse(&v.to_string())
}

#[wasm_bindgen]
impl WasmFile {
    /// The medh5 view of the file: `{content_id, images, annotations,
    /// grids, attrs, meta}` (`meta` the parsed `/meta` document, null when
    /// it is not JSON; a medh5 error unless the file is a self-contained
    /// sample).
    #[wasm_bindgen(js_name = sampleInfo)]
    pub fn sample_info(&self) -> JsResult<JsValue> {
        self.run(|f| {
            purehdf_medh5::self_contained::check(f, &self.name()).map_err(medh5_to_js)?;
            let s = Sample::from_file(f.clone());
            let o = js_sys::Object::new();
            let cid = s.content_id().map_err(medh5_to_js)?;
            set(&o, "content_id", cid.map_or(JsValue::NULL, JsValue::from));
            for g in ["images", "annotations", "grids"] {
                set(&o, g, strings(&s.members(g).map_err(medh5_to_js)?));
            }
            let attrs = js_sys::Object::new();
            for (k, v) in s.root_attrs().map_err(medh5_to_js)? {
                set(
                    &attrs,
                    &k,
                    json(&purehdf_medh5::canonical_json::to_value(&v))?,
                );
            }
            set(&o, "attrs", attrs);
            // the sample document (`/meta`): identity, timepoints, label set
            let meta = s.meta_bytes().map_err(medh5_to_js)?;
            let text = String::from_utf8_lossy(&meta);
            set(
                &o,
                "meta",
                js_sys::JSON::parse(&text).unwrap_or(JsValue::NULL),
            );
            Ok(o.into())
        })
    }

    /// The path of image `id`'s voxel dataset.
    #[wasm_bindgen(js_name = imagePath)]
    pub fn image_path(&self, id: &str) -> JsResult<String> {
        self.run(|f| {
            let s = Sample::from_file(f.clone());
            Ok(s.image(id).map_err(medh5_to_js)?.path().to_string())
        })
    }

    /// The path of annotation `id`'s voxel dataset.
    #[wasm_bindgen(js_name = annotationPath)]
    pub fn annotation_path(&self, id: &str) -> JsResult<String> {
        self.run(|f| {
            let s = Sample::from_file(f.clone());
            Ok(s.annotation_data(id)
                .map_err(medh5_to_js)?
                .path()
                .to_string())
        })
    }

    /// Annotation `id` decoded to one label volume over the box `start ..
    /// start + count` (empty arrays: the whole volume): `{shape, data}`
    /// with `data` a `Uint16Array`.
    pub fn labelmap(&self, id: &str, start: Vec<f64>, count: Vec<f64>) -> JsResult<JsValue> {
        if start.len() != count.len() {
            return Err(invalid("start and count differ in length"));
        }
        let u = |v: &[f64]| -> Vec<u64> { v.iter().map(|&x| x.max(0.0) as u64).collect() };
        let (start, count) = (u(&start), u(&count));
        self.run(|f| {
            let s = Sample::from_file(f.clone());
            let v = if start.is_empty() {
                s.labelmap(id)
            } else {
                s.labelmap_patch(id, &start, &count)
            }
            .map_err(medh5_to_js)?;
            let o = js_sys::Object::new();
            let shape: js_sys::Array = v.shape.iter().map(|&x| JsValue::from(x as f64)).collect();
            set(&o, "shape", shape);
            set(&o, "data", js_sys::Uint16Array::from(&v.data[..]));
            Ok(o.into())
        })
    }

    /// Verify the sample's digests and `content_id` (§5.7): the report.
    pub fn verify(&self) -> JsResult<JsValue> {
        self.run(|f| {
            let r =
                purehdf_medh5::verify::verify_file(f, &self.name(), None).map_err(medh5_to_js)?;
            let o = js_sys::Object::new();
            set(&o, "ok", r.ok);
            set(&o, "checked", r.checked as f64);
            set(&o, "mismatched", strings(&r.mismatched));
            set(&o, "undigested", strings(&r.undigested));
            set(&o, "unattested", strings(&r.unattested));
            set(&o, "malformed", strings(&r.malformed));
            set(
                &o,
                "content_id_ok",
                r.content_id_ok.map_or(JsValue::NULL, JsValue::from),
            );
            set(&o, "stale_index", strings(&r.stale_index));
            set(&o, "unverifiable", strings(&r.unverifiable));
            Ok(o.into())
        })
    }

    /// Recompute the sample's `content_id` from its stored digests.
    #[wasm_bindgen(js_name = computeContentId)]
    pub fn compute_content_id(&self) -> JsResult<String> {
        self.run(|f| purehdf_medh5::verify::compute_content_id(f).map_err(medh5_to_js))
    }

    /// Validate the sample at the default level: the report as JSON
    /// (`{path, ok, diagnostics, ...}` as `medh5 validate --json` prints).
    pub fn validate(&self) -> JsResult<JsValue> {
        self.run(|f| {
            let opts = purehdf_medh5::validate::Options::default();
            let r = purehdf_medh5::validate::validate_file(f, &self.name(), &opts);
            json(&r.to_json())
        })
    }
}
