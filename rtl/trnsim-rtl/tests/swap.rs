//! Swap-in: the switch bench with its crossbar arbiter on the Verilated RTL (feature `rtl`) or
//! the port-level Rust model gives byte-identical statistics JSON to the all-model run, and
//! the arbiter inputs recorded in that run replay through `diff` without a divergence.

use std::path::PathBuf;
use trnsim_fabric::switch::traffic::{study_config, Bench, BenchParams, Pattern};
use trnsim_rtl::registry::{self, DiffRequest, StimulusKind};
use trnsim_rtl::swap::{Impl, RtlArbiters};
use trnsim_rtl::trace::PortTrace;

const CYCLES: u64 = 4_000;

fn params(load: f64, seed: u64) -> BenchParams {
    BenchParams { load, seed, pattern: Pattern::Uniform, ..BenchParams::default() }
}

/// The statistics JSON of an 8-port switch bench run, with `arbiters` supplying the switch's
/// arbiter (None: the config's model).
fn stats(load: f64, seed: u64, arbiters: Option<&mut RtlArbiters>) -> String {
    let cfg = study_config(8);
    let p = params(load, seed);
    let mut b = match arbiters {
        Some(a) => Bench::with_arbiters(&cfg, &p, a),
        None => Bench::new(&cfg, &p),
    }
    .unwrap();
    b.run_cycles(CYCLES).unwrap();
    assert!(b.total().packets > 1000, "the run carried traffic");
    serde_json::to_string_pretty(&b.sim.report()).unwrap()
}

fn trace_path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("trnsim-rtl-swap-{tag}-{}.trace", std::process::id()))
}

/// Swaps `imp` in, checks identical statistics at three loads, and replays the recorded
/// arbiter inputs of the heaviest run into model vs `dut`.
fn swap_gives_identical_statistics(imp: Impl, tag: &str) {
    for (load, seed) in [(0.3, 11), (0.7, 12), (1.0, 13)] {
        let path = trace_path(&format!("{tag}-{seed}"));
        let mut arb = RtlArbiters::new(&["sw"], imp).record_to(path.clone());
        let swapped = stats(load, seed, Some(&mut arb));
        arb.check().unwrap();
        let model = stats(load, seed, None);
        assert!(model == swapped, "load {load}: statistics differ with the {imp:?} arbiter");
        let st = &arb.status()[0];
        assert_eq!(st.block, "islip_n8_i1");
        let t = PortTrace::read(&path).unwrap();
        assert_eq!(t.rows.len() as u64, st.cycles, "one trace line per arbiter clock");
        assert!(t.rows.len() > 500, "load {load}: only {} arbitrations", t.rows.len());
        let e = registry::find("islip_n8_i1").unwrap();
        let req = DiffRequest { stimulus: StimulusKind::Trace(t), ..DiffRequest::new(u64::MAX, 0) };
        let r = match imp {
            Impl::Rtl => e.diff(&req),
            Impl::BlockModel => e.diff_with(&req, || Ok((e.make_model)())),
        };
        assert_eq!(r.unwrap_or_else(|err| panic!("{err}")).cycles, st.cycles);
        let _ = std::fs::remove_file(path);
    }
}

#[test]
fn switch_with_the_port_level_arbiter_model_swapped_in_gives_identical_statistics() {
    swap_gives_identical_statistics(Impl::BlockModel, "model");
}

#[cfg(feature = "rtl")]
#[test]
fn switch_with_the_rtl_arbiter_swapped_in_gives_identical_statistics_and_a_replayable_trace() {
    swap_gives_identical_statistics(Impl::Rtl, "rtl");
}

#[cfg(not(feature = "rtl"))]
#[test]
fn without_rtl_swapping_in_the_rtl_is_a_config_error_saying_how_to_build() {
    let mut arb = RtlArbiters::new(&["sw"], Impl::Rtl);
    let e = Bench::with_arbiters(&study_config(8), &params(0.5, 1), &mut arb).err().unwrap();
    assert!(e.to_string().contains("--features rtl"), "{e}");
}

/// A block bound by name (`sw=BLOCK`) is the one that decides: the config's own block named
/// explicitly gives the all-model statistics, a 3-iteration arbiter in a 1-iteration switch
/// other ones (more matches per cycle).
#[test]
fn a_bound_arbiter_block_decides_the_switch() {
    let model = stats(0.9, 21, None);
    let mut same = RtlArbiters::new(&["sw=islip_n8_i1"], Impl::BlockModel);
    assert!(stats(0.9, 21, Some(&mut same)) == model);
    same.check().unwrap();
    let mut other = RtlArbiters::new(&["sw=islip_n8_i3"], Impl::BlockModel);
    assert!(stats(0.9, 21, Some(&mut other)) != model, "the bound block did not decide");
    other.check().unwrap();
    assert_eq!(other.status()[0].block, "islip_n8_i3");
}
