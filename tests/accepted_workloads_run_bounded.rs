//! Property: every workload file the loader accepts (hostile mutations of generated ones, from
//! a fixed seed) schedules within the documented caps without a panic, and every one it
//! refuses gets a one-line located error. A second pass runs accepted mutations on a real
//! system (the UltraServer's chips and packet-level fabric, as `trnsim run --workload` does),
//! so hostile sizes reach the models' own arithmetic: each runs to a finite step time or is
//! refused in one line.

use crate::common::{fuzz_bytes, is_located, mutate, FuzzBudget};
use arbitrary::Unstructured;
use trnsim_system::doc::SystemDoc;
use trnsim_workloads::exec::{self, Costs};
use trnsim_workloads::format::{self, Checked, Op, MAX_SPANS};
use trnsim_workloads::llm::{Llm, Mode};

/// Times from the operation's sizes, so hostile sizes reach the schedule's arithmetic.
struct BySize;

impl Costs for BySize {
    fn compute_ns(&mut self, op: &Op) -> Result<f64, String> {
        Ok(match op {
            Op::Gemm { m, k, n, count, .. } => *m as f64 * *k as f64 * *n as f64 * f64::from(*count) / 1e6,
            _ => 1.0,
        })
    }
    fn memory_ns(&mut self, op: &Op) -> Result<f64, String> {
        Ok(match op {
            Op::Load { bytes } | Op::Store { bytes } => *bytes as f64 / 1e3,
            _ => 1.0,
        })
    }
    fn comm_ns(&mut self, op: &Op, groups: &[Vec<usize>]) -> Result<Vec<f64>, String> {
        let b = op.comm().map_or(0, |c| c.bytes) as f64;
        Ok(groups.iter().map(|g| b * g.len() as f64 / 1e3).collect())
    }
    fn send_recv_ns(&mut self, bytes: u64, pairs: &[(usize, usize)]) -> Result<Vec<f64>, String> {
        Ok(vec![bytes as f64 / 1e3; pairs.len()])
    }
}

/// The generated workload files the mutations start from: tensor, expert and pipeline
/// parallelism, small enough to schedule in microseconds.
fn bases() -> Vec<String> {
    let small = Llm {
        hidden: 256,
        ffn: 512,
        heads: 4,
        kv_heads: 4,
        head_dim: 64,
        seq: 64,
        batch: 4,
        layers: 2,
        ..Llm::default()
    };
    [
        Llm { tp: 2, ..small.clone() },
        Llm { arch: "moe".into(), tp: 2, dp: 2, ep: 4, experts: 8, ..small.clone() },
        Llm { tp: 2, dp: 2, pp: 2, mode: Mode::Train, ..small.clone() },
    ]
    .iter()
    .map(|l| format::to_ron(&l.generate("fuzz").unwrap()).unwrap())
    .collect()
}

#[test]
fn fuzz_workloads_are_refused_located_or_scheduled_within_caps() {
    let bases = bases();
    let budget = FuzzBudget::from_env(150);
    for seed in budget.seeds() {
        let bytes = fuzz_bytes(seed, 2048);
        let mut u = Unstructured::new(&bytes);
        let text = mutate(&bases[seed as usize % bases.len()], &mut u);
        let r = std::panic::catch_unwind(|| match format::parse("w.ron", &text) {
            Ok(c) => {
                let spans = u64::from(c.w.ranks) * c.w.nodes.len() as u64 * u64::from(c.w.repeat);
                assert!(spans <= MAX_SPANS, "{spans} node instances accepted");
                let r = exec::run(&c, c.w.ranks as usize, &mut BySize).map_err(|e| e.to_string())?;
                assert!(r.step_ns.is_finite() && r.step_ns >= 0.0, "step {}", r.step_ns);
                Ok(())
            }
            Err(e) => Err(e.to_string()),
        });
        match r {
            Err(_) => panic!("workload loader or schedule panicked on\n{text}"),
            Ok(Ok(())) => {}
            Ok(Err(e)) => assert!(is_located(&e) && !e.contains('\n'), "unlocated: {e}\n{text}"),
        }
    }
}

/// The largest message any node of `c` sends, in bytes.
fn largest_message(c: &Checked) -> u64 {
    c.w.nodes
        .iter()
        .map(|n| match &n.op {
            Op::SendRecv { bytes, .. } => *bytes,
            op => op.comm_bytes(),
        })
        .max()
        .unwrap_or(0)
}

/// Messages up to this size run on the packet-level fabric in the real pass (larger ones take
/// time in proportion to their size, as they should, and stay with the synthetic pass).
const REAL_PASS_MAX_MESSAGE: u64 = 1 << 22;

#[test]
fn fuzz_workloads_on_a_real_system_run_or_are_refused_in_one_line() {
    let bases = bases();
    let sys = SystemDoc::open("trn3-gen2-ultraserver").unwrap().resolve().unwrap();
    // The roofline: what is checked is the schedule's bounds, not the op programs.
    let opts = trnsim_harness::workload::Options {
        efficiency: Some(0.6),
        compute: trnsim_harness::workload::Compute::Roofline,
        ..Default::default()
    };
    // (Most mutations are refused by the loader or send more than the pass takes: 400 cases
    // run about 50 workloads, in about a second.)
    let budget = FuzzBudget::from_env(400);
    let (mut ran, mut refused) = (0, 0);
    for seed in budget.seeds() {
        let bytes = fuzz_bytes(seed ^ 0x5eed, 2048);
        let mut u = Unstructured::new(&bytes);
        let text = mutate(&bases[seed as usize % bases.len()], &mut u);
        let Ok(c) = format::parse("w.ron", &text) else { continue };
        if largest_message(&c) > REAL_PASS_MAX_MESSAGE {
            continue;
        }
        let r = std::panic::catch_unwind(|| trnsim_harness::workload::run(&c, &sys, &opts).map(|r| r.report.step_ns));
        match r {
            Err(_) => panic!("a workload run panicked on\n{text}"),
            Ok(Ok(step)) => {
                assert!(step.is_finite() && step >= 0.0, "step {step} for\n{text}");
                ran += 1;
            }
            Ok(Err(e)) => {
                assert!(!e.contains('\n') && !e.is_empty(), "not one line: {e}\n{text}");
                refused += 1;
            }
        }
    }
    assert!(ran > 0, "no mutation ran on the system ({refused} refused)");
}
