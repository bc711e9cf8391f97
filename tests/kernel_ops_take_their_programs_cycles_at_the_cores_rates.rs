//! The kernel library (`--compute cycle`): an op timed through the workload path takes exactly
//! the simulated time of the same program text run with `trnsim core`; MXFP8 GEMMs run at the
//! core file's MXFP8 rate against BF16; a run gives byte-identical reports with the op cache
//! cold and warm; every report says which model timed each node kind.

use crate::common::{cycle_ns, one_node, scratch, system, trnsim};
use trnsim_harness::workload::{self, Compute, Options};
use trnsim_kernels::format::Format;
use trnsim_kernels::plan::{plan, GemmOp};
use trnsim_kernels::{attention, elementwise, gemm, run};
use trnsim_workloads::format::parse;

/// `trnsim core FILE` on one core: the simulated time it prints, in us (3 decimals).
fn core_us(name: &str, text: &str) -> String {
    let dir = scratch(&format!("kernel-ops-{name}"));
    let f = dir.join(format!("{name}.asm"));
    std::fs::write(&f, text).unwrap();
    let out = trnsim().arg("core").arg(&f).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let line = stdout.lines().next().unwrap();
    line.rsplit("simulated ").next().unwrap().trim_end_matches(" us").to_string()
}

#[test]
fn an_op_through_the_workload_takes_its_programs_time_under_trnsim_core() {
    // One core on one stack: the chip `trnsim core` builds around a program.
    let sys = system(&["chip.cores=1", "chip.dies=1", "chip.hbm.stacks=1", "chip.hbm.cores_per_stack=1"]);
    let chip = sys.chip().unwrap();
    let piece = trnsim_workloads::costs::dma_bytes_per_partition(chip) as u32;
    // The last: BF16 activations quantized to MXFP8 on the vector engine against MXFP4 weights
    // the tensor engine takes at the MX rate.
    let cases = [
        ("bf16", Format::Bf16, "dtype: \"bf16\"", false),
        ("mxfp8", Format::Mxfp8, "dtype: \"mxfp8\"", false),
        ("bf16-mxfp4", Format::Mxfp8, "dtype: \"bf16\", weight_dtype: Some(\"mxfp4\")", true),
    ];
    for (name, format, dtype, mx4) in cases {
        let g = GemmOp {
            m: 8,
            k: 2048,
            n: 1024,
            count: 1,
            a_resident: false,
            b_resident: false,
            format,
            w_mxfp4: false,
            w_native_mxfp4: mx4,
            a_quantize: mx4,
        };
        let mut p = plan(1, &g).unwrap();
        p.variant.dma_piece = piece;
        assert_eq!(p.reps, 1, "one program");
        let text = gemm::program_with(&p.shape, 0, &p.variant);
        if mx4 {
            assert!(text.contains("quantize_mx") && text.contains("mxfp8"), "X quantized on the chip");
        }
        let w = one_node(&format!("Gemm(m: 8, k: 2048, n: 1024, {dtype})"));
        let ns = cycle_ns(&w, &sys);
        assert_eq!(format!("{:.3}", ns / 1e3), core_us(name, &text), "{name} GEMM: workload node and trnsim core");
    }
    let a = attention::plan(1, 2, 4, 1024, 64, Format::Bf16).unwrap();
    assert_eq!((a.units, a.reps_num, a.reps_den), (1, 1024, 1024), "one program");
    let w = one_node("Attention(batch: 1, heads: 8, seq: 1, kv_seq: Some(1024), kv_heads: Some(2), head_dim: 64)");
    let ns = cycle_ns(&w, &sys);
    assert_eq!(format!("{:.3}", ns / 1e3), core_us("attention", &attention::program(&a, 0)), "flash attention");
    let p = elementwise::plan(1, 1 << 20, 8, Format::Bf16).unwrap();
    assert_eq!(p.reps, 1);
    let ns = cycle_ns(&one_node("Elementwise(elements: 1048576, ops: 8)"), &sys);
    assert_eq!(format!("{:.3}", ns / 1e3), core_us("elementwise", &elementwise::program(&p, 0)));
}

#[test]
fn mxfp8_gemms_run_at_the_core_files_mxfp8_rate() {
    let sys = system::<&str>(&[]);
    let chip = sys.chip().unwrap();
    let want = trnsim_workloads::costs::tensor_rate(&chip.core, "mxfp8").unwrap();
    assert_eq!(want, 4.0, "nc-v4: MXFP8 at 4 MACs per PE, BF16 at 1");
    // Compute-bound: both operands resident, 512 tokens.
    let op = |d: &str| format!("Gemm(m: 512, k: 4096, n: 16384, dtype: \"{d}\", a_resident: true, b_resident: true)");
    let bf16 = cycle_ns(&one_node(&op("bf16")), &sys);
    let mx = cycle_ns(&one_node(&op("mxfp8")), &sys);
    let ratio = bf16 / mx;
    // The tile's fixed costs (semaphore drains per group, the activation and the last
    // store) weigh 4x more against MXFP8's shorter stream.
    assert!(
        ratio > 0.85 * want && ratio <= want,
        "bf16 {bf16:.1} ns / mxfp8 {mx:.1} ns = {ratio:.3}, core file {want}"
    );
}

#[test]
fn reports_are_byte_identical_with_the_op_cache_cold_and_warm_and_name_their_models() {
    let sys = system::<&str>(&[]);
    let w = parse(
        "w.ron",
        "Workload(name: \"w\", ranks: 1, nodes: [
            Node(id: 0, name: \"up\", op: Gemm(m: 8, k: 1024, n: 4096, dtype: \"mxfp8\", weight_dtype: Some(\"mxfp4\"))),
            Node(id: 1, name: \"act\", op: Elementwise(elements: 32768, ops: 4), data_deps: [0]),
            Node(id: 2, name: \"att\", op: Attention(batch: 4, heads: 8, seq: 1, kv_seq: Some(1024), kv_heads: Some(1), head_dim: 64), data_deps: [1]),
            Node(id: 3, name: \"k\", op: Kernel(flops: 1000000, bytes: 1000), data_deps: [2]),
        ])",
    )
    .unwrap();
    let opts = Options { efficiency: Some(0.5), compute: Compute::Both, ..Default::default() };
    run::clear_cache();
    let cold = workload::run(&w, &sys, &opts).unwrap();
    let warm = workload::run(&w, &sys, &opts).unwrap();
    let text = |r: &workload::WorkloadRun| workload::to_text(r, "trn3-chip");
    assert_eq!(text(&cold), text(&warm));
    assert_eq!(format!("{:?}", workload::headline(&cold)), format!("{:?}", workload::headline(&warm)));
    let t = text(&cold);
    assert!(
        t.contains("timed by                     attention cycle, elementwise cycle, gemm cycle, kernel roofline"),
        "{t}"
    );
    for kind in ["attention", "elementwise", "gemm", "kernel"] {
        assert!(cold.both.iter().any(|d| d.kind == kind && d.cycle_ns > 0.0 && d.roofline_ns > 0.0), "{kind}: {t}");
    }
}

#[test]
fn a_node_no_kernel_runs_is_refused_at_its_line_before_anything_runs() {
    let dir = scratch("kernel-ops-refused");
    let f = dir.join("f8.ron");
    std::fs::write(
        &f,
        "Workload(name: \"f\", ranks: 1, nodes: [\n  Node(id: 0, name: \"n\", op: Gemm(m: 8, k: 128, n: 128, dtype: \"fp8\")),\n])\n",
    )
    .unwrap();
    // nc-v3's FP8 is double-row (2 MACs per PE): the roofline runs it, no ISA operand does.
    let out = trnsim()
        .args(["run", "--workload"])
        .arg(&f)
        .args(["--system", "trn2-chip", "--compute", "cycle"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("f8.ron:2:") && err.contains("nodes[0].op.dtype") && err.contains("macs_per_pe"), "{err}");
    assert!(out.stdout.is_empty(), "nothing ran");
}
