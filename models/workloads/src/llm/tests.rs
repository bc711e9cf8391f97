//! The generator: extreme parameters refused or generated as the loader accepts.

use super::{Llm, Mode};

#[test]
fn extreme_parameters_are_refused_or_generate_what_the_loader_accepts() {
    // A valid model with one to three parameters set to an edge value or an ordinary one,
    // at random: the generator never wraps (overflow checks are on in tests) and never
    // writes a workload the loader refuses.
    let mut rng = trnsim_kernel::SimRng::new(0x11a, 0);
    let big = [1, 2, 3, 4, 8, 64, 4096, 65536, 1 << 20, 1 << 24, (1 << 24) + 1, u64::from(u32::MAX), u64::MAX];
    let small = [0, 1, 2, 4, 8, 16, 1024, 16384, 16385, 1 << 20, u64::from(u32::MAX)];
    let (mut ok, mut refused) = (0, 0);
    for case in 0..1500 {
        let mut llm = Llm {
            arch: if case % 2 == 0 { "dense" } else { "moe" }.into(),
            hidden: 1024,
            ffn: 2048,
            heads: 8,
            kv_heads: 8,
            head_dim: 128,
            seq: 256,
            batch: 8,
            tp: 2,
            dp: 2,
            ep: 2,
            experts: 8,
            dtype: ["bf16", "fp32", "fp8"][case % 3].into(),
            mode: if case % 4 < 2 { Mode::Train } else { Mode::Forward },
            ..Llm::default()
        };
        for _ in 0..=rng.below(3) {
            let field = rng.below(19);
            let mut draw = |xs: &[u64]| xs[usize::try_from(rng.below(xs.len() as u64)).unwrap()];
            let as_u32 = |x: u64| u32::try_from(x).unwrap_or(u32::MAX);
            match field {
                0 => llm.layers = as_u32(draw(&small)),
                1 => llm.hidden = draw(&big),
                2 => llm.ffn = draw(&big),
                3 => llm.heads = draw(&big),
                4 => llm.experts = draw(&big),
                5 => llm.top_k = draw(&big),
                6 => llm.seq = draw(&big),
                7 => llm.batch = draw(&big),
                8 => llm.tp = as_u32(draw(&small)),
                9 => llm.ep = as_u32(draw(&small)),
                10 => llm.dp = as_u32(draw(&small)),
                11 => llm.pp = as_u32(draw(&small)),
                12 => {
                    llm.imbalance = f64::from_bits(
                        [1.0f64, 1.5, 1000.0, 1e300, f64::NAN].map(f64::to_bits)
                            [usize::try_from(draw(&[0, 1, 2, 3, 4])).unwrap()],
                    )
                }
                13 => llm.kv_heads = draw(&big),
                14 => llm.micro_batches = as_u32(draw(&small)),
                15 => llm.context = draw(&big),
                16 => llm.vocab = draw(&small),
                17 => llm.mode = [Mode::Prefill, Mode::Decode][usize::try_from(draw(&[0, 1])).unwrap()],
                _ => llm.mode = if llm.mode == Mode::Train { Mode::Forward } else { Mode::Train },
            }
        }
        match llm.generate("test") {
            // (Graphs of thousands of layers are read back once, below.)
            Ok(w) if w.nodes.len() > 10_000 => ok += 1,
            Ok(w) => {
                ok += 1;
                let text = crate::format::to_ron(&w).unwrap();
                if let Err(e) = crate::format::parse("generated.ron", &text) {
                    panic!("{llm:?}: generated a workload the loader refuses: {e}");
                }
            }
            Err(_) => refused += 1,
        }
    }
    assert!(ok > 150 && refused > 150, "{ok} generated, {refused} refused: the draws should reach both");
    // The largest graph, every layer allowed, a trained MoE over pipeline stages, holds no
    // more nodes than the loader takes.
    let most = Llm {
        arch: "moe".into(),
        layers: super::MAX_LAYERS,
        mode: Mode::Train,
        tp: 2,
        dp: 2,
        pp: 2,
        ep: 4,
        heads: 8,
        kv_heads: 8,
        head_dim: 128,
        hidden: 1024,
        ffn: 1024,
        seq: 64,
        ..Llm::default()
    };
    let w = most.generate("test").unwrap();
    let n = w.nodes.len() as u64;
    assert!(n <= crate::format::MAX_NODES as u64 && n * 8 <= crate::format::MAX_SPANS, "{n} nodes");
}

/// Compute nodes take 10 ns, except the ones named `adam` (1 ns); communication is free.
struct Uniform;

impl crate::exec::Costs for Uniform {
    fn compute_ns(&mut self, op: &crate::format::Op) -> Result<f64, String> {
        Ok(if matches!(op, crate::format::Op::Elementwise { ops: 12, .. }) { 1.0 } else { 10.0 })
    }
    fn memory_ns(&mut self, _: &crate::format::Op) -> Result<f64, String> {
        Ok(0.0)
    }
    fn comm_ns(&mut self, _: &crate::format::Op, groups: &[Vec<usize>]) -> Result<Vec<f64>, String> {
        Ok(vec![0.0; groups.len()])
    }
    fn send_recv_ns(&mut self, _: u64, pairs: &[(usize, usize)]) -> Result<Vec<f64>, String> {
        Ok(vec![0.0; pairs.len()])
    }
}

#[test]
fn one_f_one_b_on_uniform_stages_has_the_closed_form_bubble() {
    // A dense model, 2 layers a stage, no TP or DP (no collectives): a stage's forward of a
    // micro-batch is 8 nodes a layer, its backward 10, each 10 ns whatever the micro-batch's
    // size. 1F1B then takes (m + p - 1) (f + b), plus the update, and a stage idles
    // (p - 1) / (m + p - 1) of the pipelined part.
    for (p, m) in [(2u32, 1u32), (4, 1), (4, 4), (4, 8), (8, 16), (3, 5)] {
        let llm = Llm {
            layers: 2 * p,
            pp: p,
            tp: 1,
            dp: 1,
            micro_batches: m,
            batch: u64::from(m),
            seq: 64,
            hidden: 256,
            ffn: 512,
            heads: 4,
            kv_heads: 4,
            head_dim: 64,
            mode: Mode::Train,
            ..Llm::default()
        };
        let w = llm.generate("test").unwrap();
        let c = crate::format::parse("t.ron", &crate::format::to_ron(&w).unwrap()).unwrap();
        let r = crate::exec::run(&c, p as usize, &mut Uniform).unwrap();
        let (f, b) = (2.0 * 8.0 * 10.0, 2.0 * 10.0 * 10.0);
        let pipelined = f64::from(m + p - 1) * (f + b);
        assert!(
            (r.step_ns - (pipelined + 1.0)).abs() < 1e-9,
            "p {p} m {m}: {} ns, want {}",
            r.step_ns,
            pipelined + 1.0
        );
        let busy = f64::from(m) * (f + b);
        let bubble = 1.0 - busy / pipelined;
        let want = f64::from(p - 1) / f64::from(m + p - 1);
        assert!((bubble - want).abs() < 1e-12, "p {p} m {m}: bubble {bubble}, closed form {want}");
        for rank in &r.ranks {
            assert!((rank.compute_ns - (busy + 1.0)).abs() < 1e-9, "p {p} m {m}: a stage computes {}", rank.compute_ns);
        }
    }
}
