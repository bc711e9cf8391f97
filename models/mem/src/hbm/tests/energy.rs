//! Energy: the report's total is the sum of every action's count times its energy plus the
//! background of the active and precharged cycles; the per-action figures are DRAMPower's
//! formulas; an idle stack draws exactly its background (and refresh) power.

use crate::hbm::energy::{EnergyTable, PerAction, ACTIONS};
use crate::hbm::traffic::{attach, GenParams, Pattern, Synthetic};
use crate::hbm::{presets, Command, HbmStack, StackConfig};
use trnsim_kernel::{ClockId, SimBuilder, StatsReport};

fn cfg(refresh: &str) -> StackConfig {
    let mut cfg = StackConfig::from_preset(&presets::HBM3_6400);
    cfg.controller.refresh = refresh.into();
    cfg.energy = EnergyTable::builtin().stacks.get("hbm3-6400").cloned();
    cfg
}

/// A run of `n` requests of `pattern` (0: an idle stack) ending at CK `end`; its report.
fn run(cfg: &StackConfig, pattern: Pattern, n: u64, end: u64) -> StatsReport {
    let mut b = SimBuilder::new();
    let clk = b.clock("hbm", cfg.timing.frequency()).unwrap();
    let map = HbmStack::new(cfg).unwrap().address_map().clone();
    let src = Synthetic::new(pattern, n, 3, map.capacity(), cfg.org.access_bytes() as u64, &map, cfg.org.rows);
    let gp = GenParams { width: 8, in_flight: 512, rate: f64::INFINITY, bytes: cfg.org.access_bytes() };
    attach(&mut b, "hbm", clk, cfg, Box::new(src), gp, false).unwrap();
    b.add("until", clk, super::run_end::Until(end)).unwrap();
    let mut sim = b.build().unwrap();
    sim.run_cycles(ClockId::first(), end).unwrap();
    assert_eq!(sim.clock(ClockId::first()).edge_index_at_or_after(sim.now()), end);
    sim.report()
}

fn value(r: &StatsReport, name: &str) -> f64 {
    r.get("hbm", name).unwrap_or_else(|| panic!("{name}")).as_f64()
}

fn int(r: &StatsReport, name: &str) -> f64 {
    r.int("hbm", name).unwrap_or_else(|| panic!("{name}")) as f64
}

#[test]
fn per_action_energies_are_drampowers_formulas() {
    let c = cfg("per-bank");
    let (s, t) = (c.energy.as_ref().unwrap(), &c.timing);
    let p = PerAction::new(s, t, &c.org);
    let ns = 1000.0 / t.ck_mhz as f64;
    // mA x V x ns = pJ.
    assert_eq!(p.act, s.vdd * (s.idd0 - s.idd3n) * f64::from(t.ras) * ns);
    assert_eq!(p.pre, s.vdd * (s.idd0 - s.idd2n) * f64::from(t.rp) * ns);
    assert_eq!(p.rd, s.vdd * (s.idd4r - s.idd3n) * f64::from(t.bl) * ns);
    assert_eq!(p.wr, s.vdd * (s.idd4w - s.idd3n) * f64::from(t.bl) * ns);
    assert_eq!(p.refab, s.vdd * (s.idd5b - s.idd3n) * f64::from(t.rfc) * ns);
    assert_eq!(p.bg_precharged_mw, s.vdd * s.idd2n);
    // hbm3-6400 at 1.6 GHz: an ACT is 1.1 V x 5 mA x tRAS.
    assert!((p.act - 1.1 * 5.0 * f64::from(t.ras) * 0.625).abs() < 1e-9, "{}", p.act);
}

#[test]
fn the_total_is_every_actions_count_times_its_energy() {
    for (refresh, pattern) in
        [("per-bank", Pattern::Mix), ("all-bank", Pattern::RandomRead), ("per-bank", Pattern::StreamRead)]
    {
        let c = cfg(refresh);
        let r = run(&c, pattern, 20_000, 40_000);
        let p = PerAction::new(c.energy.as_ref().unwrap(), &c.timing, &c.org);
        let ns = 1000.0 / c.timing.ck_mhz as f64;
        let cmd = |k: Command| int(&r, &format!("cmd_{}", k.name()));
        let all = 40_000.0 * f64::from(c.org.pcs());
        let active = int(&r, "energy_active_cycles");
        let want = [
            cmd(Command::Act) * p.act,
            int(&r, "energy_bank_closes") * p.pre,
            (cmd(Command::Rd) + cmd(Command::RdA)) * p.rd,
            (cmd(Command::Wr) + cmd(Command::WrA)) * p.wr,
            cmd(Command::Ref) * p.refab,
            cmd(Command::RefPb) * p.refpb,
            active * ns * p.bg_active_mw,
            (all - active) * ns * p.bg_precharged_mw,
            int(&r, "bytes") * 8.0 * p.io_pj_per_bit,
        ];
        let mut sum = 0.0;
        for (name, w) in ACTIONS.iter().zip(want) {
            let got = value(&r, &format!("energy_pJ_{name}"));
            assert!((got - w).abs() <= 1e-9 * w.abs().max(1.0), "{refresh} {name}: {got} against {w}");
            sum += got;
        }
        assert!((value(&r, "energy_pJ_total") - sum).abs() < 1e-6 * sum, "{refresh}: total");
        assert!(cmd(Command::Act) > 0.0 && active > 0.0 && active < all, "{refresh}: {active} of {all}");
        // Every ACT's bank closes again unless still open at the end.
        let closes = int(&r, "energy_bank_closes");
        let open_max = f64::from(c.org.pcs() * c.org.banks_per_pc());
        assert!(closes <= cmd(Command::Act) && closes + open_max >= cmd(Command::Act), "{closes}");
    }
}

#[test]
fn an_idle_stack_draws_exactly_its_background_power() {
    // No refresh: every cycle of every pseudo-channel is precharged standby.
    let c = cfg("none");
    let r = run(&c, Pattern::RandomRead, 0, 100_000);
    let p = PerAction::new(c.energy.as_ref().unwrap(), &c.timing, &c.org);
    let pcs = f64::from(c.org.pcs());
    let watts_mw = pcs * p.bg_precharged_mw;
    assert_eq!(value(&r, "energy_pJ_total"), value(&r, "energy_pJ_bg_precharged"));
    assert!((value(&r, "power_mW_mean") - watts_mw).abs() < 1e-9 * watts_mw, "{}", value(&r, "power_mW_mean"));
    // With all-bank refresh, each REF adds its energy and tRFC of active standby.
    let c = cfg("all-bank");
    let r = run(&c, Pattern::RandomRead, 0, 100_000);
    let refs = int(&r, "cmd_REF");
    assert!(refs > 0.0);
    let ns = 1000.0 / c.timing.ck_mhz as f64;
    // Each REF's tRFC is active standby, the last ones' cut at the run's end.
    let active = int(&r, "energy_active_cycles");
    let rfc = f64::from(c.timing.rfc);
    assert!(active <= refs * rfc && active > refs * rfc - pcs * rfc, "{active} against {refs} x {rfc}");
    let want = refs * p.refab + active * ns * p.bg_active_mw + (100_000.0 * pcs - active) * ns * p.bg_precharged_mw;
    assert!((value(&r, "energy_pJ_total") - want).abs() < 1e-6 * want);
}

#[test]
fn the_builtin_table_is_valid_for_every_preset() {
    let t = EnergyTable::builtin();
    for p in presets::ALL.iter() {
        let s = t.stacks.get(&p.name).unwrap_or_else(|| panic!("{}", p.name));
        assert_eq!(s.validate(), Ok(()), "{}", p.name);
    }
    let mut bad = t.stacks["hbm3-6400"].clone();
    bad.idd3n = f64::NAN;
    assert_eq!(bad.validate().unwrap_err().0, "idd3n");
    bad.idd3n = 10.0;
    assert_eq!(bad.validate().unwrap_err().0, "idd3n", "below idd2n");
}
