//! The provenance record of a digest re-attestation (`docs/medh5-format.md`
//! §5.8): one new agent and one activity of type `"other"` appended to the
//! `/meta` document's `provenance`, ids chosen as the reference chooses them
//! (`s<n>`/`p<n>` and `act_other_<n>`, `n` = count + 1, bumped past ids in use).

use crate::canonical_json::Json;

/// Who performed the re-attestation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Performer {
    /// A program, recorded as an agent of type `software` with id `s<n>`.
    Software {
        /// The program's name (`purehdf` by default).
        name: String,
        /// The program's version string.
        version: String,
    },
    /// A person named by `--by`.
    Person(String),
}

/// The `restamped` parameter: the paths that needed a new digest, or `"all"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Restamped {
    /// The sample-relative paths (`images/CT`) found mismatched, malformed or
    /// unattested before the restamp, sorted; written as a JSON array.
    Paths(Vec<String>),
    /// Nothing was found wrong (or the algorithm was replaced), so every
    /// digest was restamped; written as the string `"all"`.
    All,
}

/// What the activity records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reattestation {
    /// The agent the activity is attributed to.
    pub performer: Performer,
    /// Why the digests were re-attested (`--reason`), recorded verbatim as
    /// `params.reason`.
    pub reason: String,
    /// Which digests needed restamping, recorded as `params.restamped`.
    pub restamped: Restamped,
    /// `(from, to)` when the file's digest algorithm was replaced.
    pub algo_change: Option<(String, String)>,
}

/// Top-level members the reference writes after `provenance`.
const AFTER_PROVENANCE: [&str; 5] = [
    "quality",
    "splits",
    "acquisition",
    "deidentification",
    "extra",
];

fn ids_of(list: &[Json]) -> Vec<String> {
    list.iter()
        .filter_map(|x| match x.get("id") {
            Some(Json::Str(s)) => Some(s.clone()),
            _ => None,
        })
        .collect()
}

/// `<prefix><n>` with `n` from `list.len() + 1` up, the first not in use.
fn next_id(prefix: &str, list: &[Json]) -> String {
    let used = ids_of(list);
    let mut n = list.len() + 1;
    loop {
        let id = format!("{prefix}{n}");
        if !used.contains(&id) {
            return id;
        }
        n += 1;
    }
}

fn take_list(obj: &mut [(String, Json)], key: &str) -> Vec<Json> {
    match obj.iter_mut().find(|(k, _)| k == key) {
        Some((_, Json::Array(a))) => std::mem::take(a),
        _ => Vec::new(),
    }
}

fn put_list(obj: &mut Vec<(String, Json)>, key: &str, list: Vec<Json>) {
    match obj.iter_mut().find(|(k, _)| k == key) {
        Some((_, v)) => *v = Json::Array(list),
        None => obj.push((key.to_string(), Json::Array(list))),
    }
}

/// Append the agent and activity of `r` to the document `doc` (a JSON object;
/// other values are left unchanged).
pub fn record(doc: &mut Json, r: &Reattestation) {
    let Json::Object(members) = doc else {
        return;
    };
    let mut prov = match members.iter().position(|(k, _)| k == "provenance") {
        Some(i) => match members.get(i).map(|(_, v)| v.clone()) {
            Some(Json::Object(m)) => m,
            _ => Vec::new(),
        },
        None => Vec::new(),
    };
    let mut agents = take_list(&mut prov, "agents");
    let mut activities = take_list(&mut prov, "activities");
    let mut agent = Json::object();
    let agent_id = match &r.performer {
        Performer::Software { name, version } => {
            let id = next_id("s", &agents);
            agent.push("id", Json::Str(id.clone()));
            agent.push("type", "software".into());
            agent.push("name", Json::Str(name.clone()));
            agent.push("version", Json::Str(version.clone()));
            id
        }
        Performer::Person(name) => {
            let id = next_id("p", &agents);
            agent.push("id", Json::Str(id.clone()));
            agent.push("type", "person".into());
            agent.push("name", Json::Str(name.clone()));
            id
        }
    };
    agents.push(agent);
    let mut params = Json::object();
    params.push("reason", Json::Str(r.reason.clone()));
    params.push(
        "restamped",
        match &r.restamped {
            Restamped::All => "all".into(),
            Restamped::Paths(p) => Json::Array(p.iter().map(|s| Json::Str(s.clone())).collect()),
        },
    );
    params.push("verified_content", Json::Bool(false));
    if let Some((from, to)) = &r.algo_change {
        let mut a = Json::object();
        a.push("from", Json::Str(from.clone()));
        a.push("to", Json::Str(to.clone()));
        params.push("digest_algo", a);
    }
    let mut act = Json::object();
    act.push("id", Json::Str(next_id("act_other_", &activities)));
    act.push("type", "other".into());
    act.push("agent", Json::Str(agent_id));
    act.push("tool", "medh5 fix --rewrite-digests".into());
    act.push("params", params);
    activities.push(act);
    // agents before activities, as the reference writes them
    let mut fresh: Vec<(String, Json)> = vec![
        ("agents".to_string(), Json::Array(Vec::new())),
        ("activities".to_string(), Json::Array(Vec::new())),
    ];
    for (k, v) in prov {
        if k != "agents" && k != "activities" {
            fresh.push((k, v));
        }
    }
    put_list(&mut fresh, "agents", agents);
    put_list(&mut fresh, "activities", activities);
    let value = Json::Object(fresh);
    match members.iter_mut().find(|(k, _)| k == "provenance") {
        Some((_, v)) => *v = value,
        None => {
            let at = members
                .iter()
                .position(|(k, _)| AFTER_PROVENANCE.contains(&k.as_str()))
                .unwrap_or(members.len());
            members.insert(at, ("provenance".to_string(), value));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Json {
        Json::from_serde(&serde_json::from_str(s).unwrap())
    }

    #[test]
    fn first_record_matches_the_reference() {
        let mut doc = parse(r#"{"identity": {"sample_id": "v2"}, "deidentification": {}}"#);
        record(
            &mut doc,
            &Reattestation {
                performer: Performer::Software {
                    name: "medh5".into(),
                    version: "2.2.3".into(),
                },
                reason: "rebuilt by an external tool".into(),
                restamped: Restamped::Paths(vec!["images/CT".into()]),
                algo_change: None,
            },
        );
        assert_eq!(
            doc.to_meta(),
            r#"{"identity": {"sample_id": "v2"}, "provenance": {"agents": [{"id": "s1", "type": "software", "name": "medh5", "version": "2.2.3"}], "activities": [{"id": "act_other_1", "type": "other", "agent": "s1", "tool": "medh5 fix --rewrite-digests", "params": {"reason": "rebuilt by an external tool", "restamped": ["images/CT"], "verified_content": false}}]}, "deidentification": {}}"#
        );
    }

    #[test]
    fn ids_skip_those_in_use() {
        // As observed on the reference: agent s2 and activity act_other_2 taken.
        let mut doc = parse(
            r#"{"provenance": {"agents": [{"id": "s2", "type": "person", "name": "Ann"}], "activities": [{"id": "act_other_2", "type": "annotate", "agent": "s2"}]}}"#,
        );
        record(
            &mut doc,
            &Reattestation {
                performer: Performer::Person("Zed".into()),
                reason: "p".into(),
                restamped: Restamped::All,
                algo_change: Some(("md5".into(), "sha256".into())),
            },
        );
        let prov = doc.get("provenance").unwrap();
        let Some(Json::Array(agents)) = prov.get("agents") else {
            panic!()
        };
        assert_eq!(agents[1].get("id"), Some(&Json::Str("p2".into())));
        let Some(Json::Array(acts)) = prov.get("activities") else {
            panic!()
        };
        assert_eq!(acts[1].get("id"), Some(&Json::Str("act_other_3".into())));
        assert_eq!(
            acts[1].get("params").unwrap().to_meta(),
            r#"{"reason": "p", "restamped": "all", "verified_content": false, "digest_algo": {"from": "md5", "to": "sha256"}}"#
        );
    }
}
