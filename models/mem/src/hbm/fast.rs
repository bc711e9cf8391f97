//! The fast (transaction-level) fidelity of an HBM stack: every request is given its
//! completion cycle when it arrives, from per-resource "free at" times, with no per-cycle
//! stepping and no command scheduling.
//!
//! **What it models**, per pseudo-channel, in arrival order (first come, first served):
//! - each bank's open row: a row hit issues its column command once the bank allows it; a
//!   closed bank needs an ACT (tRCD before the column command); another row open needs a PRE
//!   (after tRAS from its ACT, tRTP from its last read, tWR after its last write's data) and
//!   an ACT tRP later (and tRC after the previous ACT);
//! - ACT spacing: tRRD_S on the pseudo-channel, tRRD_L in a bank group, four ACTs per tFAW;
//! - column spacing: tCCD_S on the pseudo-channel, tCCD_L in a bank group, one burst at a
//!   time on the data bus; read-to-write tRTW and write-to-read tWTR_S turnarounds;
//! - refresh at the cycles the cycle-level controller refreshes at (per-bank: bank `b` of
//!   pseudo-channel `k` every tREFI from its staggered phase, for tRFCpb; all-bank: every
//!   bank for tRFC every tREFI): a command that falls in a refresh waits for its end, and the
//!   refresh closes the bank's row.
//!
//! **Leaves out**: reordering (FR-FCFS serves row hits ahead of older requests; here a later
//! row hit never passes an earlier conflict, so interleaved streams that share banks see more
//! conflicts than in the cycle-level model), queue capacity and the front end's
//! back-pressure (a request is accepted when it arrives), write-drain batching, the command
//! buses, tCCD_R and SID effects, tWTR_L, refresh postponement, and a refresh that starts
//! between a bank's ACT and its column command. docs/validation.md gives its figures beside
//! the cycle-level model's.
//!
//! **Statistics** (the stack's usual names): reads, writes, row hits, misses and conflicts,
//! ACT/PRE/RD/WR counts and latencies (from arrival: there is no queue) are counted; REF
//! commands, refresh time, queue depth, write-mode time and the intake counters read 0.
//! Counters are kept per pseudo-channel, latency histograms per stack (the stack reports
//! them summed over its pseudo-channels, so one histogram each gives the same figures and
//! keeps a request's bookkeeping in cache).

use crate::hbm::org::{Location, Organization};
use crate::hbm::stats::PcStats;
use crate::hbm::timing::TimingParams;
use crate::hbm::Command;
use trnsim_kernel::Histogram;

const CLOSED: u32 = u32::MAX;

/// Cycles a [`Calendar`] looks ahead: the bursts of 4096 queued requests on one
/// pseudo-channel (2 KiB of bits per calendar at most).
const HORIZON: u64 = 16384;

/// Which of the next [`HORIZON`] cycles a resource (a data bus, an ACT slot) is booked: a
/// request books the first free run of cycles at or after the earliest it could use, so a
/// later request can fill a gap an earlier one left (the reordering a controller does).
/// Bookings that do not fit in the window (a resource with more than a window's work queued)
/// go one after another beyond it, and enter the window as it moves: the resource's rate
/// holds however much is queued.
///
/// The bits are kept only as far ahead as bookings have reached (a power of two of 64-cycle
/// words, doubled on demand up to the window): every cycle past them is free, so a calendar
/// answers exactly as one holding the whole window would, and an idle pseudo-channel's
/// calendars hold no bits at all.
#[derive(Clone, Debug)]
struct Calendar {
    /// First cycle of the window (a multiple of 64).
    base: u64,
    /// Cycles `[base, base + 64 * bits.len())`, word `(c / 64) % bits.len()` (a ring); the
    /// window's cycles past them are free.
    bits: Vec<u64>,
    /// Bookings beyond the window, (start, length), in order, back to back from `tail`.
    later: std::collections::VecDeque<(u64, u64)>,
    tail: u64,
}

impl Calendar {
    fn new() -> Calendar {
        Calendar { base: 0, bits: Vec::new(), later: std::collections::VecDeque::new(), tail: 0 }
    }

    /// Cycles the bits cover from `base`.
    fn reach(&self) -> u64 {
        64 * self.bits.len() as u64
    }

    /// Makes the bits cover `[base, until)` (`until <= base + HORIZON`).
    #[inline]
    fn cover(&mut self, until: u64) {
        if until > self.base + self.reach() {
            self.grow(until);
        }
    }

    #[cold]
    fn grow(&mut self, until: u64) {
        let need = (until - self.base).div_ceil(64).next_power_of_two().max(4);
        let mut bits = vec![0u64; need as usize];
        let (old, new) = (self.bits.len() as u64, need);
        for w in 0..old {
            let word = self.base / 64 + w;
            bits[(word % new) as usize] = self.bits[(word % old) as usize];
        }
        self.bits = bits;
    }

    fn mark(&mut self, start: u64, len: u64) {
        self.cover(start + len);
        // A word at a time: the cycles of [start, start + len) in each word they touch.
        let (mut c, end) = (start, start + len);
        while c < end {
            let (w, off) = (self.slot(c).0, c % 64);
            let n = (64 - off).min(end - c);
            self.bits[w] |= run(n) << off;
            c += n;
        }
    }

    /// Moves the bookings beyond the window that the window now reaches into it.
    fn admit_later(&mut self) {
        let end = self.base + HORIZON;
        while let Some(&(s, l)) = self.later.front() {
            if s >= end {
                break;
            }
            let from = s.max(self.base);
            let inside = (s + l).min(end);
            if inside > from {
                self.mark(from, inside - from);
            }
            if s + l <= end {
                self.later.pop_front();
            } else {
                self.later[0] = (end, s + l - end);
                break;
            }
        }
    }

    /// Word and bit of cycle `c` (covered by the bits).
    fn slot(&self, c: u64) -> (usize, u64) {
        let words = self.bits.len() as u64;
        (((c / 64) & (words - 1)) as usize, 1u64 << (c % 64))
    }

    /// Forgets cycles before `now`'s word.
    #[inline]
    fn advance(&mut self, now: u64) {
        // Usually nothing to do: still in the same word, nothing booked beyond the window.
        if now - now % 64 != self.base || !self.later.is_empty() {
            self.move_to(now);
        }
    }

    fn move_to(&mut self, now: u64) {
        let want = now - now % 64;
        if want >= self.base + self.reach() {
            self.bits.fill(0);
            self.base = want;
        } else {
            while self.base < want {
                let w = self.slot(self.base).0;
                self.bits[w] = 0;
                self.base += 64;
            }
        }
        if !self.later.is_empty() {
            self.admit_later();
        }
    }

    /// Books `len` cycles from the first cycle >= `earliest` where they are all free; when
    /// the window has no such run, after the last booking beyond it.
    #[inline]
    fn book(&mut self, earliest: u64, len: u64) -> u64 {
        // Most bookings find their first cycles free within one word of the bits (so within
        // the window: the bits never reach past it): taken here as `search` would take them.
        let c = earliest.max(self.base);
        let off = c % 64;
        if c + len <= self.base + self.reach() && off + len <= 64 {
            let w = self.slot(c).0;
            let want = run(len) << off;
            if self.bits[w] & want == 0 {
                self.bits[w] |= want;
                return c;
            }
        }
        self.search(earliest, len)
    }

    /// [`Calendar::book`] in full: the first `len` free cycles from `earliest`, a word of the
    /// bits at a time (runs longer than a word: [`Calendar::search_long`]).
    #[inline(never)]
    fn search(&mut self, earliest: u64, len: u64) -> u64 {
        if len > 64 {
            return self.search_long(earliest, len);
        }
        let mut c = earliest.max(self.base);
        loop {
            let end = self.base + self.reach();
            let word_start = c - c % 64;
            let fit = if c >= end {
                Some(c) // past every booking in the window: free
            } else {
                let word = self.bits[self.slot(c).0];
                let free = !word & (u64::MAX << (c % 64));
                if free == 0 {
                    // Booked to the word's end (a busy resource's backlog): no run starts here.
                    c = word_start + 64;
                    continue;
                }
                // Bit p of `fits`: cycles p .. p + len of the word are free. The lowest is the
                // first fit: a run crossing into the next word starts after it.
                let mut fits = free;
                let mut have = 1;
                while have < len {
                    let shift = have.min(len - have);
                    fits &= fits >> shift;
                    have += shift;
                }
                if fits != 0 {
                    // Inside the word (so inside the window): booked here.
                    let p = u64::from(fits.trailing_zeros());
                    let w = self.slot(c).0;
                    self.bits[w] |= run(len) << p;
                    return word_start + p;
                } else {
                    // Else only the free run at the word's top may start one, if the next
                    // word's first cycles are free (later starts need more of them).
                    let top = u64::from(free.leading_ones());
                    let next = word_start + 64;
                    let crosses = top > 0 && (next >= end || self.bits[self.slot(next).0] & run(len - top) == 0);
                    crosses.then_some(next - top)
                }
            };
            match fit {
                Some(f) if f + len <= self.base + HORIZON => {
                    self.mark(f, len);
                    return f;
                }
                Some(_) => {
                    // The first fit is beyond the window: after the last booking beyond it.
                    let c = earliest.max(self.base + HORIZON).max(self.tail);
                    self.tail = c + len;
                    self.later.push_back((c, len));
                    return c;
                }
                None => c = word_start + 64,
            }
        }
    }

    /// [`Calendar::search`] for runs longer than a word: skips booked runs until `len` free
    /// cycles are found.
    #[cold]
    fn search_long(&mut self, earliest: u64, len: u64) -> u64 {
        let mut c = earliest.max(self.base);
        'search: loop {
            if c + len > self.base + HORIZON {
                let c = earliest.max(self.base + HORIZON).max(self.tail);
                self.tail = c + len;
                self.later.push_back((c, len));
                return c;
            }
            if c >= self.base + self.reach() {
                // Past every booking in the window: free.
                self.mark(c, len);
                return c;
            }
            // Skip the booked run starting at `c` (to its word's end at most).
            let (w0, off) = (self.slot(c).0, c % 64);
            let word = self.bits[w0];
            let booked = (word >> off).trailing_ones();
            if booked > 0 {
                c += u64::from(booked);
                continue 'search;
            }
            if off + len <= 64 {
                // The run lies in this word (covered: `c` is, and the bits cover whole words):
                // free, or the next try starts after its last booked cycle (no start at or
                // before that one fits).
                debug_assert!(c + len <= self.base + self.reach());
                let want = run(len) << off;
                let taken = word & want;
                if taken == 0 {
                    self.bits[w0] |= want;
                    return c;
                }
                c = c - off + u64::from(64 - taken.leading_zeros());
                continue 'search;
            }
            self.cover(c + len);
            for k in 1..len {
                let (w, b) = self.slot(c + k);
                if self.bits[w] & b != 0 {
                    c = c + k + 1;
                    continue 'search;
                }
            }
            self.mark(c, len);
            return c;
        }
    }
}

/// `n` low bits set (`n <= 64`).
#[inline(always)]
fn run(n: u64) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// Every "ok" field is the earliest cycle the next such command may issue (0: no bound yet).
#[derive(Clone, Copy, Debug)]
struct Bank {
    open_row: u32,
    /// Refresh epoch the open row was opened in (a refresh since closes it).
    epoch: u64,
    act_ok: u64,
    col_ok: u64,
    pre_ok: u64,
    /// The refresh this bank was last found in or past ([`Times::refresh_at`]).
    window: Window,
}

/// One refresh of a bank: its start cycle and the epoch it begins (0: none found yet). A
/// cycle less than a refresh period from `start` falls in this refresh or after it, before
/// the next: its epoch and wait need no division.
#[derive(Clone, Copy, Debug)]
struct Window {
    start: u64,
    epoch: u64,
}

#[derive(Clone, Debug)]
struct Pc {
    banks: Vec<Bank>,
    /// Per bank group (counting each SID's): next ACT and next column command.
    /// ACT slots (tRRD_S apart, and four per tFAW: spaced max(tRRD_S, tFAW / 4)).
    acts: Calendar,
    /// The data bus (one burst at a time, tCCD_S apart).
    bus: Calendar,
    /// Refresh phase of this pseudo-channel, in CK.
    phase: u64,
    /// Counters only: latencies go to the stack's histograms.
    stats: PcStats,
}

/// What serving a request reads of the stack's timing, in CK, taken from its parameters once.
#[derive(Clone, Copy, Debug)]
struct Times {
    rcd_rd: u64,
    rcd_wr: u64,
    rp: u64,
    ras: u64,
    rc: u64,
    /// An ACT slot: tRRD_S, and four per tFAW (at least one cycle).
    act_len: u64,
    cl: u64,
    cwl: u64,
    bl: u64,
    /// A burst's data-bus slot: the longer of BL and tCCD_S (at least one cycle).
    burst: u64,
    ccd_l: u64,
    wr: u64,
    rtp: u64,
    /// Refresh: none, every bank at once (`all_bank`: every tREFI for tRFC) or bank by bank
    /// (each every `banks` x tREFIpb for tRFCpb, staggered by tREFIpb).
    refresh: bool,
    all_bank: bool,
    refi: u64,
    refi_pb: u64,
    /// A bank's refresh period and each refresh's length: (tREFI, tRFC) all-bank,
    /// (banks x tREFIpb, tRFCpb) per bank.
    period: u64,
    busy: u64,
}

impl Times {
    fn of(t: &TimingParams, refresh: &str, banks: u32) -> Times {
        let c = u64::from;
        let all_bank = refresh.starts_with("all-bank");
        Times {
            rcd_rd: c(t.rcd_rd),
            rcd_wr: c(t.rcd_wr),
            rp: c(t.rp),
            ras: c(t.ras),
            rc: c(t.rc),
            act_len: c(t.rrd_s.max(t.faw.div_ceil(4))).max(1),
            cl: c(t.cl),
            cwl: c(t.cwl),
            bl: c(t.bl),
            burst: c(t.bl.max(t.ccd_s)).max(1),
            ccd_l: c(t.ccd_l),
            wr: c(t.wr),
            rtp: c(t.rtp),
            refresh: refresh != "none",
            all_bank,
            refi: c(t.refi),
            refi_pb: c(t.refi_pb),
            period: if all_bank { c(t.refi) } else { c(t.refi_pb).saturating_mul(c(banks)) },
            busy: if all_bank { c(t.rfc) } else { c(t.rfc_pb) },
        }
    }

    /// The refresh epoch of `bank` at cycle `at` and the cycle a command may issue at (`at`,
    /// or the end of the refresh `at` falls in). As the cycle-level policies: the first
    /// refresh of a pseudo-channel falls one interval after its phase, per-bank refreshes go
    /// round the banks in order. `window` is the bank's last refresh found: kept when `at`
    /// falls in its period, replaced otherwise.
    #[inline]
    fn refresh_at(&self, phase: u64, bank: u32, at: u64, window: &mut Window) -> (u64, u64) {
        if !self.refresh {
            return (0, at);
        }
        let (period, busy) = (self.period, self.busy);
        if window.epoch == 0 || at.wrapping_sub(window.start) >= period {
            let offset = if self.all_bank { phase + self.refi } else { phase + (u64::from(bank) + 1) * self.refi_pb };
            if at < offset {
                return (0, at);
            }
            let n = (at - offset) / period;
            *window = Window { start: offset + n * period, epoch: n + 1 };
        }
        let start = window.start;
        (window.epoch, if at < start + busy { start + busy } else { at })
    }
}

/// Where a burst goes, as the fast model indexes it: its pseudo-channel within the stack
/// ([`Location::pc_index`]), its bank within the pseudo-channel ([`Location::bank_index`])
/// and its row. Made by [`Target::of`] (or from sums, [`Target::from_sums`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Target {
    pc: u32,
    bank: u32,
    row: u32,
}

impl Target {
    /// Where the burst at `loc` of a stack of `org` goes.
    #[inline]
    pub fn of(org: &Organization, loc: &Location) -> Target {
        Target { pc: loc.pc_index(org), bank: loc.bank_index(org), row: loc.row }
    }

    /// A target's pseudo-channel, bank and row as weighted sums of a location's level indices
    /// ([`Location::levels`]; see [`crate::hbm::AddressMap::sums`]): what [`Target::of`]
    /// computes.
    pub fn weights(org: &Organization) -> [[u32; 3]; 8] {
        let (per, groups, banks) = (org.pseudo_channels, org.bank_groups, org.banks_per_group);
        // Stack, channel, pseudo-channel, SID, bank group, bank, row, column.
        [
            [0, 0, 0],
            [per, 0, 0],
            [1, 0, 0],
            [0, groups.wrapping_mul(banks), 0],
            [0, banks, 0],
            [0, 1, 0],
            [0, 0, 1],
            [0, 0, 0],
        ]
    }

    /// The target whose pseudo-channel, bank and row are `sums` ([`Target::weights`]).
    #[inline]
    pub fn from_sums(sums: [u32; 3]) -> Target {
        let [pc, bank, row] = sums;
        Target { pc, bank, row }
    }
}

/// The fast model of one stack's pseudo-channels.
#[derive(Clone, Debug)]
pub struct FastStack {
    k: Times,
    pcs: Vec<Pc>,
    pcs_per_channel: u32,
}

impl FastStack {
    /// A stack of `org` with timing `t`; `refresh` is the controller's refresh policy name
    /// (`per-bank` and `per-bank-hold` refresh each bank at its own cycles; `all-bank` and
    /// `all-bank-flex` every bank at once, at the nominal cycles: the fast model neither holds
    /// a channel for a due refresh nor postpones one; `none`), its pseudo-channels lined up
    /// by `schedule`.
    pub fn new(
        org: &Organization,
        t: &TimingParams,
        refresh: &str,
        schedule: crate::hbm::refresh::RefreshSchedule,
    ) -> FastStack {
        let banks = org.banks_per_pc();
        let pcs = org.pcs();
        let interval = crate::hbm::refresh::interval(refresh, t.refi, t.refi_pb);
        let (channels, per) = (org.channels, org.pseudo_channels);
        let none = Window { start: 0, epoch: 0 };
        let never = Bank { open_row: CLOSED, epoch: 0, act_ok: 0, col_ok: 0, pre_ok: 0, window: none };
        FastStack {
            k: Times::of(t, refresh, banks),
            pcs: (0..pcs)
                .map(|k| Pc {
                    banks: vec![never; banks as usize],
                    acts: Calendar::new(),
                    bus: Calendar::new(),
                    phase: crate::hbm::refresh::phase(refresh, schedule, k / per, k % per, channels, per, interval),
                    stats: PcStats::default(),
                })
                .collect(),
            pcs_per_channel: org.pseudo_channels,
        }
    }

    /// Counters of pseudo-channel `pc` of channel `ch` (its latency histograms are empty: the
    /// stack keeps latencies, see [`FastStack::serve`]).
    pub fn stats(&self, ch: u32, pc: u32) -> &PcStats {
        &self.pcs[(ch * self.pcs_per_channel + pc) as usize].stats
    }

    /// Reads the state that serving each of `targets` at cycle `now` reads first (its
    /// pseudo-channel, bank and data-bus calendar word), as loads that do not wait for one
    /// another: on a large system that state is rarely in cache, and the misses of many bursts
    /// then overlap instead of coming one burst at a time. Changes nothing; the value returned
    /// only keeps the loads.
    pub fn touch<'a>(&self, targets: impl Iterator<Item = &'a Target>, now: u64) -> u64 {
        let mut x = 0;
        for t in targets {
            if let Some(pc) = self.pcs.get(t.pc as usize) {
                x ^= pc.banks.get(t.bank as usize).map_or(0, |b| b.col_ok);
                let bits = &pc.bus.bits;
                x ^= bits.get((now / 64) as usize & bits.len().wrapping_sub(1)).copied().unwrap_or(0);
            }
        }
        x
    }

    /// Serves a burst to `t` ([`Target::of`]) that arrives at cycle `arrive`; returns
    /// the cycle its last data beat moves. Its latency goes to `latency` (reads, writes: the
    /// stack's, as the cycle-level controllers record theirs).
    pub fn serve(&mut self, t: Target, write: bool, arrive: u64, latency: &mut [Histogram; 2]) -> u64 {
        let k = &self.k;
        let (bi, row) = (t.bank, t.row);
        let Pc { banks, acts, bus, phase, stats } = &mut self.pcs[t.pc as usize];
        let phase = *phase;
        let bank = &mut banks[bi as usize];
        let b = *bank;
        // The controller's one pipeline cycle.
        let start = arrive + 1;
        let (epoch, at) = k.refresh_at(phase, bi, start.max(b.col_ok), &mut bank.window);
        let hit = b.open_row == row && b.epoch == epoch;
        let (mut col, kind) = if hit {
            (at, 2)
        } else {
            // A conflict precharges the open row first; a refresh closed the row already.
            let conflict = b.open_row != CLOSED && b.epoch == epoch;
            // (`at`: the earliest the bank may act, past any refresh it falls in.)
            let mut act = at;
            if conflict {
                act = act.max(b.pre_ok) + k.rp;
            }
            act = act.max(b.act_ok);
            acts.advance(arrive);
            let act = acts.book(act, k.act_len);
            let (epoch2, act) = k.refresh_at(phase, bi, act, &mut bank.window);
            stats.commands[Command::Act as usize] += 1;
            if conflict {
                stats.commands[Command::Pre as usize] += 1;
            }
            bank.open_row = row;
            bank.epoch = epoch2;
            bank.act_ok = act + k.rc;
            bank.pre_ok = act + k.ras;
            (act + if write { k.rcd_wr } else { k.rcd_rd }, u8::from(conflict))
        };
        let lat = if write { k.cwl } else { k.cl };
        bus.advance(arrive);
        col = bus.book(col + lat, k.burst) - lat;
        let done = col + lat + k.bl;
        bank.col_ok = bank.col_ok.max(col + k.ccd_l);
        if write {
            bank.pre_ok = bank.pre_ok.max(done + k.wr);
            stats.writes += 1;
            stats.commands[Command::Wr as usize] += 1;
            latency[1].record(done - arrive);
        } else {
            bank.pre_ok = bank.pre_ok.max(col + k.rtp);
            stats.reads += 1;
            stats.commands[Command::Rd as usize] += 1;
            latency[0].record(done - arrive);
        }
        match kind {
            0 => stats.row_misses += 1,
            1 => stats.row_conflicts += 1,
            _ => stats.row_hits += 1,
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::Calendar;

    #[test]
    fn a_calendar_books_the_first_free_run_and_fills_gaps() {
        let mut c = Calendar::new();
        assert_eq!(c.book(10, 2), 10);
        assert_eq!(c.book(10, 2), 12);
        assert_eq!(c.book(5, 4), 5, "a gap before an earlier booking is used");
        assert_eq!(c.book(8, 2), 14, "5-8 and 10-13 are booked: the first free pair from 8 is 14-15");
        c.advance(200);
        assert_eq!(c.book(150, 2), 192, "cycles before the window's start are gone");
        assert_eq!(c.book(100_000, 3), 100_000, "a booking beyond the window");
        assert_eq!(c.book(100_000, 3), 100_003, "bookings beyond the window go back to back");
        c.advance(99_000);
        assert_eq!(c.book(100_001, 2), 100_006, "they enter the window as it reaches them");
        assert_eq!(c.book(99_990, 10), 99_990, "and gaps before them stay free");
    }

    /// The calendar as first written: every cycle of the window in a fixed array.
    struct Whole {
        base: u64,
        bits: Vec<u64>,
        later: std::collections::VecDeque<(u64, u64)>,
        tail: u64,
    }

    impl Whole {
        const WORDS: u64 = super::HORIZON / 64;
        fn slot(c: u64) -> (usize, u64) {
            (((c / 64) % Self::WORDS) as usize, 1u64 << (c % 64))
        }
        fn mark(&mut self, start: u64, len: u64) {
            for k in 0..len {
                let (w, b) = Self::slot(start + k);
                self.bits[w] |= b;
            }
        }
        fn advance(&mut self, now: u64) {
            let want = now - now % 64;
            if want >= self.base + super::HORIZON {
                self.bits.fill(0);
                self.base = want;
            } else {
                while self.base < want {
                    self.bits[Self::slot(self.base).0] = 0;
                    self.base += 64;
                }
            }
            let end = self.base + super::HORIZON;
            while let Some(&(s, l)) = self.later.front() {
                if s >= end {
                    break;
                }
                let from = s.max(self.base);
                let inside = (s + l).min(end);
                if inside > from {
                    self.mark(from, inside - from);
                }
                if s + l <= end {
                    self.later.pop_front();
                } else {
                    self.later[0] = (end, s + l - end);
                    break;
                }
            }
        }
        fn book(&mut self, earliest: u64, len: u64) -> u64 {
            let mut c = earliest.max(self.base);
            'search: loop {
                if c + len > self.base + super::HORIZON {
                    let c = earliest.max(self.base + super::HORIZON).max(self.tail);
                    self.tail = c + len;
                    self.later.push_back((c, len));
                    return c;
                }
                for k in 0..len {
                    let (w, b) = Self::slot(c + k);
                    if self.bits[w] & b != 0 {
                        c = c + k + 1;
                        continue 'search;
                    }
                }
                self.mark(c, len);
                return c;
            }
        }
    }

    #[test]
    fn a_calendar_grown_on_demand_books_as_one_holding_the_whole_window() {
        // Bursts of bookings (some far beyond the window) between advances of the clock,
        // from a fixed-seed generator: every answer must equal the whole-window calendar's.
        let mut rng = trnsim_kernel::SimRng::new(0x2545_f491, 0);
        let mut rand = |n: u64| rng.below(n);
        for round in 0..20 {
            let mut grown = Calendar::new();
            let mut whole = Whole { base: 0, bits: vec![0; Whole::WORDS as usize], later: Default::default(), tail: 0 };
            let mut now = 0u64;
            for step in 0..4_000 {
                now += rand(if round % 2 == 0 { 40 } else { 2_000 });
                grown.advance(now);
                whole.advance(now);
                for _ in 0..rand(6) {
                    let ahead = if rand(50) == 0 { rand(40_000) } else { rand(300) };
                    // Mostly short runs, some across 64-cycle words.
                    let len = if rand(10) == 0 { 1 + rand(80) } else { 1 + rand(8) };
                    let (a, b) = (grown.book(now + ahead, len), whole.book(now + ahead, len));
                    assert_eq!(a, b, "round {round}, step {step}: booking {len} from {}", now + ahead);
                }
            }
        }
    }

    #[test]
    fn a_targets_weights_weigh_a_location_into_its_target() {
        // Every location of every preset's (small) corner and some far ones: the weighted sum
        // of its level indices is `Target::of`.
        use super::Target;
        for p in crate::hbm::presets::ALL.iter() {
            let org = p.org.clone();
            let w = Target::weights(&org);
            let mut rng = trnsim_kernel::SimRng::new(0x7a49, 2);
            for _ in 0..2_000 {
                let mut pick = |n: u32| u32::try_from(rng.below(u64::from(n))).unwrap();
                let loc = crate::hbm::Location {
                    stack: 0,
                    channel: pick(org.channels),
                    pc: pick(org.pseudo_channels),
                    sid: pick(org.sids.max(1)),
                    bank_group: pick(org.bank_groups),
                    bank: pick(org.banks_per_group),
                    row: pick(org.rows),
                    column: pick(org.bursts_per_row()),
                };
                let mut sums = [0u32; 3];
                for (l, lw) in loc.levels().iter().zip(&w) {
                    for (s, x) in sums.iter_mut().zip(lw) {
                        *s += l * x;
                    }
                }
                assert_eq!(Target::from_sums(sums), Target::of(&org, &loc), "{} {loc:?}", p.name);
            }
        }
    }

    #[test]
    fn a_banks_kept_refresh_window_answers_as_a_fresh_search() {
        // Cycles forward and back, near and across refreshes, on one bank's kept window:
        // every answer must equal the one found with no window kept.
        use super::{Times, Window};
        let t = crate::hbm::presets::find("hbm3-6400").unwrap().timing.clone();
        let mut rng = trnsim_kernel::SimRng::new(0x5eed, 1);
        for policy in ["per-bank", "all-bank", "none"] {
            let k = Times::of(&t, policy, 16);
            for bank in [0u32, 5, 15] {
                let mut kept = Window { start: 0, epoch: 0 };
                let mut at = 0u64;
                for _ in 0..20_000 {
                    at = match rng.below(4) {
                        0 => at.saturating_sub(rng.below(3 * k.refi)),
                        1 => at + rng.below(4 * k.refi),
                        _ => at + rng.below(u64::from(t.rfc_pb) + 2),
                    };
                    let mut fresh = Window { start: 0, epoch: 0 };
                    let want = k.refresh_at(777, bank, at, &mut fresh);
                    assert_eq!(k.refresh_at(777, bank, at, &mut kept), want, "{policy}, bank {bank}, cycle {at}");
                }
            }
        }
    }

    #[test]
    fn a_calendar_keeps_its_rate_with_more_queued_than_its_window() {
        // 10,000 two-cycle bookings all wanted at cycle 0: back to back, 20,000 cycles.
        let mut c = Calendar::new();
        let mut last = 0;
        for i in 0..10_000u64 {
            let at = c.book(0, 2);
            assert!(i == 0 || at >= last + 2, "booking {i} at {at}, previous at {last}");
            last = at;
        }
        assert_eq!(last, 19_998);
    }
}
