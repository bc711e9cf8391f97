//! The chip and UltraServer benchmarks as workload files (`trnsim workload bench NAME`): the
//! same shapes, routing and collectives as `e2e-llm-layer`, `tp-matmul-N` and
//! `moe-alltoall-144`, written as graphs that `trnsim run --workload` runs on any system.
//!
//! The benchmarks themselves run every chip as the whole cycle-level model with its
//! collective engine on the packet-level fabric, in one simulation; the workload runs each
//! node on its own model (`--compute cycle`: GEMMs as the same NeuronCore programs on the
//! cycle-level chip; memory nodes on the chip's DMA; collectives on the packet-level fabric)
//! and schedules them. docs/whatif.md compares the two.

use crate::e2e;
use crate::moe::{self, MoeShape};
use crate::tp::{self, TpShape};
use std::collections::BTreeMap;
use trnsim_workloads::format::{Comm, CommV, Node, Op, Workload};

/// Benchmarks that have a workload form (`tp-matmul-N` for any N that divides the shape).
pub const NAMES: &str = "e2e-llm-layer, tp-matmul-N (N = 2..), moe-alltoall-144";

/// The system each benchmark runs on (its default `--system`).
pub fn system_of(name: &str) -> &'static str {
    if name.starts_with("tp-matmul-") {
        "trn3-gen1-ultraserver"
    } else if name.starts_with("moe-") {
        "trn3-gen2-ultraserver"
    } else {
        "trn3-chip"
    }
}

fn node(id: u32, name: &str, op: Op, deps: &[u32]) -> Node {
    Node { id, name: name.into(), op, data_deps: deps.to_vec(), ctrl_deps: Vec::new(), ranks: None }
}

fn gemm(m: u32, k: u32, n: u64, count: u32, a_resident: bool, b_resident: bool) -> Op {
    Op::Gemm {
        m: u64::from(m),
        k: u64::from(k),
        n,
        dtype: "bf16".into(),
        count,
        a_resident,
        b_resident,
        weight_dtype: None,
    }
}

/// The workload of benchmark `name` on chips of `cores` NeuronCores.
pub fn workload(name: &str, cores: u32) -> Result<Workload, String> {
    let source = format!("trnsim workload bench {name}");
    if name == "e2e-llm-layer" {
        let s = e2e::SHAPE;
        let n = u64::from(s.d_ff_per_core) * u64::from(cores);
        return Ok(Workload {
            name: name.into(),
            source,
            ranks: 1,
            groups: BTreeMap::new(),
            repeat: 1,
            hbm_bytes_per_rank: None,
            tokens_per_step: None,
            serving: None,
            nodes: vec![node(0, "ffn.up", gemm(s.tokens, s.d_model, n, 1, false, false), &[])],
        });
    }
    if let Some(n) = name.strip_prefix("tp-matmul-") {
        let chips: u32 = n.parse().map_err(|_| format!("{name}: N must be a number of chips"))?;
        return tp_matmul(name, source, &tp::SHAPE, chips, cores).map_err(|e| format!("{name}: {e}"));
    }
    if name == "moe-alltoall-144" {
        return moe_step(name, source, &moe::SHAPE, 144, cores).map_err(|e| format!("{name}: {e}"));
    }
    Err(format!("no workload form of benchmark {name:?} (known: {NAMES})"))
}

/// `tp-matmul-N`: every chip multiplies its slice of X by its rows of W, phase by phase (A
/// stays in SBUF after the first), and each phase's partial sums are all-reduced while the
/// next phase computes.
fn tp_matmul(name: &str, source: String, s: &TpShape, chips: u32, cores: u32) -> Result<Workload, String> {
    s.chip_shape(chips, cores)?;
    let cols = u64::from(s.d_out / s.phases);
    let mut nodes = Vec::new();
    for p in 0..s.phases {
        let g = 2 * p;
        nodes.push(node(g, &format!("matmul.{p}"), gemm(s.tokens, s.d_in / chips, cols, 1, p > 0, false), &[]));
        let comm = Comm { bytes: s.phase_bytes(), group: "world".into(), algo: None, duration_ns: 0 };
        nodes.push(node(g + 1, &format!("all-reduce.{p}"), Op::AllReduce(comm), &[g]));
    }
    Ok(Workload {
        name: name.into(),
        source,
        ranks: chips,
        groups: BTreeMap::new(),
        repeat: 1,
        hbm_bytes_per_rank: None,
        tokens_per_step: None,
        serving: None,
        nodes,
    })
}

/// `moe-alltoall-144`: the experts' weights prefetched while the tokens are dispatched
/// (all-to-allv of the seeded routing), the experts (every slot of their capacity), and the
/// combine back.
fn moe_step(name: &str, source: String, s: &MoeShape, chips: usize, cores: u32) -> Result<Workload, String> {
    let cs = s.core_shape(cores)?;
    let r = s.route(chips);
    let tok = u64::from(s.d_model) * 2;
    let sizes = |f: &dyn Fn(usize, usize) -> u32| -> Vec<Vec<u64>> {
        (0..chips).map(|c| (0..chips).map(|d| u64::from(f(c, d)) * tok).collect()).collect()
    };
    let dispatch = CommV { sizes: sizes(&|c, d| r.sent[c][d]), group: "world".into() };
    let combine = CommV { sizes: sizes(&|c, d| r.sent[d][c]), group: "world".into() };
    let weights = u64::from(cs.d_model) * u64::from(cs.d_ff_per_core) * 2 * u64::from(cores);
    let experts = gemm(cs.tokens, s.d_model, u64::from(s.d_model), s.experts_per_chip, false, true);
    let ranks = u32::try_from(chips).map_err(|_| "too many chips".to_string())?;
    Ok(Workload {
        name: name.into(),
        source,
        ranks,
        groups: BTreeMap::new(),
        repeat: 1,
        hbm_bytes_per_rank: None,
        tokens_per_step: None,
        serving: None,
        nodes: vec![
            node(0, "experts.weights", Op::Load { bytes: weights }, &[]),
            node(1, "dispatch", Op::AllToAllV(dispatch), &[]),
            node(2, "experts", experts, &[0, 1]),
            node(3, "combine", Op::AllToAllV(combine), &[2]),
        ],
    })
}
