//! The benchmarks written as workload files (`trnsim workload bench NAME`) carry the
//! benchmarks' shapes, routing and collectives and read back to the same graph (that
//! e2e-llm-layer's workload takes the benchmark's own time is checked beside the benchmark's
//! figures, in e2e_llm_layer_matches_its_analytic_estimate.rs).

use trnsim_benchmarks::bench_workloads;
use trnsim_workloads::format::{self, Op};

fn round_trip(name: &str) -> format::Checked {
    let w = bench_workloads::workload(name, 8).unwrap();
    let c = format::parse(&format!("{name}.ron"), &format::to_ron(&w).unwrap()).unwrap();
    assert_eq!(c.w, w, "{name}: the file reads back to the same workload");
    c
}

#[test]
fn tp_matmul_and_moe_workloads_carry_the_benchmarks_shapes() {
    let tp = round_trip("tp-matmul-4");
    let s = trnsim_benchmarks::tp::SHAPE;
    let gemms: Vec<&Op> = tp.w.nodes.iter().map(|n| &n.op).filter(|o| matches!(o, Op::Gemm { .. })).collect();
    assert_eq!(gemms.len() as u32, s.phases);
    for (p, g) in gemms.iter().enumerate() {
        let Op::Gemm { m, k, n, a_resident, .. } = g else { unreachable!() };
        assert_eq!((*m, *k, *n), (u64::from(s.tokens), u64::from(s.d_in / 4), u64::from(s.d_out / s.phases)));
        assert_eq!(*a_resident, p > 0, "A is loaded by the first phase only");
    }
    let moe = round_trip("moe-alltoall-144");
    let shape = trnsim_benchmarks::moe::SHAPE;
    let routing = shape.route(144);
    let Op::AllToAllV(d) = &moe.w.nodes[1].op else { panic!("dispatch is an all-to-allv") };
    let tok = u64::from(shape.d_model) * 2;
    let total: u64 = d.sizes.iter().flatten().sum();
    let routed: u64 = routing.sent.iter().flatten().map(|&t| u64::from(t) * tok).sum();
    assert_eq!(total, routed, "the dispatch moves every routed token");
    assert!(bench_workloads::workload("tp-matmul-3", 8).unwrap_err().contains("multiple of 128"));
    assert!(bench_workloads::workload("ring-1k", 8).unwrap_err().contains("known:"));
}
