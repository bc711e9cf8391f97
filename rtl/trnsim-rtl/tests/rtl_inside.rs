//! Inside the RTL: cover points on internal (Verilator public) signals, `cover property`
//! counts, assertion severities, and peek, deposit and force of internal signals (feature
//! `rtl`).
#![cfg(feature = "rtl")]

use trnsim_rtl::block::{Block, Severity};
use trnsim_rtl::coverage::{Cover, Expr};
use trnsim_rtl::diff::{diff, DiffConfig, DiffError};
use trnsim_rtl::model::LinkFifo;
use trnsim_rtl::rtl::Rtl;
use trnsim_rtl::stimulus::LinkFifoStimulus;
use trnsim_rtl::verilator_sys::models::{FinishDemo, LinkFifoW64D4};

#[test]
fn internal_signal_bins_are_reached_on_the_rtl_side_and_cover_properties_counted() {
    let mut cfg = DiffConfig::link_fifo(20_000);
    cfg.coverage = vec![
        Cover::values("read pointer", Expr::signal("rd_ptr"), 0..=3),
        Cover::values("write pointer", Expr::signal("wr_ptr"), 0..=3),
        // A cross of an internal signal with a port: the count at each occupancy while the
        // receiver stalls.
        Cover::values("count while stalled", Expr::signal("cnt"), 0..=4).iff(!Expr::port("out_ready")),
        Cover::values("occupancy", Expr::port("count"), 0..=4),
    ];
    let r = diff(|| LinkFifo::new(64, 4), Rtl::<LinkFifoW64D4>::new, || LinkFifoStimulus::new(3), &cfg)
        .unwrap_or_else(|e| panic!("{e}"));
    let (model, rtl) = r.coverage.as_ref().unwrap();
    // The model exposes no internal signal: only the port point is sampled there.
    assert_eq!(model.points.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["occupancy"]);
    assert_eq!(rtl.points.len(), 4);
    for p in &rtl.points {
        assert_eq!(p.hit, p.bins.len(), "{}: {:?}", p.name, p.bins);
    }
    let rd = &rtl.points[0].bins;
    assert!(rd.iter().all(|b| b.hits > 1000), "{rd:?}");
    // link_fifo.sv's two cover properties matched.
    let props: Vec<&str> = r.cover_properties.iter().map(|(l, _)| *l).collect();
    assert_eq!(props, ["c_pop_when_full", "c_push_and_pop"]);
    assert!(r.cover_properties.iter().all(|&(_, n)| n > 100), "{:?}", r.cover_properties);
    assert!(r.rtl_checks().contains("cover property c_pop_when_full: "), "{}", r.rtl_checks());
    // Each assertion passed on every edge out of reset (none failed: the diff is clean).
    let passes = &r.assertion_passes;
    assert_eq!(passes.iter().map(|(l, _)| *l).collect::<Vec<_>>(), ["a_count_bounded", "a_credit_follows_pop"]);
    assert_eq!(passes[0].1, passes[1].1);
    assert!(passes[0].1 > r.cycles * 9 / 10 && passes[0].1 < r.cycles, "{passes:?} of {}", r.cycles);

    // A cover point on a signal neither side has is an error naming it and the public ones.
    cfg.coverage = vec![Cover::values("x", Expr::signal("rd_ptrr"), 0..=3)];
    let e = diff(|| LinkFifo::new(64, 4), Rtl::<LinkFifoW64D4>::new, || LinkFifoStimulus::new(3), &cfg);
    match e {
        Err(DiffError::Ports(m)) => {
            assert!(m.contains("no internal signal rd_ptrr") && m.contains("cnt, rd_ptr, wr_ptr"), "{m}")
        }
        other => panic!("{:?}", other.map(|r| r.cycles)),
    }
}

#[test]
fn internal_signals_can_be_peeked_deposited_and_forced() {
    let mut f = Rtl::<LinkFifoW64D4>::new().unwrap();
    let names: Vec<(String, u32, bool)> = f.signals().iter().map(|s| (s.name.clone(), s.width, s.writable)).collect();
    let expect = |n: &str, w| (n.to_string(), w, true);
    assert_eq!(names, [expect("cnt", 3), expect("rd_ptr", 2), expect("wr_ptr", 2)]);
    let ports = f.ports();
    let port = |n: &str| ports.iter().position(|p| p.name == n).unwrap();
    let (rst, in_valid, in_ready, count) = (port("rst"), port("in_valid"), port("in_ready"), port("count"));
    let cycle = |f: &mut Rtl<LinkFifoW64D4>| {
        f.settle().unwrap();
        f.posedge().unwrap();
    };
    f.set_input(rst, 1);
    cycle(&mut f);
    f.set_input(rst, 0);
    f.set_input(in_valid, 1);
    for _ in 0..2 {
        cycle(&mut f);
    }
    // Both assertions are disabled in reset and held on the two edges since.
    assert_eq!(f.assertion_passes(), [("a_count_bounded", 2), ("a_credit_follows_pop", 2)]);
    f.settle().unwrap();
    assert_eq!((f.peek("cnt"), f.peek("wr_ptr")), (Ok(2), Ok(2)));
    // Deposit: the register takes the value once; the logic goes on from it.
    f.set_input(in_valid, 0);
    f.deposit("cnt", 4).unwrap();
    f.settle().unwrap();
    assert_eq!((f.output(count), f.output(in_ready)), (4, 0), "the full flag follows the deposited count");
    // Force: held through pushes until released.
    f.force("cnt", 1).unwrap();
    f.set_input(in_valid, 1);
    for _ in 0..3 {
        cycle(&mut f);
        assert_eq!(f.peek("cnt"), Ok(1));
    }
    f.settle().unwrap();
    assert_eq!((f.output(count), f.output(in_ready)), (1, 1));
    f.release("cnt").unwrap();
    cycle(&mut f);
    assert_eq!(f.peek("cnt"), Ok(2), "after the release the count moves again");
    // Errors name the signal and list the public ones.
    let e = f.peek("nope").unwrap_err();
    assert!(e.contains("no public signal nope") && e.contains("cnt, rd_ptr, wr_ptr"), "{e}");
    assert!(f.force("nope", 1).is_err() && LinkFifo::new(64, 4).peek("cnt").is_err());
}

#[test]
fn assertion_warnings_and_infos_are_counted_by_label_and_the_run_goes_on() {
    let mut m = Rtl::<FinishDemo>::new().unwrap();
    let mut notes = Vec::new();
    for cycle in 0..80u64 {
        m.settle().unwrap();
        m.posedge().unwrap();
        notes.extend(m.take_assertion_notes().into_iter().map(|n| (cycle, n)));
    }
    let seen: Vec<(Severity, &str, &str)> =
        notes.iter().map(|(_, n)| (n.severity, n.label.as_str(), n.message.as_str())).collect();
    assert_eq!(
        seen,
        [
            (Severity::Warning, "a_ticks_not_50", "ticks reached 50"),
            (Severity::Info, "a_ticks_not_60", "ticks reached 60")
        ]
    );
    assert!(notes[0].1.at.starts_with("finish_demo.sv:"), "{:?}", notes[0]);
    // `phase` is public in the source (/*verilator public_flat_rw*/); its cover property
    // matched every 16 edges, the tick counter's wrap not yet (in declaration order).
    let props = m.cover_properties();
    assert_eq!(props, [("c_ticks_wrap", 0), ("c_phase_top", 5)]);
    assert!(m.peek("phase").is_ok());
    // Passes and failures add up to the 80 edges: the warning and the info failed once each.
    assert_eq!(m.assertion_passes(), [("a_ticks_not_100", 80), ("a_ticks_not_50", 79), ("a_ticks_not_60", 79)]);
}
