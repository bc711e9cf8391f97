//! Functional mode: a matmul -> exp (with a per-partition sum) -> max pipeline across three
//! engines, synchronized by semaphores, computes what the Rust reference computes.

use super::matmul::ap;
use crate::core::{build, CoreOptions};
use crate::coremem::{to_pattern, CoreMem};
use crate::engine::EngineUnit;
use crate::isa::{Accumulate, ActFn, AluOp, Ap, Dtype, Engine, Instr, Mem, Program, Sem, Stream};
use crate::numeric;
use trnsim_kernel::{Dur, SimBuilder};

fn stream(instrs: Vec<Instr>) -> Stream {
    let lines = (1..=instrs.len() as u32).collect();
    Stream { instrs, lines }
}

fn with_parts(mut a: Ap, n: u16) -> Ap {
    a.partitions = n;
    a
}

#[test]
fn matmul_exp_reduce_pipeline_matches_the_reference() {
    let (k, m, n) = (128usize, 128usize, 64usize);
    let w_ap = ap(Mem::Sbuf, 0, m as u16, Dtype::Bf16);
    let x_ap = ap(Mem::Sbuf, 0x1000, n as u16, Dtype::Bf16);
    let p_ap = ap(Mem::Psum, 0, n as u16, Dtype::Fp32);
    let e_ap = ap(Mem::Sbuf, 0x4000, n as u16, Dtype::Fp32);
    let sum_ap = ap(Mem::Sbuf, 0x6000, 1, Dtype::Fp32);
    let max_ap = ap(Mem::Sbuf, 0x7000, 1, Dtype::Fp32);
    let te = vec![
        Instr::LoadStationary { src: w_ap, scales: None },
        Instr::MultiplyMoving { src: x_ap, scales: None, dst: with_parts(p_ap, m as u16), acc: Accumulate::Overwrite },
        Instr::SemInc { sem: Sem(0), delta: 1 },
    ];
    let act = vec![
        Instr::SemWait { sem: Sem(0), value: 1 },
        Instr::Activation {
            func: ActFn::Exp,
            src: p_ap,
            dst: e_ap,
            scale: 1.0 / 16.0,
            bias: 0.0,
            reduce: Some((AluOp::Add, sum_ap)),
        },
        Instr::SemInc { sem: Sem(1), delta: 1 },
    ];
    let dve = vec![
        Instr::SemWait { sem: Sem(1), value: 1 },
        Instr::TensorReduce { op: AluOp::Max, src: e_ap, dst: max_ap },
        Instr::Halt,
    ];
    let program = Program {
        source: "pipeline".into(),
        streams: vec![(Engine::Tensor, stream(te)), (Engine::Scalar, stream(act)), (Engine::Vector, stream(dve))],
    };
    let mut b = SimBuilder::new();
    let opts = CoreOptions { functional: true, ..CoreOptions::default() };
    let ids = build(&mut b, "nc0", &program, &opts, None).unwrap();
    let mut sim = b.build().unwrap();
    // Small integers and halves are exact in BF16.
    let w: Vec<f32> = (0..k * m).map(|i| ((i * 7 % 11) as f32 - 5.0) * 0.5).collect();
    let x: Vec<f32> = (0..k * n).map(|i| ((i * 5 % 13) as f32 - 6.0) * 0.25).collect();
    {
        let mem = sim.component_mut::<CoreMem>(ids.mem).unwrap();
        let d = mem.sbuf_data().unwrap();
        d.write(&to_pattern(&w_ap), &numeric::encode(Dtype::Bf16, &w)).unwrap();
        d.write(&to_pattern(&x_ap), &numeric::encode(Dtype::Bf16, &x)).unwrap();
    }
    sim.run_until_idle(Dur::from_us(100)).unwrap();
    for (_, id) in &ids.engines {
        assert!(sim.component::<EngineUnit>(*id).unwrap().finished());
    }
    let want = numeric::matmul_ref(&w, &x, k, m, n);
    let e_want: Vec<f32> = want.iter().map(|v| numeric::act(ActFn::Exp, v / 16.0)).collect();
    let read = |sim: &mut trnsim_kernel::Simulation, a: &Ap| {
        let mem = sim.component_mut::<CoreMem>(ids.mem).unwrap();
        let mut buf = vec![0u8; a.bytes() as usize];
        mem.sbuf_data().unwrap().read(&to_pattern(a), &mut buf).unwrap();
        numeric::decode(a.dtype, &buf)
    };
    assert_eq!(read(&mut sim, &e_ap), e_want, "exp(matmul / 16)");
    let sums: Vec<f32> = e_want.chunks(n).map(|r| numeric::reduce(AluOp::Add, r)).collect();
    assert_eq!(read(&mut sim, &sum_ap), sums, "activation's per-partition sum");
    let maxes: Vec<f32> = e_want.chunks(n).map(|r| numeric::reduce(AluOp::Max, r)).collect();
    assert_eq!(read(&mut sim, &max_ap), maxes, "vector engine's max");
}
