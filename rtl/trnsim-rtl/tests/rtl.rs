//! Model-vs-RTL lock-step diffs and the Verilator wrapper's behaviour (feature `rtl`).
#![cfg(feature = "rtl")]

use std::path::Path;
use trnsim_rtl::block::{Block, PortInfo, VltError};
use trnsim_rtl::diff::{diff, DiffConfig, DiffError};
use trnsim_rtl::model::LinkFifo;
use trnsim_rtl::rtl::Rtl;
use trnsim_rtl::stimulus::LinkFifoStimulus;
use trnsim_rtl::verilator_sys::models::{FinishDemo, LinkFifoW100D5, LinkFifoW64D4};
use trnsim_rtl::verilator_sys::Verilated;

#[test]
fn link_fifo_w64_d4_matches_model_for_1m_random_cycles() {
    let t = std::time::Instant::now();
    let cfg = DiffConfig::link_fifo(1_000_000);
    let r = diff(|| LinkFifo::new(64, 4), Rtl::<LinkFifoW64D4>::new, || LinkFifoStimulus::new(42), &cfg);
    let r = r.unwrap_or_else(|e| panic!("{e}"));
    let dt = t.elapsed().as_secs_f64();
    eprintln!("1M cycles in {dt:.2} s = {:.2} Mcycles/s; {:?}", 1.0 / dt, r.high_cycles);
    // Coverage: full (in_ready low), empty (out_valid low) and pops all happen a lot.
    assert!(r.cycles - r.high("in_ready").unwrap() > 100_000, "full too rarely");
    assert!(r.cycles - r.high("out_valid").unwrap() > 100_000, "empty too rarely");
    assert!(r.high("credit_ret").unwrap() > 200_000, "too few pops");
}

#[test]
fn link_fifo_w100_d5_wide_ports_non_power_of_two_depth_match_model() {
    let cfg = DiffConfig::link_fifo(200_000);
    let r = diff(|| LinkFifo::new(100, 5), Rtl::<LinkFifoW100D5>::new, || LinkFifoStimulus::new(7), &cfg);
    r.unwrap_or_else(|e| panic!("{e}"));
}

/// A block that lies on one output from a given cycle on: a planted divergence.
struct Lie<B> {
    inner: B,
    port: usize,
    from: u64,
    cycle: u64,
}

impl<B: Block> Block for Lie<B> {
    fn ports(&self) -> &[PortInfo] {
        self.inner.ports()
    }
    fn set_input(&mut self, port: usize, v: u128) {
        self.inner.set_input(port, v)
    }
    fn settle(&mut self) -> Result<(), VltError> {
        self.inner.settle()
    }
    fn output(&self, port: usize) -> u128 {
        self.inner.output(port) ^ (port == self.port && self.cycle >= self.from) as u128
    }
    fn posedge(&mut self) -> Result<(), VltError> {
        self.cycle += 1;
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
fn divergence_reports_cycle_port_values_history_and_writes_both_vcds() {
    let dir = std::env::temp_dir().join(format!("trnsim-rtl-div-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cfg = DiffConfig::link_fifo(100_000);
    cfg.vcd_dir = Some(dir.clone());
    cfg.vcd_window = 100;
    let count = <LinkFifoW64D4 as Verilated>::port("count").unwrap();
    let dut = || Ok(Lie { inner: Rtl::<LinkFifoW64D4>::new()?, port: count, from: 5000, cycle: 0 });
    let err = diff(|| LinkFifo::new(64, 4), dut, || LinkFifoStimulus::new(3), &cfg).unwrap_err();
    let DiffError::Diverged(d) = err else { panic!("expected a divergence, got {err}") };
    assert_eq!((d.cycle, d.port), (5000, "count"));
    assert_eq!(d.expected ^ d.actual, 1);
    assert_eq!(d.history.len(), 8);
    assert_eq!(d.history.last().unwrap().cycle, 5000);
    assert!(d.history.windows(2).all(|w| w[1].cycle == w[0].cycle + 1), "history oldest first, consecutive");
    assert_eq!(d.history.last().unwrap().values[count], d.expected, "history is the reference side");
    assert_eq!(d.differing.len(), 1, "only count lies: {:?}", d.differing);
    assert_eq!(d.dut_history.last().unwrap().values[count], d.actual, "the DUT's side is kept too");
    let text = d.to_string();
    assert!(text.contains("divergence at cycle 5000 on port count"), "{text}");
    assert!(
        text.contains("the same cycles on the DUT side") && text.contains(&format!("count={:x}", d.actual)),
        "{text}"
    );
    // One waveform of both sides, with a mismatch signal per compared output.
    let merged = d.merged_vcd.clone().expect("merged vcd written");
    let s = std::fs::read_to_string(&merged).unwrap();
    for want in ["$scope module model", "$scope module rtl", "$scope module mismatch", "#50000"] {
        assert!(s.contains(want), "{}: no {want:?}", merged.display());
    }
    assert!(text.contains("both sides and a mismatch signal per port"), "{text}");
    let (m, r) = d.vcds.clone().expect("vcds written");
    for p in [&m, &r] {
        let s = std::fs::read_to_string(p).unwrap();
        assert!(
            s.contains("$timescale") && s.contains("count") && s.contains("#50000"),
            "{}: {}",
            p.display(),
            &s[..s.len().min(400)]
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn wide_inputs_are_masked_to_port_width_and_word_order_is_lsb_first() {
    let mut f = LinkFifoW100D5::new().unwrap();
    f.set_rst(1);
    f.settle().unwrap();
    f.posedge().unwrap();
    f.set_rst(0);
    f.set_in_valid(1);
    f.set_in_data(&[u32::MAX; 4]);
    f.settle().unwrap();
    f.posedge().unwrap();
    f.set_in_valid(0);
    f.settle().unwrap();
    assert_eq!(f.out_data(), [u32::MAX, u32::MAX, u32::MAX, 0xf]);
    assert_eq!(f.get_u128(<LinkFifoW100D5 as Verilated>::port("out_data").unwrap()), (1u128 << 100) - 1);
    let mut all = [0u128; 10];
    f.get_all(&mut all);
    let each: Vec<u128> = (0..10).map(|i| f.get_u128(i)).collect();
    assert_eq!(all.as_slice(), each.as_slice(), "get_all reads what get_u128 reads");
    f.set_rst(0xff); // dirty high bits of a 1-bit port are dropped
    assert_eq!(f.rst(), 1);
}

fn run_demo(cmd: u8) -> Result<u8, VltError> {
    let mut m = FinishDemo::new()?;
    m.set_cmd(cmd);
    for _ in 0..3 {
        m.settle()?;
        m.posedge()?;
    }
    Ok(m.ticks())
}

#[test]
fn finish_stop_and_fatal_become_errors_and_never_exit_or_abort() {
    assert_eq!(run_demo(0), Ok(3));
    assert_eq!(run_demo(1), Err(VltError::Finish));
    for cmd in [2, 3] {
        match run_demo(cmd) {
            Err(VltError::Rtl(m)) => assert!(m.contains("finish_demo.sv"), "{m}"),
            other => panic!("cmd {cmd}: {other:?}"),
        }
    }
    // Twice more: the stock runtime would exit(0) on a second $finish.
    assert_eq!(run_demo(1), Err(VltError::Finish));
    assert!(run_demo(3).is_err());
}

#[test]
fn a_failing_assertion_stops_the_model_and_is_named_by_its_label() {
    let mut m = FinishDemo::new().unwrap();
    m.set_cmd(0);
    let mut err = None;
    for cycle in 0..300u32 {
        m.settle().unwrap();
        if let Err(e) = m.posedge() {
            err = Some((cycle, e));
            break;
        }
    }
    let (cycle, e) = err.expect("the assertion fails once ticks reaches 100");
    assert!((100..300).contains(&cycle), "cycle {cycle}");
    let (label, at) =
        trnsim_rtl::verilator_sys::failed_assertion(&e).unwrap_or_else(|| panic!("not an assertion: {e}"));
    assert_eq!(label, "a_ticks_not_100");
    assert!(at.starts_with("finish_demo.sv:"), "{at}");
    assert!(trnsim_rtl::verilator_sys::failed_assertion(&VltError::Rtl("x.sv:3: Verilog $stop".into())).is_none());
}

/// Verilator keeps a "current context" per thread, set to the newest model's: a model used
/// after another was made (or deleted) must still act on its own. Here the $finish of a model
/// made before another must reach it, and deleting models in any order after later ones were
/// deleted must not touch their freed contexts (a multi-chip run with a block on the RTL in
/// each chip hung in that deletion). On a thread of its own, so that a hang fails the test.
#[test]
fn each_model_acts_on_its_own_context_whatever_was_made_or_deleted_since() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for round in 0..20 {
            let mut first = FinishDemo::new().unwrap();
            let later = LinkFifoW64D4::new().unwrap();
            first.set_cmd(1);
            let finished = (0..3).find_map(|_| first.settle().and_then(|()| first.posedge()).err());
            if finished != Some(VltError::Finish) {
                let _ = tx.send(Err(format!("round {round}: the $finish of the model made first: {finished:?}")));
                std::mem::forget((first, later)); // (deleting them could hang too)
                return;
            }
            // Made and deleted after both: the thread's current context is now a freed one.
            drop((LinkFifoW64D4::new().unwrap(), FinishDemo::new().unwrap()));
            if round % 2 == 0 {
                drop(first);
                drop(later);
            } else {
                drop(later);
                drop(first);
            }
        }
        let _ = tx.send(Ok(()));
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(r) => r.unwrap_or_else(|e| panic!("{e}")),
        Err(_) => panic!("deleting models hung (or took over a minute)"),
    }
}

#[test]
fn models_on_several_threads_each_build_their_own() {
    let hs: Vec<_> = (0..3)
        .map(|s| {
            std::thread::spawn(move || {
                let cfg = DiffConfig::link_fifo(20_000);
                diff(|| LinkFifo::new(64, 4), Rtl::<LinkFifoW64D4>::new, || LinkFifoStimulus::new(s), &cfg).is_ok()
            })
        })
        .collect();
    assert!(hs.into_iter().all(|h| h.join().unwrap()));
}

#[test]
fn a_second_vcd_on_one_model_is_refused() {
    let p = std::env::temp_dir().join(format!("trnsim-rtl-vcd2-{}.vcd", std::process::id()));
    let mut m = LinkFifoW64D4::new().unwrap();
    m.open_vcd(&p).unwrap();
    assert_eq!(m.open_vcd(&p), Err(VltError::TraceAlreadyOpen));
    m.close_vcd();
    std::fs::remove_file(&p).unwrap();
}
