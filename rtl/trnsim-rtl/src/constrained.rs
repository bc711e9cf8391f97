//! Constrained-random stimulus, as a SystemVerilog testbench declares it: per input port a
//! weighted distribution (`dist { [lo:hi] :/ w }`), relations between ports that every drawn
//! cycle must satisfy (`constraint c { a + b < 256; }`, solved by drawing again), and a
//! library of weighted sequences (a UVM sequence library: each a list of items, each item a
//! set of distributions held for a drawn number of cycles).
//!
//! ```
//! use trnsim_rtl::block::Block;
//! use trnsim_rtl::constrained::{Constrained, Dist, Item, Sequence};
//! use trnsim_rtl::model::LinkFifo;
//! use trnsim_rtl::stimulus::Stimulus;
//! let fifo = LinkFifo::new(64, 4);
//! let burst = Sequence::new("burst", 3)
//!     .item(Item::new(4, 16).set("in_valid", Dist::value(1)).set("out_ready", Dist::value(0)))
//!     .item(Item::new(4, 16).set("in_valid", Dist::value(0)).set("out_ready", Dist::value(1)));
//! let mixed = Sequence::new("mixed", 1).item(
//!     Item::new(50, 200)
//!         .set("in_valid", Dist::new(&[(0, 0, 1), (1, 1, 3)]))          // valid 3 times in 4
//!         .set("in_data", Dist::new(&[(0, 15, 1), (16, u64::MAX as u128, 1)])) // small half the time
//!         .set("out_ready", Dist::any()),
//! );
//! let mut s = Constrained::new(fifo.ports(), 7, vec![burst, mixed]).unwrap();
//! let mut v = vec![0u128; fifo.ports().len()];
//! s.drive(0, &mut v); // reset asserted in cycles 0 and 1, as every shipped stimulus does
//! ```
//!
//! Every draw comes from one seeded [`SimRng`] stream, so a seed repeats the run. Leaves out:
//! solving constraints (a cycle whose draws break a relation is drawn again, at most
//! [`MAX_DRAWS`] times; a relation still broken then is counted in
//! [`Constrained::unsatisfied`] and the last draw is driven, so an over-tight constraint shows
//! in the count, never as a hang), `randc` (cyclic values), and constraints across cycles other
//! than holding an item's values.

use crate::block::PortInfo;
use crate::stimulus::Stimulus;
use trnsim_kernel::SimRng;

/// Draws of one cycle before a broken relation is given up on (see the module doc).
pub const MAX_DRAWS: u32 = 64;

/// A weighted distribution of one port's values: ranges `lo..=hi`, each chosen with its weight
/// (shared by its values: SystemVerilog's `:/`), then a value uniform in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dist {
    ranges: Vec<(u128, u128, u32)>,
}

impl Dist {
    /// Ranges `(lo, hi, weight)`, `lo <= hi` (checked with the port's width by
    /// [`Constrained::new`]).
    pub fn new(ranges: &[(u128, u128, u32)]) -> Dist {
        Dist { ranges: ranges.to_vec() }
    }

    /// Always `v`.
    pub fn value(v: u128) -> Dist {
        Dist::new(&[(v, v, 1)])
    }

    /// Any value the port holds (uniform over its width).
    pub fn any() -> Dist {
        Dist::new(&[(0, u128::MAX, 1)])
    }

    fn draw(&self, rng: &mut SimRng, mask: u128) -> u128 {
        let total: u64 = self.ranges.iter().map(|r| u64::from(r.2)).sum();
        let mut pick = rng.below(total.max(1));
        let mut chosen = self.ranges[0];
        for &r in &self.ranges {
            if pick < u64::from(r.2) {
                chosen = r;
                break;
            }
            pick -= u64::from(r.2);
        }
        let (lo, hi, _) = chosen;
        let hi = hi.min(mask);
        let span = hi - lo;
        let r = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
        if span == u128::MAX {
            r
        } else {
            lo + r % (span + 1)
        }
    }
}

/// A relation between ports every cycle must hold: given the drawn inputs by port index.
pub type Relation = fn(&Ports, &[u128]) -> bool;

/// Port lookup by name for a [`Relation`].
pub struct Ports<'a>(&'a [PortInfo]);

impl Ports<'_> {
    /// The value of port `name` in `v` (0 for a port the block does not have).
    pub fn get(&self, v: &[u128], name: &str) -> u128 {
        self.0.iter().position(|p| p.name == name).map_or(0, |i| v[i])
    }
}

/// One step of a sequence: distributions of some ports (the others keep their values, the
/// first item's start at 0), relations, held for `lo..=hi` cycles (each cycle drawn anew from
/// the same distributions).
#[derive(Clone, Debug)]
pub struct Item {
    cycles: (u64, u64),
    set: Vec<(&'static str, Dist)>,
    relations: Vec<(&'static str, Relation)>,
}

impl Item {
    /// An item lasting `lo..=hi` cycles (`1 <= lo <= hi`, checked by [`Constrained::new`]).
    pub fn new(lo: u64, hi: u64) -> Item {
        Item { cycles: (lo, hi), set: Vec::new(), relations: Vec::new() }
    }

    /// Draws input `port` from `dist` each cycle of the item.
    pub fn set(mut self, port: &'static str, dist: Dist) -> Item {
        self.set.push((port, dist));
        self
    }

    /// Every cycle of the item must satisfy `rel` (named for [`Constrained::unsatisfied`]).
    pub fn constraint(mut self, name: &'static str, rel: Relation) -> Item {
        self.relations.push((name, rel));
        self
    }
}

/// A named, weighted list of items run in order.
#[derive(Clone, Debug)]
pub struct Sequence {
    name: &'static str,
    weight: u32,
    items: Vec<Item>,
}

impl Sequence {
    /// An empty sequence chosen with `weight` against the library's others.
    pub fn new(name: &'static str, weight: u32) -> Sequence {
        Sequence { name, weight, items: Vec::new() }
    }

    /// Appends `item`.
    pub fn item(mut self, item: Item) -> Sequence {
        self.items.push(item);
        self
    }
}

/// Per input, its index and width mask.
struct Slot {
    index: usize,
    mask: u128,
}

/// Drives a block's inputs from a sequence library (see the module doc). `rst` (an input of
/// that name) is high in cycles 0 and 1 and low after unless an item sets it.
pub struct Constrained {
    ports: Vec<PortInfo>,
    rng: SimRng,
    library: Vec<Sequence>,
    /// Per sequence, per item, per set port: its slot.
    slots: Vec<Vec<Vec<Slot>>>,
    values: Vec<u128>,
    rst: Option<usize>,
    seq: usize,
    item: usize,
    left: u64,
    started: Vec<u64>,
    unsatisfied: Vec<(&'static str, u64)>,
}

impl Constrained {
    /// A stimulus for a block with `ports`, from `seed`, over `library`. An error names the
    /// sequence, item and port of a declaration the block cannot take: an unknown or output
    /// port, a range beyond the port's width or upside down, no positive weight, an item of
    /// zero cycles or `lo > hi`, an empty library or sequence.
    pub fn new(ports: &[PortInfo], seed: u64, library: Vec<Sequence>) -> Result<Constrained, String> {
        if library.is_empty() || library.iter().all(|s| s.weight == 0) {
            return Err("constrained stimulus: no sequence with a positive weight".into());
        }
        let mut slots = Vec::new();
        for s in &library {
            if s.items.is_empty() {
                return Err(format!("sequence {}: no items", s.name));
            }
            let mut per_item = Vec::new();
            for (k, it) in s.items.iter().enumerate() {
                let at = |m: String| format!("sequence {} item {k}: {m}", s.name);
                let (lo, hi) = it.cycles;
                if lo == 0 || lo > hi {
                    return Err(at(format!("cycles {lo}..={hi} (1 <= lo <= hi)")));
                }
                let mut per_port = Vec::new();
                for (name, d) in &it.set {
                    let i = ports.iter().position(|p| p.name == *name && p.input && *name != "clk");
                    let i = i.ok_or_else(|| at(format!("port {name}: not an input of the block")))?;
                    let w = ports[i].width;
                    let mask = if w >= 128 { u128::MAX } else { (1u128 << w) - 1 };
                    if d.ranges.iter().all(|r| r.2 == 0) {
                        return Err(at(format!("port {name}: no range with a positive weight")));
                    }
                    if let Some(r) = d.ranges.iter().find(|r| r.0 > r.1 || (r.0 > mask)) {
                        return Err(at(format!("port {name}: range {:#x}..={:#x} is not within {w} bits", r.0, r.1)));
                    }
                    per_port.push(Slot { index: i, mask });
                }
                per_item.push(per_port);
            }
            slots.push(per_item);
        }
        let rst = ports.iter().position(|p| p.name == "rst" && p.input);
        let n = library.len();
        Ok(Constrained {
            ports: ports.to_vec(),
            rng: SimRng::new(seed, 0xc0de),
            library,
            slots,
            values: vec![0; ports.len()],
            rst,
            seq: 0,
            item: 0,
            left: 0,
            started: vec![0; n],
            unsatisfied: Vec::new(),
        })
    }

    /// How many times each sequence started, by name.
    pub fn started(&self) -> Vec<(&'static str, u64)> {
        self.library.iter().map(|s| s.name).zip(self.started.iter().copied()).collect()
    }

    /// Cycles whose draws broke a relation [`MAX_DRAWS`] times in a row, by relation name.
    pub fn unsatisfied(&self) -> &[(&'static str, u64)] {
        &self.unsatisfied
    }

    /// Moves to the next item, or at a sequence's end (and first) to a sequence drawn by
    /// weight; draws the item's length.
    fn advance(&mut self) {
        let first = self.started.iter().all(|&c| c == 0);
        if !first {
            self.item += 1;
        }
        if first || self.item >= self.library[self.seq].items.len() {
            let total: u64 = self.library.iter().map(|s| u64::from(s.weight)).sum();
            let mut pick = self.rng.below(total);
            let mut chosen = 0;
            for (k, s) in self.library.iter().enumerate() {
                if pick < u64::from(s.weight) {
                    chosen = k;
                    break;
                }
                pick -= u64::from(s.weight);
            }
            self.seq = chosen;
            self.started[chosen] += 1;
            self.item = 0;
        }
        let (lo, hi) = self.library[self.seq].items[self.item].cycles;
        self.left = lo + self.rng.below(hi - lo + 1);
    }

    /// Draws this cycle's values of the current item's ports, again while a relation breaks
    /// (at most [`MAX_DRAWS`] times; then the first broken relation is counted).
    fn draw(&mut self) {
        let it = &self.library[self.seq].items[self.item];
        let slots = &self.slots[self.seq][self.item];
        let ports = Ports(&self.ports);
        for _ in 0..MAX_DRAWS {
            for ((_, d), s) in it.set.iter().zip(slots) {
                self.values[s.index] = d.draw(&mut self.rng, s.mask);
            }
            if it.relations.iter().all(|(_, rel)| rel(&ports, &self.values)) {
                return;
            }
            if slots.is_empty() {
                break; // nothing drawn: drawing again changes nothing
            }
        }
        if let Some(&(name, _)) = it.relations.iter().find(|(_, rel)| !rel(&ports, &self.values)) {
            match self.unsatisfied.iter_mut().find(|(n, _)| *n == name) {
                Some((_, c)) => *c += 1,
                None => self.unsatisfied.push((name, 1)),
            }
        }
    }
}

impl Stimulus for Constrained {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        if self.left == 0 {
            self.advance();
        }
        self.left -= 1;
        if let Some(r) = self.rst {
            self.values[r] = u128::from(cycle < 2);
        }
        self.draw();
        for (slot, v) in inputs.iter_mut().zip(&self.values) {
            *slot = *v;
        }
    }
}

#[cfg(test)]
mod tests;
