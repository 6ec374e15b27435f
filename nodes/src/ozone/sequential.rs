//! The history checker's view of the OM namespace: what clients were told about
//! volumes, buckets, directories and files must fit one order of their requests.
//!
//! Objects: a volume, a bucket, and in a bucket each top-level entry with
//! everything under it (`/v/b/d1` holds `/v/b/d1/f2`), so that a recursive
//! delete, a parent that must exist and a non-empty directory are all decided
//! within one object. A directory or file object's state is its set of paths,
//! each a `dir` or a `file`. The rules are the requests' own (`request.rs`):
//! `mkdir` and `put_file` need their parent directory and refuse an existing
//! path (`DIRECTORY_ALREADY_EXISTS`, `FILE_ALREADY_EXISTS`, else
//! `DIRECTORY_NOT_FOUND` for a missing parent); `delete` refuses a missing path
//! (`KEY_NOT_FOUND`) and a non-empty directory unless recursive
//! (`DIRECTORY_NOT_EMPTY`); a recursive delete takes the subtree with it (the
//! children DirectoryDeletingService purges later are unreachable already).
//! Answers that depend on another object (a bucket that does not exist, a quota)
//! are refusals the ops declare, never judged here.

use super::types::{parent_of, split_path};
use super::OmOp;
use faultline_api::{OpResult, Sequential};
use serde_json::{Map, Value};

pub struct Namespace;

/// The object a path belongs to: its bucket and first component.
fn entry_object(path: &str) -> String {
    match split_path(path) {
        Some((volume, bucket, rest)) => {
            let first = rest.split('/').next().unwrap_or("");
            format!("/{volume}/{bucket}/{first}")
        }
        None => path.to_string(),
    }
}

/// The code an answer starts with (`DIRECTORY_NOT_FOUND Parent directory ...`),
/// `OK` for a success.
fn code(answer: &OpResult) -> &str {
    if answer.ok {
        return "OK";
    }
    answer
        .error
        .as_deref()
        .and_then(|e| e.split_whitespace().next())
        .unwrap_or("")
}

/// What a request does in an object's state: the code it answers, and the state after.
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "serde_json::Value is not our enum: every other JSON shape takes the same arm"
)]
fn run(state: &Value, op: &OmOp) -> Option<(&'static str, Value)> {
    let mut paths: Map<String, Value> = match state {
        Value::Null => Map::new(),
        Value::Object(map) => map.clone(),
        _ => return None,
    };
    let kind = |paths: &Map<String, Value>, p: &str| {
        paths.get(p).and_then(Value::as_str).map(str::to_string)
    };
    let parent_ok = |paths: &Map<String, Value>, p: &str| {
        let parent = parent_of(p);
        match split_path(parent) {
            Some((_, _, rest)) if rest.is_empty() => true,
            _ => kind(paths, parent).as_deref() == Some("dir"),
        }
    };
    let code = match op {
        OmOp::CreateVolume { .. } | OmOp::CreateBucket { .. } => {
            if state.is_null() {
                paths.insert("exists".into(), Value::Bool(true));
                "OK"
            } else if matches!(op, OmOp::CreateVolume { .. }) {
                "VOLUME_ALREADY_EXISTS"
            } else {
                "BUCKET_ALREADY_EXISTS"
            }
        }
        OmOp::Mkdir { path } | OmOp::PutFile { path, .. } => {
            let what = if matches!(op, OmOp::Mkdir { .. }) {
                "dir"
            } else {
                "file"
            };
            if !parent_ok(&paths, path) {
                "DIRECTORY_NOT_FOUND"
            } else {
                match kind(&paths, path).as_deref() {
                    Some("dir") => "DIRECTORY_ALREADY_EXISTS",
                    Some(_) => "FILE_ALREADY_EXISTS",
                    None => {
                        paths.insert(path.clone(), Value::String(what.into()));
                        "OK"
                    }
                }
            }
        }
        OmOp::Delete { path, recursive } => {
            let below = format!("{path}/");
            match kind(&paths, path).as_deref() {
                None => "KEY_NOT_FOUND",
                Some("dir") if !recursive && paths.keys().any(|p| p.starts_with(&below)) => {
                    "DIRECTORY_NOT_EMPTY"
                }
                Some(_) => {
                    paths.retain(|p, _| p != path && !p.starts_with(&below));
                    "OK"
                }
            }
        }
        OmOp::SetQuota { .. }
        | OmOp::CreateSnapshot { .. }
        | OmOp::DeleteSnapshot { .. }
        | OmOp::PurgeSnapshots { .. }
        | OmOp::GetBucket { .. }
        | OmOp::ListSnapshots { .. }
        | OmOp::RunDds {}
        | OmOp::RunKds {} => return None,
    };
    let after = if paths.is_empty() {
        Value::Null
    } else {
        Value::Object(paths)
    };
    Some((code, after))
}

impl Sequential for Namespace {
    fn objects(&self, op: &Value, _node: &str) -> Vec<String> {
        let object = match serde_json::from_value::<OmOp>(op.clone()) {
            Ok(OmOp::CreateVolume { volume }) => format!("volume /{volume}"),
            Ok(OmOp::CreateBucket { bucket, .. }) => format!("bucket {bucket}"),
            Ok(OmOp::Mkdir { path } | OmOp::PutFile { path, .. } | OmOp::Delete { path, .. }) => {
                entry_object(&path)
            }
            Ok(_) | Err(_) => "-".into(),
        };
        vec![object]
    }

    fn step(&self, states: &[Value], op: &Value, answer: Option<&OpResult>) -> Option<Vec<Value>> {
        let op: OmOp = serde_json::from_value(op.clone()).ok()?;
        let (expected, after) = run(states.first()?, &op)?;
        match answer {
            None => Some(vec![after]),
            Some(answer) if code(answer) == expected => Some(vec![after]),
            Some(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step(state: &Value, op: Value, answer: OpResult) -> Option<Value> {
        Namespace
            .step(std::slice::from_ref(state), &op, Some(&answer))
            .map(|mut v| v.remove(0))
    }

    #[test]
    fn answers_follow_the_requests_rules() {
        let ns = Namespace;
        let mkdir = json!({"op": "mkdir", "path": "/v/b/d1"});
        let file = json!({"op": "put_file", "path": "/v/b/d1/f", "size": 3});
        assert_eq!(ns.objects(&mkdir, "om1"), ["/v/b/d1"]);
        assert_eq!(ns.objects(&file, "om1"), ["/v/b/d1"]);
        let missing_parent =
            OpResult::error("DIRECTORY_NOT_FOUND Parent directory not found: /v/b/d1");
        assert_eq!(
            step(&Value::Null, file.clone(), missing_parent.clone()),
            Some(Value::Null)
        );
        assert!(step(&Value::Null, file.clone(), OpResult::ok()).is_none());
        let dir = step(&Value::Null, mkdir.clone(), OpResult::ok()).unwrap();
        let full = step(&dir, file.clone(), OpResult::ok()).unwrap();
        assert!(step(&full, file.clone(), missing_parent).is_none());
        let not_empty = OpResult::error("DIRECTORY_NOT_EMPTY Directory is not empty: /v/b/d1");
        let delete = json!({"op": "delete", "path": "/v/b/d1", "recursive": false});
        assert_eq!(step(&full, delete, not_empty), Some(full.clone()));
        let recursive = json!({"op": "delete", "path": "/v/b/d1", "recursive": true});
        assert_eq!(step(&full, recursive, OpResult::ok()), Some(Value::Null));
        let again = OpResult::error("DIRECTORY_ALREADY_EXISTS Directory exists: /v/b/d1");
        assert_eq!(step(&dir, mkdir, again), Some(dir.clone()));
    }
}
