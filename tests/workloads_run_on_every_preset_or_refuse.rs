//! Every shipped system preset (of the UltraClusters, the two of 128 chips) runs every generated workload that fits it, or refuses in one
//! line naming why; none panics.

use trnsim_system::doc::{preset_names, SystemDoc};
use trnsim_workloads::format;
use trnsim_workloads::llm::{Llm, Mode};

fn workloads() -> Vec<Llm> {
    let small = Llm {
        hidden: 1024,
        ffn: 2048,
        heads: 8,
        kv_heads: 8,
        head_dim: 128,
        seq: 256,
        batch: 4,
        layers: 2,
        ..Llm::default()
    };
    vec![
        Llm { tp: 1, ..small.clone() },
        Llm { tp: 4, ..small.clone() },
        Llm { arch: "moe".into(), tp: 2, dp: 4, ep: 8, experts: 8, ..small.clone() },
        Llm { tp: 2, dp: 2, pp: 2, mode: Mode::Train, ..small.clone() },
        Llm { tp: 8, dp: 32, batch: 64, ..small.clone() },
    ]
}

#[test]
fn every_preset_runs_or_refuses_every_generated_workload() {
    let mut ran = 0;
    // Of the UltraCluster presets, the two of 128 chips (the same code as the larger ones,
    // which ultraclusters_join_ultraservers_over_efa builds and checks; a 256-rank workload on
    // a 288-chip cluster alone would double this test's time).
    let small =
        |n: &str| !n.contains("ultracluster") || matches!(n, "trn2-ultracluster-2" | "trn3-gen1-ultracluster-2");
    for (preset, _) in preset_names().into_iter().filter(|(n, _)| small(n)) {
        let sys = SystemDoc::open(preset).unwrap().resolve().unwrap();
        for l in workloads() {
            let w = l.generate("test").unwrap();
            let c = format::parse("w.ron", &format::to_ron(&w).unwrap()).unwrap();
            match trnsim_harness::workload::run(
                &c,
                &sys,
                &trnsim_harness::workload::Options {
                    efficiency: Some(0.6),
                    compute: trnsim_harness::workload::Compute::Roofline,
                    ..Default::default()
                },
            ) {
                Ok(r) => {
                    assert!(r.report.step_ns > 0.0, "{preset} {}", w.name);
                    ran += 1;
                }
                Err(e) => {
                    assert!(!e.contains('\n'), "{preset} {}: {e}", w.name);
                    let chips = sys.fabric().map_or(1, |t| t.chips);
                    let why = e.contains("has no") && sys.chip().is_none()
                        || (e.contains("ranks but the system has") && w.ranks as usize > chips)
                        || e.contains("needs a system with a fabric");
                    assert!(why, "{preset} {}: unexpected refusal: {e}", w.name);
                }
            }
        }
    }
    assert!(ran >= 10, "only {ran} runs");
}
