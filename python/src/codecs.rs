//! Every HDF5 filter of `purehdf-filters` as a byte codec for Python
//! (`purehdf.codecs` wraps these as numcodecs codecs), and the virtual-Zarr
//! manifests of `h5 manifest` (`purehdf.kerchunk`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use purehdf_filters::{ChunkContext, FilterSpec};

fn spec(filter_id: u32, cd_values: Vec<u32>) -> FilterSpec {
    FilterSpec {
        id: filter_id,
        flags: 0,
        cd_values,
        name: None,
    }
}

/// Decode `data` through HDF5 filter `filter_id` with its stored client data,
/// for chunks of `chunk_bytes` decoded bytes of `element_size`-byte elements.
/// A Fletcher-32 mismatch raises `CorruptFileError`.
#[pyfunction]
fn filter_decode<'py>(
    py: Python<'py>,
    filter_id: u32,
    cd_values: Vec<u32>,
    element_size: usize,
    chunk_bytes: usize,
    data: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let ctx = ChunkContext::new(element_size.max(1), chunk_bytes);
    let s = spec(filter_id, cd_values);
    let out = py
        .detach(|| purehdf_filters::decode(&s, &ctx, data))
        .map_err(|e| crate::errors::to_py(e.into()))?;
    Ok(PyBytes::new(py, &out))
}

/// Encode `data` through HDF5 filter `filter_id` (where the codec encodes).
#[pyfunction]
fn filter_encode<'py>(
    py: Python<'py>,
    filter_id: u32,
    cd_values: Vec<u32>,
    element_size: usize,
    data: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let ctx = ChunkContext::new(element_size.max(1), data.len());
    let s = spec(filter_id, cd_values);
    let out = py
        .detach(|| purehdf_filters::encode(&s, &ctx, data))
        .map_err(|e| crate::errors::to_py(e.into()))?;
    Ok(PyBytes::new(py, &out))
}

/// The virtual-Zarr manifest of a file or URL as JSON text: `format`
/// `"kerchunk"` or `"zarr-v3"`, `codecs` `"standard"` or `"purehdf"`.
#[pyfunction]
#[pyo3(signature = (path_or_url, format = "kerchunk", codecs = "standard"))]
fn manifest_json(
    py: Python<'_>,
    path_or_url: &str,
    format: &str,
    codecs: &str,
) -> PyResult<String> {
    use purehdf_cli::tools::manifest::{manifest, Format};
    use purehdf_cli::tools::manifest_zarr::CodecIds;
    let format = match format {
        "kerchunk" => Format::Kerchunk,
        "zarr-v3" => Format::ZarrV3,
        other => return Err(PyValueError::new_err(format!("unknown format {other:?}"))),
    };
    let ids = match codecs {
        "standard" => CodecIds::Standard,
        "purehdf" => CodecIds::Purehdf,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown codec ids {other:?}"
            )))
        }
    };
    let v = py
        .detach(|| manifest(path_or_url, format, ids))
        .map_err(crate::errors::to_py)?;
    Ok(v.to_string())
}

/// Add the codec and manifest functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(filter_decode, m)?)?;
    m.add_function(wrap_pyfunction!(filter_encode, m)?)?;
    m.add_function(wrap_pyfunction!(manifest_json, m)?)?;
    Ok(())
}
