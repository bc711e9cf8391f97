//! The diff's comparison modes on models (no RTL needed): per-lane don't-care masks, and the
//! transaction scoreboard against a DUT that is one cycle late.

use std::path::Path;
use trnsim_rtl::block::{Block, PortInfo, VltError};
use trnsim_rtl::diff::{diff, diff_transactions, DiffConfig, DiffError};
use trnsim_rtl::model::{sram_bank_port as P, ArbMode, IslipArbiter, SramBank, SramBankStimulus};
use trnsim_rtl::registry;
use trnsim_rtl::scoreboard::Failure;
use trnsim_rtl::stimulus::IslipStimulus;

/// Scribbles on the `rdata` lanes whose `rvalid` bit is low.
struct Scribble(SramBank);

impl Block for Scribble {
    fn ports(&self) -> &[PortInfo] {
        self.0.ports()
    }
    fn set_input(&mut self, port: usize, v: u128) {
        self.0.set_input(port, v)
    }
    fn settle(&mut self) -> Result<(), VltError> {
        self.0.settle()
    }
    fn output(&self, port: usize) -> u128 {
        let v = self.0.output(port);
        if port != P::RDATA {
            return v;
        }
        let valid = self.0.output(P::RVALID);
        (0..4).fold(v, |v, k| if valid >> k & 1 == 0 { v | 0x5a << (32 * k) } else { v })
    }
    fn posedge(&mut self) -> Result<(), VltError> {
        self.0.posedge()
    }
    fn open_vcd(&mut self, path: &Path) -> Result<(), VltError> {
        self.0.open_vcd(path)
    }
    fn close_vcd(&mut self) {
        self.0.close_vcd()
    }
}

#[test]
fn per_lane_dont_care_ignores_rdata_lanes_without_rvalid_and_only_those() {
    let bank = || SramBank::new(64, 32, 2, 2, 4);
    let stim = || SramBankStimulus::new(64, 32, 4, 9);
    let strict = DiffConfig::sram_bank(20_000);
    let err = diff(bank, || Ok(Scribble(bank())), stim, &strict).unwrap_err();
    assert!(matches!(&err, DiffError::Diverged(d) if d.port == "rdata"), "{err}");
    let lanes = DiffConfig { dont_care: vec![("rdata", "rvalid")], ..DiffConfig::sram_bank(20_000) };
    diff(bank, || Ok(Scribble(bank())), stim, &lanes).unwrap();
    // A wrong valid lane is still caught.
    let wrong = || Ok(SramBank::new(64, 32, 1, 2, 4)); // one read port instead of two
    assert!(diff(bank, wrong, stim, &lanes).is_err());
}

/// Shows its outputs one cycle late (a cycle-approximate implementation).
struct Late<B: Block> {
    inner: B,
    now: Vec<u128>,
    shown: Vec<u128>,
}

impl<B: Block> Late<B> {
    fn new(inner: B) -> Self {
        let n = inner.ports().len();
        Late { inner, now: vec![0; n], shown: vec![0; n] }
    }
}

impl<B: Block> Block for Late<B> {
    fn ports(&self) -> &[PortInfo] {
        self.inner.ports()
    }
    fn set_input(&mut self, port: usize, v: u128) {
        self.inner.set_input(port, v)
    }
    fn settle(&mut self) -> Result<(), VltError> {
        self.inner.settle()?;
        for (i, v) in self.now.iter_mut().enumerate() {
            *v = self.inner.output(i);
        }
        Ok(())
    }
    fn output(&self, port: usize) -> u128 {
        if self.inner.ports()[port].input {
            self.inner.output(port)
        } else {
            self.shown[port]
        }
    }
    fn posedge(&mut self) -> Result<(), VltError> {
        self.shown.copy_from_slice(&self.now);
        self.inner.posedge()
    }
    fn open_vcd(&mut self, path: &Path) -> Result<(), VltError> {
        self.inner.open_vcd(path)
    }
    fn close_vcd(&mut self) {
        self.inner.close_vcd()
    }
}

#[test]
fn scoreboard_accepts_a_one_cycle_late_arbiter_within_tolerance_and_flags_it_without() {
    let model = || IslipArbiter::new(8, 1, ArbMode::Islip);
    let late = || Ok(Late::new(model()));
    let stim = || IslipStimulus::new(8, 3);
    let cfg = DiffConfig::islip_arbiter(50_000);
    assert!(matches!(diff(model, late, stim, &cfg), Err(DiffError::Diverged(_))), "cycle by cycle it diverges");
    let mut sb = (registry::find("islip_n8_i1").unwrap().scoreboard.unwrap())();
    sb.tolerance = 1;
    let r = diff_transactions(model, late, stim, &cfg, &sb).unwrap();
    let t = r.transactions.unwrap();
    assert!(t.matched > 100_000 && t.jittered == t.matched && t.max_skew == 1, "{t:?}");
    sb.tolerance = 0;
    let err = diff_transactions(model, late, stim, &cfg, &sb).unwrap_err();
    let DiffError::Transactions(d) = err else { panic!("{err}") };
    assert_eq!((d.error.failure, d.error.stream), (Failure::Late, "match"));
    assert_eq!(d.history.last().map(|r| r.cycle), Some(d.error.cycle), "history up to the failure");
}

#[test]
fn scoreboard_catches_a_dropped_grant() {
    /// Drops input 3's match every 1000th cycle.
    struct Drop3(IslipArbiter, u64);
    impl Block for Drop3 {
        fn ports(&self) -> &[PortInfo] {
            self.0.ports()
        }
        fn set_input(&mut self, port: usize, v: u128) {
            self.0.set_input(port, v)
        }
        fn settle(&mut self) -> Result<(), VltError> {
            self.0.settle()
        }
        fn output(&self, port: usize) -> u128 {
            let v = self.0.output(port);
            if port == 3 && self.1 % 1000 == 999 {
                v & !(1 << 3)
            } else {
                v
            }
        }
        fn posedge(&mut self) -> Result<(), VltError> {
            self.1 += 1;
            self.0.posedge()
        }
        fn open_vcd(&mut self, path: &Path) -> Result<(), VltError> {
            self.0.open_vcd(path)
        }
        fn close_vcd(&mut self) {
            self.0.close_vcd()
        }
    }
    let model = || IslipArbiter::new(8, 1, ArbMode::Islip);
    let sb = (registry::find("islip_n8_i1").unwrap().scoreboard.unwrap())();
    let cfg = DiffConfig::islip_arbiter(20_000);
    let err = diff_transactions(model, || Ok(Drop3(model(), 0)), || IslipStimulus::new(8, 4), &cfg, &sb).unwrap_err();
    let DiffError::Transactions(d) = err else { panic!("{err}") };
    assert_eq!(d.error.failure, Failure::Missing, "{}", d.error);
    assert!(d.error.expected.as_ref().is_some_and(|e| e.id == 3 && e.cycle % 1000 == 999), "{}", d.error);
}
