//! Every timing gate is tight: after the setup, the probed command is refused one cycle before
//! the JEDEC formula's cycle and allowed at it. Expected cycles are written from the timing
//! parameters by hand (not from the constraint table), so a wrong table row fails here.

use crate::hbm::command::Command::{self, *};
use crate::hbm::config::ControllerConfig;
use crate::hbm::controller::{Choice, PcController, Shared};
use crate::hbm::presets::{self, Preset};
use crate::hbm::timing::{constraints, TimingParams};

const T: u64 = 5000;

/// A bank as (sid, bank group, bank).
type B = (u32, u32, u32);

struct Probe {
    name: &'static str,
    setup: Vec<(Command, B, u64)>,
    probe: (Command, B),
    expect: u64,
}

fn shared(p: &Preset) -> Shared {
    let t = p.timing.clone();
    Shared::new(p.org.clone(), t, ControllerConfig::default(), crate::hbm::sched::by_name("frfcfs").unwrap())
}

fn choice(sh: &Shared, pc: &PcController, cmd: Command, (s, g, k): B) -> Choice {
    let flat = (s * sh.org.bank_groups + g) * sh.org.banks_per_group + k;
    let b = pc.timing_state().bank_ref(flat);
    Choice { cmd, b, row: 7, col: 0, seq: None, refresh: matches!(cmd, Ref | RefPb) }
}

fn check(p: &Preset, pr: &Probe) {
    let sh = shared(p);
    let mut pc = PcController::new(&sh, None);
    for &(cmd, b, at) in &pr.setup {
        let c = choice(&sh, &pc, cmd, b);
        assert!(pc.still_legal(&sh, &c, at), "{} {}: setup {cmd:?} at {at} is illegal", p.name, pr.name);
        pc.issue(&sh, &c, at, &mut Default::default());
    }
    let c = choice(&sh, &pc, pr.probe.0, pr.probe.1);
    assert!(
        !pc.still_legal(&sh, &c, pr.expect - 1),
        "{} {}: {:?} allowed at {} (one cycle early)",
        p.name,
        pr.name,
        pr.probe.0,
        pr.expect - 1
    );
    assert!(pc.still_legal(&sh, &c, pr.expect), "{} {}: {:?} refused at {}", p.name, pr.name, pr.probe.0, pr.expect);
}

fn probes(t: &TimingParams, sids: u32) -> Vec<Probe> {
    let (b0, b1, g1, s1) = ((0, 0, 0), (0, 0, 1), (0, 1, 0), (1, 0, 0));
    let c = |x: u32| x as u64;
    let wr_end = c(t.cwl + t.bl);
    let mut v = vec![
        Probe { name: "tRCDRD", setup: vec![(Act, b0, T)], probe: (Rd, b0), expect: T + c(t.rcd_rd) },
        Probe { name: "tRCDWR", setup: vec![(Act, b0, T)], probe: (Wr, b0), expect: T + c(t.rcd_wr) },
        Probe { name: "tRAS", setup: vec![(Act, b0, T)], probe: (Pre, b0), expect: T + c(t.ras) },
        Probe { name: "tRP", setup: vec![(Act, b0, 0), (Pre, b0, T)], probe: (Act, b0), expect: T + c(t.rp) },
        Probe {
            name: "tRC",
            setup: vec![(Act, b0, T), (Pre, b0, T + c(t.ras))],
            probe: (Act, b0),
            expect: (T + c(t.rc)).max(T + c(t.ras + t.rp)),
        },
        Probe { name: "tRTP", setup: vec![(Act, b0, 0), (Rd, b0, T)], probe: (Pre, b0), expect: T + c(t.rtp) },
        Probe { name: "tWR", setup: vec![(Act, b0, 0), (Wr, b0, T)], probe: (Pre, b0), expect: T + wr_end + c(t.wr) },
        Probe {
            name: "tCCDS",
            setup: vec![(Act, b0, 0), (Act, g1, 100), (Rd, b0, T)],
            probe: (Rd, g1),
            expect: T + c(t.ccd_s.max(t.bl)),
        },
        Probe {
            name: "tCCDL",
            setup: vec![(Act, b0, 0), (Act, b1, 100), (Rd, b0, T)],
            probe: (Rd, b1),
            expect: T + c(t.ccd_l),
        },
        Probe { name: "tRRDS", setup: vec![(Act, b0, T)], probe: (Act, g1), expect: T + c(t.rrd_s) },
        Probe { name: "tRRDL", setup: vec![(Act, b0, T)], probe: (Act, b1), expect: T + c(t.rrd_l) },
        Probe {
            name: "tFAW",
            setup: (0..4).map(|g| (Act, (0, g, 0), T + g as u64 * c(t.rrd_s))).collect(),
            probe: (Act, b1),
            expect: (T + c(t.faw)).max(T + 4 * c(t.rrd_s)).max(T + c(t.rrd_l)),
        },
        Probe {
            name: "tWTRS",
            setup: vec![(Act, b0, 0), (Act, g1, 100), (Wr, b0, T)],
            probe: (Rd, g1),
            expect: T + wr_end + c(t.wtr_s),
        },
        Probe {
            name: "tWTRL",
            setup: vec![(Act, b0, 0), (Act, b1, 100), (Wr, b0, T)],
            probe: (Rd, b1),
            expect: T + wr_end + c(t.wtr_l),
        },
        Probe {
            name: "tRTW",
            setup: vec![(Act, b0, 0), (Act, g1, 100), (Rd, b0, T)],
            probe: (Wr, g1),
            expect: T + c(t.rtw),
        },
        Probe { name: "tRFC", setup: vec![(Ref, b0, T)], probe: (Act, g1), expect: T + c(t.rfc) },
        Probe { name: "tRFC (REF to REF)", setup: vec![(Ref, b0, T)], probe: (Ref, b0), expect: T + c(t.rfc) },
        Probe { name: "tRFCpb", setup: vec![(RefPb, b0, T)], probe: (Act, b0), expect: T + c(t.rfc_pb) },
        Probe { name: "tRREFD (ACT)", setup: vec![(RefPb, b0, T)], probe: (Act, b1), expect: T + c(t.rrefd) },
        Probe { name: "tRREFD (REFPB)", setup: vec![(RefPb, b0, T)], probe: (RefPb, b1), expect: T + c(t.rrefd) },
        Probe { name: "tRC (ACT to REF)", setup: vec![(Act, b0, T)], probe: (PreAll, b0), expect: T + c(t.ras) },
        Probe {
            name: "tRP (PRE to REF)",
            setup: vec![(Act, b0, 0), (Pre, b0, T)],
            probe: (Ref, b0),
            expect: T + c(t.rp),
        },
        Probe {
            name: "tRTP (RD to PREA)",
            setup: vec![(Act, b0, 0), (Rd, b0, T)],
            probe: (PreAll, g1),
            expect: T + c(t.rtp),
        },
        Probe {
            name: "tRTP+tRP (RDA to ACT)",
            setup: vec![(Act, b0, 0), (RdA, b0, T)],
            probe: (Act, b0),
            expect: T + c(t.rtp + t.rp),
        },
        Probe {
            name: "tWR+tRP (WRA to ACT)",
            setup: vec![(Act, b0, 0), (WrA, b0, T)],
            probe: (Act, b0),
            expect: T + wr_end + c(t.wr + t.rp),
        },
        Probe {
            name: "tRC (ACT to REFPB)",
            setup: vec![(Act, b0, T), (Pre, b0, T + c(t.ras))],
            probe: (RefPb, b0),
            expect: (T + c(t.rc)).max(T + c(t.ras + t.rp)),
        },
    ];
    if t.ppd > 0 {
        v.push(Probe {
            name: "tPPD",
            setup: vec![(Act, b0, 0), (Act, g1, 100), (Pre, b0, T)],
            probe: (Pre, g1),
            expect: T + c(t.ppd),
        });
    }
    if sids > 1 && t.ccd_r > t.ccd_s {
        v.push(Probe {
            name: "tCCDR",
            setup: vec![(Act, b0, 0), (Act, s1, 100), (Rd, b0, T)],
            probe: (Rd, s1),
            expect: T + c(t.ccd_r),
        });
    }
    v
}

#[test]
fn every_timing_gate_is_tight_on_every_preset() {
    let mut names = std::collections::BTreeSet::new();
    for p in presets::ALL.iter() {
        let t = p.timing.clone();
        for pr in probes(&t, p.org.sids) {
            check(p, &pr);
            names.insert(pr.name);
        }
    }
    // Every constraint the table names is probed at least once.
    for row in constraints(&presets::HBM3_6400.timing) {
        let probed = names.iter().any(|n| n.split([' ', '+']).next() == Some(row.name) || n.contains(row.name));
        assert!(probed, "constraint {} has no gate probe", row.name);
    }
}

#[test]
fn bank_state_gates_refuse_illegal_commands_at_any_time() {
    let p = &presets::HBM3_6400;
    let sh = shared(p);
    let mut pc = PcController::new(&sh, None);
    let rd = choice(&sh, &pc, Rd, (0, 0, 0));
    assert!(!pc.still_legal(&sh, &rd, 1 << 40), "RD to a closed bank");
    let act = choice(&sh, &pc, Act, (0, 0, 0));
    pc.issue(&sh, &act, 10, &mut Default::default());
    assert!(!pc.still_legal(&sh, &act, 1 << 40), "ACT to an open bank");
    assert!(!pc.still_legal(&sh, &choice(&sh, &pc, Ref, (0, 0, 0)), 1 << 40), "REF with a bank open");
    let mut other_row = rd;
    other_row.row = 8;
    assert!(!pc.still_legal(&sh, &other_row, 1 << 40), "RD to a row that is not open");
}
