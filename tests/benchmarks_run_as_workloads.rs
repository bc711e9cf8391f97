//! The benchmarks written as workload files (`trnsim workload bench NAME`) run on the same
//! models: e2e-llm-layer's workload, its GEMM run as NeuronCore programs (`--compute cycle`),
//! takes the benchmark's own simulated time; tp-matmul-N and moe-alltoall-144 are written
//! with the benchmarks' shapes, routing and collectives, and read back to the same graph.

use trnsim_harness::bench_workloads;
use trnsim_harness::workload::{self, Compute, Options};
use trnsim_system::doc::SystemDoc;
use trnsim_workloads::format::{self, Op};

fn round_trip(name: &str) -> format::Checked {
    let w = bench_workloads::workload(name, 8).unwrap();
    let c = format::parse(&format!("{name}.ron"), &format::to_ron(&w).unwrap()).unwrap();
    assert_eq!(c.w, w, "{name}: the file reads back to the same workload");
    c
}

#[test]
fn e2e_llm_layer_as_a_workload_takes_the_benchmarks_time() {
    let c = round_trip("e2e-llm-layer");
    let sys = SystemDoc::open(bench_workloads::system_of("e2e-llm-layer")).unwrap().resolve().unwrap();
    let chip = sys.chip().unwrap();
    let r = workload::run(&c, &sys, &Options { compute: Compute::Cycle, ..Default::default() }).unwrap();
    let (sim, _) =
        trnsim_harness::e2e::run_layer(chip, &trnsim_harness::e2e::SHAPE, trnsim_kernel::TickOrder::Structural, None)
            .unwrap();
    let bench = sim.now().as_ns_f64();
    assert_eq!(r.programs, 1);
    assert!((r.report.step_ns - bench).abs() < 1e-6 * bench, "workload {} ns, benchmark {bench} ns", r.report.step_ns);
}

#[test]
fn tp_matmul_and_moe_workloads_carry_the_benchmarks_shapes() {
    let tp = round_trip("tp-matmul-4");
    let s = trnsim_harness::tp::SHAPE;
    let gemms: Vec<&Op> = tp.w.nodes.iter().map(|n| &n.op).filter(|o| matches!(o, Op::Gemm { .. })).collect();
    assert_eq!(gemms.len() as u32, s.phases);
    for (p, g) in gemms.iter().enumerate() {
        let Op::Gemm { m, k, n, a_resident, .. } = g else { unreachable!() };
        assert_eq!((*m, *k, *n), (u64::from(s.tokens), u64::from(s.d_in / 4), u64::from(s.d_out / s.phases)));
        assert_eq!(*a_resident, p > 0, "A is loaded by the first phase only");
    }
    let moe = round_trip("moe-alltoall-144");
    let shape = trnsim_harness::moe::SHAPE;
    let routing = shape.route(144);
    let Op::AllToAllV(d) = &moe.w.nodes[1].op else { panic!("dispatch is an all-to-allv") };
    let tok = u64::from(shape.d_model) * 2;
    let total: u64 = d.sizes.iter().flatten().sum();
    let routed: u64 = routing.sent.iter().flatten().map(|&t| u64::from(t) * tok).sum();
    assert_eq!(total, routed, "the dispatch moves every routed token");
    assert!(bench_workloads::workload("tp-matmul-3", 8).unwrap_err().contains("multiple of 128"));
    assert!(bench_workloads::workload("ring-1k", 8).unwrap_err().contains("known:"));
}
