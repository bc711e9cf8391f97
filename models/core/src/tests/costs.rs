//! A timing test per implemented row of spec §5: sixteen identical instructions back to back on
//! the right engine issue exactly the formula's cycles apart (measured from the engine's issue
//! times, through the real SBUF/PSUM unit).

use super::matmul::ap;
use crate::core::{build, CoreOptions};
use crate::engine::EngineUnit;
use crate::isa::{Accumulate, ActFn, AluOp, Ap, Dtype, Engine, Instr, Mem, Program, Stream};
use trnsim_kernel::{Dur, SimBuilder};

/// The cost rows are the full-rate intervals: measured on NC-v4 with its warm-up throttle off
/// (`tests/matmul.rs` measures the throttle).
fn measured_interval(engine: Engine, setup: &[Instr], instr: Instr) -> u64 {
    measured_on(&super::matmul::unthrottled(), engine, setup, instr).0
}

/// The issue interval of sixteen `instr`s after `setup` on a core of `opts`, and the cycle the
/// last completed.
fn measured_on(opts: &CoreOptions, engine: Engine, setup: &[Instr], instr: Instr) -> (u64, u64) {
    let mut s = Stream::default();
    s.instrs.extend_from_slice(setup);
    s.instrs.extend(std::iter::repeat_n(instr, 16));
    s.lines = vec![1; s.instrs.len()];
    let program = Program { source: "costs".into(), streams: vec![(engine, s)] };
    let mut b = SimBuilder::new();
    let ids = build(&mut b, "nc0", &program, opts, None).unwrap();
    let mut sim = b.build().unwrap();
    sim.run_until_idle(Dur::from_us(1000)).unwrap();
    let e = sim.component::<EngineUnit>(ids.engines[0].1).unwrap();
    assert!(e.finished());
    // Fifteen intervals between the first and the last of the sixteen.
    ((e.stats.last_issue - e.stats.issues[setup.len()]) / 15, e.stats.last)
}

#[test]
fn every_cost_row_is_the_measured_issue_interval() {
    let f32s = |off, n| ap(Mem::Sbuf, off, n, Dtype::Fp32);
    let bf = |off, n| ap(Mem::Sbuf, off, n, Dtype::Bf16);
    let psum = |n| ap(Mem::Psum, 0, n, Dtype::Fp32);
    let ls = Instr::LoadStationary { src: bf(0, 128), scales: None };
    let mm = |n: u16, dt| Instr::MultiplyMoving {
        src: ap(Mem::Sbuf, 0x1000, n, dt),
        scales: None,
        dst: psum(n.min(512)),
        acc: Accumulate::Overwrite,
    };
    let cases: Vec<(&str, Engine, Vec<Instr>, Instr, u64)> = vec![
        ("matmul N=512 bf16", Engine::Tensor, vec![ls], mm(512, Dtype::Bf16), 512),
        ("matmul N=32 bf16 (MM_INIT 64)", Engine::Tensor, vec![ls], mm(32, Dtype::Bf16), 64),
        (
            "matmul N=256 fp32 (x4)",
            Engine::Tensor,
            vec![Instr::LoadStationary { src: f32s(0, 128), scales: None }],
            mm(256, Dtype::Fp32),
            1024,
        ),
        ("transpose TE 128x32", Engine::Tensor, vec![], Instr::Transpose { src: bf(0, 32), dst: psum(128) }, 128),
        (
            "activation N=512",
            Engine::Scalar,
            vec![],
            Instr::Activation {
                func: ActFn::Exp,
                src: f32s(0, 512),
                dst: bf(0x8000, 512),
                scale: 1.0,
                bias: 0.0,
                reduce: None,
            },
            512,
        ),
        (
            "activation N=16 (MIN_II)",
            Engine::Scalar,
            vec![],
            Instr::Activation {
                func: ActFn::Exp,
                src: f32s(0, 16),
                dst: bf(0x8000, 16),
                scale: 1.0,
                bias: 0.0,
                reduce: None,
            },
            64,
        ),
        (
            "activation_reduce N=512",
            Engine::Scalar,
            vec![],
            Instr::Activation {
                func: ActFn::Exp,
                src: f32s(0, 512),
                dst: bf(0x8000, 512),
                scale: 1.0,
                bias: 0.0,
                reduce: Some((AluOp::Add, f32s(0xC000, 1))),
            },
            576,
        ),
        (
            "tensor_scalar N=300",
            Engine::Vector,
            vec![],
            Instr::TensorScalar { op: AluOp::Mul, src: f32s(0, 300), imm: 2.0, dst: f32s(0x8000, 300) },
            300,
        ),
        (
            "tensor_copy N=300",
            Engine::Vector,
            vec![],
            Instr::TensorCopy { src: f32s(0, 300), dst: f32s(0x8000, 300) },
            300,
        ),
        (
            "tensor_tensor N=300 fp32",
            Engine::Vector,
            vec![],
            Instr::TensorTensor { op: AluOp::Add, a: f32s(0, 300), b: f32s(0x2000, 300), dst: f32s(0x8000, 300) },
            600,
        ),
        (
            "tensor_tensor N=300 psum input",
            Engine::Vector,
            vec![],
            Instr::TensorTensor { op: AluOp::Add, a: psum(300), b: f32s(0x2000, 300), dst: f32s(0x8000, 300) },
            300,
        ),
        (
            "tensor_tensor N=300 bf16 mul",
            Engine::Vector,
            vec![],
            Instr::TensorTensor { op: AluOp::Mul, a: bf(0, 300), b: bf(0x2000, 300), dst: bf(0x8000, 300) },
            300,
        ),
        (
            "tensor_reduce N=300 fp32",
            Engine::Vector,
            vec![],
            Instr::TensorReduce { op: AluOp::Add, src: f32s(0, 300), dst: f32s(0x8000, 1) },
            300,
        ),
        (
            "tensor_reduce N=300 bf16 max",
            Engine::Vector,
            vec![],
            Instr::TensorReduce { op: AluOp::Max, src: bf(0, 300), dst: bf(0x8000, 1) },
            150,
        ),
        (
            "quantize_mx N=512 bf16 (4 elements a cycle)",
            Engine::Vector,
            vec![],
            Instr::QuantizeMx {
                src: bf(0, 512),
                dst: ap(Mem::Sbuf, 0x8000, 512, Dtype::MxFp8E4m3),
                scales: Ap { partitions: 16, ..ap(Mem::Sbuf, 0xC000, 128, Dtype::Fp8E4m3) },
            },
            128,
        ),
        (
            "quantize_mx N=64 bf16 (MIN_II 64)",
            Engine::Vector,
            vec![],
            Instr::QuantizeMx {
                src: bf(0, 64),
                dst: ap(Mem::Sbuf, 0x8000, 64, Dtype::MxFp8E4m3),
                scales: Ap { partitions: 16, ..ap(Mem::Sbuf, 0xC000, 16, Dtype::Fp8E4m3) },
            },
            64,
        ),
        ("memset N=300", Engine::Vector, vec![], Instr::Memset { dst: f32s(0x8000, 300), value: 1.0 }, 300),
        ("memset N=300 zero bf16", Engine::Vector, vec![], Instr::Memset { dst: bf(0x8000, 300), value: 0.0 }, 150),
        (
            "iota N=100 (GpSimd 150 + N)",
            Engine::GpSimd,
            vec![],
            Instr::Iota { dst: f32s(0x8000, 100), base: 0, step: 1, partition_step: 0 },
            250,
        ),
        (
            "tensor_copy on GpSimd N=100",
            Engine::GpSimd,
            vec![],
            Instr::TensorCopy { src: f32s(0, 100), dst: f32s(0x8000, 100) },
            250,
        ),
    ];
    for (name, engine, setup, instr, want) in cases {
        let got = measured_interval(engine, &setup, instr);
        assert_eq!(got, want, "{name}: issue interval {got} cycles, formula {want}");
    }
}

/// A core of nc-v4 with `change` made to its costs.
fn changed(change: impl Fn(&mut crate::spec::EngineCosts)) -> CoreOptions {
    let mut spec = (*crate::spec::nc_v4()).clone();
    spec.costs.tensor.throttle.enabled = false;
    change(&mut spec.costs);
    spec.validate().unwrap();
    CoreOptions { spec: std::sync::Arc::new(spec), ..CoreOptions::default() }
}

#[test]
fn the_cost_figures_are_the_core_files_not_the_codes() {
    let f32s = |off, n| ap(Mem::Sbuf, off, n, Dtype::Fp32);
    let copy = Instr::TensorCopy { src: f32s(0, 300), dst: f32s(0x8000, 300) };
    let base = CoreOptions::default();
    // A vector engine twice as wide: tensor_copy takes N/2 (but not less than its 64 floor).
    let wide = changed(|c| c.vector.tensor_copy.elements = 2);
    assert_eq!(measured_on(&base, Engine::Vector, &[], copy).0, 300);
    assert_eq!(measured_on(&wide, Engine::Vector, &[], copy).0, 150);
    // The scalar engine's tensor_copy is its own row: the vector's change leaves it alone.
    assert_eq!(measured_on(&wide, Engine::Scalar, &[], copy).0, 300);
    let act = Instr::Activation {
        func: ActFn::Exp,
        src: f32s(0, 512),
        dst: ap(Mem::Sbuf, 0x8000, 512, Dtype::Bf16),
        scale: 1.0,
        bias: 0.0,
        reduce: Some((AluOp::Add, f32s(0xC000, 1))),
    };
    let overhead = changed(|c| c.scalar.activation_reduce.overhead = 100);
    assert_eq!(measured_on(&overhead, Engine::Scalar, &[], act).0, 612);
    let iota = Instr::Iota { dst: f32s(0x8000, 100), base: 0, step: 1, partition_step: 0 };
    let gp = changed(|c| c.gpsimd.data = crate::spec::Cost { min_interval: 0, elements: 4, cycles: 1, overhead: 10 });
    assert_eq!(measured_on(&gp, Engine::GpSimd, &[], iota).0, 35);
    // LoadStationary runs in the background (a load waits for the previous one to be in use),
    // so its interval is read from the cost model the engine charges.
    let bf = |off, n| ap(Mem::Sbuf, off, n, Dtype::Bf16);
    let ls = Instr::LoadStationary { src: bf(0, 128), scales: None };
    let ls_slow = changed(|c| c.tensor.load_stationary_columns_per_cycle = 1);
    let ls_cycles = |o: &CoreOptions| crate::cost::cycles(Engine::Tensor, &ls, 0, &crate::cost::CostModel::of(&o.spec));
    assert_eq!((ls_cycles(&base), ls_cycles(&ls_slow)), (32, 128));
    let tr = Instr::Transpose { src: bf(0, 32), dst: ap(Mem::Psum, 0, 128, Dtype::Fp32) };
    let cap = changed(|c| c.tensor.transpose_free_cap = 16);
    assert_eq!(measured_on(&cap, Engine::Tensor, &[], tr).0, 128, "max(P = 128, min(16, 32))");
}

#[test]
fn latency_delays_results_and_not_the_interval_and_control_costs_are_the_files() {
    let f32s = |off, n| ap(Mem::Sbuf, off, n, Dtype::Fp32);
    let copy = Instr::TensorCopy { src: f32s(0, 300), dst: f32s(0x8000, 300) };
    let (ii, end) = measured_on(&CoreOptions::default(), Engine::Vector, &[], copy);
    let (ii_late, end_late) = measured_on(&changed(|c| c.vector.latency_cycles = 40), Engine::Vector, &[], copy);
    assert_eq!(ii_late, ii, "latency pipelines: the interval stays");
    assert_eq!(end_late, end + 40, "the last result lands the latency later");
    let mov = Instr::RegAlu {
        op: crate::isa::RegOp::Add,
        dst: crate::isa::Reg(1),
        a: crate::isa::Operand::Reg(crate::isa::Reg(1)),
        b: crate::isa::Operand::Imm(1),
    };
    let slow = changed(|c| c.control_cycles = 3);
    let count = |opts: &CoreOptions| {
        let mut s = Stream { instrs: vec![mov; 16], ..Stream::default() };
        s.instrs.push(copy);
        s.lines = vec![1; s.instrs.len()];
        let program = Program { source: "ctl".into(), streams: vec![(Engine::Vector, s)] };
        let mut b = SimBuilder::new();
        let ids = build(&mut b, "nc0", &program, opts, None).unwrap();
        let mut sim = b.build().unwrap();
        sim.run_until_idle(Dur::from_us(1000)).unwrap();
        sim.component::<EngineUnit>(ids.engines[0].1).unwrap().stats.issues[0]
    };
    let (fast, slowed) = (count(&CoreOptions::default()), count(&slow));
    assert_eq!(slowed - fast, 16 * 2, "sixteen register instructions, two more cycles each");
}

#[test]
fn a_core_without_quantize_mx_refuses_it_naming_the_field() {
    let bf = |off, n| ap(Mem::Sbuf, off, n, Dtype::Bf16);
    let q = Instr::QuantizeMx {
        src: bf(0, 64),
        dst: ap(Mem::Sbuf, 0x8000, 64, Dtype::MxFp8E4m3),
        scales: Ap { partitions: 16, ..ap(Mem::Sbuf, 0xC000, 16, Dtype::Fp8E4m3) },
    };
    let program =
        Program { source: "q.asm".into(), streams: vec![(Engine::Vector, Stream { instrs: vec![q], lines: vec![3] })] };
    let v3 = CoreOptions { spec: crate::spec::preset("nc-v3").unwrap(), ..CoreOptions::default() };
    let e = build(&mut SimBuilder::new(), "nc0", &program, &v3, None).err().unwrap();
    assert_eq!(e, "q.asm:3: vector: core nc-v3 has no quantize_mx (costs.vector.quantize_mx is None)");
    assert!(build(&mut SimBuilder::new(), "nc0", &program, &CoreOptions::default(), None).is_ok(), "nc-v4 has it");
}
