//! The timing parameters of an HBM speed grade and the constraint table derived from them.
//!
//! The controller knows no timing rule by name: it consults [`constraints`], a table of
//! (scope, preceding commands, following commands, latency, window) rows, as Ramulator 2's
//! DRAM standards do. The independent checker ([`crate::hbm::checker`]) re-derives the JEDEC
//! rules by hand, so a wrong row here is caught there.

use crate::hbm::command::{CmdSet, Command};
use serde::{Deserialize, Serialize};

/// Timing parameters of one speed grade, in CK cycles of the memory clock (`ck_mhz`).
///
/// Names follow JEDEC (JESD235/JESD238) without the `t`/`n` prefix. `bl` is the data-bus
/// occupancy of one burst in CK (BL8 at 4 beats per CK on HBM3 = 2; BL4 at DDR on HBM2 = 2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimingParams {
    /// CK frequency in MHz (HBM3: data rate / 4; HBM2: data rate / 2).
    pub ck_mhz: u64,
    /// Data-bus cycles per burst.
    pub bl: u32,
    /// Read latency: RD to first data.
    pub cl: u32,
    /// Write latency: WR to first data.
    pub cwl: u32,
    /// ACT to RD/RDA, same bank.
    pub rcd_rd: u32,
    /// ACT to WR/WRA, same bank.
    pub rcd_wr: u32,
    /// PRE to ACT, same bank (row precharge).
    pub rp: u32,
    /// ACT to PRE, same bank (row active minimum).
    pub ras: u32,
    /// ACT to ACT, same bank (row cycle).
    pub rc: u32,
    /// Write recovery: end of write data to PRE.
    pub wr: u32,
    /// RD to PRE, same bank.
    pub rtp: u32,
    /// Column to column, different bank group.
    pub ccd_s: u32,
    /// Column to column, same bank group.
    pub ccd_l: u32,
    /// RD to RD, different stack ID (SID switch on the read data bus).
    pub ccd_r: u32,
    /// ACT to ACT, different bank group.
    pub rrd_s: u32,
    /// ACT to ACT, same bank group.
    pub rrd_l: u32,
    /// Four-activate window.
    pub faw: u32,
    /// End of write data to RD, different bank group.
    pub wtr_s: u32,
    /// End of write data to RD, same bank group.
    pub wtr_l: u32,
    /// RD to WR (read-to-write bus turnaround).
    pub rtw: u32,
    /// PRE to PRE, different banks (HBM3 tPPD).
    pub ppd: u32,
    /// All-bank refresh cycle time (REF to ACT/REF).
    pub rfc: u32,
    /// Per-bank refresh cycle time (REFPB to ACT same bank).
    pub rfc_pb: u32,
    /// REFPB to ACT or REFPB, different bank.
    pub rrefd: u32,
    /// Average all-bank refresh interval.
    pub refi: u32,
    /// Average per-bank refresh interval (REFI / banks per pseudo-channel).
    pub refi_pb: u32,
}

impl TimingParams {
    /// Checks the relations every speed grade must satisfy; names the bad field.
    pub fn validate(&self) -> Result<(), String> {
        let nz = [
            ("ck_mhz", self.ck_mhz.min(u32::MAX as u64) as u32),
            ("bl", self.bl),
            ("cl", self.cl),
            ("rcd_rd", self.rcd_rd),
            ("rcd_wr", self.rcd_wr),
            ("rp", self.rp),
            ("ras", self.ras),
            ("rc", self.rc),
            ("ccd_s", self.ccd_s),
            ("ccd_l", self.ccd_l),
            ("rrd_s", self.rrd_s),
            ("rrd_l", self.rrd_l),
            ("rfc", self.rfc),
            ("rfc_pb", self.rfc_pb),
            ("refi", self.refi),
            ("refi_pb", self.refi_pb),
        ];
        for (name, v) in nz {
            if v == 0 {
                return Err(format!("{name}: must be at least 1 cycle"));
            }
        }
        if self.ccd_s < self.bl {
            return Err(format!("ccd_s: {} is shorter than the burst ({} cycles)", self.ccd_s, self.bl));
        }
        if self.rc < self.ras {
            return Err(format!("rc: {} is shorter than ras {}", self.rc, self.ras));
        }
        if self.refi <= self.rfc {
            return Err(format!("refi: {} leaves no time outside refresh (rfc {})", self.refi, self.rfc));
        }
        Ok(())
    }

    /// Every field counted in CK cycles (all but `ck_mhz`), by name, in declaration order.
    pub fn cycle_fields(&self) -> [(&'static str, u32); 25] {
        [
            ("bl", self.bl),
            ("cl", self.cl),
            ("cwl", self.cwl),
            ("rcd_rd", self.rcd_rd),
            ("rcd_wr", self.rcd_wr),
            ("rp", self.rp),
            ("ras", self.ras),
            ("rc", self.rc),
            ("wr", self.wr),
            ("rtp", self.rtp),
            ("ccd_s", self.ccd_s),
            ("ccd_l", self.ccd_l),
            ("ccd_r", self.ccd_r),
            ("rrd_s", self.rrd_s),
            ("rrd_l", self.rrd_l),
            ("faw", self.faw),
            ("wtr_s", self.wtr_s),
            ("wtr_l", self.wtr_l),
            ("rtw", self.rtw),
            ("ppd", self.ppd),
            ("rfc", self.rfc),
            ("rfc_pb", self.rfc_pb),
            ("rrefd", self.rrefd),
            ("refi", self.refi),
            ("refi_pb", self.refi_pb),
        ]
    }

    /// Cycles from RD issue to the last data beat: CL + BL.
    pub fn read_data_cycles(&self) -> u32 {
        self.cl + self.bl
    }
    /// Cycles from WR issue to the last data beat: CWL + BL.
    pub fn write_data_cycles(&self) -> u32 {
        self.cwl + self.bl
    }
    /// Converts CK cycles to nanoseconds.
    pub fn ns(&self, cycles: f64) -> f64 {
        cycles * 1000.0 / self.ck_mhz as f64
    }
    /// The CK clock as a kernel frequency.
    pub fn frequency(&self) -> trnsim_kernel::Frequency {
        trnsim_kernel::Frequency::from_mhz(self.ck_mhz)
    }
}

/// The set of banks a constraint row constrains, relative to the bank of the preceding command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Scope {
    /// The same bank.
    Bank,
    /// Every bank of the same bank group (same SID).
    Group,
    /// Every bank of every *other* SID of the pseudo-channel.
    OtherSid,
    /// Every bank of the pseudo-channel.
    Pc,
}

/// One timing rule: after a command in `preceding` issues at cycle t, no command in `following`
/// may issue in `scope` before t + `cycles`; with `window` = n > 1, no following command may be
/// the (n+1)-th of the preceding kind within any `cycles` window (tFAW).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Constraint {
    /// JEDEC name of the rule (e.g. "tRCDRD").
    pub name: &'static str,
    /// Which banks it constrains.
    pub scope: Scope,
    /// Commands that start the constraint.
    pub preceding: CmdSet,
    /// Commands it delays.
    pub following: CmdSet,
    /// Minimum distance in CK cycles.
    pub cycles: u32,
    /// 1 for a plain distance; 4 for the four-activate window.
    pub window: u32,
}

const RD: CmdSet = CmdSet::of(&[Command::Rd, Command::RdA]);
const WR: CmdSet = CmdSet::of(&[Command::Wr, Command::WrA]);
const ACT: CmdSet = CmdSet::of(&[Command::Act]);
const PRE: CmdSet = CmdSet::of(&[Command::Pre]);
const PREA: CmdSet = CmdSet::of(&[Command::PreAll]);
const ANY_PRE: CmdSet = CmdSet::of(&[Command::Pre, Command::PreAll]);
const REF: CmdSet = CmdSet::of(&[Command::Ref]);
const REFPB: CmdSet = CmdSet::of(&[Command::RefPb]);

/// Builds the constraint table of a speed grade. Rows with zero cycles are dropped.
///
/// Sources: the HBM3 rules of JESD238 as Ramulator 2 lists them (`python/ramulator/dram/hbm3.py`,
/// spec M1), plus tCCDR (SID switch) and tRTW from the same preset. Auto-precharge (RDA/WRA)
/// closes the bank at issue; its internal precharge is covered by the RDA/WRA -> ACT rows and by
/// tRC.
pub fn constraints(t: &TimingParams) -> Vec<Constraint> {
    let c =
        |name, scope, preceding, following, cycles| Constraint { name, scope, preceding, following, cycles, window: 1 };
    let rda = CmdSet::of(&[Command::RdA]);
    let wra = CmdSet::of(&[Command::WrA]);
    let rd_only = CmdSet::of(&[Command::Rd]);
    let wr_only = CmdSet::of(&[Command::Wr]);
    let wr_to_pre = t.cwl + t.bl + t.wr;
    let rows = vec![
        // Pseudo-channel: data bus and column spacing.
        c("tCCDS", Scope::Pc, RD, RD, t.ccd_s.max(t.bl)),
        c("tCCDS", Scope::Pc, WR, WR, t.ccd_s.max(t.bl)),
        c("tRTW", Scope::Pc, RD, WR, t.rtw),
        c("tWTRS", Scope::Pc, WR, RD, t.cwl + t.bl + t.wtr_s),
        c("tCCDR", Scope::OtherSid, RD, RD, t.ccd_r),
        // Pseudo-channel: activates and precharges.
        c("tRRDS", Scope::Pc, ACT, ACT, t.rrd_s),
        Constraint { name: "tFAW", scope: Scope::Pc, preceding: ACT, following: ACT, cycles: t.faw, window: 4 },
        // JEDEC's tPPD is between different banks; applying it to the same bank too only
        // over-constrains a PRE to an already closed bank, which the controller never issues.
        c("tPPD", Scope::Pc, PRE, PRE, t.ppd),
        c("tRAS", Scope::Pc, ACT, PREA, t.ras),
        c("tRTP", Scope::Pc, rd_only, PREA, t.rtp),
        c("tWR", Scope::Pc, wr_only, PREA, wr_to_pre),
        c("tRP", Scope::Pc, PREA, ACT, t.rp),
        // Pseudo-channel: all-bank refresh.
        c("tRC", Scope::Pc, ACT, REF, t.rc),
        c("tRP", Scope::Pc, ANY_PRE, REF, t.rp),
        c("tRTP+tRP", Scope::Pc, rda, REF, t.rtp + t.rp),
        c("tWR+tRP", Scope::Pc, wra, REF, wr_to_pre + t.rp),
        c("tRFC", Scope::Pc, REF, CmdSet::of(&[Command::Act, Command::Ref, Command::RefPb, Command::PreAll]), t.rfc),
        c("tRFCpb", Scope::Pc, REFPB, REF, t.rfc_pb),
        c("tRFC", Scope::Pc, REF, PRE, t.rfc),
        c("tRP", Scope::Pc, PREA, REFPB, t.rp),
        // Pseudo-channel: per-bank refresh against other banks.
        c("tRREFD", Scope::Pc, REFPB, CmdSet::of(&[Command::Act, Command::RefPb]), t.rrefd),
        c("tRRDS", Scope::Pc, ACT, REFPB, t.rrd_s),
        // Bank group.
        c("tCCDL", Scope::Group, RD, RD, t.ccd_l),
        c("tCCDL", Scope::Group, WR, WR, t.ccd_l),
        c("tWTRL", Scope::Group, WR, RD, t.cwl + t.bl + t.wtr_l),
        c("tRRDL", Scope::Group, ACT, ACT, t.rrd_l),
        // Bank.
        c("tRC", Scope::Bank, ACT, ACT, t.rc),
        c("tRCDRD", Scope::Bank, ACT, RD, t.rcd_rd),
        c("tRCDWR", Scope::Bank, ACT, WR, t.rcd_wr),
        c("tRAS", Scope::Bank, ACT, PRE, t.ras),
        c("tRP", Scope::Bank, PRE, ACT, t.rp),
        c("tRTP", Scope::Bank, rd_only, PRE, t.rtp),
        c("tWR", Scope::Bank, wr_only, PRE, wr_to_pre),
        c("tRTP+tRP", Scope::Bank, rda, ACT, t.rtp + t.rp),
        c("tWR+tRP", Scope::Bank, wra, ACT, wr_to_pre + t.rp),
        c("tRFCpb", Scope::Bank, REFPB, CmdSet::of(&[Command::Act, Command::RefPb]), t.rfc_pb),
        c("tRC", Scope::Bank, ACT, REFPB, t.rc),
        c("tRP", Scope::Bank, PRE, REFPB, t.rp),
        c("tRTP+tRP", Scope::Bank, rda, REFPB, t.rtp + t.rp),
        c("tWR+tRP", Scope::Bank, wra, REFPB, wr_to_pre + t.rp),
    ];
    rows.into_iter().filter(|r| r.cycles > 0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hbm::presets;

    #[test]
    fn every_preset_validates_and_has_no_zero_rows() {
        for p in presets::ALL.iter() {
            let t = p.timing.clone();
            t.validate().unwrap();
            let rows = constraints(&t);
            assert!(rows.iter().all(|r| r.cycles > 0 && r.preceding.0 != 0 && r.following.0 != 0));
            assert!(rows.iter().any(|r| r.name == "tFAW" && r.window == 4));
        }
    }
}
