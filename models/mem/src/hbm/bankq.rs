//! One request queue of a pseudo-channel controller, indexed by bank, so that choosing the next
//! command costs one pass over the banks that have requests instead of one over the requests.
//!
//! The index is derived data: the controller's queue (a `Vec` in arrival order) stays the
//! record of what is queued, and every request in it appears here exactly once, in the list of
//! its bank, in the same order.

use std::collections::VecDeque;

/// What the per-bank lists keep of a queued request.
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

/// One bank's summary, kept in a flat array so that planning reads no per-bank list (the lists
/// are separate allocations: a cache miss each).
#[derive(Clone, Copy, Debug)]
struct Summary {
    /// The oldest request (valid when `len > 0`).
    head: Queued,
    /// The oldest request that hits the open row (valid when `hits > 0`).
    hit_head: Queued,
}

const NONE: Queued = Queued { seq: 0, arrive: 0, row: 0, col: 0 };

/// The requests of one queue (reads or writes) grouped by flat bank index, oldest first, with
/// each bank's oldest request, oldest row hit and count of row hits.
///
/// Invariant: a bank's `hits` (kept apart from the other summaries: planning reads it for
/// every bank with requests, the rest only for banks that can issue) and `hit_head` count and name the requests of its list whose row
/// is the open row last given to [`BankQueue::push`], [`BankQueue::remove`] or
/// [`BankQueue::recount`]; `head` is its list's first request; bit `b` of `busy` is set exactly
/// when `lists[b]` is not empty. At most 64 banks (`Organization::validate` enforces it).
#[derive(Clone, Debug)]
pub struct BankQueue {
    lists: Vec<VecDeque<Queued>>,
    sums: Vec<Summary>,
    hits: Vec<u16>,
    busy: u64,
}

impl BankQueue {
    /// An empty queue over `banks` banks.
    pub fn new(banks: usize) -> BankQueue {
        assert!(banks <= 64, "at most 64 banks per pseudo-channel");
        let empty = Summary { head: NONE, hit_head: NONE };
        BankQueue { lists: vec![VecDeque::new(); banks], sums: vec![empty; banks], hits: vec![0; banks], busy: 0 }
    }

    /// Appends a request to `bank` (requests arrive in `seq` order); `open` is the bank's
    /// open row (`u32::MAX` if closed).
    pub fn push(&mut self, bank: usize, q: Queued, open: u32) {
        let s = &mut self.sums[bank];
        if self.busy & (1 << bank) == 0 {
            s.head = q;
        }
        if q.row == open {
            if self.hits[bank] == 0 {
                s.hit_head = q;
            }
            self.hits[bank] += 1;
        }
        self.lists[bank].push_back(q);
        self.busy |= 1 << bank;
    }

    /// Removes the request `seq` of `bank`; `open` is the bank's open row now.
    pub fn remove(&mut self, bank: usize, seq: u64, open: u32) {
        let list = &mut self.lists[bank];
        let i = find_seq(list, seq, |q| q.seq).expect("a queued request is in its bank's list");
        let q = list.remove(i).expect("found");
        let s = &mut self.sums[bank];
        match list.front() {
            Some(&h) => s.head = h,
            None => self.busy &= !(1 << bank),
        }
        if q.row == open {
            self.hits[bank] -= 1;
            if self.hits[bank] > 0 && s.hit_head.seq == seq {
                s.hit_head = *list.range(i..).find(|q| q.row == open).expect("a later hit");
            }
        }
    }

    /// Recounts `bank`'s row hits after its open row changed to `open`.
    pub fn recount(&mut self, bank: usize, open: u32) {
        let (s, hits) = (&mut self.sums[bank], &mut self.hits[bank]);
        *hits = 0;
        for q in self.lists[bank].iter().filter(|q| q.row == open) {
            if *hits == 0 {
                s.hit_head = *q;
            }
            *hits += 1;
        }
    }

    /// Zeroes every bank's row hits (every bank closed).
    pub fn clear_hits(&mut self) {
        self.hits.iter_mut().for_each(|h| *h = 0);
    }

    /// The banks with requests, as a bit set (bit b = flat bank b).
    pub fn busy(&self) -> u64 {
        self.busy
    }

    /// Requests of `bank` that hit its open row.
    pub fn hits(&self, bank: usize) -> u16 {
        self.hits[bank]
    }

    /// Requests queued for `bank`.
    pub fn len(&self, bank: usize) -> usize {
        self.lists[bank].len()
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
pub(crate) fn find_seq<T>(q: &VecDeque<T>, seq: u64, key: impl Fn(&T) -> u64) -> Option<usize> {
    match q.front() {
        Some(f) if key(f) == seq => Some(0),
        Some(_) => q.binary_search_by_key(&seq, key).ok(),
        None => None,
    }
}
