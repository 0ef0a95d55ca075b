//! Object URLs: `s3://bucket/key`, `gs://bucket/key`, `az://container/key`
//! (`abfs[s]://container@account.dfs.core.windows.net/key`) and
//! `http(s)://host/path`, parsed into the store and the key they name.

use crate::error::{Error, Result};

/// Where a URL points: which kind of store, its bucket (or host) and the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemoteUrl {
    /// Amazon S3 or an S3-compatible server (`s3://`, `s3a://`).
    S3 {
        /// Bucket name.
        bucket: String,
        /// Object key (no leading `/`).
        key: String,
    },
    /// Google Cloud Storage (`gs://`, `gcs://`).
    Gcs {
        /// Bucket name.
        bucket: String,
        /// Object key.
        key: String,
    },
    /// Azure Blob Storage (`az://`, `azure://`, `abfs://`, `abfss://`).
    Azure {
        /// Container name.
        container: String,
        /// Storage account, when the URL names it (`container@account.…`).
        account: Option<String>,
        /// Blob name.
        key: String,
    },
    /// A plain HTTP(S) server answering range requests.
    Http {
        /// `scheme://host[:port]`.
        base: String,
        /// Host name without port (for the loopback rule).
        host: String,
        /// True for `https`.
        tls: bool,
        /// Path of the object on the server, without the leading `/`.
        path: String,
        /// The query string without its `?` (a pre-signed URL's signature):
        /// sent unchanged with every request.
        query: Option<String>,
    },
}

/// The schemes [`parse`] accepts.
pub const SCHEMES: &[&str] = &[
    "s3", "s3a", "gs", "gcs", "az", "azure", "abfs", "abfss", "http", "https",
];

/// True when `s` is a URL of a scheme [`parse`] accepts (so a command line
/// argument names a remote object rather than a local path).
pub fn is_url(s: &str) -> bool {
    match s.split_once("://") {
        Some((scheme, _)) => SCHEMES.iter().any(|k| k.eq_ignore_ascii_case(scheme)),
        None => false,
    }
}

fn bad(url: &str, why: &str) -> Error {
    Error::Remote {
        url: url.to_string(),
        range: "-".to_string(),
        reason: format!("not an object URL: {why}"),
    }
}

/// Split `url` into its store, bucket and key. The key must not be empty.
/// An `http(s)://` URL may carry a query string (a pre-signed URL), kept for
/// every request; other schemes refuse one, and fragments are refused (they
/// would be silently dropped).
pub fn parse(url: &str) -> Result<RemoteUrl> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| bad(url, "no scheme://"))?;
    if rest.contains('#') {
        return Err(bad(url, "fragments are not supported"));
    }
    let http = ["http", "https"]
        .iter()
        .any(|h| scheme.eq_ignore_ascii_case(h));
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) if http => (r, Some(q.to_string())),
        Some(_) => {
            return Err(bad(
                url,
                "query strings are supported on http(s):// URLs only (pre-signed URLs)",
            ))
        }
        None => (rest, None),
    };
    let (authority, key) = rest.split_once('/').unwrap_or((rest, ""));
    if authority.is_empty() {
        return Err(bad(url, "no bucket or host"));
    }
    let key = key.trim_start_matches('/');
    if key.is_empty() || key.ends_with('/') {
        return Err(bad(url, "no object key"));
    }
    let key = key.to_string();
    let scheme = scheme.to_ascii_lowercase();
    match scheme.as_str() {
        "s3" | "s3a" => Ok(RemoteUrl::S3 {
            bucket: authority.to_string(),
            key,
        }),
        "gs" | "gcs" => Ok(RemoteUrl::Gcs {
            bucket: authority.to_string(),
            key,
        }),
        "az" | "azure" | "abfs" | "abfss" => {
            let (container, account) = match authority.split_once('@') {
                Some((c, host)) => {
                    let account = host.split('.').next().unwrap_or_default();
                    if account.is_empty() {
                        return Err(bad(url, "no storage account after @"));
                    }
                    (c.to_string(), Some(account.to_string()))
                }
                None => (authority.to_string(), None),
            };
            Ok(RemoteUrl::Azure {
                container,
                account,
                key,
            })
        }
        "http" | "https" => {
            let host = host_of(authority).ok_or_else(|| bad(url, "bad host"))?;
            Ok(RemoteUrl::Http {
                base: format!("{scheme}://{authority}"),
                host,
                tls: scheme == "https",
                path: key,
                query,
            })
        }
        _ => Err(bad(url, "unknown scheme")),
    }
}

/// The host of `authority` (`user@host:port`, `[::1]:80`), lowercased.
pub fn host_of(authority: &str) -> Option<String> {
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(rest) = hostport.strip_prefix('[') {
        rest.split_once(']')?.0
    } else {
        hostport.split(':').next()?
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// True when `host` is this machine: `localhost`, 127.0.0.0/8 or `::1`.
pub fn is_loopback_host(host: &str) -> bool {
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => false,
    }
}

/// Check an endpoint URL (`--endpoint`, `AWS_ENDPOINT_URL`): `https://`
/// anywhere, plain `http://` only on loopback. Returns true when plain HTTP
/// must be allowed for it.
pub fn check_endpoint(endpoint: &str) -> Result<bool> {
    let refuse = |why: &str| Error::Remote {
        url: endpoint.to_string(),
        range: "-".to_string(),
        reason: why.to_string(),
    };
    let (scheme, rest) = endpoint
        .split_once("://")
        .ok_or_else(|| refuse("endpoint is not a URL (scheme://host)"))?;
    let authority = rest.split('/').next().unwrap_or_default();
    let host = host_of(authority).ok_or_else(|| refuse("endpoint has no host"))?;
    match scheme.to_ascii_lowercase().as_str() {
        "https" => Ok(false),
        "http" if is_loopback_host(&host) => Ok(true),
        "http" => Err(refuse(
            "plain http:// is allowed only for loopback hosts (localhost, 127.0.0.1, ::1); use https://",
        )),
        _ => Err(refuse("endpoint scheme must be http or https")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_scheme() {
        assert_eq!(
            parse("s3://b/dir/x.h5").unwrap(),
            RemoteUrl::S3 {
                bucket: "b".into(),
                key: "dir/x.h5".into()
            }
        );
        assert_eq!(
            parse("gs://b/x.h5").unwrap(),
            RemoteUrl::Gcs {
                bucket: "b".into(),
                key: "x.h5".into()
            }
        );
        assert_eq!(
            parse("abfss://c@acct.dfs.core.windows.net/a/b.medh5").unwrap(),
            RemoteUrl::Azure {
                container: "c".into(),
                account: Some("acct".into()),
                key: "a/b.medh5".into()
            }
        );
        assert_eq!(
            parse("az://c/b.h5").unwrap(),
            RemoteUrl::Azure {
                container: "c".into(),
                account: None,
                key: "b.h5".into()
            }
        );
        assert_eq!(
            parse("http://127.0.0.1:8080/d/f.h5").unwrap(),
            RemoteUrl::Http {
                base: "http://127.0.0.1:8080".into(),
                host: "127.0.0.1".into(),
                tls: false,
                path: "d/f.h5".into(),
                query: None,
            }
        );
        assert_eq!(
            parse("https://h.example/b/k.h5?X-Amz-Expires=60&X-Amz-Signature=ab%2Fc").unwrap(),
            RemoteUrl::Http {
                base: "https://h.example".into(),
                host: "h.example".into(),
                tls: true,
                path: "b/k.h5".into(),
                query: Some("X-Amz-Expires=60&X-Amz-Signature=ab%2Fc".into()),
            }
        );
    }

    #[test]
    fn refuses_what_it_cannot_name() {
        for u in [
            "s3://bucket",
            "s3://bucket/",
            "s3:///key",
            "s3://b/dir/",
            "s3://b/x?sig=1",
            "https://h/x#frag",
            "https://h/?sig=1",
            "ftp://h/x",
            "x.h5",
        ] {
            assert!(parse(u).is_err(), "{u}");
        }
        assert!(is_url("S3://b/k") && is_url("https://h/p") && !is_url("dir/x.h5"));
        assert!(!is_url("c:\\x.h5") && !is_url("file://x"));
    }

    #[test]
    fn plain_http_only_on_loopback() {
        assert!(check_endpoint("http://127.0.0.1:9000").unwrap());
        assert!(check_endpoint("http://localhost:9000/").unwrap());
        assert!(check_endpoint("http://[::1]:9000").unwrap());
        assert!(!check_endpoint("https://s3.example.org").unwrap());
        assert!(check_endpoint("http://10.0.0.1:9000").is_err());
        assert!(check_endpoint("http://example.org").is_err());
        assert!(check_endpoint("s3.example.org").is_err());
        assert!(is_loopback_host("127.3.4.5") && !is_loopback_host("128.0.0.1"));
        assert_eq!(host_of("u@H:1").as_deref(), Some("h"));
    }
}
