//! One request queue of a pseudo-channel controller (reads or writes), indexed by bank, so
//! that choosing the next command costs one pass over the banks that have requests instead of
//! one over the requests.
//!
//! The requests live in one slab per queue (a few kilobytes, reused most-recently-freed
//! first), each bank's in a list linked through the slab in arrival order: serving, queueing
//! and recounting a bank touch that slab only, not one heap buffer per bank (those were
//! cache misses on every served request of a large run).

use crate::hbm::controller::Entry;

/// What planning reads of a queued request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    /// Arrival order within the controller.
    pub seq: u64,
    /// Arrival cycle.
    pub arrive: u64,
    /// Row.
    pub row: u32,
    /// Burst within the row.
    pub col: u32,
}

impl Queued {
    fn of(e: &Entry) -> Queued {
        Queued { seq: e.seq, arrive: e.arrive, row: e.row, col: e.col }
    }
}

/// One bank's summary, kept in a flat array so that planning reads no list.
#[derive(Clone, Copy, Debug)]
struct Summary {
    /// The oldest request (valid when the bank has one).
    head: Queued,
    /// The oldest request that hits the open row (valid when `hits > 0`).
    hit_head: Queued,
    /// The node of `hit_head` (valid when `hits > 0`), so serving it needs no walk.
    hit_node: u32,
}

const NONE: Queued = Queued { seq: 0, arrive: 0, row: 0, col: 0 };

/// No node.
const NIL: u32 = u32::MAX;

/// A slab node: a request and the next and previous of its bank's list (or, free, the next
/// free node).
#[derive(Clone, Copy, Debug)]
struct Node {
    e: Entry,
    next: u32,
    prev: u32,
}

/// The requests of one queue grouped by flat bank index, oldest first, with each bank's
/// oldest request, oldest row hit and count of row hits.
///
/// Invariant: every request queued is in exactly one node, in the list of its bank, which is
/// in arrival (`seq`) order from `ends[b].0` to `ends[b].1` through `next` and back through
/// `prev`; the other nodes form the free list from `free`. A bank's `hits` (kept apart from
/// the other summaries: planning reads it for every bank with requests, the rest only for
/// banks that can issue) and `hit_head` (at node `hit_node`) count and name the requests of
/// its list whose row is the open row last given to [`BankQueue::push`],
/// [`BankQueue::remove`] or [`BankQueue::recount`]; `head` is
/// its list's first request; bit `b` of `busy` is set exactly when bank `b`'s list is not
/// empty, and bit `b` of `hit_banks` exactly when its `hits` is not 0. At most 64 banks
/// (`Organization::validate` enforces it).
#[derive(Clone, Debug)]
pub struct BankQueue {
    nodes: Vec<Node>,
    free: u32,
    /// Per bank: (first, last) node of its list, NIL when empty.
    ends: Vec<(u32, u32)>,
    sums: Vec<Summary>,
    hits: Vec<u16>,
    busy: u64,
    hit_banks: u64,
    len: usize,
}

impl BankQueue {
    /// An empty queue over `banks` banks with room for `capacity` requests before its slab
    /// grows.
    pub fn new(banks: usize, capacity: usize) -> BankQueue {
        assert!(banks <= 64, "at most 64 banks per pseudo-channel");
        let empty = Summary { head: NONE, hit_head: NONE, hit_node: NIL };
        BankQueue {
            nodes: Vec::with_capacity(capacity),
            free: NIL,
            ends: vec![(NIL, NIL); banks],
            sums: vec![empty; banks],
            hits: vec![0; banks],
            busy: 0,
            hit_banks: 0,
            len: 0,
        }
    }

    /// Requests queued.
    #[inline]
    pub fn total(&self) -> usize {
        self.len
    }

    /// Appends request `e` to its bank (requests arrive in `seq` order); `open` is the bank's
    /// open row (`u32::MAX` if closed).
    pub fn push(&mut self, e: Entry, open: u32) {
        let bank = e.b.bank as usize;
        let q = Queued::of(&e);
        let node = Node { e, next: NIL, prev: self.ends[bank].1 };
        let i = if self.free != NIL {
            let i = self.free;
            self.free = self.nodes[i as usize].next;
            self.nodes[i as usize] = node;
            i
        } else {
            self.nodes.push(node);
            u32::try_from(self.nodes.len() - 1).expect("a queue holds at most 4096 requests")
        };
        let s = &mut self.sums[bank];
        let ends = &mut self.ends[bank];
        if ends.1 == NIL {
            s.head = q;
            ends.0 = i;
        } else {
            self.nodes[ends.1 as usize].next = i;
        }
        ends.1 = i;
        if q.row == open {
            if self.hits[bank] == 0 {
                s.hit_head = q;
                s.hit_node = i;
                self.hit_banks |= 1 << bank;
            }
            self.hits[bank] += 1;
        }
        self.busy |= 1 << bank;
        self.len += 1;
    }

    /// Removes and returns the request `seq` of `bank`; `open` is the bank's open row now.
    /// The oldest row hit and the oldest request (the ones a scheduler serves) are found
    /// without a walk; another request by walking its bank's list.
    pub fn remove(&mut self, bank: usize, seq: u64, open: u32) -> Entry {
        let s = &self.sums[bank];
        let cur = if self.hits[bank] > 0 && s.hit_head.seq == seq {
            s.hit_node
        } else {
            let mut cur = self.ends[bank].0;
            loop {
                assert!(cur != NIL, "a queued request is in its bank's list");
                if self.nodes[cur as usize].e.seq == seq {
                    break cur;
                }
                cur = self.nodes[cur as usize].next;
            }
        };
        let Node { e, next, prev } = self.nodes[cur as usize];
        debug_assert_eq!(e.seq, seq);
        let ends = &mut self.ends[bank];
        if prev == NIL {
            ends.0 = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            ends.1 = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
        self.nodes[cur as usize].next = self.free;
        self.free = cur;
        self.len -= 1;
        let s = &mut self.sums[bank];
        match ends.0 {
            NIL => self.busy &= !(1 << bank),
            first if prev == NIL => s.head = Queued::of(&self.nodes[first as usize].e),
            _ => {}
        }
        if e.row == open {
            self.hits[bank] -= 1;
            if self.hits[bank] == 0 {
                self.hit_banks &= !(1 << bank);
            } else if s.hit_head.seq == seq {
                let mut i = next;
                while self.nodes[i as usize].e.row != open {
                    i = self.nodes[i as usize].next; // a later hit exists: never NIL here
                }
                s.hit_head = Queued::of(&self.nodes[i as usize].e);
                s.hit_node = i;
            }
        }
        e
    }

    /// Recounts `bank`'s row hits after its open row changed to `open` (`u32::MAX`: closed,
    /// which no request's row is).
    pub fn recount(&mut self, bank: usize, open: u32) {
        let (s, hits) = (&mut self.sums[bank], &mut self.hits[bank]);
        *hits = 0;
        self.hit_banks &= !(1 << bank);
        if open == u32::MAX {
            return;
        }
        let mut i = self.ends[bank].0;
        while i != NIL {
            let n = &self.nodes[i as usize];
            if n.e.row == open {
                if *hits == 0 {
                    s.hit_head = Queued::of(&n.e);
                    s.hit_node = i;
                }
                *hits += 1;
            }
            i = n.next;
        }
        if *hits > 0 {
            self.hit_banks |= 1 << bank;
        }
    }

    /// Zeroes every bank's row hits (every bank closed).
    pub fn clear_hits(&mut self) {
        self.hits.iter_mut().for_each(|h| *h = 0);
        self.hit_banks = 0;
    }

    /// The banks with requests, as a bit set (bit b = flat bank b).
    #[inline]
    pub fn busy(&self) -> u64 {
        self.busy
    }

    /// The banks with requests that hit their open row, as a bit set (a subset of
    /// [`BankQueue::busy`]).
    #[inline]
    pub fn hit_banks(&self) -> u64 {
        self.hit_banks
    }

    /// Requests of `bank` that hit its open row.
    pub fn hits(&self, bank: usize) -> u16 {
        self.hits[bank]
    }

    /// True if `bank` has no requests.
    pub fn is_empty(&self, bank: usize) -> bool {
        self.busy & (1 << bank) == 0
    }

    /// The oldest request of `bank` (which has some).
    pub fn head(&self, bank: usize) -> Queued {
        debug_assert!(!self.is_empty(bank));
        self.sums[bank].head
    }

    /// The oldest request of `bank` that hits its open row (it has some).
    pub fn hit_head(&self, bank: usize) -> Queued {
        debug_assert!(self.hits(bank) > 0);
        self.sums[bank].hit_head
    }
}

/// The index of the entry `seq` in `q`, which is in `seq` order: the oldest is tried first (the
/// one served most often, and the only one read), then the rest by bisection.
#[inline]
pub(crate) fn find_seq<T>(q: &std::collections::VecDeque<T>, seq: u64, key: impl Fn(&T) -> u64) -> Option<usize> {
    match q.front() {
        Some(f) if key(f) == seq => Some(0),
        Some(_) => q.binary_search_by_key(&seq, key).ok(),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hbm::state::BankRef;
    use trnsim_kernel::SimRng;

    /// The same queue kept the plain way: every request in one arrival-ordered list.
    struct Reference {
        q: Vec<Entry>,
    }

    impl Reference {
        fn of_bank(&self, bank: usize) -> impl Iterator<Item = &Entry> + '_ {
            self.q.iter().filter(move |e| e.b.bank as usize == bank)
        }
    }

    fn entry(seq: u64, bank: u16, row: u32) -> Entry {
        let b = BankRef { bank, group: bank / 4, sid: 0 };
        Entry {
            tag: seq * 7,
            port: (seq % 3) as u16,
            seq,
            arrive: seq * 2,
            b,
            row,
            col: (seq % 32) as u32,
            write: false,
        }
    }

    /// Pushes, removals (oldest, oldest hit or any request of a bank) and open-row changes in
    /// random order, each checked against the plain list: heads, hit heads, hit counts, the
    /// set of banks with hits, lengths and the removed request.
    #[test]
    fn bank_lists_agree_with_one_arrival_ordered_list() {
        const BANKS: usize = 16;
        for round in 0..20u64 {
            let mut rng = SimRng::new(round, 3);
            let mut bq = BankQueue::new(BANKS, 8);
            let mut r = Reference { q: Vec::new() };
            let mut open = [u32::MAX; BANKS];
            let mut seq = 0;
            for _ in 0..4000 {
                let bank = rng.below(BANKS as u64) as usize;
                match rng.below(10) {
                    0..=3 if r.q.len() < 200 => {
                        let e = entry(seq, bank as u16, rng.below(3) as u32);
                        seq += 1;
                        bq.push(e, open[bank]);
                        r.q.push(e);
                    }
                    4..=6 => {
                        let mine: Vec<u64> = r.of_bank(bank).map(|e| e.seq).collect();
                        if mine.is_empty() {
                            continue;
                        }
                        let hit = r.of_bank(bank).find(|e| e.row == open[bank]).map(|e| e.seq);
                        let pick = match rng.below(3) {
                            0 => mine[0],
                            1 => hit.unwrap_or(mine[0]),
                            _ => mine[rng.below(mine.len() as u64) as usize],
                        };
                        let at = r.q.iter().position(|e| e.seq == pick).unwrap();
                        let want = r.q.remove(at);
                        let got = bq.remove(bank, pick, open[bank]);
                        assert_eq!((got.seq, got.tag, got.row, got.col), (want.seq, want.tag, want.row, want.col));
                    }
                    7..=8 => {
                        open[bank] = if rng.below(4) == 0 { u32::MAX } else { rng.below(3) as u32 };
                        bq.recount(bank, open[bank]);
                    }
                    _ => {
                        open = [u32::MAX; BANKS];
                        bq.clear_hits();
                    }
                }
                assert_eq!(bq.total(), r.q.len());
                for (b, &open_b) in open.iter().enumerate() {
                    let mine: Vec<&Entry> = r.of_bank(b).collect();
                    assert_eq!(bq.is_empty(b), mine.is_empty(), "round {round} bank {b}");
                    assert_eq!(bq.busy() & (1 << b) != 0, !mine.is_empty());
                    let hit = mine.iter().any(|e| e.row == open_b);
                    assert_eq!(bq.hit_banks() & (1 << b) != 0, hit, "round {round} bank {b}: hit set");
                    if mine.is_empty() {
                        continue;
                    }
                    assert_eq!(bq.head(b), Queued::of(mine[0]));
                    // The list back from its last node is the list forward, reversed.
                    let (mut fwd, mut back) = (Vec::new(), Vec::new());
                    let (mut i, mut j) = (bq.ends[b].0, bq.ends[b].1);
                    while i != NIL {
                        fwd.push(bq.nodes[i as usize].e.seq);
                        i = bq.nodes[i as usize].next;
                    }
                    while j != NIL {
                        back.push(bq.nodes[j as usize].e.seq);
                        j = bq.nodes[j as usize].prev;
                    }
                    back.reverse();
                    assert_eq!(fwd, back, "round {round} bank {b}: links both ways");
                    assert_eq!(fwd, mine.iter().map(|e| e.seq).collect::<Vec<_>>());
                    let hits: Vec<&&Entry> = mine.iter().filter(|e| e.row == open_b).collect();
                    assert_eq!(bq.hits(b) as usize, hits.len(), "round {round} bank {b}");
                    if let Some(h) = hits.first() {
                        assert_eq!(bq.hit_head(b), Queued::of(h));
                        assert_eq!(bq.nodes[bq.sums[b].hit_node as usize].e.seq, h.seq, "the hit head's node");
                    }
                }
            }
        }
    }
}
