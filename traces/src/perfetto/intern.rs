//! Interning of `&'static str` names into Perfetto interned ids (iids).
//!
//! Keyed by content, not by pointer: two equal literals from different codegen units get one iid,
//! so the bytes written never depend on how the linker merged string constants.

use fxhash::FxHashMap;

/// Names seen so far on the packet sequence and their iids (1, 2, ... in first-use order).
#[derive(Debug, Default)]
pub(crate) struct Interner {
    ids: FxHashMap<&'static str, u64>,
}

impl Interner {
    /// The iid of `name`, and whether this is its first use (so it must be sent in this packet).
    pub(crate) fn intern(&mut self, name: &'static str) -> (u64, bool) {
        let next = self.ids.len() as u64 + 1;
        match self.ids.entry(name) {
            std::collections::hash_map::Entry::Occupied(e) => (*e.get(), false),
            std::collections::hash_map::Entry::Vacant(e) => (*e.insert(next), true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_content_shares_an_iid() {
        let mut i = Interner::default();
        let owned = String::from("dma.issue");
        let leaked: &'static str = Box::leak(owned.into_boxed_str());
        assert_eq!(i.intern("dma.issue"), (1, true));
        assert_eq!(i.intern("hbm.read"), (2, true));
        assert_eq!(i.intern(leaked), (1, false));
    }
}
