use crate::core::{build, CoreOptions};
use crate::engine::EngineUnit;
use crate::isa::{Accumulate, Ap, Dim, Dtype, Engine, Instr, Mem, Program, Stream};
use trnsim_kernel::{Dur, SimBuilder};

pub(crate) fn ap(mem: Mem, offset: u32, n: u16, dtype: Dtype) -> Ap {
    let mut dims = [Dim::default(); 4];
    dims[0] = Dim { size: n, stride: 1 };
    Ap { mem, partition_start: 0, partitions: 128, offset, dims, ndims: 1, dtype }
}

/// `count` back-to-back nc_matmuls (LoadStationary + MultiplyMoving) of K = M = 128 and N.
pub(crate) fn matmul_stream(count: usize, n: u16, dtype: Dtype) -> Stream {
    let mut s = Stream::default();
    let cols = if dtype == Dtype::MxFp8E4m3 { n * 4 } else { n };
    for i in 0..count {
        let w = ap(Mem::Sbuf, (i as u32 % 2) * 0x800, if dtype == Dtype::MxFp8E4m3 { 512 } else { 128 }, dtype);
        s.instrs.push(Instr::LoadStationary { src: w, scales: None });
        let x = ap(Mem::Sbuf, 0x2000, cols, dtype);
        let bank = (i % 8) as u32 * 2048;
        let dst = ap(Mem::Psum, bank, n.min(512), Dtype::Fp32);
        s.instrs.push(Instr::MultiplyMoving { src: x, scales: None, dst, acc: Accumulate::Overwrite });
        s.lines.extend([1, 2]);
    }
    s
}

/// NC-v4 with its warm-up throttle off: the array at its full rate from the first matmul.
pub(crate) fn unthrottled() -> CoreOptions {
    let mut spec = (*crate::spec::nc_v4()).clone();
    spec.costs.tensor.throttle.enabled = false;
    CoreOptions { spec: std::sync::Arc::new(spec), ..CoreOptions::default() }
}

/// Runs a tensor-engine-only program on NC-v4 as the preset is (its throttle on); returns
/// (flops, seconds from first issue to last completion).
pub(crate) fn run_te(stream: Stream) -> (u64, f64, EngineUnitStats) {
    run_te_on(&CoreOptions::default(), stream)
}

/// [`run_te`] on the core of `opts`.
pub(crate) fn run_te_on(opts: &CoreOptions, stream: Stream) -> (u64, f64, EngineUnitStats) {
    let program = Program { source: "test".into(), streams: vec![(Engine::Tensor, stream)] };
    let mut b = SimBuilder::new();
    let ids = build(&mut b, "nc0", &program, opts, None).unwrap();
    let mut sim = b.build().unwrap();
    sim.run_until_idle(Dur::from_us(10_000)).unwrap();
    let te = sim.component::<EngineUnit>(ids.engines[0].1).unwrap();
    assert!(te.finished());
    let s = &te.stats;
    let cycles = s.last - s.first.unwrap();
    (s.flops, cycles as f64 / 2.4e9, EngineUnitStats { instrs: s.instrs, busy: s.busy_cycles, cycles })
}

pub(crate) struct EngineUnitStats {
    pub instrs: u64,
    pub busy: u64,
    pub cycles: u64,
}

#[test]
fn back_to_back_bf16_matmuls_of_n512_reach_98_percent_of_79_tflops() {
    let (flops, secs, st) = run_te(matmul_stream(256, 512, Dtype::Bf16));
    let tflops = flops as f64 / secs / 1e12;
    assert_eq!(st.instrs, 512);
    assert!(tflops >= 0.98 * 78.64, "{tflops:.2} TFLOPS ({} busy of {} cycles)", st.busy, st.cycles);
}

#[test]
fn mxfp8_matmuls_reach_98_percent_of_315_tflops() {
    let (flops, secs, st) = run_te(matmul_stream(256, 512, Dtype::MxFp8E4m3));
    let tflops = flops as f64 / secs / 1e12;
    assert!(tflops >= 0.98 * 314.6, "{tflops:.2} TFLOPS ({} busy of {} cycles)", st.busy, st.cycles);
}

#[test]
fn a_matmul_the_cores_file_rates_apart_from_the_isa_is_refused_naming_the_field() {
    let build_with = |core: &str, dtype: Dtype| {
        let program = Program { source: "t.asm".into(), streams: vec![(Engine::Tensor, matmul_stream(1, 128, dtype))] };
        let spec = crate::spec::preset(core).unwrap();
        build(&mut SimBuilder::new(), "nc0", &program, &CoreOptions { spec, ..CoreOptions::default() }, None)
            .map(|_| ())
    };
    // NC-v3's double-row FP8 has no ISA operand; NC-v3 has no MXFP8 at all.
    let e = build_with("nc-v3", Dtype::Fp8E4m3).unwrap_err();
    assert!(e.contains("tensor.formats.fp8e4m3.macs_per_pe") && e.contains("nc-v3"), "{e}");
    let e = build_with("nc-v3", Dtype::MxFp8E4m3).unwrap_err();
    assert!(e.contains("no mxfp8 matmul"), "{e}");
    // NC-v4's FP8 and MXFP8 match the ISA's packing.
    build_with("nc-v4", Dtype::Fp8E4m3).unwrap();
    build_with("nc-v4", Dtype::MxFp8E4m3).unwrap();
}

/// NC-v4 with a `n` x `n` tensor engine (SBUF and PSUM of `n` partitions, DMA engines
/// widened), its throttle off: the closed form is the full-rate array's.
fn square_core(n: u32) -> std::sync::Arc<crate::spec::CoreSpec> {
    let mut s = (*crate::spec::nc_v4()).clone();
    s.costs.tensor.throttle.enabled = false;
    (s.tensor.rows, s.tensor.columns, s.sbuf.partitions, s.psum.partitions) = (n, n, n, n);
    s.dma.partitions_per_engine = n / s.dma.engines;
    s.validate().unwrap();
    std::sync::Arc::new(s)
}

/// `count` back-to-back nc_matmuls of K = M = `p` and N on a `p`-partition core.
fn square_stream(count: usize, p: u16, n: u16) -> Stream {
    let part = |a: Ap| Ap { partitions: p, ..a };
    let mut s = Stream::default();
    for i in 0..count {
        let w = part(ap(Mem::Sbuf, (i as u32 % 2) * 0x800, p, Dtype::Bf16));
        s.instrs.push(Instr::LoadStationary { src: w, scales: None });
        let x = part(ap(Mem::Sbuf, 0x2000, n, Dtype::Bf16));
        let dst = part(ap(Mem::Psum, (i % 8) as u32 * 2048, n, Dtype::Fp32));
        s.instrs.push(Instr::MultiplyMoving { src: x, scales: None, dst, acc: Accumulate::Overwrite });
        s.lines.extend([1, 2]);
    }
    s
}

#[test]
fn a_256_by_256_array_runs_the_weight_stationary_closed_form() {
    // Weight stationary: a K x M stationary, N moving columns at one per cycle, so `count`
    // back-to-back matmuls take count x max(min(64, M), N) cycles plus one fill and drain, and
    // do 2 K M N flops each: 256 x 256 at 2.4 GHz peaks at 4 x 78.64 TFLOPS. The larger array
    // adds only to the fill (its first, unhidden LoadStationary of 256 columns and the deeper
    // pipeline), not to the interval.
    let (count, n) = (256usize, 512u16);
    let run = |p: u16| {
        let program = Program { source: "t".into(), streams: vec![(Engine::Tensor, square_stream(count, p, n))] };
        let mut b = SimBuilder::new();
        let opts = CoreOptions { spec: square_core(u32::from(p)), ..CoreOptions::default() };
        let ids = build(&mut b, "nc0", &program, &opts, None).unwrap();
        let mut sim = b.build().unwrap();
        sim.run_until_idle(Dur::from_us(10_000)).unwrap();
        let te = sim.component::<EngineUnit>(ids.engines[0].1).unwrap();
        assert!(te.finished());
        (te.stats.flops, te.stats.busy_cycles, te.stats.last - te.stats.first.unwrap())
    };
    let (f128, busy128, c128) = run(128);
    let (f256, busy256, c256) = run(256);
    let pes = |p: u64| 2 * p * p * u64::from(n) * count as u64;
    assert_eq!((f128, f256), (pes(128), pes(256)));
    // The array's size does not change the interval: the same cycles, 4x the work.
    assert_eq!(busy256, busy128);
    assert!(busy256 >= count as u64 * u64::from(n), "{busy256}");
    let tflops = f256 as f64 / (c256 as f64 / 2.4e9) / 1e12;
    assert!(tflops >= 0.98 * 4.0 * 78.64, "{tflops:.1} TFLOPS in {c256} cycles (128 x 128: {c128})");
    assert!(c256 > c128 && c256 - c128 <= 256, "fill {c128} -> {c256} cycles");
}

/// Runs `stream` on the tensor engine of nc-v4 as the preset is (its throttle on); returns the
/// engine's issue cycles of the first 64 data instructions and its statistics.
fn run_throttled(stream: Stream) -> (Vec<u64>, u64, u64) {
    let opts = CoreOptions::default();
    assert!(opts.spec.costs.tensor.throttle.enabled, "NC-v4 throttles as AWS documents for Trn3");
    let program = Program { source: "test".into(), streams: vec![(Engine::Tensor, stream)] };
    let mut b = SimBuilder::new();
    let ids = build(&mut b, "nc0", &program, &opts, None).unwrap();
    let mut sim = b.build().unwrap();
    sim.run_until_idle(Dur::from_us(10_000)).unwrap();
    let te = sim.component::<EngineUnit>(ids.engines[0].1).unwrap();
    let s = &te.stats;
    (s.issues.clone(), s.last - s.first.unwrap(), s.busy_cycles)
}

#[test]
fn a_throttled_array_starts_at_half_rate_and_ramps_to_full_over_3_us() {
    // The matmuls issue where the throttle's state machine says, fed the same intervals.
    let (issues, cycles, busy) = run_throttled(matmul_stream(256, 512, Dtype::Bf16));
    let spec = crate::spec::nc_v4();
    let mut t = crate::throttle::ThrottleState::new(
        &crate::spec::engines::Throttle { enabled: true, ..spec.costs.tensor.throttle },
        spec.clocks.tensor,
    )
    .unwrap();
    let mm_issues: Vec<u64> = issues.iter().skip(1).step_by(2).copied().collect();
    let mut want = mm_issues[0];
    for (k, &got) in mm_issues.iter().enumerate() {
        assert_eq!(got, want, "matmul {k}");
        want = got + t.matmul(got, 512).0;
    }
    assert_eq!(t.matmul(want, 512).1, 10_000, "full rate after 3 us");
    // The whole run: the full-rate run plus what the ramp added, the closed form's quarter of
    // the 7,200-cycle ramp (it averages 75 %: 1,800 cycles, 0.75 us) and a cycle of rounding
    // per matmul at most.
    let full_cycles = run_te_on(&unthrottled(), matmul_stream(256, 512, Dtype::Bf16)).2.cycles;
    let added = cycles - full_cycles;
    assert!((1800..=1800 + 14).contains(&added), "the ramp added {added} cycles");
    assert_eq!(busy, 256 * 512 + added, "busy cycles count the stretched intervals");
    // A short burst (4 matmuls, 2,048 cycles of work at full rate) runs at about 62 % (the
    // limit from 50 % to 73 % over it; the closed form 3,327 cycles for its work): 4,099
    // cycles against 2,884 unthrottled, fill and drain included.
    let (_, burst, _) = run_throttled(matmul_stream(4, 512, Dtype::Bf16));
    let (_, _, full) = run_te_on(&unthrottled(), matmul_stream(4, 512, Dtype::Bf16));
    assert!(burst as f64 > 1.4 * full.cycles as f64, "a 4-matmul burst: {burst} cycles against {}", full.cycles);
}
