//! A compute-bound GEMM node is timed at the rate of its number format on the chip's own core
//! (its core file's `tensor.formats`): on Trn3 (NC-v4) MXFP8 and MXFP4 take a quarter of
//! BF16's time and plain FP8 the same; overriding MXFP4 to 8 MACs per PE halves its time
//! again; a format the core lacks (MXFP8 on Trn2's NC-v3) is an error naming the core and
//! the field that would add it. Trn2's NC-v3 runs FP8 at twice BF16, its documented rate.
//! Weights in another format than the activations (MXFP4 experts) are read at their own bytes,
//! multiplied at the slower of the two formats' rates, and dequantized on the vector engine
//! when the activations are not MX.

use trnsim_system::doc::SystemDoc;
use trnsim_workloads::costs::SystemCosts;
use trnsim_workloads::exec::Costs;
use trnsim_workloads::format::Op;

/// A GEMM large enough to be compute-bound in every format.
fn gemm(dtype: &str) -> Op {
    Op::Gemm {
        m: 8192,
        k: 8192,
        n: 8192,
        dtype: dtype.into(),
        count: 1,
        a_resident: true,
        b_resident: true,
        weight_dtype: None,
    }
}

fn gemm_ns(system: &str, sets: &[&str], dtype: &str) -> Result<f64, String> {
    let mut doc = SystemDoc::open(system).unwrap();
    for s in sets {
        doc.set(s).unwrap();
    }
    let sys = doc.resolve().unwrap();
    let chip = sys.chip().unwrap();
    SystemCosts::new(chip, None, 0.8).compute_ns(&gemm(dtype))
}

#[test]
fn trn3_formats_run_at_nc_v4_rates() {
    let bf16 = gemm_ns("trn3-chip", &[], "bf16").unwrap();
    let rel = |d: &str| bf16 / gemm_ns("trn3-chip", &[], d).unwrap();
    assert!((rel("mxfp8") - 4.0).abs() < 1e-9, "mxfp8 {}", rel("mxfp8"));
    assert!((rel("mxfp4") - 4.0).abs() < 1e-9, "mxfp4 {}", rel("mxfp4"));
    assert!((rel("fp8") - 1.0).abs() < 1e-9, "fp8 {}", rel("fp8"));
    assert!((rel("fp32") - 0.25).abs() < 1e-9, "fp32 {}", rel("fp32"));
    // 2 x 8192^3 flops at 8 x 78.64 TFLOPS x 0.8.
    let want = 2.0 * 8192f64.powi(3) / (8.0 * 128.0 * 128.0 * 2.0 * 2.4e9 * 0.8) * 1e9;
    assert!((bf16 / want - 1.0).abs() < 1e-9, "bf16 {bf16} ns, want {want}");
}

#[test]
fn a_core_override_moves_its_format_and_a_missing_format_is_refused() {
    let mx4 = gemm_ns("trn3-chip", &[], "mxfp4").unwrap();
    let mx4x2 = gemm_ns("trn3-chip", &["chip.core.tensor.formats.mxfp4.macs_per_pe=8"], "mxfp4").unwrap();
    assert!((mx4 / mx4x2 - 2.0).abs() < 1e-9, "{mx4} / {mx4x2}");
    // Trn2's NC-v3: double-row FP8 at twice BF16 (the documented rate; the ISA has no operand
    // for it, so only the roofline runs it).
    let v3 = gemm_ns("trn2-chip", &[], "bf16").unwrap() / gemm_ns("trn2-chip", &[], "fp8").unwrap();
    assert!((v3 - 2.0).abs() < 1e-9, "trn2 fp8 {v3}");
    let e = gemm_ns("trn2-chip", &[], "mxfp8").unwrap_err();
    assert!(e.contains("nc-v3") && e.contains("no mxfp8") && e.contains("chip.core.tensor.formats.mxfp8"), "{e}");
}

fn mixed(m: u64, k: u64, n: u64, dtype: &str, weights: &str) -> Op {
    let weight_dtype = (weights != dtype).then(|| weights.to_string());
    Op::Gemm { m, k, n, dtype: dtype.into(), count: 1, a_resident: false, b_resident: false, weight_dtype }
}

#[test]
fn mxfp4_weights_read_their_bytes_and_multiply_at_the_mx_rate_or_the_slower_formats() {
    let sys = SystemDoc::open("trn3-chip").unwrap().resolve().unwrap();
    let mut c = SystemCosts::new(sys.chip().unwrap(), None, 0.8);
    let t = |c: &mut SystemCosts, op: &Op| c.compute_ns(op).unwrap();
    // Compute-bound: MXFP4 weights against MXFP8 activations at NC-v4's 4x; against BF16
    // activations too, quantized to MXFP8 on the vector engine (quantize_mx, 4 elements a lane
    // a cycle: far less than the matmul here).
    let bf16 = t(&mut c, &mixed(8192, 8192, 8192, "bf16", "bf16"));
    let mx = t(&mut c, &mixed(8192, 8192, 8192, "mxfp8", "mxfp4"));
    let wide = t(&mut c, &mixed(8192, 8192, 8192, "bf16", "mxfp4"));
    assert!((bf16 / mx - 4.0).abs() < 1e-9 && (wide / mx - 1.0).abs() < 1e-9, "{bf16} {mx} {wide}");
    // A decode-shaped GEMM is bound by its bytes: MXFP4 weights are 17/32 of a byte each.
    let bw = c.hbm_bytes_per_ns().unwrap();
    let (k, n) = (8192.0, 8192.0);
    let dec = t(&mut c, &mixed(1, 8192, 8192, "mxfp8", "mxfp4"));
    let want = ((k + n) * 33.0 / 32.0 + k * n * 17.0 / 32.0) / bw;
    assert!((dec / want - 1.0).abs() < 1e-9, "{dec} ns against {want}");
    // Against BF16 activations (quantized on the chip) the same bytes bind it, the
    // activations at 2 bytes each.
    let quant = t(&mut c, &mixed(1, 8192, 8192, "bf16", "mxfp4"));
    let want = ((k + n) * 2.0 + k * n * 17.0 / 32.0) / bw;
    assert!((quant / want - 1.0).abs() < 1e-9, "{quant} ns against {want}");
    // On a core without quantize_mx, MXFP4 weights against BF16 activations multiply at BF16's
    // rate and are dequantized on the vector engine: 2 operations a weight, on 8 cores x 128
    // lanes, slower here than reading them.
    let mut doc = SystemDoc::open("trn3-chip").unwrap();
    doc.set("chip.core.costs.vector.quantize_mx=None").unwrap();
    let noq = doc.resolve().unwrap();
    let mut c = SystemCosts::new(noq.chip().unwrap(), None, 0.8);
    let deq = t(&mut c, &mixed(1, 8192, 8192, "bf16", "mxfp4"));
    let hz = sys.chip().unwrap().core.clock(trnsim_core::isa::Engine::Vector).as_hz() as f64;
    let vector = 2.0 * k * n / (8.0 * 128.0 * hz) * 1e9;
    assert!((deq / vector - 1.0).abs() < 1e-9 && deq > dec, "{deq} ns against {vector}");
    let wide = t(&mut c, &mixed(8192, 8192, 8192, "bf16", "mxfp4"));
    assert!((wide / bf16 - 1.0).abs() < 1e-9, "{wide} against bf16 {bf16}");
    // On Trn2 (NC-v3, no MXFP4) the same node is refused.
    let trn2 = SystemDoc::open("trn2-chip").unwrap().resolve().unwrap();
    let e =
        SystemCosts::new(trn2.chip().unwrap(), None, 0.8).compute_ns(&mixed(1, 64, 64, "bf16", "mxfp4")).unwrap_err();
    assert!(e.contains("no mxfp4 matmul"), "{e}");
}
