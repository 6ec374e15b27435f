//! ZooKeeper's guarantees (its Programmer's Guide, "Consistency Guarantees"):
//! writes (`create`, `set_data`, `delete`, sessions) are linearizable, with their
//! errors (`NodeExists`, `NoNode`, `NotEmpty`, ...) as definite answers; a read
//! (`get`) is served from one server's local tree, so it may be stale, but a
//! client session never sees an older state than it already saw (monotonic
//! reads, its own completed writes included); `sync` then `get` sees every write
//! that completed before the sync began.
//!
//! The state keeps, besides the tree, what each session has seen: a version in
//! the group's write order. A read may return the value any version from its
//! session's view to now had; the checker takes the oldest that fits (any later
//! one would only constrain the session's next reads more), so the step stays
//! deterministic. Versions no session can read any more are folded away.
//!
//! Groups: a znode's ops are one group, joined with its parent's when a create
//! or delete could depend on the parent (it may not exist, or may be asked to go
//! while it has children) and with the sessions whose ephemeral nodes it holds.
//! A parent that is *fixed* splits its children into independent groups: it was
//! created (persistent, answered ok) before any op under it was invoked, no op
//! deletes it, and its own parent is fixed (the root always is). Linearizability
//! is local (Herlihy and Wing), so the writes checked per znode are checked; a
//! session's reads are monotonic within a group, and across groups they are not
//! compared (that needs the zxid each read saw).

use super::spec::{Entry, Scope, Spec, Values};
use crate::judge::history::{History, Op};
use std::collections::{BTreeMap, BTreeSet};

/// A write's answer, as the model names its errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Answer {
    Ok,
    NoNode,
    NodeExists,
    NotEmpty,
    NoChildrenForEphemerals,
    SessionExpired,
    SessionExists,
    BadArguments,
}

impl Answer {
    fn parse(error: Option<&str>) -> Result<Answer, String> {
        Ok(match error {
            None => Answer::Ok,
            Some("NoNode") => Answer::NoNode,
            Some("NodeExists") => Answer::NodeExists,
            Some("NotEmpty") => Answer::NotEmpty,
            Some("NoChildrenForEphemerals") => Answer::NoChildrenForEphemerals,
            Some("SessionExpired") => Answer::SessionExpired,
            Some("SessionExists") => Answer::SessionExists,
            Some("BadArguments") => Answer::BadArguments,
            Some(other) => return Err(format!("`{other}` is not a ZooKeeper answer")),
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZkOp {
    Create {
        path: u32,
        data: u32,
        owner: Option<u32>,
        answer: Answer,
    },
    SetData {
        path: u32,
        data: u32,
        answer: Answer,
    },
    Delete {
        path: u32,
        answer: Answer,
    },
    /// `saw`: the data read, `None` for `NoNode`. `last`: the session's last
    /// read or sync in this group (set by `prepare`).
    Get {
        path: u32,
        saw: Option<u32>,
        last: bool,
    },
    Sync {
        last: bool,
    },
    OpenSession {
        session: u32,
        answer: Answer,
    },
    CloseSession {
        session: u32,
        answer: Answer,
    },
    /// A path ZooKeeper refuses (`BadArguments` whatever the state).
    Invalid {
        answer: Answer,
    },
}

impl ZkOp {
    /// The znode the op is on, if it is on one.
    fn path(&self) -> Option<u32> {
        match self {
            ZkOp::Create { path, .. }
            | ZkOp::SetData { path, .. }
            | ZkOp::Delete { path, .. }
            | ZkOp::Get { path, .. } => Some(*path),
            ZkOp::Sync { .. }
            | ZkOp::OpenSession { .. }
            | ZkOp::CloseSession { .. }
            | ZkOp::Invalid { .. } => None,
        }
    }
}

/// The data of a fixed znode seeded into a group that has no op on it.
const UNREAD_DATA: u32 = u32::MAX;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Node {
    data: u32,
    owner: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ZkState {
    nodes: BTreeMap<u32, Node>,
    sessions: BTreeSet<u32>,
    /// Changes applied since the oldest version still readable (version 0).
    version: u32,
    /// Each path's data at version 0 (absent paths are not listed).
    base: BTreeMap<u32, u32>,
    /// (version, path, data from that version on).
    past: Vec<(u32, u32, Option<u32>)>,
    /// Each session still to read in this group: the oldest version it may see.
    views: BTreeMap<u64, u32>,
}

impl ZkState {
    fn data_at(&self, path: u32, version: u32) -> Option<u32> {
        self.past
            .iter()
            .rev()
            .find(|(v, p, _)| *p == path && *v <= version)
            .map(|(_, _, d)| *d)
            .unwrap_or_else(|| self.base.get(&path).copied())
    }

    fn change(&mut self, path: u32, data: Option<u32>) {
        match data {
            Some(d) => {
                let owner = self.nodes.get(&path).and_then(|n| n.owner);
                self.nodes.insert(path, Node { data: d, owner });
            }
            None => {
                self.nodes.remove(&path);
            }
        }
        self.past.push((self.version, path, data));
    }

    /// Fold versions no session can read any more into `base`, renumbering.
    fn fold(&mut self) {
        let oldest = self.views.values().copied().min().unwrap_or(self.version);
        if oldest == 0 {
            return;
        }
        let keep = self
            .past
            .iter()
            .position(|(v, _, _)| *v > oldest)
            .unwrap_or(self.past.len());
        for (_, path, data) in self.past.drain(..keep) {
            match data {
                Some(d) => self.base.insert(path, d),
                None => self.base.remove(&path),
            };
        }
        for (v, _, _) in &mut self.past {
            *v -= oldest;
        }
        for v in self.views.values_mut() {
            *v -= oldest;
        }
        self.version -= oldest;
    }
}

#[derive(Clone, Debug, Default)]
pub struct ZooKeeper {
    values: Values,
    paths: Vec<String>,
    path_ids: BTreeMap<String, u32>,
    /// Each path's parent, when it is not the root.
    parents: Vec<Option<u32>>,
    sessions: BTreeMap<String, u32>,
    /// Fixed znodes (see the module comment), found by [`Spec::survey`].
    fixed: BTreeSet<String>,
}

/// The parent of a valid path; `None` for a top-level znode (its parent is the
/// root, which always exists).
fn parent_of(path: &str) -> Option<&str> {
    match path.rfind('/') {
        Some(0) | None => None,
        Some(i) => Some(&path[..i]),
    }
}

/// The znodes that exist from before every op under them to the end of the
/// history: one persistent create answered ok, completed before any op on a
/// znode below was invoked; no delete; the parent fixed too.
fn fixed_znodes(history: &History) -> BTreeSet<String> {
    let mut created: BTreeMap<String, u64> = BTreeMap::new();
    let mut deleted: BTreeSet<String> = BTreeSet::new();
    // The first invoke of any op on each path.
    let mut first_invoke: BTreeMap<String, u64> = BTreeMap::new();
    for op in history.ops().iter().filter(|op| !op.is_failed()) {
        let Some(path) = op.arg_text("path").filter(|p| valid(p)) else {
            continue;
        };
        let first = first_invoke.entry(path.clone()).or_insert(op.invoke.index);
        *first = (*first).min(op.invoke.index);
        match op.f.as_str() {
            "delete" => {
                deleted.insert(path);
            }
            "create" if op.arg("ephemeral").is_none() => {
                if let Some(done) = op.ok().filter(|c| c.error.is_none()) {
                    let at = created.entry(path).or_insert(done.at.index);
                    *at = (*at).min(done.at.index);
                }
            }
            _ => {}
        }
    }
    // The earliest invoke of an op anywhere below each path.
    let mut below: BTreeMap<&str, u64> = BTreeMap::new();
    for (path, &invoke) in &first_invoke {
        let mut up = parent_of(path);
        while let Some(parent) = up {
            let at = below.entry(parent).or_insert(invoke);
            *at = (*at).min(invoke);
            up = parent_of(parent);
        }
    }
    let mut fixed = BTreeSet::new();
    // Parents sort before their children, so a parent is decided first.
    for (path, &done) in &created {
        let parent_fixed = parent_of(path).is_none_or(|p| fixed.contains(p));
        let before_below = below.get(path.as_str()).is_none_or(|&first| done < first);
        if parent_fixed && before_below && !deleted.contains(path) {
            fixed.insert(path.clone());
        }
    }
    fixed
}

fn valid(path: &str) -> bool {
    path.len() > 1
        && path.starts_with('/')
        && !path.ends_with('/')
        && !path.contains("//")
        && path.chars().all(|c| !c.is_control())
}

impl ZooKeeper {
    fn path(&mut self, path: &str) -> u32 {
        if let Some(&id) = self.path_ids.get(path) {
            return id;
        }
        let parent = match path.rfind('/') {
            Some(0) | None => None,
            Some(i) => Some(self.path(&path[..i])),
        };
        let id = self.paths.len() as u32;
        self.paths.push(path.to_string());
        self.parents.push(parent);
        self.path_ids.insert(path.to_string(), id);
        id
    }

    fn session(&mut self, name: &str) -> u32 {
        let next = self.sessions.len() as u32;
        *self.sessions.entry(name.to_string()).or_insert(next)
    }

    fn has_children(&self, state: &ZkState, path: u32) -> bool {
        state
            .nodes
            .keys()
            .any(|&p| self.parents[p as usize] == Some(path))
    }

    fn create_answer(&self, state: &ZkState, path: u32, owner: Option<u32>) -> Answer {
        if state.nodes.contains_key(&path) {
            return Answer::NodeExists;
        }
        if let Some(parent) = self.parents[path as usize] {
            match state.nodes.get(&parent) {
                None => return Answer::NoNode,
                Some(node) if node.owner.is_some() => return Answer::NoChildrenForEphemerals,
                Some(_) => {}
            }
        }
        if owner.is_some_and(|s| !state.sessions.contains(&s)) {
            return Answer::SessionExpired;
        }
        Answer::Ok
    }

    fn write(&self, state: &ZkState, op: &ZkOp) -> (Answer, ZkState) {
        let mut next = state.clone();
        let answer = match op {
            ZkOp::Create {
                path, data, owner, ..
            } => {
                let answer = self.create_answer(state, *path, *owner);
                if answer == Answer::Ok {
                    next.version += 1;
                    next.nodes.insert(
                        *path,
                        Node {
                            data: *data,
                            owner: *owner,
                        },
                    );
                    next.past.push((next.version, *path, Some(*data)));
                }
                answer
            }
            ZkOp::SetData { path, data, .. } => {
                if state.nodes.contains_key(path) {
                    next.version += 1;
                    next.change(*path, Some(*data));
                    Answer::Ok
                } else {
                    Answer::NoNode
                }
            }
            ZkOp::Delete { path, .. } => {
                if !state.nodes.contains_key(path) {
                    Answer::NoNode
                } else if self.has_children(state, *path) {
                    Answer::NotEmpty
                } else {
                    next.version += 1;
                    next.change(*path, None);
                    Answer::Ok
                }
            }
            ZkOp::OpenSession { session, .. } => {
                if next.sessions.insert(*session) {
                    Answer::Ok
                } else {
                    Answer::SessionExists
                }
            }
            ZkOp::CloseSession { session, .. } => {
                if next.sessions.remove(session) {
                    let owned: Vec<u32> = state
                        .nodes
                        .iter()
                        .filter(|(_, n)| n.owner == Some(*session))
                        .map(|(p, _)| *p)
                        .collect();
                    if !owned.is_empty() {
                        next.version += 1;
                        for path in owned {
                            next.change(path, None);
                        }
                    }
                    Answer::Ok
                } else {
                    Answer::SessionExpired
                }
            }
            ZkOp::Invalid { .. } => Answer::BadArguments,
            ZkOp::Get { .. } | ZkOp::Sync { .. } => unreachable!("reads are not writes"),
        };
        (answer, next)
    }
}

fn recorded_answer(op: &ZkOp) -> Answer {
    match op {
        ZkOp::Create { answer, .. }
        | ZkOp::SetData { answer, .. }
        | ZkOp::Delete { answer, .. }
        | ZkOp::OpenSession { answer, .. }
        | ZkOp::CloseSession { answer, .. }
        | ZkOp::Invalid { answer } => *answer,
        ZkOp::Get { .. } | ZkOp::Sync { .. } => Answer::Ok,
    }
}

impl Spec for ZooKeeper {
    type State = ZkState;
    type Op = ZkOp;

    fn name(&self) -> &'static str {
        "zookeeper"
    }

    fn survey(&mut self, history: &History) {
        self.fixed = fixed_znodes(history);
    }

    fn interpret(&mut self, op: &Op) -> Result<(Scope, ZkOp), String> {
        let done = op.ok();
        let answer = || Answer::parse(done.and_then(|c| c.error.as_deref()));
        if op.f == "sync" {
            return Ok((Scope::Everywhere, ZkOp::Sync { last: false }));
        }
        if let f @ ("open_session" | "close_session") = op.f.as_str() {
            let name = op
                .arg_text("session")
                .ok_or(format!("`{f}` has no `session`"))?;
            let session = self.session(&name);
            let answer = answer()?;
            let zk = if f == "open_session" {
                ZkOp::OpenSession { session, answer }
            } else {
                ZkOp::CloseSession { session, answer }
            };
            return Ok((Scope::Objects(vec![format!("session:{name}")]), zk));
        }
        let path_text = op
            .arg_text("path")
            .ok_or(format!("`{}` has no `path`", op.f))?;
        let mut objects = vec![path_text.clone()];
        if !valid(&path_text) {
            return Ok((Scope::Objects(objects), ZkOp::Invalid { answer: answer()? }));
        }
        let path = self.path(&path_text);
        let data = |values: &mut Values| {
            values.id(&serde_json::Value::String(
                op.arg_text("data").unwrap_or_default(),
            ))
        };
        // A create needs its parent, a delete its parent's other children gone.
        if let "create" | "delete" = op.f.as_str() {
            if let Some(parent) = parent_of(&path_text).filter(|p| !self.fixed.contains(*p)) {
                objects.push(parent.to_string());
            }
        }
        let zk = match op.f.as_str() {
            "create" => {
                let owner = op.arg_text("ephemeral").map(|s| {
                    objects.push(format!("session:{s}"));
                    self.session(&s)
                });
                ZkOp::Create {
                    path,
                    data: data(&mut self.values),
                    owner,
                    answer: answer()?,
                }
            }
            "set_data" => ZkOp::SetData {
                path,
                data: data(&mut self.values),
                answer: answer()?,
            },
            "delete" => ZkOp::Delete {
                path,
                answer: answer()?,
            },
            "get" => ZkOp::Get {
                path,
                saw: match done {
                    None => None,
                    Some(c) => match c.error.as_deref() {
                        Some("NoNode") => None,
                        Some(e) => return Err(format!("a get answered `{e}`")),
                        None => Some(self.values.id(&serde_json::Value::String(
                            crate::judge::history::text(&c.value),
                        ))),
                    },
                },
                last: false,
            },
            other => return Err(format!("the zookeeper model has no op `{other}`")),
        };
        Ok((Scope::Objects(objects), zk))
    }

    fn init(&self, entries: &[Entry<ZkOp>]) -> ZkState {
        let views = entries
            .iter()
            .filter(|e| matches!(e.op, ZkOp::Get { .. } | ZkOp::Sync { .. }))
            .map(|e| (e.process, 0))
            .collect();
        // The fixed znodes above this group's that the group itself does not
        // touch exist throughout (every op here began after they were created).
        let touched: BTreeSet<u32> = entries.iter().filter_map(|e| e.op.path()).collect();
        let mut nodes = BTreeMap::new();
        for &path in &touched {
            let mut up = self.parents[path as usize];
            while let Some(parent) = up {
                if !touched.contains(&parent) && self.fixed.contains(&self.paths[parent as usize]) {
                    // Its data is never read here: no op of the group is on it.
                    nodes.insert(
                        parent,
                        Node {
                            data: UNREAD_DATA,
                            owner: None,
                        },
                    );
                }
                up = self.parents[parent as usize];
            }
        }
        ZkState {
            nodes,
            sessions: BTreeSet::new(),
            version: 0,
            base: BTreeMap::new(),
            past: Vec::new(),
            views,
        }
    }

    fn step(&self, state: &ZkState, entry: &Entry<ZkOp>) -> Option<ZkState> {
        let known = entry.determinate();
        let mut next = match &entry.op {
            ZkOp::Get { path, saw, last } => {
                let from = *state.views.get(&entry.process)?;
                let mut version = from;
                let mut value = state.data_at(*path, from);
                if value != *saw {
                    // The next versions at which this path changed.
                    let found = state
                        .past
                        .iter()
                        .filter(|(v, p, _)| *p == *path && *v > from)
                        .find(|(_, _, d)| d == saw)?;
                    (version, value) = (found.0, found.2);
                }
                debug_assert_eq!(value, *saw);
                let mut next = state.clone();
                if *last {
                    next.views.remove(&entry.process);
                } else {
                    next.views.insert(entry.process, version);
                }
                next
            }
            ZkOp::Sync { last } => {
                let mut next = state.clone();
                if *last {
                    next.views.remove(&entry.process);
                } else if next.views.contains_key(&entry.process) {
                    next.views.insert(entry.process, state.version);
                }
                next
            }
            write @ (ZkOp::Create { .. }
            | ZkOp::SetData { .. }
            | ZkOp::Delete { .. }
            | ZkOp::OpenSession { .. }
            | ZkOp::CloseSession { .. }
            | ZkOp::Invalid { .. }) => {
                let (answer, mut next) = self.write(state, write);
                if known {
                    if answer != recorded_answer(write) {
                        return None;
                    }
                    // A session sees its own completed writes (FIFO client order).
                    if let Some(view) = next.views.get_mut(&entry.process) {
                        *view = next.version;
                    }
                }
                next
            }
        };
        next.fold();
        Some(next)
    }

    fn prepare(&self, entries: Vec<Entry<ZkOp>>) -> Vec<Entry<ZkOp>> {
        // Indeterminate reads and syncs constrain nothing. Indeterminate writes
        // stay: whether a znode exists is seen by many answers.
        let mut entries: Vec<Entry<ZkOp>> = entries
            .into_iter()
            .filter(|e| e.determinate() || !matches!(e.op, ZkOp::Get { .. } | ZkOp::Sync { .. }))
            .collect();
        let mut last_of: BTreeMap<u64, usize> = BTreeMap::new();
        for (i, e) in entries.iter_mut().enumerate() {
            if let ZkOp::Get { last, .. } | ZkOp::Sync { last } = &mut e.op {
                *last = false;
                last_of.insert(e.process, i);
            }
        }
        for i in last_of.into_values() {
            if let ZkOp::Get { last, .. } | ZkOp::Sync { last } = &mut entries[i].op {
                *last = true;
            }
        }
        entries
    }

    fn shrink_rank(&self, op: &ZkOp) -> u8 {
        match op {
            ZkOp::Get { .. } => 0,
            ZkOp::Sync { .. } => 1,
            ZkOp::Create { .. }
            | ZkOp::SetData { .. }
            | ZkOp::Delete { .. }
            | ZkOp::OpenSession { .. }
            | ZkOp::CloseSession { .. }
            | ZkOp::Invalid { .. } => 2,
        }
    }

    fn state_heap_bytes(&self, state: &ZkState) -> usize {
        // B-tree entries cost their key and value plus about as much again.
        2 * (state.nodes.len() * std::mem::size_of::<(u32, Node)>()
            + state.sessions.len() * 4
            + state.base.len() * 8
            + state.views.len() * 12)
            + state.past.capacity() * std::mem::size_of::<(u32, u32, Option<u32>)>()
    }

    fn describe(&self, entry: &Entry<ZkOp>) -> String {
        let path = |p: &u32| self.paths[*p as usize].clone();
        let data = |d: &u32| crate::judge::history::text(self.values.value(*d));
        let answer = |a: &Answer| {
            if !entry.determinate() {
                "?".to_string()
            } else {
                format!("{a:?}")
            }
        };
        match &entry.op {
            ZkOp::Create {
                path: p,
                data: d,
                answer: a,
                ..
            } => format!("create {} {:?} -> {}", path(p), data(d), answer(a)),
            ZkOp::SetData {
                path: p,
                data: d,
                answer: a,
            } => format!("set_data {} {:?} -> {}", path(p), data(d), answer(a)),
            ZkOp::Delete { path: p, answer: a } => format!("delete {} -> {}", path(p), answer(a)),
            ZkOp::Get { path: p, saw, .. } => match saw {
                Some(d) => format!("get {} -> {:?}", path(p), data(d)),
                None => format!("get {} -> NoNode", path(p)),
            },
            ZkOp::Sync { .. } => "sync".into(),
            ZkOp::OpenSession { answer: a, .. } => format!("open_session -> {}", answer(a)),
            ZkOp::CloseSession { answer: a, .. } => format!("close_session -> {}", answer(a)),
            ZkOp::Invalid { answer: a } => format!("bad path -> {}", answer(a)),
        }
    }
}
