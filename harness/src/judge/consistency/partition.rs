//! P-compositionality: an op touches some objects; ops that share an object
//! (directly or through others) form one group, and each group is checked on its
//! own. For a key-value model a group is a key.

use super::spec::{Entry, Scope, Spec};
use crate::judge::history::History;
use std::collections::BTreeMap;

/// One group of the history, ready for the search.
#[derive(Clone, Debug)]
pub struct Group<O> {
    /// Its objects' names, joined (`a`, or `/x + session:s1`).
    pub name: String,
    pub entries: Vec<Entry<O>>,
}

struct Sets {
    parent: Vec<usize>,
}

impl Sets {
    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }
    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[a.max(b)] = a.min(b);
        }
    }
}

/// Interpret every op that may have taken effect (not `fail`) and split the
/// history into groups, in the order of their names. The error names the op.
pub fn groups<S: Spec>(spec: &mut S, history: &History) -> Result<Vec<Group<S::Op>>, String> {
    spec.survey(history);
    let mut objects: BTreeMap<String, usize> = BTreeMap::new();
    let mut sets = Sets { parent: Vec::new() };
    let mut interpreted = Vec::new();
    let mut everywhere = Vec::new();
    for (source, op) in history.ops().iter().enumerate() {
        if op.is_failed() {
            continue;
        }
        let (scope, model_op) = spec.interpret(op).map_err(|e| {
            format!(
                "op {source} (process {}, `{}` at {} ns): {e}",
                op.process, op.f, op.invoke.time_ns
            )
        })?;
        let entry = Entry {
            op: model_op,
            source,
            process: op.process,
            call: op.invoke.index,
            ret: op.ok().map(|c| c.at.index),
            as_recorded: true,
        };
        match scope {
            Scope::Everywhere => everywhere.push(entry),
            Scope::Objects(names) => {
                let ids: Vec<usize> = names
                    .into_iter()
                    .map(|name| {
                        let next = objects.len();
                        *objects.entry(name).or_insert_with(|| {
                            sets.parent.push(next);
                            next
                        })
                    })
                    .collect();
                for pair in ids.windows(2) {
                    sets.union(pair[0], pair[1]);
                }
                let first = *ids
                    .first()
                    .ok_or_else(|| format!("op {source} touches no object"))?;
                interpreted.push((first, entry));
            }
        }
    }
    let mut names: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (name, &id) in &objects {
        let root = sets.find(id);
        names.entry(root).or_default().push(name.clone());
    }
    let mut by_root: BTreeMap<usize, Vec<Entry<S::Op>>> = BTreeMap::new();
    for (id, entry) in interpreted {
        by_root.entry(sets.find(id)).or_default().push(entry);
    }
    let mut groups: Vec<Group<S::Op>> = by_root
        .into_iter()
        .map(|(root, mut entries)| {
            entries.extend(everywhere.iter().cloned());
            entries.sort_by_key(|e| e.call);
            Group {
                name: names.remove(&root).unwrap_or_default().join(" + "),
                entries,
            }
        })
        .collect();
    groups.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(groups)
}
