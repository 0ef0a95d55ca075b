//! Building an object_store client for a parsed URL: credentials and endpoint
//! (see `credentials`), timeouts and retries (see [`RemoteOptions`]), and the
//! TLS provider (rustls over ring, installed once).

use std::sync::Arc;

use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::http::HttpBuilder;
use object_store::path::Path as StorePath;
use object_store::{BackoffConfig, ClientOptions, ObjectStore, RetryConfig};

use super::credentials::{aws_settings, azure_settings};
use super::url::{check_endpoint, is_loopback_host, parse, RemoteUrl};
use super::RemoteOptions;
use crate::error::{Error, Result};

/// Install rustls' ring provider as the process default (once; a provider
/// installed earlier by the application is kept).
fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            // ring builds in static binaries (aws-lc-rs needs its C build);
            // rustls marks it deprecated for lacking post-quantum key exchange.
            // Err only when another thread installed one first: fine.
            #[allow(deprecated)]
            let provider = rustls::crypto::ring::default_provider();
            let _ = provider.install_default();
        }
    });
}

fn config_error(url: &str, e: impl std::fmt::Display) -> Error {
    Error::Remote {
        url: url.to_string(),
        range: "-".to_string(),
        reason: format!("cannot set up the store: {e}"),
    }
}

/// Client options. `plain_only`: every request goes to a plain `http://`
/// loopback endpoint, so the system's trust store (read from disk and parsed
/// at client construction, about as long as a loopback round trip) is not
/// loaded.
fn client_options(opts: &RemoteOptions, allow_http: bool, plain_only: bool) -> ClientOptions {
    ClientOptions::new()
        .with_allow_http(allow_http)
        .with_no_system_certificates(plain_only)
        .with_timeout(opts.timeout)
        .with_connect_timeout(opts.connect_timeout)
        .with_pool_max_idle_per_host(opts.range.in_flight.max(1))
}

pub(crate) fn retry_config(opts: &RemoteOptions) -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: opts.backoff,
            max_backoff: opts.backoff.saturating_mul(32),
            base: 2.0,
        },
        max_retries: opts.retries,
        retry_timeout: opts.retry_timeout,
    }
}

/// The environment as a lookup.
fn process_env(k: &str) -> Option<String> {
    std::env::var(k).ok()
}

/// A store for `url` and the object's path in it.
pub(crate) fn store_for(
    url: &str,
    opts: &RemoteOptions,
) -> Result<(Arc<dyn ObjectStore>, StorePath)> {
    install_tls_provider();
    let parsed = parse(url)?;
    let retry = retry_config(opts);
    let err = |e: object_store::Error| config_error(url, e);
    match parsed {
        RemoteUrl::S3 { bucket, key } => {
            let aws = aws_settings(&process_env);
            let endpoint = opts.endpoint.clone().or(aws.endpoint.clone());
            let allow_http = match &endpoint {
                Some(e) => check_endpoint(e)?,
                None => false,
            };
            // Static keys (or none) and a plain endpoint: no TLS connection
            // is ever made (credential services are reached over https only
            // when keys come from elsewhere).
            let static_keys =
                opts.anonymous || (aws.access_key_id.is_some() && aws.secret_access_key.is_some());
            let plain_only = allow_http
                && static_keys
                && endpoint
                    .as_deref()
                    .is_some_and(|e| e.to_ascii_lowercase().starts_with("http://"));
            // object_store's own AWS_* names first (web identity, container
            // credentials, ...), then ours on top.
            let mut b = AmazonS3Builder::from_env()
                .with_bucket_name(bucket)
                .with_region(aws.region.clone().unwrap_or_else(|| "us-east-1".into()))
                .with_retry(retry)
                .with_client_options(client_options(opts, allow_http, plain_only))
                .with_allow_http(allow_http);
            if let Some(e) = endpoint {
                b = b.with_endpoint(e).with_virtual_hosted_style_request(false);
            }
            if let (Some(id), Some(secret)) = (&aws.access_key_id, &aws.secret_access_key) {
                b = b.with_access_key_id(id).with_secret_access_key(secret);
                if let Some(t) = &aws.session_token {
                    b = b.with_token(t);
                }
            }
            if opts.anonymous {
                b = b.with_skip_signature(true);
            }
            Ok((Arc::new(b.build().map_err(err)?), StorePath::from(key)))
        }
        RemoteUrl::Gcs { bucket, key } => {
            let mut b = GoogleCloudStorageBuilder::from_env()
                .with_bucket_name(bucket)
                .with_retry(retry);
            let mut allow_http = false;
            if let Some(e) = &opts.endpoint {
                allow_http = check_endpoint(e)?;
                b = b.with_base_url(e.trim_end_matches('/'));
            }
            b = b.with_client_options(client_options(opts, allow_http, false));
            if opts.anonymous {
                b = b.with_skip_signature(true);
            }
            Ok((Arc::new(b.build().map_err(err)?), StorePath::from(key)))
        }
        RemoteUrl::Azure {
            container,
            account,
            key,
        } => {
            let az = azure_settings(&process_env);
            let mut b = MicrosoftAzureBuilder::from_env()
                .with_container_name(container)
                .with_retry(retry);
            if let Some(a) = account.or(az.account) {
                b = b.with_account(a);
            }
            if let Some(k) = az.key {
                b = b.with_access_key(k);
            }
            if let Some(sas) = az.sas {
                let pairs: Vec<(String, String)> = sas
                    .split('&')
                    .filter_map(|kv| kv.split_once('='))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                b = b.with_sas_authorization(pairs);
            }
            let endpoint = opts.endpoint.clone().or(az.endpoint);
            let mut allow_http = false;
            if let Some(e) = endpoint {
                allow_http = check_endpoint(&e)?;
                b = b.with_endpoint(e).with_allow_http(allow_http);
            }
            b = b.with_client_options(client_options(opts, allow_http, false));
            if opts.anonymous {
                b = b.with_skip_signature(true);
            }
            Ok((Arc::new(b.build().map_err(err)?), StorePath::from(key)))
        }
        RemoteUrl::Http {
            base,
            host,
            tls,
            path,
            query,
        } => {
            if !tls && !is_loopback_host(&host) {
                return Err(Error::Remote {
                    url: url.to_string(),
                    range: "-".into(),
                    reason: "plain http:// is allowed only for loopback hosts; use https://".into(),
                });
            }
            // A query string (a pre-signed URL) must reach the server as
            // given: the whole URL is the store's base and the object's path
            // is empty, so every request goes to exactly that URL.
            let (base, path) = match query {
                Some(_) => (url.to_string(), StorePath::default()),
                None => {
                    let p = StorePath::from_url_path(&path).map_err(|e| config_error(url, e))?;
                    (base, p)
                }
            };
            let b = HttpBuilder::new()
                .with_url(base)
                .with_retry(retry)
                .with_client_options(client_options(opts, !tls, !tls));
            Ok((Arc::new(b.build().map_err(err)?), path))
        }
    }
}
