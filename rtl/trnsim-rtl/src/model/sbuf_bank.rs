//! One bank of a banked SBUF or PSUM at the SRAM timing model's port boundary
//! (rtl/blocks/sbuf_bank.sv), cycle for cycle; its stimulus, a reactive driver and its diff
//! configuration.

use crate::block::{Block, ModelVcd, PortInfo, VltError};
use crate::diff::DiffConfig;
use crate::reactive::weighted;
use crate::stimulus::Stimulus;
use std::path::Path;
use trnsim_kernel::SimRng;

/// Port indices of [`SbufBank::ports`].
pub mod sbuf_bank_port {
    #![allow(missing_docs)]
    pub const CLK: usize = 0;
    pub const RST: usize = 1;
    pub const REQ_VALID: usize = 2;
    pub const REQ_WRITE: usize = 3;
    pub const REQ_FIRST: usize = 4;
    pub const REQ_LAST: usize = 5;
    pub const GRANT: usize = 6;
    pub const STALLS: usize = 7;
}
use sbuf_bank_port as P;

fn mask(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1 << bits) - 1
    }
}

/// Bits of a group number for `g` groups (the RTL's `GW = $clog2(G)`), `g` >= 2.
pub fn sbuf_bank_group_bits(g: u32) -> u32 {
    32 - (g.max(2) - 1).leading_zeros()
}

/// One bank of a banked SRAM (trnsim-mem's `sram::Sram`): `n` request slots, `g` partition
/// groups, `r` read and `w` write ports per group, at the RTL's port boundary (see
/// rtl/blocks/sbuf_bank.sv for the rules).
///
/// Inputs per slot `k` (packed LSB-first): `req_valid`, `req_write` (1 bit each), `req_first`
/// and `req_last` (`gw` = [`sbuf_bank_group_bits`]`(g)` bits each at `k * gw`: the first and
/// last partition group the request needs a port of this bank in; groups `first..=last` below
/// `g`, none when `first > last`). Outputs: `grant` (combinational, 1 bit per slot) and
/// `stalls` (32 bits, registered). Slots are visited in index order; a valid slot is granted
/// iff each group of its range has had fewer than `r` (read) / `w` (write) grants this cycle,
/// and then takes one port in each; a refused slot takes none. `stalls` adds the refused valid
/// slots every cycle (wrapping), which is the SRAM model's `bank_stall_cycles` of this bank.
/// This is exactly the SRAM model's `PortUse::try_take` restricted to one bank (whose accesses
/// always cover one contiguous range of groups), so a bank's slots in the model's visiting
/// order get the model's grants.
///
/// Leaves out: the other banks (each is independent), the visiting order itself (the model's
/// rotating priority, which the caller applies when it fills the slots), which bank an element
/// falls in, the model's arithmetic skipping of uncontended runs (the block decides one cycle
/// at a time), group sets that are not one range (no access of the model makes them), and
/// more than `n` requests on one bank in a cycle. No data moves.
pub struct SbufBank {
    n: usize,
    g: u32,
    gw: u32,
    r: u32,
    w: u32,
    ports: Vec<PortInfo>,
    rst: bool,
    valid: u32,
    write: u32,
    first: u128,
    last: u128,
    grant: u32,
    refused: u32,
    stalls: u32,
    stale: bool,
    trace: Option<ModelVcd>,
    cycle: u64,
}

impl SbufBank {
    /// A bank after reset. `n` 1..=32 slots, `g` 2..=128 groups with `n` group numbers in 128
    /// bits, `r`, `w` >= 1 ports.
    pub fn new(n: usize, g: u32, r: u32, w: u32) -> SbufBank {
        assert!(
            (1..=32).contains(&n) && (2..=128).contains(&g) && r >= 1 && w >= 1,
            "sbuf_bank: n 1..=32, g 2..=128, r, w >= 1"
        );
        let gw = sbuf_bank_group_bits(g);
        assert!(n as u32 * gw <= 128, "sbuf_bank: n group numbers over 128 bits");
        let q = n as u32;
        let port = |name, input, width| PortInfo { name, input, width };
        let ports = vec![
            port("clk", true, 1),
            port("rst", true, 1),
            port("req_valid", true, q),
            port("req_write", true, q),
            port("req_first", true, q * gw),
            port("req_last", true, q * gw),
            port("grant", false, q),
            port("stalls", false, 32),
        ];
        SbufBank {
            n,
            g,
            gw,
            r,
            w,
            ports,
            rst: false,
            valid: 0,
            write: 0,
            first: 0,
            last: 0,
            grant: 0,
            refused: 0,
            stalls: 0,
            stale: true,
            trace: None,
            cycle: 0,
        }
    }

    /// Slot `k`'s groups: `first..=last` clipped to the bank's groups (empty when first > last).
    fn range_of(&self, k: usize) -> std::ops::RangeInclusive<u32> {
        let field = |v: u128| (v >> (k as u32 * self.gw) & mask(self.gw)) as u32;
        field(self.first)..=field(self.last).min(self.g - 1)
    }

    fn arbitrate(&mut self) {
        // Ports taken so far this cycle, per direction and group.
        let mut used = [[0u32; 128]; 2];
        self.grant = 0;
        self.refused = 0;
        for k in 0..self.n {
            if self.valid >> k & 1 == 0 || self.rst {
                continue;
            }
            let write = self.write >> k & 1 == 1;
            let (taken, ports) = if write { (&mut used[1], self.w) } else { (&mut used[0], self.r) };
            let groups = self.range_of(k);
            if groups.clone().all(|q| taken[q as usize] < ports) {
                groups.for_each(|q| taken[q as usize] += 1);
                self.grant |= 1 << k;
            } else {
                self.refused += 1;
            }
        }
        self.stale = false;
    }

    fn dump(&mut self, high: bool) {
        if self.trace.is_some() {
            let mut v: Vec<u128> = (0..self.ports.len()).map(|i| self.output(i)).collect();
            if let Some(t) = self.trace.as_mut() {
                t.dump(P::CLK, &mut v, high);
            }
        }
    }
}

impl Block for SbufBank {
    fn ports(&self) -> &[PortInfo] {
        &self.ports
    }

    fn set_input(&mut self, port: usize, v: u128) {
        let q = self.n as u32;
        match port {
            P::RST => self.rst = v & 1 == 1,
            P::REQ_VALID => self.valid = (v & mask(q)) as u32,
            P::REQ_WRITE => self.write = (v & mask(q)) as u32,
            P::REQ_FIRST => self.first = v & mask(q * self.gw),
            P::REQ_LAST => self.last = v & mask(q * self.gw),
            _ => panic!("sbuf_bank: port {port} is not a data input"),
        }
        self.stale = true;
    }

    fn settle(&mut self) -> Result<(), VltError> {
        self.arbitrate();
        self.dump(false);
        Ok(())
    }

    fn output(&self, port: usize) -> u128 {
        match port {
            P::CLK => 0,
            P::RST => self.rst as u128,
            P::REQ_VALID => self.valid as u128,
            P::REQ_WRITE => self.write as u128,
            P::REQ_FIRST => self.first,
            P::REQ_LAST => self.last,
            P::GRANT => self.grant as u128,
            P::STALLS => self.stalls as u128,
            _ => panic!("sbuf_bank: no port {port}"),
        }
    }

    fn posedge(&mut self) -> Result<(), VltError> {
        if self.stale {
            self.arbitrate();
        }
        self.stalls = if self.rst { 0 } else { self.stalls.wrapping_add(self.refused) };
        self.stale = true;
        self.dump(true);
        self.cycle += 1;
        Ok(())
    }

    fn open_vcd(&mut self, path: &Path) -> Result<(), VltError> {
        if self.trace.is_some() {
            return Err(VltError::TraceAlreadyOpen);
        }
        self.trace = Some(ModelVcd::create(path, "sbuf_bank", &self.ports, 10 * self.cycle)?);
        Ok(())
    }

    fn close_vcd(&mut self) {
        self.trace = None;
    }
}

impl DiffConfig {
    /// The SBUF / PSUM bank: every output every cycle (both are always defined).
    pub fn sbuf_bank(cycles: u64) -> DiffConfig {
        DiffConfig {
            cycles,
            history: 8,
            dont_care: vec![],
            vcd_dir: None,
            name: "sbuf_bank".into(),
            vcd_window: 2000,
            waves: crate::diff::Waves::Fail,
            coverage: Vec::new(),
            until_coverage: None,
            monitors: Vec::new(),
        }
    }
}

/// A group range `(first, last)` as the SRAM model's accesses make them (an access covers a
/// contiguous partition range starting at a group boundary): all `g` groups with probability
/// `p_full`, else one group with probability `p_one`, else a few (2-4) or any number, from a
/// random start; once in 512 draws a range that covers no group (first > last, which no access
/// makes; the block grants it).
fn random_range(rng: &mut SimRng, g: u32, p_full: f64, p_one: f64) -> (u32, u32) {
    if rng.below(512) == 0 {
        let top = 1u64 << sbuf_bank_group_bits(g);
        let first = 1 + rng.below(top - 1);
        return (first as u32, rng.below(first) as u32);
    }
    if rng.chance(p_full) {
        return (0, g - 1);
    }
    let len = if rng.chance(p_one) {
        1
    } else if rng.chance(0.5) {
        2 + rng.below(3) as u32
    } else {
        1 + rng.below(u64::from(g)) as u32
    }
    .min(g);
    let start = rng.below(u64::from(g - len + 1)) as u32;
    (start, start + len - 1)
}

/// Range mixes `(p_full, p_one)`: mostly full (the compute engines' 128-partition accesses),
/// mixed, mostly narrow, and one group each (the DMA engines' 8-partition accesses).
const MIXES: [(f64, f64); 5] = [(0.9, 0.5), (0.5, 0.3), (0.1, 0.3), (0.0, 0.3), (0.0, 0.9)];

/// Random requests for an `n`-slot, `g`-group bank, in phases of a request rate (5 % of the
/// slots to all of them: with 32 slots, about a third of the cycles have 8-20 valid slots, as a
/// busy SBUF bank sees, a third fewer and a third more), a slot
/// layout (the valid slots packed from slot 0, as the memory fills them, or scattered), a write
/// fraction, and a range mix (`MIXES`: mostly full ranges to one group each), so that refusals
/// of reads and writes, of full and narrow ranges, are frequent and all-granted cycles occur
/// too; reset at cycles 0-1 and rarely afterwards (about every 16 k cycles, so the stall
/// counter climbs past a few thousand between resets).
pub struct SbufBankStimulus {
    n: usize,
    g: u32,
    gw: u32,
    rng: SimRng,
    phase_left: u64,
    p_valid: f64,
    packed: bool,
    p_write: f64,
    mix: (f64, f64),
}

impl SbufBankStimulus {
    /// Stimulus from `seed` (the kernel's deterministic RNG, stream 9).
    pub fn new(n: usize, g: u32, seed: u64) -> Self {
        SbufBankStimulus {
            n,
            g,
            gw: sbuf_bank_group_bits(g),
            rng: SimRng::new(seed, 9),
            phase_left: 0,
            p_valid: 0.5,
            packed: false,
            p_write: 0.5,
            mix: MIXES[0],
        }
    }
}

impl Stimulus for SbufBankStimulus {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        if self.phase_left == 0 {
            self.p_valid = [0.05, 0.15, 0.3, 0.45, 0.6, 0.9, 1.0][self.rng.below(7) as usize];
            self.packed = self.rng.chance(0.5);
            self.p_write = [0.1, 0.5, 0.9][self.rng.below(3) as usize];
            self.mix = MIXES[self.rng.below(MIXES.len() as u64) as usize];
            self.phase_left = 8 + self.rng.below(400);
        }
        self.phase_left -= 1;
        let (mut valid, mut write, mut first, mut last) = (0u128, 0u128, 0u128, 0u128);
        for k in 0..self.n {
            valid |= (self.rng.chance(self.p_valid) as u128) << k;
            write |= (self.rng.chance(self.p_write) as u128) << k;
            let (f, l) = random_range(&mut self.rng, self.g, self.mix.0, self.mix.1);
            first |= u128::from(f) << (k as u32 * self.gw);
            last |= u128::from(l) << (k as u32 * self.gw);
        }
        if self.packed {
            valid = mask(valid.count_ones());
        }
        inputs[P::RST] = (cycle < 2 || self.rng.below(16384) == 0) as u128;
        inputs[P::REQ_VALID] = valid;
        inputs[P::REQ_WRITE] = write;
        inputs[P::REQ_FIRST] = first;
        inputs[P::REQ_LAST] = last;
    }
}

/// The SRAM model's clients around one bank (ports `rst`, `req_valid`, `req_write`,
/// `req_first`, `req_last` driven, `grant` observed): `n` clients, each holding its request
/// (direction and group range) until it is granted, as a stalled client retries its element;
/// each cycle the clients with a request fill the slots in the model's visiting order, which
/// rotates as timing.rs rotates it (after a cycle with requests, the first requester of that
/// cycle becomes the lowest priority). Sequences of mostly-full or mostly-narrow ranges, read
/// or write mixes, and idles.
pub struct SbufBankClients {
    rng: SimRng,
    n: usize,
    g: u32,
    gw: u32,
    /// Each client's request (write, first group, last group), held until granted.
    held: Vec<Option<(bool, u32, u32)>>,
    /// The client with top priority.
    priority: usize,
    /// The client in each slot this cycle.
    slot_client: Vec<usize>,
    p_new: f64,
    p_write: f64,
    mix: (f64, f64),
    left: u64,
}

impl SbufBankClients {
    /// For `n` clients of a bank of `g` groups, from `seed`.
    pub fn new(n: usize, g: u32, seed: u64) -> SbufBankClients {
        SbufBankClients {
            rng: SimRng::new(seed, 23),
            n,
            g,
            gw: sbuf_bank_group_bits(g),
            held: vec![None; n],
            priority: 0,
            slot_client: Vec::with_capacity(n),
            p_new: 0.5,
            p_write: 0.5,
            mix: MIXES[0],
            left: 0,
        }
    }
}

impl Stimulus for SbufBankClients {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        if self.left == 0 {
            self.p_new = weighted(&mut self.rng, &[(1, 0.0), (1, 0.05), (2, 0.3), (4, 0.8)]);
            self.p_write = weighted(&mut self.rng, &[(1, 0.1), (2, 0.5), (1, 0.9)]);
            self.mix = MIXES[self.rng.below(MIXES.len() as u64) as usize];
            self.left = 1 + self.rng.below(128);
        }
        self.left -= 1;
        let reset = cycle < 2 || self.rng.below(16384) == 0;
        inputs[P::RST] = u128::from(reset);
        if reset {
            self.held.iter_mut().for_each(|h| *h = None);
            self.priority = 0;
        }
        for c in 0..self.n {
            if self.held[c].is_none() && !reset && self.rng.chance(self.p_new) {
                let write = self.rng.chance(self.p_write);
                let (first, last) = random_range(&mut self.rng, self.g, self.mix.0, self.mix.1);
                self.held[c] = Some((write, first, last));
            }
        }
        let (mut valid, mut write, mut first, mut last) = (0u128, 0u128, 0u128, 0u128);
        self.slot_client.clear();
        for o in 0..self.n {
            let c = (self.priority + o) % self.n;
            if let Some((wr, f, l)) = self.held[c] {
                let k = self.slot_client.len();
                valid |= 1 << k;
                write |= u128::from(wr) << k;
                first |= u128::from(f) << (k as u32 * self.gw);
                last |= u128::from(l) << (k as u32 * self.gw);
                self.slot_client.push(c);
            }
        }
        inputs[P::REQ_VALID] = valid;
        inputs[P::REQ_WRITE] = write;
        inputs[P::REQ_FIRST] = first;
        inputs[P::REQ_LAST] = last;
    }

    fn observe(&mut self, _cycle: u64, ports: &[u128]) {
        if ports[P::RST] & 1 == 1 {
            return;
        }
        for (k, &c) in self.slot_client.iter().enumerate() {
            if ports[P::GRANT] >> k & 1 == 1 {
                self.held[c] = None;
            }
        }
        if let Some(&first) = self.slot_client.first() {
            self.priority = (first + 1) % self.n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One cycle of requests `(slot, write, first, last)`; returns the grants and the stall
    /// count after the edge.
    fn step(b: &mut SbufBank, reqs: &[(usize, bool, u32, u32)]) -> (u128, u128) {
        let (mut v, mut w, mut f, mut l) = (0, 0, 0, 0);
        for &(k, wr, first, last) in reqs {
            v |= 1 << k;
            w |= (wr as u128) << k;
            f |= u128::from(first) << (k as u32 * b.gw);
            l |= u128::from(last) << (k as u32 * b.gw);
        }
        for (p, x) in [(P::REQ_VALID, v), (P::REQ_WRITE, w), (P::REQ_FIRST, f), (P::REQ_LAST, l)] {
            b.set_input(p, x);
        }
        b.settle().unwrap();
        let g = b.output(P::GRANT);
        b.posedge().unwrap();
        (g, b.output(P::STALLS))
    }

    #[test]
    fn sbuf_bank_grants_all_or_nothing_per_group_and_direction() {
        let mut b = SbufBank::new(4, 4, 1, 1);
        // Slot 0 reads groups 0-1; slot 1 reads groups 1-2: group 1 is taken, refused, and it
        // takes nothing, so slot 2 reading group 2 is granted; slot 3 writes group 1 (own ports).
        assert_eq!(step(&mut b, &[(0, false, 0, 1), (1, false, 1, 2), (2, false, 2, 2), (3, true, 1, 1)]), (0b1101, 1));
        // A range that covers no group (first > last) is granted; two full writes: the second
        // is refused.
        assert_eq!(step(&mut b, &[(0, true, 0, 3), (1, true, 0, 3), (2, false, 2, 1)]), (0b0101, 2));
        b.set_input(P::RST, 1);
        assert_eq!(step(&mut b, &[(0, false, 0, 0)]), (0, 0), "no grants in reset; the count clears");
        b.set_input(P::RST, 0);
        let mut b2 = SbufBank::new(3, 3, 2, 1);
        assert_eq!(b2.ports()[P::REQ_FIRST].width, 6, "2 bits a group number for 3 groups");
        // Groups beyond the bank's (last = 3 of 3 groups) are not there: 1..=3 is 1..=2; a
        // range starting beyond them covers none.
        assert_eq!(step(&mut b2, &[(0, false, 0, 3), (1, false, 1, 3), (2, false, 3, 3)]), (0b111, 0));
        assert_eq!(step(&mut b2, &[(0, false, 0, 3), (1, false, 0, 1), (2, false, 1, 1)]), (0b011, 1));
        // The count wraps modulo 2^32.
        b.stalls = u32::MAX - 1;
        assert_eq!(
            step(&mut b, &[(0, false, 0, 0), (1, false, 0, 0), (2, false, 0, 0), (3, false, 0, 0)]),
            (0b0001, 1)
        );
        assert_eq!(SbufBank::new(32, 16, 2, 2).ports()[P::REQ_LAST].width, 128, "32 slots fit");
        assert_eq!([2, 3, 4, 5, 16, 17, 32].map(sbuf_bank_group_bits), [1, 2, 2, 3, 4, 5, 5]);
    }

    #[test]
    fn sbuf_bank_clients_retry_until_granted_and_rotate_priority() {
        let mut b = SbufBank::new(32, 16, 1, 1);
        let mut s = SbufBankClients::new(32, 16, 4);
        let mut v = vec![0u128; 8];
        let (mut granted, mut refused) = (0u32, 0u32);
        for cycle in 0..20_000 {
            s.drive(cycle, &mut v);
            // Slots are filled from 0 without gaps.
            assert_eq!(v[P::REQ_VALID] & (v[P::REQ_VALID] + 1), 0, "cycle {cycle}");
            for p in [P::RST, P::REQ_VALID, P::REQ_WRITE, P::REQ_FIRST, P::REQ_LAST] {
                b.set_input(p, v[p]);
            }
            b.settle().unwrap();
            for (p, x) in v.iter_mut().enumerate() {
                *x = b.output(p);
            }
            if v[P::RST] == 0 {
                granted += v[P::GRANT].count_ones();
                refused += (v[P::REQ_VALID] & !v[P::GRANT]).count_ones();
            }
            s.observe(cycle, &v);
            b.posedge().unwrap();
        }
        assert!(granted > 20_000 && refused > 20_000, "{granted} granted, {refused} refused");
    }
}
