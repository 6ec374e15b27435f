//! The data tree: znodes, sessions and `lastProcessedZxid`, and the transactions that
//! change them. Pure: the leader checks a txn against its outstanding view before it
//! proposes it (PrepRequestProcessor); every server applies committed txns in zxid order.

use super::zxid::Zxid;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// A transaction as it is proposed, logged and applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Txn {
    CreateSession {
        session: String,
    },
    /// Closing a session removes every ephemeral node it owns (DataTree.killSession).
    CloseSession {
        session: String,
    },
    Create {
        path: String,
        data: String,
        /// The owning session of an ephemeral node.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ephemeral: Option<String>,
    },
    Delete {
        path: String,
    },
    SetData {
        path: String,
        data: String,
    },
    /// A request the leader's checks refused (`ErrorTxn`): PrepRequestProcessor
    /// turns it into an error txn with its own zxid, proposed, logged and
    /// committed like any other, and the client hears the error only once it
    /// commits. It changes nothing in the tree. `request` is the refused txn's
    /// summary, for the trail.
    Error {
        error: ZkError,
        request: String,
    },
}

impl Txn {
    pub fn summary(&self) -> String {
        match self {
            Txn::CreateSession { session } => format!("createSession {session}"),
            Txn::CloseSession { session } => format!("closeSession {session}"),
            Txn::Create {
                path,
                ephemeral: Some(owner),
                ..
            } => format!("create {path} (ephemeral, {owner})"),
            Txn::Create { path, .. } => format!("create {path}"),
            Txn::Delete { path } => format!("delete {path}"),
            Txn::SetData { path, .. } => format!("setData {path}"),
            Txn::Error { error, request } => format!("error {error} ({request})"),
        }
    }
}

/// ZooKeeper's error codes for the txns we model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ZkError {
    NoNode,
    NodeExists,
    NotEmpty,
    NoChildrenForEphemerals,
    /// The session is not open (closed or never opened).
    SessionExpired,
    SessionExists,
    BadArguments,
}

impl fmt::Display for ZkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            ZkError::NoNode => "NoNode",
            ZkError::NodeExists => "NodeExists",
            ZkError::NotEmpty => "NotEmpty",
            ZkError::NoChildrenForEphemerals => "NoChildrenForEphemerals",
            ZkError::SessionExpired => "SessionExpired",
            ZkError::SessionExists => "SessionExists",
            ZkError::BadArguments => "BadArguments",
        };
        f.write_str(name)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZNode {
    pub data: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_owner: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataTree {
    /// Every znode but the root `/`.
    nodes: BTreeMap<String, ZNode>,
    sessions: BTreeSet<String>,
    last_processed: Zxid,
}

/// The state key of a session (paths start with `/`, so they never collide).
pub fn session_key(session: &str) -> String {
    format!("session:{session}")
}

/// A znode path: `/a/b`, no trailing slash, no empty components, not the root.
pub fn check_path(path: &str) -> Result<(), ZkError> {
    let ok = path.len() > 1
        && path.len() <= 256
        && path.starts_with('/')
        && !path.ends_with('/')
        && !path.contains("//")
        && path.chars().all(|c| !c.is_control());
    if ok {
        Ok(())
    } else {
        Err(ZkError::BadArguments)
    }
}

fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

impl DataTree {
    pub fn last_processed(&self) -> Zxid {
        self.last_processed
    }

    /// Set after a TRUNC or SNAP, as `ZKDatabase.setlastProcessedZxid` does.
    pub fn set_last_processed(&mut self, zxid: Zxid) {
        self.last_processed = zxid;
    }

    pub fn get(&self, path: &str) -> Option<&ZNode> {
        self.nodes.get(path)
    }

    pub fn has_session(&self, session: &str) -> bool {
        self.sessions.contains(session)
    }

    fn has_children(&self, path: &str) -> bool {
        let prefix = format!("{path}/");
        self.nodes
            .range(prefix.clone()..)
            .next()
            .is_some_and(|(k, _)| k.starts_with(&prefix))
    }

    /// Would `txn` succeed on this tree? (PrepRequestProcessor's checks.)
    pub fn check(&self, txn: &Txn) -> Result<(), ZkError> {
        match txn {
            Txn::CreateSession { session } => {
                if self.sessions.contains(session) {
                    return Err(ZkError::SessionExists);
                }
            }
            Txn::CloseSession { session } => {
                if !self.sessions.contains(session) {
                    return Err(ZkError::SessionExpired);
                }
            }
            Txn::Create {
                path, ephemeral, ..
            } => {
                check_path(path)?;
                if self.nodes.contains_key(path) {
                    return Err(ZkError::NodeExists);
                }
                let parent = parent(path);
                if parent != "/" {
                    match self.nodes.get(parent) {
                        None => return Err(ZkError::NoNode),
                        Some(node) if node.ephemeral_owner.is_some() => {
                            return Err(ZkError::NoChildrenForEphemerals)
                        }
                        Some(_) => {}
                    }
                }
                if let Some(owner) = ephemeral {
                    if !self.sessions.contains(owner) {
                        return Err(ZkError::SessionExpired);
                    }
                }
            }
            Txn::Delete { path } => {
                check_path(path)?;
                if !self.nodes.contains_key(path) {
                    return Err(ZkError::NoNode);
                }
                if self.has_children(path) {
                    return Err(ZkError::NotEmpty);
                }
            }
            Txn::SetData { path, .. } => {
                check_path(path)?;
                if !self.nodes.contains_key(path) {
                    return Err(ZkError::NoNode);
                }
            }
            Txn::Error { .. } => {}
        }
        Ok(())
    }

    /// Apply a committed txn. Like `DataTree.processTxn`, a txn that fails on this
    /// tree (it disagrees with the leader's) changes nothing but still advances
    /// `lastProcessedZxid`. Returns the state keys it touched.
    pub fn apply(&mut self, zxid: Zxid, txn: &Txn) -> Result<Vec<String>, ZkError> {
        if zxid > self.last_processed {
            self.last_processed = zxid;
        }
        self.check(txn)?;
        let touched = match txn {
            Txn::CreateSession { session } => {
                self.sessions.insert(session.clone());
                vec![session_key(session)]
            }
            Txn::CloseSession { session } => {
                self.sessions.remove(session);
                let owned: Vec<String> = self
                    .nodes
                    .iter()
                    .filter(|(_, n)| n.ephemeral_owner.as_deref() == Some(session))
                    .map(|(p, _)| p.clone())
                    .collect();
                for path in &owned {
                    self.nodes.remove(path);
                }
                let mut touched = vec![session_key(session)];
                touched.extend(owned);
                touched
            }
            Txn::Create {
                path,
                data,
                ephemeral,
            } => {
                let node = ZNode {
                    data: data.clone(),
                    ephemeral_owner: ephemeral.clone(),
                };
                self.nodes.insert(path.clone(), node);
                vec![path.clone()]
            }
            Txn::Delete { path } => {
                self.nodes.remove(path);
                vec![path.clone()]
            }
            Txn::SetData { path, data } => {
                self.nodes.get_mut(path).expect("checked").data = data.clone();
                vec![path.clone()]
            }
            Txn::Error { .. } => Vec::new(),
        };
        Ok(touched)
    }

    /// The replicated state as the divergence checker compares it: every znode
    /// (`data`, plus `[ephemeral <session>]`) and every open session.
    pub fn view(&self) -> BTreeMap<String, String> {
        let mut view = BTreeMap::new();
        for (path, node) in &self.nodes {
            let value = match &node.ephemeral_owner {
                Some(owner) => format!("{} [ephemeral {owner}]", node.data),
                None => node.data.clone(),
            };
            view.insert(path.clone(), value);
        }
        for session in &self.sessions {
            view.insert(session_key(session), "open".to_string());
        }
        view
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(path: &str, ephemeral: Option<&str>) -> Txn {
        Txn::Create {
            path: path.into(),
            data: "d".into(),
            ephemeral: ephemeral.map(str::to_string),
        }
    }

    #[test]
    fn closing_a_session_removes_its_ephemeral_nodes() {
        let mut tree = DataTree::default();
        let s = Txn::CreateSession {
            session: "s1".into(),
        };
        tree.apply(Zxid::new(1, 1), &s).unwrap();
        tree.apply(Zxid::new(1, 2), &create("/lock", Some("s1")))
            .unwrap();
        tree.apply(Zxid::new(1, 3), &create("/keep", None)).unwrap();
        assert_eq!(tree.view()["/lock"], "d [ephemeral s1]");
        let close = Txn::CloseSession {
            session: "s1".into(),
        };
        let touched = tree.apply(Zxid::new(1, 4), &close).unwrap();
        assert_eq!(touched, vec!["session:s1".to_string(), "/lock".to_string()]);
        assert!(tree.get("/lock").is_none());
        assert!(tree.get("/keep").is_some());
        assert_eq!(tree.last_processed(), Zxid::new(1, 4));
    }

    #[test]
    fn a_failing_txn_changes_nothing_but_advances_last_processed() {
        let mut tree = DataTree::default();
        tree.apply(Zxid::new(1, 1), &create("/k", None)).unwrap();
        let before = tree.view();
        assert_eq!(
            tree.apply(Zxid::new(1, 2), &create("/k", None)),
            Err(ZkError::NodeExists)
        );
        assert_eq!(tree.view(), before);
        assert_eq!(tree.last_processed(), Zxid::new(1, 2));
    }

    #[test]
    fn prep_checks_parents_children_and_sessions() {
        let mut tree = DataTree::default();
        assert_eq!(tree.check(&create("/a/b", None)), Err(ZkError::NoNode));
        assert_eq!(tree.check(&create("/a/", None)), Err(ZkError::BadArguments));
        assert_eq!(
            tree.check(&create("/e", Some("s9"))),
            Err(ZkError::SessionExpired)
        );
        tree.apply(Zxid::new(1, 1), &create("/a", None)).unwrap();
        tree.apply(Zxid::new(1, 2), &create("/a/b", None)).unwrap();
        assert_eq!(
            tree.check(&Txn::Delete { path: "/a".into() }),
            Err(ZkError::NotEmpty)
        );
        // `/ab` is not a child of `/a`.
        tree.apply(Zxid::new(1, 3), &create("/ab", None)).unwrap();
        tree.apply(
            Zxid::new(1, 4),
            &Txn::Delete {
                path: "/a/b".into(),
            },
        )
        .unwrap();
        assert_eq!(tree.check(&Txn::Delete { path: "/a".into() }), Ok(()));
    }
}
