//! The declared-track table every writer keeps: validation of declarations and lookups of
//! records' tracks, with a writer-specific payload per track.
//!
//! What it checks: a track is declared once; its parent (if any) was declared before it; ids
//! are dense (the kernel assigns them in declaration order, so a gap of more than
//! [`MAX_ID_GAP`] is refused rather than allocating for it); signal widths are 1..=64. What it
//! leaves out: anything about how a track is shown, which is each writer's business.

use trnsim_kernel::{TrackDecl, TrackId, TrackKind};

/// The largest jump between the highest declared id and a new one that is accepted.
pub(crate) const MAX_ID_GAP: usize = 1 << 16;

/// One declared track: its declaration, its position among its siblings, and the writer's
/// payload.
#[derive(Debug)]
pub(crate) struct Track<T> {
    /// The declaration as given.
    pub decl: TrackDecl,
    /// 0-based position among the tracks declared with the same parent (roots count together).
    pub rank: u32,
    /// The writer's own data for this track.
    pub data: T,
    children: u32,
}

/// Declared tracks, indexed by [`TrackId`].
#[derive(Debug)]
pub(crate) struct Registry<T> {
    slots: Vec<Option<Track<T>>>,
    roots: u32,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Registry { slots: Vec::new(), roots: 0 }
    }
}

impl<T> Registry<T> {
    /// Validates `decl` and stores it with `data`. Errors are messages for a `TraceError`.
    pub(crate) fn declare(&mut self, decl: &TrackDecl, data: T) -> Result<&mut Track<T>, String> {
        let idx = decl.id.0 as usize;
        if idx > self.slots.len() + MAX_ID_GAP {
            return Err(format!("track id {} is far beyond the ids declared so far", decl.id.0));
        }
        if self.get(decl.id).is_ok() {
            return Err(format!("track {} ({:?}) declared twice", decl.id.0, decl.name));
        }
        if let TrackKind::Signal { width } = decl.kind {
            if !(1..=64).contains(&width) {
                return Err(format!("signal track {:?} has width {width}, expected 1..=64", decl.name));
            }
        }
        let rank = match decl.parent {
            Some(p) if p == decl.id => {
                return Err(format!("track {:?} is its own parent", decl.name));
            }
            Some(p) => {
                let parent = self
                    .slot_mut(p)
                    .ok_or_else(|| format!("track {:?} names parent {} which is not declared", decl.name, p.0))?;
                parent.children += 1;
                parent.children - 1
            }
            None => {
                self.roots += 1;
                self.roots - 1
            }
        };
        if self.slots.len() <= idx {
            self.slots.resize_with(idx + 1, || None);
        }
        let track = Track { decl: decl.clone(), rank, data, children: 0 };
        Ok(self.slots[idx].insert(track))
    }

    fn slot_mut(&mut self, id: TrackId) -> Option<&mut Track<T>> {
        self.slots.get_mut(id.0 as usize).and_then(Option::as_mut)
    }

    /// The declared track `id`, or a message saying it is not declared.
    pub(crate) fn get(&self, id: TrackId) -> Result<&Track<T>, String> {
        self.slots
            .get(id.0 as usize)
            .and_then(Option::as_ref)
            .ok_or_else(|| format!("record on undeclared track {}", id.0))
    }

    /// The declared track `id` for update, or a message saying it is not declared.
    pub(crate) fn get_mut(&mut self, id: TrackId) -> Result<&mut Track<T>, String> {
        self.slot_mut(id).ok_or_else(|| format!("record on undeclared track {}", id.0))
    }

    /// All declared tracks in id order (which is declaration order).
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Track<T>> {
        self.slots.iter().flatten()
    }
}

/// The message for a record whose kind does not fit its track's kind.
pub(crate) fn wrong_kind(what: &str, decl: &TrackDecl) -> String {
    let kind = match decl.kind {
        TrackKind::Group => "group",
        TrackKind::Slice => "slice",
        TrackKind::Counter { .. } => "counter",
        TrackKind::Signal { .. } => "signal",
    };
    format!("{what} record on {kind} track {:?} (id {})", decl.name, decl.id.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(id: u32, parent: Option<u32>, kind: TrackKind) -> TrackDecl {
        TrackDecl { id: TrackId(id), parent: parent.map(TrackId), name: format!("t{id}"), kind }
    }

    #[test]
    fn ranks_count_siblings_in_declaration_order() {
        let mut r = Registry::default();
        assert_eq!(r.declare(&decl(0, None, TrackKind::Group), ()).map(|t| t.rank), Ok(0));
        assert_eq!(r.declare(&decl(1, Some(0), TrackKind::Slice), ()).map(|t| t.rank), Ok(0));
        assert_eq!(r.declare(&decl(2, None, TrackKind::Slice), ()).map(|t| t.rank), Ok(1));
        assert_eq!(r.declare(&decl(3, Some(0), TrackKind::Slice), ()).map(|t| t.rank), Ok(1));
    }

    #[test]
    fn bad_declarations_are_refused() {
        let mut r = Registry::default();
        assert!(r.declare(&decl(0, None, TrackKind::Group), ()).is_ok());
        assert!(r.declare(&decl(0, None, TrackKind::Group), ()).is_err(), "twice");
        assert!(r.declare(&decl(1, Some(7), TrackKind::Slice), ()).is_err(), "parent");
        assert!(r.declare(&decl(2, Some(2), TrackKind::Slice), ()).is_err(), "own parent");
        assert!(r.declare(&decl(3, None, TrackKind::Signal { width: 0 }), ()).is_err());
        assert!(r.declare(&decl(3, None, TrackKind::Signal { width: 65 }), ()).is_err());
        assert!(r.declare(&decl(u32::MAX, None, TrackKind::Slice), ()).is_err(), "gap");
        assert!(r.get(TrackId(9)).is_err());
    }
}
