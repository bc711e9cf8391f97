//! The kernel library takes its tiling from the chip's core: a 256 x 256 array runs a workload
//! GEMM through `--compute cycle` in the cycles of the weight-stationary closed form for that
//! array, as the 128 x 128 one does, and faster on a compute-bound shape; a larger SBUF gives
//! larger tiles (fewer program runs); an SBUF that holds no tile is one located error naming
//! the field, nothing run; so is an attention node on an array the attention kernel is not
//! written for.

use crate::common::{cycle_ns, one_node, scratch, system, trnsim};
use trnsim_kernels::format::Format;
use trnsim_kernels::geometry::Geometry;
use trnsim_kernels::plan::{plan_on, GemmOp};

/// The sets that make trn3-chip's cores `n` x `n` (SBUF and PSUM of `n` partitions, the 16 DMA
/// engines `n / 16` partitions each) with `bpp` SBUF bytes per partition (in banks of 16 KiB),
/// unthrottled.
fn square(n: u32, bpp: u32) -> Vec<String> {
    vec![
        format!("chip.core.tensor.rows={n}"),
        format!("chip.core.tensor.columns={n}"),
        format!("chip.core.sbuf.partitions={n}"),
        format!("chip.core.psum.partitions={n}"),
        format!("chip.core.dma.partitions_per_engine={}", n / 16),
        format!("chip.core.sbuf.partition_bytes={bpp}"),
        format!("chip.core.sbuf.banks={}", bpp / 16384),
        "chip.core.costs.tensor.throttle.enabled=false".into(),
    ]
}

#[test]
fn a_256_array_runs_a_workload_gemm_at_its_weight_stationary_closed_form() {
    // Both operands resident, 512 tokens: compute-bound. Weight stationary: each matmul holds
    // a rows x columns block of W and streams the 512 tokens at a column a cycle, so a core's
    // matmuls take (chunks x K-blocks) x 512 cycles at 2.4 GHz; the program adds a fixed cost
    // that does not grow with the matmuls (its start, the last chunks' activation and stores).
    // Two contractions tell the two apart: the time grows by the closed form's difference.
    let (m, n) = (512u64, 16384u64);
    let run = |side: u32, bpp: u32, k: u64| {
        let op = format!("Gemm(m: {m}, k: {k}, n: {n}, dtype: \"bf16\", a_resident: true, b_resident: true)");
        let sys = system(&square(side, bpp));
        let t = cycle_ns(&one_node(&op), &sys);
        let cores = u64::from(sys.chip().unwrap().spec.cores);
        let matmuls = (n / cores).div_ceil(u64::from(side)) * k.div_ceil(u64::from(side));
        (t, (matmuls * m) as f64 / 2.4)
    };
    // Each pair of contractions is one program on its core (all of B fits W's region).
    let mut at_2048 = Vec::new();
    for (side, k_lo, k_hi) in [(128u32, 1024u64, 2048u64), (256, 2048, 4096)] {
        let (t_lo, c_lo) = run(side, 262_144, k_lo);
        let (t_hi, c_hi) = run(side, 262_144, k_hi);
        eprintln!("{side} x {side}: k {k_lo} {t_lo:.1} ns (closed form {c_lo:.1}), k {k_hi} {t_hi:.1} ns (closed form {c_hi:.1})");
        let slope = (t_hi - t_lo) / (c_hi - c_lo);
        assert!(
            (0.98..1.02).contains(&slope),
            "{side} x {side}: {:.1} ns more for {:.1} ns more of the closed form",
            t_hi - t_lo,
            c_hi - c_lo
        );
        at_2048.push(if k_lo == 2048 { (t_lo, c_lo) } else { (t_hi, c_hi) });
    }
    let ((t128, c128), (t256, c256)) = (at_2048[0], at_2048[1]);
    assert_eq!(c128 / c256, 4.0, "four times the MACs a cycle");
    assert!(t256 * 2.0 < t128, "k 2048: 256 x 256 {t256:.1} ns, 128 x 128 {t128:.1} ns");
}

#[test]
fn the_tiles_come_from_the_cores_array_and_sbuf() {
    let g = |m, k, n| GemmOp {
        m,
        k,
        n,
        count: 1,
        a_resident: false,
        b_resident: false,
        format: Format::Bf16,
        w_mxfp4: false,
        w_native_mxfp4: false,
        a_quantize: false,
    };
    let at = |side: u32, bpp: u32| Geometry {
        partitions: side,
        columns: side,
        sbuf_bpp: bpp,
        dma_ppe: side / 16,
        ..Geometry::NC_128
    };
    // A prefill GEMM whose contraction exceeds A's region: 24, 32 and 48 MiB per core. 24
    // MiB keeps the regions of 32 (the programs use 176 KiB of a partition but for MX scales),
    // 48 MiB widens A and W by half: the contraction in 2 tiles rather than 3.
    let big = g(4096, 24576, 65536);
    let reps: Vec<u64> =
        [196_608, 262_144, 393_216].iter().map(|&b| plan_on(8, &at(128, b), &big).unwrap().reps).collect();
    assert_eq!(reps, [24, 24, 16], "larger SBUF, larger K tiles, fewer program runs");
    let half = plan_on(8, &at(128, 131_072), &big).unwrap();
    assert!(half.reps > 24 && half.shape.d_model < 8192, "16 MiB: smaller tiles, {half:?}");
    let p = plan_on(8, &at(256, 131_072), &big).unwrap();
    assert_eq!((p.shape.d_model % 256, p.shape.d_ff_per_core % 256), (0, 0), "K-blocks and chunks of 256");
    // The decode form holds up to the array's columns of tokens stationary.
    assert!(plan_on(8, &at(256, 131_072), &g(200, 4096, 4096)).unwrap().variant.w_moving);
    assert!(!plan_on(8, &at(128, 262_144), &g(200, 4096, 4096)).unwrap().variant.w_moving);
}

#[test]
fn an_sbuf_that_holds_no_tile_is_one_located_error() {
    let dir = scratch("kernel-tiles-sbuf");
    let f = dir.join("g.ron");
    std::fs::write(
        &f,
        "Workload(name: \"g\", ranks: 1, nodes: [\n  Node(id: 0, name: \"up\", op: Gemm(m: 512, k: 1024, n: 4096)),\n])\n",
    )
    .unwrap();
    let out = trnsim()
        .args(["run", "--workload"])
        .arg(&f)
        .args(["--system", "trn3-chip", "--compute", "cycle", "--set", "chip.core.sbuf.partition_bytes=4096"])
        .args(["--set", "chip.core.sbuf.banks=1", "--set", "chip.core.sbuf.bank_interleave_bytes=4096"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("g.ron:2:") && err.contains("nodes[0].op") && err.contains("core.sbuf.partition_bytes"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing ran");
}

#[test]
fn an_attention_node_on_another_array_is_one_located_error() {
    // The attention kernel packs head groups 32 partitions apart: a 128 x 128 array's kernel.
    let dir = scratch("kernel-tiles-attention");
    let f = dir.join("a.ron");
    std::fs::write(
        &f,
        "Workload(name: \"a\", ranks: 1, nodes: [\n  Node(id: 0, name: \"att\", op: Attention(batch: 4, heads: 8, seq: 1, kv_seq: Some(1024), kv_heads: Some(1), head_dim: 64)),\n])\n",
    )
    .unwrap();
    let mut cmd = trnsim();
    cmd.args(["run", "--workload"]).arg(&f).args(["--system", "trn3-chip", "--compute", "cycle"]);
    for s in square(256, 131_072) {
        cmd.args(["--set", &s]);
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("a.ron:2:") && err.contains("core.tensor.rows") && err.contains("128 x 128"), "{err}");
    assert!(out.stdout.is_empty(), "nothing ran");
}
