//! A timing test per implemented row of spec §5: sixteen identical instructions back to back on
//! the right engine issue exactly the formula's cycles apart (measured from the engine's issue
//! times, through the real SBUF/PSUM unit).

use super::matmul::ap;
use crate::core::{build, CoreOptions};
use crate::engine::EngineUnit;
use crate::isa::{Accumulate, ActFn, AluOp, Dtype, Engine, Instr, Mem, Program, Stream};
use trnsim_kernel::{Dur, SimBuilder};

fn measured_interval(engine: Engine, setup: &[Instr], instr: Instr) -> u64 {
    let mut s = Stream::default();
    s.instrs.extend_from_slice(setup);
    s.instrs.extend(std::iter::repeat_n(instr, 16));
    s.lines = vec![1; s.instrs.len()];
    let program = Program { source: "costs".into(), streams: vec![(engine, s)] };
    let mut b = SimBuilder::new();
    let ids = build(&mut b, "nc0", &program, &CoreOptions::default(), None).unwrap();
    let mut sim = b.build().unwrap();
    sim.run_until_idle(Dur::from_us(1000)).unwrap();
    let e = sim.component::<EngineUnit>(ids.engines[0].1).unwrap();
    assert!(e.finished());
    // Fifteen intervals between the first and the last of the sixteen.
    (e.stats.last_issue - e.stats.issues[setup.len()]) / 15
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
