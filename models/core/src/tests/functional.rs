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

#[test]
fn mxfp8_matmul_with_scales_matches_the_mx_reference() {
    // K = 512 (4 rows per partition), M = 32, N = 64; scales are K/32 = 16 partitions x columns.
    let (k, m, n) = (512usize, 32usize, 64usize);
    let mk = |off: u32, parts: u16, elems: u16, dt: Dtype| Ap { partitions: parts, ..ap(Mem::Sbuf, off, elems, dt) };
    let w_ap = mk(0, 128, (4 * m) as u16, Dtype::MxFp8E4m3);
    let ws_ap = mk(0x1000, 16, m as u16, Dtype::Fp8E4m3);
    let x_ap = mk(0x2000, 128, (4 * n) as u16, Dtype::MxFp8E4m3);
    let xs_ap = mk(0x3000, 16, n as u16, Dtype::Fp8E4m3);
    let out_ap = Ap { partitions: m as u16, ..ap(Mem::Psum, 0, n as u16, Dtype::Fp32) };
    let te = vec![
        Instr::LoadStationary { src: w_ap, scales: Some(ws_ap) },
        Instr::MultiplyMoving { src: x_ap, scales: Some(xs_ap), dst: out_ap, acc: Accumulate::Overwrite },
        Instr::Halt,
    ];
    let program = Program { source: "mx".into(), streams: vec![(Engine::Tensor, stream(te))] };
    let mut b = SimBuilder::new();
    let ids =
        build(&mut b, "nc0", &program, &CoreOptions { functional: true, ..CoreOptions::default() }, None).unwrap();
    let mut sim = b.build().unwrap();
    let wv: Vec<f32> = (0..k * m).map(|i| ((i * 37 % 101) as f32 - 50.0) * 0.37).collect();
    let xv: Vec<f32> = (0..k * n).map(|i| ((i * 53 % 89) as f32 - 44.0) * 0.011).collect();
    let (we, wsc) = numeric::mx::quantize_mx_along_k(&wv, k, m);
    let (xe, xsc) = numeric::mx::quantize_mx_along_k(&xv, k, n);
    // SBUF layout: row k = j x 128 + p lives in partition p at free index j x cols + c.
    let to_sbuf = |e: &[u8], cols: usize| {
        let mut out = vec![0u8; e.len()];
        for kk in 0..k {
            let (p, j) = (kk % 128, kk / 128);
            for c in 0..cols {
                out[p * 4 * cols + j * cols + c] = e[kk * cols + c];
            }
        }
        out
    };
    {
        let mem = sim.component_mut::<CoreMem>(ids.mem).unwrap();
        let d = mem.sbuf_data().unwrap();
        d.write(&to_pattern(&w_ap), &to_sbuf(&we, m)).unwrap();
        d.write(&to_pattern(&ws_ap), &wsc).unwrap();
        d.write(&to_pattern(&x_ap), &to_sbuf(&xe, n)).unwrap();
        d.write(&to_pattern(&xs_ap), &xsc).unwrap();
    }
    sim.run_until_idle(Dur::from_us(100)).unwrap();
    let want = numeric::matmul_mx_ref(
        numeric::MxOperand { elements: &we, scales: &wsc },
        numeric::MxOperand { elements: &xe, scales: &xsc },
        k,
        m,
        n,
    );
    let mem = sim.component_mut::<CoreMem>(ids.mem).unwrap();
    let mut buf = vec![0u8; out_ap.bytes() as usize];
    mem.psum_data().unwrap().read(&to_pattern(&out_ap), &mut buf).unwrap();
    assert_eq!(numeric::decode(Dtype::Fp32, &buf), want);
    // And the quantized product is close to the FP32 one.
    let exact = numeric::matmul_ref(&wv, &xv, k, m, n);
    let err = want.iter().zip(&exact).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    let scale = exact.iter().map(|v| v.abs()).fold(0f32, f32::max);
    assert!(err <= 0.1 * scale, "MXFP8 error {err} against {scale}");
}
