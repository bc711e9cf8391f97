//! One HBM bank's timing state machine (rtl/blocks/hbm_bank.sv), cycle for cycle, built on
//! trnsim-mem's own rule set: legality comes from the controller's compiled constraint table
//! (`hbm::timing::constraints` -> `state::CompiledTable` / `TimingState`), the state display
//! from the same table's distances. Also its stimulus and diff configuration.

use crate::block::{Block, ModelVcd, PortInfo, VltError};
use crate::diff::DiffConfig;
use crate::stimulus::Stimulus;
use std::path::Path;
use trnsim_kernel::SimRng;
use trnsim_mem::hbm::state::{BankRef, CompiledTable, TimingState};
use trnsim_mem::hbm::{constraints, Command, Constraint, Organization, Preset, Scope, TimingParams};

/// Port indices of [`HbmBank::ports`].
pub mod hbm_bank_port {
    #![allow(missing_docs)]
    pub const CLK: usize = 0;
    pub const RST: usize = 1;
    pub const CMD: usize = 2;
    pub const ROW: usize = 3;
    pub const LEGAL: usize = 4;
    pub const VIOLATION: usize = 5;
    pub const VCODE: usize = 6;
    pub const STATE: usize = 7;
    pub const OPEN_ROW: usize = 8;
}
use hbm_bank_port as P;

/// The `cmd` port's encoding: index = opcode (0 = NOP).
pub const HBM_OPCODES: [Option<Command>; 8] = [
    None,
    Some(Command::Act),
    Some(Command::Rd),
    Some(Command::Wr),
    Some(Command::Pre),
    Some(Command::RefPb),
    Some(Command::RdA),
    Some(Command::WrA),
];

/// The `state` port's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum BankState {
    /// Closed, nothing pending.
    Idle = 0,
    /// Open, less than max(tRCDRD, tRCDWR) since the ACT.
    Activating = 1,
    /// Open.
    Active = 2,
    /// Closed, within the ACT distance of a PRE, RDA or WRA.
    Precharging = 3,
    /// Closed, within tRFCpb of a REFPB.
    Refreshing = 4,
}

/// `vcode` values.
pub mod vcode {
    #![allow(missing_docs)]
    pub const NONE: u128 = 0;
    pub const BANK_STATE: u128 = 1;
    pub const WRONG_ROW: u128 = 2;
    pub const TIMING: u128 = 3;
}

/// The largest distance from `p` to `f` over the table rows that constrain the bank `p` went
/// to (Bank, Group and PC scope; tFAW and other-SID rows cannot), 0 if none.
pub fn same_bank_gap(rows: &[Constraint], p: Command, f: Command) -> u32 {
    rows.iter()
        .filter(|r| r.window == 1 && r.scope != Scope::OtherSid)
        .filter(|r| r.preceding.contains(p) && r.following.contains(f))
        .map(|r| r.cycles)
        .max()
        .unwrap_or(0)
}

/// One bank (bank 0 of a pseudo-channel) of a speed grade, with rtl/blocks/hbm_bank.sv's ports.
///
/// Inputs `cmd` (3 bits, [`HBM_OPCODES`]) and `row`; outputs `legal` (8 bits, one per opcode,
/// combinational, column commands judged at `row`), `violation`/`vcode` for `cmd`, registered
/// `state` ([`BankState`]) and `open_row`. Illegal commands are ignored. Timing legality is
/// `TimingState::earliest(cmd, bank) <= now` of trnsim-mem's controller, `now` counting cycles
/// since reset. Leaves out: other banks (bank-group and PC rows are applied as the same bank
/// sees them), PREA and all-bank REF, tFAW (cannot bind one bank: tRC > tFAW / 3), the data
/// bus, refresh deadlines (tREFI) and power-down.
pub struct HbmBank {
    org: Organization,
    table: CompiledTable,
    timing: TimingState,
    bank: BankRef,
    row_bits: u32,
    /// Distances for the state display: ACT -> column (max), and each closing command -> ACT.
    rcd_max: u32,
    close_to_act: [u32; 8],
    ports: Vec<PortInfo>,
    now: u64,
    open: Option<u32>,
    act_cnt: u32,
    pre_cnt: u32,
    ref_cnt: u32,
    rst: bool,
    cmd: u8,
    row: u32,
    trace: Option<ModelVcd>,
    cycle: u64,
}

impl HbmBank {
    /// A bank of `preset` in its reset state. Rows must fit `row_bits` (the RTL's ROW_BITS).
    pub fn new(preset: &Preset) -> HbmBank {
        HbmBank::with_timing(preset.org.clone(), &preset.timing)
    }

    /// A bank of organization `org` with timing `t`.
    pub fn with_timing(org: Organization, t: &TimingParams) -> HbmBank {
        let rows = constraints(t);
        let table = CompiledTable::new(&rows);
        let timing = TimingState::new(&org);
        let bank = timing.bank_ref(0);
        let row_bits = u32::BITS - (org.rows - 1).leading_zeros();
        let mut close_to_act = [0; 8];
        for (op, c) in HBM_OPCODES.iter().enumerate() {
            if let Some(c @ (Command::Pre | Command::RdA | Command::WrA | Command::RefPb)) = c {
                close_to_act[op] = same_bank_gap(&rows, *c, Command::Act);
            }
        }
        let rcd_max =
            same_bank_gap(&rows, Command::Act, Command::Rd).max(same_bank_gap(&rows, Command::Act, Command::Wr));
        let port = |name, input, width| PortInfo { name, input, width };
        let ports = vec![
            port("clk", true, 1),
            port("rst", true, 1),
            port("cmd", true, 3),
            port("row", true, row_bits),
            port("legal", false, 8),
            port("violation", false, 1),
            port("vcode", false, 2),
            port("state", false, 3),
            port("open_row", false, row_bits),
        ];
        HbmBank {
            org,
            table,
            timing,
            bank,
            row_bits,
            rcd_max,
            close_to_act,
            ports,
            now: 0,
            open: None,
            act_cnt: 0,
            pre_cnt: 0,
            ref_cnt: 0,
            rst: false,
            cmd: 0,
            row: 0,
            trace: None,
            cycle: 0,
        }
    }

    /// Why opcode `op` at `row` is illegal now ([`vcode`]), 0 if it is legal.
    pub fn code(&self, op: usize, row: u32) -> u128 {
        let Some(c) = HBM_OPCODES[op] else { return vcode::NONE };
        match (self.open, c) {
            (Some(_), Command::Act | Command::RefPb) => vcode::BANK_STATE,
            (None, c) if c.is_column() => vcode::BANK_STATE,
            (Some(r), c) if c.is_column() && r != row => vcode::WRONG_ROW,
            _ if self.wait(op) > 0 => vcode::TIMING,
            _ => vcode::NONE,
        }
    }

    /// Cycles until opcode `op`'s timing rules allow it (0: now), from trnsim-mem's table.
    pub fn wait(&self, op: usize) -> u64 {
        HBM_OPCODES[op].map_or(0, |c| self.timing.earliest(&self.table, c, self.bank).saturating_sub(self.now))
    }

    /// The open row, if any.
    pub fn open_row(&self) -> Option<u32> {
        self.open
    }

    fn state(&self) -> BankState {
        match self.open {
            Some(_) if self.act_cnt > 0 => BankState::Activating,
            Some(_) => BankState::Active,
            None if self.ref_cnt > 0 => BankState::Refreshing,
            None if self.pre_cnt > 0 => BankState::Precharging,
            None => BankState::Idle,
        }
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

/// `max(v - 1, d - 1)`, saturating: a down-counter restarted by a distance `d`.
fn bump(v: u32, d: u32) -> u32 {
    v.saturating_sub(1).max(d.saturating_sub(1))
}

impl Block for HbmBank {
    fn ports(&self) -> &[PortInfo] {
        &self.ports
    }

    fn set_input(&mut self, port: usize, v: u128) {
        match port {
            P::RST => self.rst = v & 1 == 1,
            P::CMD => self.cmd = (v & 7) as u8,
            P::ROW => self.row = (v & ((1 << self.row_bits) - 1)) as u32,
            _ => panic!("hbm_bank: port {port} is not a data input"),
        }
    }

    fn settle(&mut self) -> Result<(), VltError> {
        self.dump(false);
        Ok(())
    }

    fn output(&self, port: usize) -> u128 {
        match port {
            P::CLK => 0,
            P::RST => self.rst as u128,
            P::CMD => self.cmd as u128,
            P::ROW => self.row as u128,
            P::LEGAL => (0..8).fold(0, |m, op| m | ((self.code(op, self.row) == 0) as u128) << op),
            P::VIOLATION => (self.code(self.cmd as usize, self.row) != 0) as u128,
            P::VCODE => self.code(self.cmd as usize, self.row),
            P::STATE => self.state() as u128,
            P::OPEN_ROW => self.open.unwrap_or(0) as u128,
            _ => panic!("hbm_bank: no port {port}"),
        }
    }

    fn posedge(&mut self) -> Result<(), VltError> {
        if self.rst {
            self.timing = TimingState::new(&self.org);
            (self.now, self.open, self.act_cnt, self.pre_cnt, self.ref_cnt) = (0, None, 0, 0, 0);
        } else {
            let op = self.cmd as usize;
            let issue = HBM_OPCODES[op].filter(|_| self.code(op, self.row) == 0);
            (self.act_cnt, self.pre_cnt, self.ref_cnt) =
                (self.act_cnt.saturating_sub(1), self.pre_cnt.saturating_sub(1), self.ref_cnt.saturating_sub(1));
            if let Some(c) = issue {
                self.timing.issue(&self.table, c, self.bank, self.now);
                match c {
                    Command::Act => {
                        self.open = Some(self.row);
                        self.act_cnt = self.rcd_max.saturating_sub(1);
                    }
                    Command::Pre | Command::RdA | Command::WrA => {
                        self.open = None;
                        self.pre_cnt = bump(self.pre_cnt + 1, self.close_to_act[op]);
                    }
                    Command::RefPb => self.ref_cnt = bump(self.ref_cnt + 1, self.close_to_act[op]),
                    _ => {}
                }
            }
            self.now += 1;
        }
        self.dump(true);
        self.cycle += 1;
        Ok(())
    }

    fn open_vcd(&mut self, path: &Path) -> Result<(), VltError> {
        if self.trace.is_some() {
            return Err(VltError::TraceAlreadyOpen);
        }
        self.trace = Some(ModelVcd::create(path, "hbm_bank", &self.ports, 10 * self.cycle)?);
        Ok(())
    }

    fn close_vcd(&mut self) {
        self.trace = None;
    }
}

impl DiffConfig {
    /// The HBM bank: every output every cycle.
    pub fn hbm_bank(cycles: u64) -> DiffConfig {
        DiffConfig {
            cycles,
            history: 8,
            dont_care: vec![],
            vcd_dir: None,
            name: "hbm_bank".into(),
            vcd_window: 2000,
            waves: crate::diff::Waves::Fail,
            coverage: Vec::new(),
            until_coverage: None,
            monitors: Vec::new(),
        }
    }
}

/// Random commands for one bank, mostly legal: it keeps its own [`HbmBank`] (the model) to see
/// which commands are legal, picks a next command suited to the bank state (open: RD, WR, PRE,
/// RDA, WRA; closed: ACT, REFPB, PRE), and issues it exactly when it becomes legal or a few
/// cycles later. In phases of an illegal rate (1-30 %), it instead issues the pending command
/// one cycle early, to the wrong row, or a random opcode. Rows come from a few hot rows. Reset
/// at cycles 0-1 and rarely afterwards.
pub struct HbmBankStimulus {
    shadow: HbmBank,
    rng: SimRng,
    phase_left: u64,
    p_illegal: f64,
    p_late: f64,
    target: Option<(usize, u32)>,
    delay: u64,
    hot: [u32; 3],
}

impl HbmBankStimulus {
    /// Stimulus for a bank of `preset` from `seed` (the kernel's deterministic RNG, stream 10).
    pub fn new(preset: &Preset, seed: u64) -> Self {
        let mut rng = SimRng::new(seed, 10);
        let rows = preset.org.rows as u64;
        let hot = [rng.below(rows) as u32, rng.below(rows) as u32, rng.below(rows) as u32];
        HbmBankStimulus {
            shadow: HbmBank::new(preset),
            rng,
            phase_left: 0,
            p_illegal: 0.05,
            p_late: 0.3,
            target: None,
            delay: 0,
            hot,
        }
    }

    fn pick(&mut self) -> (usize, u32) {
        let rng = &mut self.rng;
        let k = rng.below(100);
        match self.shadow.open_row() {
            // RD 35, WR 30, PRE 20, RDA 8, WRA 7 (opcodes 2, 3, 4, 6, 7).
            Some(r) => {
                ([(35, 2), (65, 3), (85, 4), (93, 6), (100, 7)].iter().find(|(p, _)| k < *p).map_or(2, |x| x.1), r)
            }
            // ACT 80 (to a hot row mostly), REFPB 15, PRE 5.
            None => {
                let row = if rng.chance(0.8) { self.hot[rng.below(3) as usize] } else { rng.below(1 << 14) as u32 };
                (
                    if k < 80 {
                        1
                    } else if k < 95 {
                        5
                    } else {
                        4
                    },
                    row,
                )
            }
        }
    }
}

impl Stimulus for HbmBankStimulus {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        if self.phase_left == 0 {
            self.p_illegal = [0.01, 0.05, 0.05, 0.3][self.rng.below(4) as usize];
            self.p_late = [0.0, 0.3, 0.8][self.rng.below(3) as usize];
            self.phase_left = 200 + self.rng.below(5000);
        }
        self.phase_left -= 1;
        let rst = cycle < 2 || self.rng.below(20_000) == 0;
        let (op, row) = self.target.unwrap_or_else(|| {
            let t = self.pick();
            self.delay = if self.rng.chance(self.p_late) { self.rng.below(6) } else { 0 };
            t
        });
        self.target = Some((op, row));
        let wait = self.shadow.wait(op);
        let (mut cmd, mut r) = (0usize, self.rng.below(1 << 14) as u32);
        if self.rng.chance(self.p_illegal * 0.01) {
            // Anything, anywhere (a rate per cycle, the others per command): mostly illegal.
            (cmd, r) = (self.rng.below(8) as usize, if self.rng.chance(0.5) { row } else { r });
        } else if wait == 1 && self.rng.chance(self.p_illegal) {
            cmd = op; // one cycle early
            r = row;
        } else if wait == 0 && self.shadow.code(op, row) != 0 {
            self.target = None; // the state moved on (e.g. a reset): pick again
        } else if wait == 0 {
            if self.delay > 0 {
                self.delay -= 1;
            } else {
                let wrong = op != 1 && op != 5 && op != 4 && self.rng.chance(self.p_illegal * 0.3);
                (cmd, r) = (op, if wrong { row ^ 1 } else { row });
                self.target = None;
            }
        }
        inputs[P::RST] = rst as u128;
        inputs[P::CMD] = cmd as u128;
        inputs[P::ROW] = r as u128;
        for p in [P::RST, P::CMD, P::ROW] {
            self.shadow.set_input(p, inputs[p]);
        }
        let _ = self.shadow.settle();
        let _ = self.shadow.posedge();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trnsim_mem::hbm::presets::HBM3_6400;

    fn step(b: &mut HbmBank, op: u128, row: u128) -> (u128, u128) {
        b.set_input(P::CMD, op);
        b.set_input(P::ROW, row);
        b.settle().unwrap();
        let out = (b.output(P::LEGAL), b.output(P::VCODE));
        b.posedge().unwrap();
        out
    }

    #[test]
    fn hbm_bank_act_then_read_waits_trcd_and_pre_waits_tras() {
        let t = HBM3_6400.timing.clone();
        let mut b = HbmBank::new(&HBM3_6400);
        assert_eq!(step(&mut b, 1, 7), (0xff & !(0b1100_1100), vcode::NONE), "closed: no column commands");
        assert_eq!(b.output(P::STATE), BankState::Activating as u128);
        for _ in 1..t.rcd_rd {
            assert_eq!(step(&mut b, 2, 7).1, vcode::TIMING);
        }
        assert_eq!(step(&mut b, 2, 8).1, vcode::WRONG_ROW);
        assert_eq!(b.output(P::STATE), BankState::Active as u128);
        assert_eq!(step(&mut b, 2, 7).1, vcode::NONE, "RD at ACT + tRCDRD");
        assert_eq!(step(&mut b, 1, 7).1, vcode::BANK_STATE);
        while b.now < t.ras as u64 {
            assert_eq!(step(&mut b, 4, 0).1, vcode::TIMING);
        }
        assert_eq!(step(&mut b, 4, 0).1, vcode::NONE, "PRE at ACT + tRAS");
        assert_eq!(b.output(P::STATE), BankState::Precharging as u128);
        assert_eq!(b.output(P::OPEN_ROW), 0);
    }
}
