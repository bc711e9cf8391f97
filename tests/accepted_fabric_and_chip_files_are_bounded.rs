//! Property: every topology, chip, UltraServer, core and HBM stack file the loaders accept
//! builds within the documented caps (no memory blow-up, no wrapped count), and every one they
//! refuse gets a one-line located error. Inputs are hostile mutations of the presets, from a fixed seed.

use crate::common::{fuzz_bytes, is_located, mutate, root, FuzzBudget};
use arbitrary::Unstructured;

fn presets(dir: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(root().join(dir))
        .expect("preset dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ron"))
        .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).expect("preset")))
        .collect();
    v.sort();
    v
}

#[test]
fn fuzz_topologies_are_refused_located_or_built_within_caps() {
    let files = presets("models/configs/fabric");
    let budget = FuzzBudget::from_env(200);
    for seed in budget.seeds() {
        let bytes = fuzz_bytes(seed, 2048);
        let mut u = Unstructured::new(&bytes);
        let (_, base) = &files[seed as usize % files.len()];
        let text = mutate(base, &mut u);
        let r = std::panic::catch_unwind(|| trnsim_fabric::topo::parse("t.ron", &text));
        match r {
            Err(_) => panic!("topology loader panicked on\n{text}"),
            Ok(Ok(t)) => assert!(t.chips <= 4096, "{} chips accepted", t.chips),
            Ok(Err(e)) => assert!(is_located(&e), "unlocated: {e}\n{text}"),
        }
    }
}

#[test]
fn fuzz_chips_and_ultraservers_are_refused_located_or_consistent() {
    let files = presets("models/configs/system");
    let budget = FuzzBudget::from_env(200);
    for seed in budget.seeds() {
        let bytes = fuzz_bytes(seed, 2048);
        let mut u = Unstructured::new(&bytes);
        let (name, base) = &files[seed as usize % files.len()];
        let text = mutate(base, &mut u);
        let r = std::panic::catch_unwind(|| {
            if name.ends_with("-chip.ron") {
                match trnsim_system::chip::parse("c.ron", &text) {
                    Ok(c) => {
                        assert!((1..=64).contains(&c.spec.cores), "{} cores accepted", c.spec.cores);
                        assert!(c.peak_dma_gbps().is_finite() && c.peak_dma_gbps() > 0.0);
                        Ok(())
                    }
                    Err(e) => Err(e.to_string()),
                }
            } else {
                trnsim_system::chip::ultraserver::parse("u.ron", &text).map(|u| {
                    assert!(u.spec.chips as usize == u.topology.chips && u.topology.chips <= 4096);
                })
            }
        });
        match r {
            Err(_) => panic!("{name}: loader panicked on\n{text}"),
            Ok(Ok(())) => {}
            Ok(Err(e)) => assert!(is_located(&e), "{name}: unlocated: {e}\n{text}"),
        }
    }
}

#[test]
fn fuzz_core_files_are_refused_located_or_valid() {
    let files = presets("models/configs/core");
    let budget = FuzzBudget::from_env(200);
    for seed in budget.seeds() {
        let bytes = fuzz_bytes(seed, 2048);
        let mut u = Unstructured::new(&bytes);
        let (name, base) = &files[seed as usize % files.len()];
        let text = mutate(base, &mut u);
        let r = std::panic::catch_unwind(|| trnsim_system::chip::core_file::parse("core.ron", &text));
        match r {
            Err(_) => panic!("{name}: core loader panicked on\n{text}"),
            Ok(Ok(c)) => {
                // What is accepted is in range: every peak finite and positive.
                for (_, rate) in c.tensor.formats.entries() {
                    if let Some(r) = rate {
                        let f = c.peak_flops(r);
                        assert!(f.is_finite() && f > 0.0, "{name}: peak {f} accepted\n{text}");
                    }
                }
                assert!(
                    c.tensor.rows <= trnsim_core::spec::MAX_ARRAY && c.tensor.columns <= trnsim_core::spec::MAX_ARRAY
                );
            }
            Ok(Err(e)) => assert!(is_located(&e.to_string()), "{name}: unlocated: {e}\n{text}"),
        }
    }
}

#[test]
fn fuzz_hbm_stack_files_are_refused_located_or_valid() {
    let files = presets("models/configs/mem/hbm");
    let budget = FuzzBudget::from_env(200);
    for seed in budget.seeds() {
        let bytes = fuzz_bytes(seed, 2048);
        let mut u = Unstructured::new(&bytes);
        let (name, base) = &files[seed as usize % files.len()];
        let text = mutate(base, &mut u);
        let r = std::panic::catch_unwind(|| trnsim_system::chip::stack_file::parse("stack.ron", &text));
        match r {
            Err(_) => panic!("{name}: stack loader panicked on\n{text}"),
            Ok(Ok(s)) => {
                // What is accepted builds: a stack of it passes the stack's own checks, its
                // capacity is within the cap and its peak bandwidth finite and positive.
                let cfg = trnsim_mem::hbm::StackConfig::from_preset(&s);
                assert!(cfg.validate().is_ok(), "{name}: accepted but the stack refuses it\n{text}");
                assert!(s.org.stack_bytes() <= trnsim_mem::hbm::presets::MAX_STACK_BYTES);
                let peak = s.stack_peak_bytes_per_s();
                assert!(peak.is_finite() && peak > 0.0, "{name}: peak {peak} accepted\n{text}");
            }
            Ok(Err(e)) => assert!(is_located(&e.to_string()), "{name}: unlocated: {e}\n{text}"),
        }
    }
}

#[test]
fn fuzz_link_encoding_files_are_refused_located_or_valid() {
    let files = presets("models/configs/fabric/link");
    let budget = FuzzBudget::from_env(200);
    for seed in budget.seeds() {
        let bytes = fuzz_bytes(seed, 2048);
        let mut u = Unstructured::new(&bytes);
        let (name, base) = &files[seed as usize % files.len()];
        let text = mutate(base, &mut u);
        let r = std::panic::catch_unwind(|| trnsim_system::link_file::parse("link.ron", &text));
        match r {
            Err(_) => panic!("{name}: encoding loader panicked on\n{text}"),
            Ok(Ok(f)) => {
                // What is accepted is in range: a line code of at most 1, a flit payload within
                // its flit, and some width to bond.
                assert!(f.code_num >= 1 && f.code_num <= f.code_den, "{name}: accepted\n{text}");
                assert!(!f.widths.is_empty() && f.lane_mbit_per_s >= 1, "{name}: accepted\n{text}");
                if let trnsim_fabric::link::encoding::Framing::Flit { flit_bytes, payload_bytes } = f.framing {
                    assert!(payload_bytes >= 1 && payload_bytes <= flit_bytes, "{name}: accepted\n{text}");
                }
            }
            Ok(Err(e)) => assert!(is_located(&e.to_string()), "{name}: unlocated: {e}\n{text}"),
        }
    }
}
