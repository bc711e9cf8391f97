//! HBM energy per action, from JEDEC-style IDD currents and voltages as DRAMPower computes them
//! (its DDR4 core model with the bank-wise factor rho = 1 and IBeta = IDD0, DRAMPower 4's
//! split), per pseudo-channel:
//!
//! - ACT: VDD (IDD0 - IDD3N) tRAS; PRE (a bank closing: PRE, each open bank a PREA closes, and
//!   the precharge of every RDA and WRA): VDD (IDD0 - IDD2N) tRP;
//! - RD: VDD (IDD4R - IDD3N) tBURST, WR: VDD (IDD4W - IDD3N) tBURST (tBURST = the burst's CK);
//! - REF: VDD (IDD5B - IDD3N) tRFC; REFPB: VDD (IDD5B - IDD3N) tRFCpb / banks (estimated:
//!   HBM has no IDD5PB in the sources; one bank of the all-bank refresh current);
//! - background: VDD IDD3N while any bank is open or refreshing (active standby), VDD IDD2N
//!   otherwise (precharged standby);
//! - I/O: `io_pj_per_bit` per data bit moved.
//!
//! Counting, not computing: the controllers count commands, bank closings and active cycles
//! (a few adds per command, nothing per cycle); the figures are multiplied at report time.
//! An RDA's or WRA's bank counts as active until it precharges itself (tRTP after an RDA, the
//! write's data and tWR after a WRA, not before tRAS from its ACT), as in DRAMPower.
//! Leaves out: power-down and self refresh (the controllers use neither), VPP's own currents
//! (folded into VDD's where a source gives one supply), data-dependent I/O toggling and
//! termination (DRAMPower's interface model), and temperature.

use crate::hbm::stats::PcStats;
use crate::hbm::{Command, Organization, TimingParams};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Currents (mA) and voltage (V) of one pseudo-channel, and the I/O energy per bit (pJ), with
/// where each comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnergySpec {
    /// Core supply, V.
    pub vdd: f64,
    /// One bank activating and precharging every tRC, mA.
    pub idd0: f64,
    /// Precharged standby, mA.
    pub idd2n: f64,
    /// Active standby (a bank open), mA.
    pub idd3n: f64,
    /// Reading continuously, mA.
    pub idd4r: f64,
    /// Writing continuously, mA.
    pub idd4w: f64,
    /// All-bank refresh, burst (a REF every tRFC), mA.
    pub idd5b: f64,
    /// I/O energy per data bit moved, pJ.
    pub io_pj_per_bit: f64,
    /// Where the figures come from (a source key of docs/sources.md and how they were derived).
    pub source: String,
    /// The fields that are estimates, each with why (`field: reason`).
    #[serde(default)]
    pub estimated: Vec<String>,
}

/// Energy specs by preset name: the file `models/configs/mem/hbm-energy.ron` and any a user
/// gives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnergyTable {
    /// Spec per preset.
    pub stacks: BTreeMap<String, EnergySpec>,
}

/// The built-in table's text.
pub const DEFAULT_TABLE: &str = include_str!("../../../configs/mem/hbm-energy.ron");

/// Every figure's name and its unit, in the order of the report.
pub const ACTIONS: [&str; 9] = ["act", "pre", "rd", "wr", "ref", "refpb", "bg_active", "bg_precharged", "io"];

impl EnergySpec {
    /// The numeric fields by name, for checking.
    fn figures(&self) -> [(&'static str, f64); 8] {
        [
            ("vdd", self.vdd),
            ("idd0", self.idd0),
            ("idd2n", self.idd2n),
            ("idd3n", self.idd3n),
            ("idd4r", self.idd4r),
            ("idd4w", self.idd4w),
            ("idd5b", self.idd5b),
            ("io_pj_per_bit", self.io_pj_per_bit),
        ]
    }

    /// Checks every figure: finite, not negative, VDD in 0.1..=5 V and currents at most 100 A,
    /// and the currents ordered so that no action's energy is negative (IDD2N <= IDD3N <= IDD0,
    /// IDD4R, IDD4W, IDD5B). Err((field, message)).
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        for (name, v) in self.figures() {
            if !v.is_finite() || v < 0.0 {
                return Err((name, format!("{v} is not allowed (a finite figure >= 0)")));
            }
            if name.starts_with("idd") && v > 100_000.0 {
                return Err((name, format!("{v} mA is outside 0..=100000")));
            }
        }
        if !(0.1..=5.0).contains(&self.vdd) {
            return Err(("vdd", format!("{} V is outside 0.1..=5", self.vdd)));
        }
        if self.idd3n < self.idd2n {
            return Err(("idd3n", format!("{} mA is below idd2n ({} mA)", self.idd3n, self.idd2n)));
        }
        for (name, v) in [("idd0", self.idd0), ("idd4r", self.idd4r), ("idd4w", self.idd4w), ("idd5b", self.idd5b)] {
            if v < self.idd3n {
                return Err((name, format!("{v} mA is below idd3n ({} mA)", self.idd3n)));
            }
        }
        Ok(())
    }
}

impl EnergyTable {
    /// Parses a table (RON); Err(ron's error) for the caller to locate.
    pub fn parse(text: &str) -> Result<EnergyTable, ron::error::SpannedError> {
        ron::from_str(text)
    }

    /// The built-in table.
    pub fn builtin() -> EnergyTable {
        EnergyTable::parse(DEFAULT_TABLE).expect("the built-in energy table parses")
    }
}

/// Energy of one action (pJ) and background power (mW), per pseudo-channel, for a stack of
/// timing `t` and organization `org`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PerAction {
    /// pJ per ACT.
    pub act: f64,
    /// pJ per bank closed (PRE, a bank a PREA closes, RDA, WRA).
    pub pre: f64,
    /// pJ per RD or RDA.
    pub rd: f64,
    /// pJ per WR or WRA.
    pub wr: f64,
    /// pJ per REF.
    pub refab: f64,
    /// pJ per REFPB.
    pub refpb: f64,
    /// mW while a bank is open or refreshing.
    pub bg_active_mw: f64,
    /// mW while every bank is precharged.
    pub bg_precharged_mw: f64,
    /// pJ per data bit.
    pub io_pj_per_bit: f64,
}

impl PerAction {
    /// The per-action figures of `s` on a stack of timing `t` and organization `org`.
    pub fn new(s: &EnergySpec, t: &TimingParams, org: &Organization) -> PerAction {
        let ns = 1000.0 / t.ck_mhz as f64;
        // mA x V x ns = pJ.
        let e = |ma: f64, cycles: u32| s.vdd * ma * f64::from(cycles) * ns;
        PerAction {
            act: e(s.idd0 - s.idd3n, t.ras),
            pre: e(s.idd0 - s.idd2n, t.rp),
            rd: e(s.idd4r - s.idd3n, t.bl),
            wr: e(s.idd4w - s.idd3n, t.bl),
            refab: e(s.idd5b - s.idd3n, t.rfc),
            refpb: e(s.idd5b - s.idd3n, t.rfc_pb) / f64::from(org.banks_per_pc().max(1)),
            bg_active_mw: s.vdd * s.idd3n,
            bg_precharged_mw: s.vdd * s.idd2n,
            io_pj_per_bit: s.io_pj_per_bit,
        }
    }
}

/// Energy by action (pJ), in the order of [`ACTIONS`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Breakdown(pub [f64; 9]);

impl Breakdown {
    /// The energy of the counts in `s` (summed over `pcs` pseudo-channels) over a run of
    /// `cycles` CK: each count times its action's energy, and the background of the active
    /// and the precharged cycles.
    pub fn of(s: &PcStats, pcs: u32, cycles: u64, bytes_per_access: u32, p: &PerAction, t: &TimingParams) -> Breakdown {
        let ns = 1000.0 / t.ck_mhz as f64;
        let n = |c: Command| s.commands[c as usize] as f64;
        let all = cycles.saturating_mul(u64::from(pcs));
        let active = s.active_cycles.min(all);
        let bits = (s.reads + s.writes) as f64 * f64::from(bytes_per_access) * 8.0;
        Breakdown([
            n(Command::Act) * p.act,
            s.bank_closes as f64 * p.pre,
            (n(Command::Rd) + n(Command::RdA)) * p.rd,
            (n(Command::Wr) + n(Command::WrA)) * p.wr,
            n(Command::Ref) * p.refab,
            n(Command::RefPb) * p.refpb,
            // mW x ns = pJ.
            active as f64 * ns * p.bg_active_mw,
            (all - active) as f64 * ns * p.bg_precharged_mw,
            bits * p.io_pj_per_bit,
        ])
    }

    /// The total, pJ.
    pub fn total(&self) -> f64 {
        self.0.iter().sum()
    }
}

/// Cycles a pseudo-channel has a bank open or refreshing: the union of the intervals from an
/// ACT to the bank's closing and from a refresh to its end, kept as one running span.
#[derive(Clone, Copy, Debug, Default)]
pub struct ActiveSpan {
    /// Cycles of the spans already closed.
    done: u64,
    /// The current span's start and end (`u64::MAX` while a bank is open); none before the
    /// first.
    span: Option<(u64, u64)>,
    /// The latest known end of activity (a refresh's, an auto-precharge's).
    refresh_end: u64,
}

impl ActiveSpan {
    /// Activity from `from` to `until` (u64::MAX: until [`ActiveSpan::closed`]; a finite end
    /// also holds the span open past a later [`ActiveSpan::closed`]).
    pub fn busy(&mut self, from: u64, until: u64) {
        if until != u64::MAX {
            self.refresh_end = self.refresh_end.max(until);
        }
        match self.span {
            Some((s, e)) if from <= e => self.span = Some((s, e.max(until))),
            Some((s, e)) => {
                self.done += e - s;
                self.span = Some((from, until));
            }
            None => self.span = Some((from, until)),
        }
    }

    /// A refresh from `at` for `cycles`.
    pub fn refresh(&mut self, at: u64, cycles: u64) {
        self.busy(at, at + cycles);
    }

    /// The last open bank closed at `at`: the span ends then, or when a refresh or an
    /// auto-precharge still running ends.
    pub fn closed(&mut self, at: u64) {
        if let Some((s, _)) = self.span {
            self.span = Some((s, at.max(self.refresh_end)));
        }
    }

    /// Moves what lies after cycle `at` `d` cycles later, adding `extra` active cycles for the
    /// gap (an idle controller skipping whole refresh periods).
    pub fn shift(&mut self, at: u64, d: u64, extra: u64) {
        self.done = self.cycles_to(at) + extra;
        let later = |t: u64| if t == u64::MAX { t } else { t + d };
        self.span = match self.span {
            Some((_, e)) if e > at => Some((at + d, later(e))),
            _ => None,
        };
        if self.refresh_end > at {
            self.refresh_end += d;
        }
    }

    /// Active cycles up to cycle `end`.
    pub fn cycles_to(&self, end: u64) -> u64 {
        let tail = self.span.map_or(0, |(s, e)| e.min(end).saturating_sub(s));
        self.done + tail
    }
}

#[cfg(test)]
mod tests {
    use super::{ActiveSpan, EnergyTable};

    #[test]
    fn the_built_in_table_covers_every_stack_preset_and_is_valid() {
        let t = EnergyTable::builtin();
        for p in crate::hbm::presets::ALL.iter() {
            let spec = t.stacks.get(&p.name).unwrap_or_else(|| panic!("no energy figures for preset {}", p.name));
            spec.validate().unwrap();
        }
    }

    #[test]
    fn active_cycles_are_the_union_of_open_banks_refreshes_and_auto_precharges() {
        let mut a = ActiveSpan::default();
        a.busy(10, u64::MAX); // an ACT at 10
        a.refresh(15, 20); // a refresh inside the open span (to 35)
        a.closed(20); // the last bank closes at 20: active until the refresh ends
        assert_eq!(a.cycles_to(100), 25);
        a.busy(50, 60); // an auto-precharge's tail, 50..60
        a.busy(55, u64::MAX); // an ACT at 55
        a.closed(58); // closed before the tail ends
        assert_eq!(a.cycles_to(100), 35);
        assert_eq!(a.cycles_to(52), 27, "cut at the end asked for");
        // Skipping 1,000 idle cycles after 80 that hold 7 active ones: a refresh running over
        // 80 ends 1,000 later, the cycles before 80 stay.
        a.refresh(78, 6);
        a.shift(80, 1_000, 7);
        assert_eq!(a.cycles_to(1_080), 35 + 2 + 7);
        assert_eq!(a.cycles_to(2_000), 35 + 2 + 7 + 4);
    }
}
