//! The tokio runtime remote reads run on, and a blocking `block_on` that is
//! safe to call from any thread, inside another runtime included.

use std::future::Future;
use std::sync::OnceLock;

use crate::error::{Error, Result};

fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    static RT: OnceLock<std::result::Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("purehdf-remote")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| Error::Remote {
        url: "-".into(),
        range: "-".into(),
        reason: format!("cannot start the I/O runtime: {e}"),
    })
}

/// Run `fut` to completion on the shared runtime. From a thread that is
/// itself inside a tokio runtime, the future runs on a scoped helper thread
/// (a runtime cannot block on itself).
pub(crate) fn block_on<F>(fut: F) -> Result<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let rt = runtime()?;
    if tokio::runtime::Handle::try_current().is_ok() {
        std::thread::scope(|s| {
            s.spawn(|| rt.block_on(fut))
                .join()
                .map_err(|_| Error::Remote {
                    url: "-".into(),
                    range: "-".into(),
                    reason: "the I/O thread panicked".into(),
                })
        })
    } else {
        Ok(rt.block_on(fut))
    }
}
