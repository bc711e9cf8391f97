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
            let field = rng.below(14);
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
