//! Opening what a command line names: a local path, or with the `remote`
//! feature an object URL (`s3://`, `gs://`, `az://`, `http(s)://`), and
//! writing an output that may be a URL (written locally, then uploaded).

use std::path::Path;

use purehdf::low_level::file::File;

/// True when `arg` names a remote object (always false without the `remote`
/// feature).
pub fn is_url(arg: &str) -> bool {
    #[cfg(feature = "remote")]
    {
        purehdf::low_level::remote::is_url(arg)
    }
    #[cfg(not(feature = "remote"))]
    {
        let _ = arg;
        false
    }
}

/// Open `arg`: the remote object when it is a URL, else the local file.
pub fn open(arg: &str) -> purehdf::Result<File> {
    #[cfg(feature = "remote")]
    {
        purehdf::low_level::remote::open_path_or_url(Path::new(arg))
    }
    #[cfg(not(feature = "remote"))]
    {
        File::open(arg)
    }
}

/// Set the endpoint remote opens and uploads use (`--endpoint`); an error
/// when `endpoint` is given without the `remote` feature.
pub fn set_endpoint(endpoint: Option<&str>) -> Result<(), String> {
    #[cfg(feature = "remote")]
    {
        use purehdf::low_level::remote::{default_options, set_default_options};
        if endpoint.is_some() {
            set_default_options(default_options().with_endpoint(endpoint));
        }
        Ok(())
    }
    #[cfg(not(feature = "remote"))]
    {
        match endpoint {
            Some(_) => Err("--endpoint needs the remote feature".into()),
            None => Ok(()),
        }
    }
}

/// Write an output named `out`: `write` writes it where it is given, or,
/// when `out` is a URL, to a local temporary file that is then uploaded
/// (multipart; the object appears whole or not at all).
pub fn write_output<T, E>(out: &str, write: impl FnOnce(&Path) -> Result<T, E>) -> Result<T, E>
where
    E: From<purehdf::Error>,
{
    #[cfg(feature = "remote")]
    {
        let opts = purehdf::low_level::remote::default_options();
        purehdf::low_level::remote::upload::write_then_upload(out, &opts, write)
    }
    #[cfg(not(feature = "remote"))]
    {
        write(Path::new(out))
    }
}
