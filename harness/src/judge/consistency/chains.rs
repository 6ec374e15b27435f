//! Lists built by appends, shared between search states (as [`super::texts`]
//! does for text): a state holds the id of its last link, an append is a table
//! look-up, and a list keeps its length and a polynomial hash so comparing it
//! with a read is a number comparison, confirmed element by element only when
//! they agree. Without this a state would copy and hash its whole list on every
//! step.

use super::hasher::FixedMap;
use std::cell::RefCell;

const BASE: u64 = 0x9e37_79b9_7f4a_7c15;

/// The hash of a whole list, as [`Chains`] computes it link by link.
pub fn hash(items: &[u32]) -> u64 {
    items.iter().fold(0u64, |h, &x| {
        h.wrapping_mul(BASE).wrapping_add(x as u64 + 1)
    })
}

struct Link {
    prev: Option<u32>,
    item: u32,
    len: usize,
    hash: u64,
}

#[derive(Default)]
struct Table {
    links: Vec<Link>,
    /// (prev + 1, or 0 for the empty list; item) -> link. Only looked up.
    index: FixedMap<(u32, u32), u32>,
}

#[derive(Default)]
pub struct Chains {
    table: RefCell<Table>,
}

impl std::fmt::Debug for Chains {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Chains({})", self.table.borrow().links.len())
    }
}

impl Chains {
    /// The list `prev` (or the empty list) with `item` appended.
    pub fn append(&self, prev: Option<u32>, item: u32) -> u32 {
        let mut t = self.table.borrow_mut();
        let key = (prev.map(|p| p + 1).unwrap_or(0), item);
        if let Some(&id) = t.index.get(&key) {
            return id;
        }
        let (len, h) = match prev {
            None => (0, 0),
            Some(p) => (t.links[p as usize].len, t.links[p as usize].hash),
        };
        let id = t.links.len() as u32;
        t.links.push(Link {
            prev,
            item,
            len: len + 1,
            hash: h.wrapping_mul(BASE).wrapping_add(item as u64 + 1),
        });
        t.index.insert(key, id);
        id
    }

    /// Does the list `id` (`None`: empty) hold exactly `items`, whose hash is `h`?
    pub fn equals(&self, id: Option<u32>, items: &[u32], h: u64) -> bool {
        let t = self.table.borrow();
        let Some(id) = id else {
            return items.is_empty();
        };
        let link = &t.links[id as usize];
        if link.len != items.len() || link.hash != h {
            return false;
        }
        let mut at = Some(id);
        for &item in items.iter().rev() {
            let Some(i) = at else {
                return false;
            };
            let link = &t.links[i as usize];
            if link.item != item {
                return false;
            }
            at = link.prev;
        }
        at.is_none()
    }

    pub fn items(&self, id: Option<u32>) -> Vec<u32> {
        let t = self.table.borrow();
        let mut items = Vec::new();
        let mut at = id;
        while let Some(i) = at {
            items.push(t.links[i as usize].item);
            at = t.links[i as usize].prev;
        }
        items.reverse();
        items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_share_prefixes_and_compare_exactly() {
        let c = Chains::default();
        let a = c.append(None, 1);
        let ab = c.append(Some(a), 2);
        assert_eq!(c.append(Some(a), 2), ab);
        assert_eq!(c.items(Some(ab)), vec![1, 2]);
        assert!(c.equals(Some(ab), &[1, 2], hash(&[1, 2])));
        assert!(!c.equals(Some(ab), &[2, 1], hash(&[2, 1])));
        assert!(!c.equals(Some(a), &[1, 2], hash(&[1, 2])));
        assert!(c.equals(None, &[], hash(&[])));
        assert!(!c.equals(None, &[1], hash(&[1])));
    }
}
