//! Texts built by appends, shared between search states: a state holds a small
//! id, and an append is a table look-up, not a copy of a growing string. Each
//! text keeps its length and a polynomial hash, so comparing it with a read is a
//! number comparison, confirmed character by character only when they agree.

use super::hasher::FixedMap;
use std::cell::RefCell;

const BASE: u64 = 0x100_0000_01b3;

fn hash(s: &str) -> (u64, u64) {
    s.bytes().fold((0u64, 1u64), |(h, pow), b| {
        (
            h.wrapping_mul(BASE).wrapping_add(b as u64 + 1),
            pow.wrapping_mul(BASE),
        )
    })
}

struct Text {
    prev: Option<u32>,
    suffix: u32,
    len: usize,
    hash: u64,
}

#[derive(Default)]
struct Table {
    texts: Vec<Text>,
    /// (prev + 1, or 0 for the empty text; suffix) -> text. Only looked up.
    index: FixedMap<(u32, u32), u32>,
    suffixes: Vec<(String, u64, u64)>,
    suffix_ids: FixedMap<String, u32>,
}

/// The table. Interior mutability: the search steps through `&self`.
#[derive(Default)]
pub struct Texts {
    table: RefCell<Table>,
}

impl std::fmt::Debug for Texts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Texts({})", self.table.borrow().texts.len())
    }
}

impl Texts {
    /// `prev` (or the empty text) followed by `suffix`.
    pub fn append(&self, prev: Option<u32>, suffix: &str) -> u32 {
        let mut t = self.table.borrow_mut();
        let suffix_id = match t.suffix_ids.get(suffix) {
            Some(&id) => id,
            None => {
                let id = t.suffixes.len() as u32;
                let (h, pow) = hash(suffix);
                t.suffixes.push((suffix.to_string(), h, pow));
                t.suffix_ids.insert(suffix.to_string(), id);
                id
            }
        };
        let key = (prev.map(|p| p + 1).unwrap_or(0), suffix_id);
        if let Some(&id) = t.index.get(&key) {
            return id;
        }
        let (_, h, pow) = &t.suffixes[suffix_id as usize];
        let (h, pow, suffix_len) = (*h, *pow, t.suffixes[suffix_id as usize].0.len());
        let (len, hash) = match prev {
            None => (suffix_len, h),
            Some(p) => {
                let p = &t.texts[p as usize];
                (p.len + suffix_len, p.hash.wrapping_mul(pow).wrapping_add(h))
            }
        };
        let id = t.texts.len() as u32;
        t.texts.push(Text {
            prev,
            suffix: suffix_id,
            len,
            hash,
        });
        t.index.insert(key, id);
        id
    }

    pub fn text(&self, id: u32) -> String {
        let t = self.table.borrow();
        let mut parts = Vec::new();
        let mut at = Some(id);
        while let Some(i) = at {
            let text = &t.texts[i as usize];
            parts.push(t.suffixes[text.suffix as usize].0.as_str());
            at = text.prev;
        }
        parts.iter().rev().copied().collect()
    }

    pub fn equals(&self, id: u32, s: &str) -> bool {
        let same = {
            let t = self.table.borrow();
            let text = &t.texts[id as usize];
            text.len == s.len() && text.hash == hash(s).0
        };
        same && self.text(id) == s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_share_prefixes_and_compare_exactly() {
        let texts = Texts::default();
        let a = texts.append(None, "x 1 y");
        let ab = texts.append(Some(a), "x 2 y");
        assert_eq!(
            texts.append(Some(a), "x 2 y"),
            ab,
            "the same append is the same text"
        );
        assert_eq!(texts.text(ab), "x 1 yx 2 y");
        assert!(texts.equals(ab, "x 1 yx 2 y"));
        assert!(!texts.equals(ab, "x 2 yx 1 y"));
        assert!(!texts.equals(a, "x 1 yx 2 y"));
        let empty = texts.append(None, "");
        assert!(texts.equals(empty, ""));
    }
}
