//! Credentials and endpoints read the way the cloud command lines read them:
//! the environment first, then (for AWS) the profile in
//! `~/.aws/credentials` and `~/.aws/config`, parsed here.
//!
//! AWS: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
//! `AWS_REGION` / `AWS_DEFAULT_REGION`, `AWS_ENDPOINT_URL_S3` /
//! `AWS_ENDPOINT_URL`, `AWS_PROFILE` (default `default`),
//! `AWS_SHARED_CREDENTIALS_FILE`, `AWS_CONFIG_FILE`. A profile supplies what
//! the environment does not (`aws_access_key_id`, `aws_secret_access_key`,
//! `aws_session_token`, `region`, `endpoint_url`). Azure: `AZURE_STORAGE_ACCOUNT`,
//! `AZURE_STORAGE_KEY`, `AZURE_STORAGE_SAS_TOKEN`,
//! `AZURE_STORAGE_CONNECTION_STRING` (the Azure CLI's names) besides
//! object_store's own `AZURE_*` names. GCS: `GOOGLE_APPLICATION_CREDENTIALS`
//! and object_store's `GOOGLE_*` names.

use std::collections::HashMap;
use std::path::PathBuf;

/// What the AWS environment and profile files say (each field `None` when
/// neither does).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AwsSettings {
    /// Access key id.
    pub access_key_id: Option<String>,
    /// Secret access key.
    pub secret_access_key: Option<String>,
    /// Session token (temporary credentials).
    pub session_token: Option<String>,
    /// Region.
    pub region: Option<String>,
    /// Endpoint URL of an S3-compatible server.
    pub endpoint: Option<String>,
    /// The profile the values came from.
    pub profile: String,
}

/// Sections of an INI file (`[name]`, `key = value`, `#`/`;` comments); keys
/// are lowercased, values trimmed. Indented continuation lines (nested
/// `s3 =` settings) are skipped.
pub fn parse_ini(text: &str) -> HashMap<String, HashMap<String, String>> {
    let mut out: HashMap<String, HashMap<String, String>> = HashMap::new();
    let mut section: Option<String> = None;
    for raw in text.lines() {
        if raw.starts_with([' ', '\t']) {
            continue;
        }
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = name.trim().to_string();
            out.entry(name.clone()).or_default();
            section = Some(name);
            continue;
        }
        if let (Some(sec), Some((k, v))) = (&section, line.split_once('=')) {
            let v = v.trim();
            if !v.is_empty() {
                out.entry(sec.clone())
                    .or_default()
                    .insert(k.trim().to_ascii_lowercase(), v.to_string());
            }
        }
    }
    out
}

fn home(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env("HOME")
        .or_else(|| env("USERPROFILE"))
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// The AWS settings for `env` (a lookup such as `std::env::var(..).ok()`):
/// environment first, then the profile's entry in the credentials file, then
/// its entry in the config file (`[default]` or `[profile NAME]`). Unreadable
/// files count as absent, as for the AWS CLI.
pub fn aws_settings(env: &dyn Fn(&str) -> Option<String>) -> AwsSettings {
    let get = |k: &str| env(k).filter(|v| !v.is_empty());
    let profile = get("AWS_PROFILE")
        .or_else(|| get("AWS_DEFAULT_PROFILE"))
        .unwrap_or_else(|| "default".to_string());
    let read = |var: &str, default: &str| -> HashMap<String, HashMap<String, String>> {
        let path = get(var)
            .map(PathBuf::from)
            .or_else(|| home(env).map(|h| h.join(".aws").join(default)));
        path.and_then(|p| std::fs::read_to_string(p).ok())
            .map(|t| parse_ini(&t))
            .unwrap_or_default()
    };
    let creds = read("AWS_SHARED_CREDENTIALS_FILE", "credentials");
    let config = read("AWS_CONFIG_FILE", "config");
    let empty = HashMap::new();
    let cred_sec = creds.get(&profile).unwrap_or(&empty);
    let conf_sec = if profile == "default" {
        config.get("default")
    } else {
        config.get(&format!("profile {profile}"))
    }
    .unwrap_or(&empty);
    let from_files = |k: &str| cred_sec.get(k).or_else(|| conf_sec.get(k)).cloned();

    // Environment keys win only as a pair, as the CLI takes them.
    let (access_key_id, secret_access_key, session_token) =
        match (get("AWS_ACCESS_KEY_ID"), get("AWS_SECRET_ACCESS_KEY")) {
            (Some(id), Some(secret)) => (Some(id), Some(secret), get("AWS_SESSION_TOKEN")),
            _ => (
                from_files("aws_access_key_id"),
                from_files("aws_secret_access_key"),
                from_files("aws_session_token"),
            ),
        };
    AwsSettings {
        access_key_id,
        secret_access_key,
        session_token,
        region: get("AWS_REGION")
            .or_else(|| get("AWS_DEFAULT_REGION"))
            .or_else(|| conf_sec.get("region").cloned()),
        endpoint: get("AWS_ENDPOINT_URL_S3")
            .or_else(|| get("AWS_ENDPOINT_URL"))
            .or_else(|| conf_sec.get("endpoint_url").cloned()),
        profile,
    }
}

/// Azure account, key and SAS token from the Azure CLI's variables
/// (`AZURE_STORAGE_CONNECTION_STRING` parts fill what the others leave).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AzureSettings {
    /// Storage account name.
    pub account: Option<String>,
    /// Account key.
    pub key: Option<String>,
    /// Shared access signature (query string, without `?`).
    pub sas: Option<String>,
    /// Blob endpoint from a connection string.
    pub endpoint: Option<String>,
}

/// The Azure settings for `env`.
pub fn azure_settings(env: &dyn Fn(&str) -> Option<String>) -> AzureSettings {
    let get = |k: &str| env(k).filter(|v| !v.is_empty());
    let mut conn: HashMap<String, String> = HashMap::new();
    if let Some(cs) = get("AZURE_STORAGE_CONNECTION_STRING") {
        for part in cs.split(';') {
            if let Some((k, v)) = part.split_once('=') {
                conn.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
    }
    AzureSettings {
        account: get("AZURE_STORAGE_ACCOUNT").or_else(|| conn.get("accountname").cloned()),
        key: get("AZURE_STORAGE_KEY").or_else(|| conn.get("accountkey").cloned()),
        sas: get("AZURE_STORAGE_SAS_TOKEN")
            .or_else(|| conn.get("sharedaccesssignature").cloned())
            .map(|s| s.trim_start_matches('?').to_string()),
        endpoint: conn.get("blobendpoint").cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &[(&str, String)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        move |k: &str| m.get(k).cloned()
    }

    #[test]
    fn profile_files_fill_what_the_environment_leaves() {
        let dir = std::env::temp_dir().join(format!("purehdf-aws-{}", std::process::id()));
        std::fs::create_dir_all(dir.join(".aws")).unwrap();
        std::fs::write(
            dir.join(".aws/credentials"),
            "[default]\naws_access_key_id = DEF\naws_secret_access_key = defsecret\n\n\
             # comment\n[lab]\naws_access_key_id=LAB\naws_secret_access_key = labsecret\n\
             aws_session_token = tok\n",
        )
        .unwrap();
        std::fs::write(
            dir.join(".aws/config"),
            "[default]\nregion = eu-west-1\n[profile lab]\nregion = us-west-2\n\
             endpoint_url = http://127.0.0.1:9000\ns3 =\n  addressing_style = path\n",
        )
        .unwrap();
        let home = dir.to_string_lossy().to_string();

        let s = aws_settings(&env_of(&[("HOME", home.clone())]));
        assert_eq!(s.access_key_id.as_deref(), Some("DEF"));
        assert_eq!(s.secret_access_key.as_deref(), Some("defsecret"));
        assert_eq!(s.region.as_deref(), Some("eu-west-1"));
        assert_eq!(s.endpoint, None);

        let s = aws_settings(&env_of(&[
            ("HOME", home.clone()),
            ("AWS_PROFILE", "lab".into()),
        ]));
        assert_eq!(s.access_key_id.as_deref(), Some("LAB"));
        assert_eq!(s.session_token.as_deref(), Some("tok"));
        assert_eq!(s.region.as_deref(), Some("us-west-2"));
        assert_eq!(s.endpoint.as_deref(), Some("http://127.0.0.1:9000"));

        let s = aws_settings(&env_of(&[
            ("HOME", home.clone()),
            ("AWS_PROFILE", "lab".into()),
            ("AWS_ACCESS_KEY_ID", "ENV".into()),
            ("AWS_SECRET_ACCESS_KEY", "envsecret".into()),
            ("AWS_REGION", "ap-south-1".into()),
            ("AWS_ENDPOINT_URL", "http://localhost:1".into()),
        ]));
        assert_eq!(s.access_key_id.as_deref(), Some("ENV"));
        assert_eq!(s.session_token, None);
        assert_eq!(s.region.as_deref(), Some("ap-south-1"));
        assert_eq!(s.endpoint.as_deref(), Some("http://localhost:1"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn azure_connection_string() {
        let s = azure_settings(&env_of(&[(
            "AZURE_STORAGE_CONNECTION_STRING",
            "DefaultEndpointsProtocol=http;AccountName=dev;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:10000/dev;"
                .into(),
        )]));
        assert_eq!(s.account.as_deref(), Some("dev"));
        assert_eq!(s.key.as_deref(), Some("a2V5"));
        assert_eq!(s.endpoint.as_deref(), Some("http://127.0.0.1:10000/dev"));
    }

    #[test]
    fn ini_sections_and_comments() {
        let m = parse_ini("; c\n[a]\nX = 1\n y = nested\n[b]\nz=\n");
        assert_eq!(m["a"]["x"], "1");
        assert!(m["b"].is_empty());
    }
}
