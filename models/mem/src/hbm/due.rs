//! Completions waiting for their cycle, taken in order of (cycle, arrival): the fast
//! fidelity's replacement for a binary heap, which cost a sift of the whole tree (a cache miss
//! per level on large systems) for every request.
//!
//! Entries due within [`WINDOW`] cycles of the last one taken sit in a ring of per-cycle lists
//! (linked through one node arena, so a list costs no allocation of its own), found through a
//! bit set of non-empty cycles; the rest wait in a heap. Taking the first compares the ring's
//! first with the heap's, so the order is exactly (cycle, arrival) whatever the spread.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// Cycles the ring covers (a power of two).
const WINDOW: u64 = 512;
const WORDS: usize = (WINDOW / 64) as usize;
const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node<T> {
    due: u64,
    seq: u64,
    item: T,
    next: u32,
}

/// An entry of the heap (due beyond the ring's window when it arrived), ordered by
/// (cycle, arrival).
#[derive(Clone, Copy, Debug)]
struct Far<T> {
    due: u64,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Far<T> {
    fn eq(&self, o: &Self) -> bool {
        (self.due, self.seq) == (o.due, o.seq)
    }
}
impl<T> Eq for Far<T> {}
impl<T> PartialOrd for Far<T> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Far<T> {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.due, self.seq).cmp(&(o.due, o.seq))
    }
}

/// Items each due at a cycle, taken in order of (cycle, arrival).
///
/// Invariant: every node in the ring has `due` in `[cursor, cursor + WINDOW)` and sits in list
/// `due % WINDOW`, in arrival order; bit `due % WINDOW` of `occupied` is set exactly when that
/// list is not empty; `near` counts the ring's nodes.
#[derive(Clone, Debug)]
pub(crate) struct DueQueue<T: Copy> {
    cursor: u64,
    head: Vec<u32>,
    tail: Vec<u32>,
    occupied: [u64; WORDS],
    nodes: Vec<Node<T>>,
    /// First free node (linked through `next`).
    free: u32,
    near: usize,
    far: BinaryHeap<Reverse<Far<T>>>,
    seq: u64,
}

/// The first entry of a [`DueQueue`] and where it is.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Peeked<T> {
    /// Its cycle.
    pub due: u64,
    /// The entry.
    pub item: T,
    /// Its ring list, or the heap (None).
    at: Option<usize>,
}

impl<T: Copy> DueQueue<T> {
    /// An empty queue (its ring is allocated on the first push).
    pub(crate) fn new() -> DueQueue<T> {
        DueQueue {
            cursor: 0,
            head: Vec::new(),
            tail: Vec::new(),
            occupied: [0; WORDS],
            nodes: Vec::new(),
            free: NIL,
            near: 0,
            far: BinaryHeap::new(),
            seq: 0,
        }
    }

    /// True if nothing is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.near == 0 && self.far.is_empty()
    }

    /// Queues `item`, due at cycle `due`, after everything queued before it for that cycle.
    pub(crate) fn push(&mut self, due: u64, item: T) {
        self.seq += 1;
        let seq = self.seq;
        if self.near == 0 {
            self.cursor = due; // an empty ring may start anywhere
        }
        if due < self.cursor || due - self.cursor >= WINDOW {
            self.far.push(Reverse(Far { due, seq, item }));
            return;
        }
        let node = Node { due, seq, item, next: NIL };
        let n = if self.free != NIL {
            let n = self.free;
            self.free = self.nodes[n as usize].next;
            self.nodes[n as usize] = node;
            n
        } else {
            let Ok(n) = u32::try_from(self.nodes.len()) else {
                // More nodes than an index holds: the heap takes it (the order is the same).
                self.far.push(Reverse(Far { due, seq, item }));
                return;
            };
            if n == NIL {
                self.far.push(Reverse(Far { due, seq, item }));
                return;
            }
            self.nodes.push(node);
            n
        };
        if self.head.is_empty() {
            self.head = vec![NIL; WINDOW as usize];
            self.tail = vec![NIL; WINDOW as usize];
        }
        let s = (due % WINDOW) as usize;
        match self.tail[s] {
            NIL => self.head[s] = n,
            t => self.nodes[t as usize].next = n,
        }
        self.tail[s] = n;
        self.occupied[s / 64] |= 1 << (s % 64);
        self.near += 1;
    }

    /// The ring's first list: the first non-empty one from the cursor's, going round.
    fn near_slot(&self) -> Option<usize> {
        if self.near == 0 {
            return None;
        }
        let start = (self.cursor % WINDOW) as usize;
        let (w0, b0) = (start / 64, start % 64);
        let first = self.occupied[w0] & (!0u64 << b0);
        if first != 0 {
            return Some(w0 * 64 + first.trailing_zeros() as usize);
        }
        for k in 1..=WORDS {
            let w = (w0 + k) % WORDS;
            let m = if k == WORDS { self.occupied[w] & !(!0u64 << b0) } else { self.occupied[w] };
            if m != 0 {
                return Some(w * 64 + m.trailing_zeros() as usize);
            }
        }
        None
    }

    /// Where the first entry is: the ring's list, or the heap (None).
    fn first_at(&self) -> Option<Option<usize>> {
        let near = self.near_slot();
        let far = self.far.peek().map(|f| (f.0.due, f.0.seq));
        match (near, far) {
            (None, None) => None,
            (Some(s), None) => Some(Some(s)),
            (None, Some(_)) => Some(None),
            (Some(s), Some(f)) => {
                let n = &self.nodes[self.head[s] as usize];
                Some(if (n.due, n.seq) < f { Some(s) } else { None })
            }
        }
    }

    /// The first entry (earliest cycle, then earliest arrival), with where it is, for
    /// [`DueQueue::take`].
    pub(crate) fn peek(&self) -> Option<Peeked<T>> {
        let at = self.first_at()?;
        let (due, item) = match at {
            Some(s) => {
                let n = &self.nodes[self.head[s] as usize];
                (n.due, n.item)
            }
            None => {
                let f = &self.far.peek()?.0;
                (f.due, f.item)
            }
        };
        Some(Peeked { due, item, at })
    }

    /// Removes the first entry, which `p` (from [`DueQueue::peek`], nothing pushed or taken
    /// since) found.
    pub(crate) fn take(&mut self, p: Peeked<T>) {
        debug_assert!(self.first_at() == Some(p.at), "taken as peeked");
        let due = match p.at {
            Some(s) => {
                let n = self.head[s];
                let node = self.nodes[n as usize];
                self.head[s] = node.next;
                if node.next == NIL {
                    self.tail[s] = NIL;
                    self.occupied[s / 64] &= !(1 << (s % 64));
                }
                self.nodes[n as usize].next = self.free;
                self.free = n;
                self.near -= 1;
                node.due
            }
            None => self.far.pop().map_or(self.cursor, |f| f.0.due),
        };
        // Everything left is due at or after the entry taken: the ring may start there.
        self.cursor = self.cursor.max(due);
    }
}

#[cfg(test)]
impl<T: Copy> DueQueue<T> {
    /// The first entry and its cycle (what `peek` finds).
    fn first(&self) -> Option<(u64, T)> {
        self.peek().map(|p| (p.due, p.item))
    }

    /// Removes the first entry (`peek`, then `take`).
    fn pop(&mut self) {
        if let Some(p) = self.peek() {
            self.take(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_queued_beyond_the_window_goes_before_a_later_one_for_the_same_cycle() {
        let mut q = DueQueue::<u32>::new();
        q.push(10, 1);
        q.push(10 + 3 * WINDOW, 2); // beyond the window: in the heap
        q.push(12, 3);
        assert_eq!(q.first(), Some((10, 1)));
        q.pop();
        assert_eq!(q.first(), Some((12, 3)));
        q.pop();
        q.push(10 + 3 * WINDOW, 4); // the ring is empty: starts at this cycle
        q.push(10 + 3 * WINDOW, 5);
        assert_eq!(q.first(), Some((10 + 3 * WINDOW, 2)), "arrival order within a cycle, heap or ring");
        q.pop();
        assert_eq!(q.first(), Some((10 + 3 * WINDOW, 4)));
        q.pop();
        q.push(5, 6); // before the ring's start: in the heap, and first
        assert_eq!(q.first(), Some((5, 6)));
        q.pop();
        assert_eq!(q.first(), Some((10 + 3 * WINDOW, 5)));
        q.pop();
        assert!(q.is_empty());
    }

    /// Random pushes (mostly within the window, some far beyond it, some for the same cycle)
    /// and takes of everything due, sometimes stopped early (a refused send), against a
    /// binary heap of (cycle, arrival).
    #[test]
    fn takes_in_the_order_of_a_heap_of_cycle_and_arrival() {
        let mut rng = trnsim_kernel::SimRng::new(0x9e37_79b9, 0);
        let mut rand = |n: u64| rng.below(n);
        for round in 0..30 {
            let mut q = DueQueue::<u64>::new();
            let mut heap = BinaryHeap::new();
            let (mut now, mut seq, mut id) = (0u64, 0u64, 0u64);
            for step in 0..3_000 {
                now += rand(if round % 3 == 0 { 3 } else { 200 });
                for _ in 0..rand(8) {
                    let ahead = match rand(20) {
                        0 => rand(5 * WINDOW),
                        1 => 0,
                        _ => 1 + rand(if round % 2 == 0 { 40 } else { WINDOW }),
                    };
                    id += 1;
                    seq += 1;
                    q.push(now + ahead, id);
                    heap.push(Reverse((now + ahead, seq, id)));
                }
                let stop = if rand(10) == 0 { rand(4) } else { u64::MAX };
                let mut taken = 0;
                while let Some(Reverse((due, _, want))) = heap.peek().copied() {
                    if due > now || taken == stop {
                        break;
                    }
                    assert_eq!(q.first(), Some((due, want)), "round {round}, step {step}");
                    q.pop();
                    heap.pop();
                    taken += 1;
                }
                let next = heap.peek().map(|Reverse((d, _, i))| (*d, *i));
                assert_eq!(q.first(), next, "round {round}, step {step}: the next entry");
                assert_eq!(q.is_empty(), heap.is_empty());
            }
        }
    }
}
