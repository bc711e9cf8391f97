//! The chip presets load, agree with the documented figures they cite, and bad files fail with
//! located errors.

use super::{parse, trn2, trn3, TRN3_CHIP_RON};

#[test]
fn presets_load_and_match_the_spec_figures() {
    let c = trn3().unwrap();
    assert_eq!((c.spec.cores, c.spec.hbm.stacks, c.dma.engines), (8, 4, 16));
    assert_eq!(c.spec.cores * c.dma.engines, c.spec.documented.dma_engines);
    assert_eq!((0..8).map(|i| c.stack_of(i)).collect::<Vec<_>>(), [0, 0, 1, 1, 2, 2, 3, 3]);
    assert!((c.peak_bf16_tflops() - 629.1456).abs() < 1e-3, "{}", c.peak_bf16_tflops());
    assert!((c.peak_hbm_gbps() - 4915.2).abs() < 1e-6, "{}", c.peak_hbm_gbps());
    assert!((c.peak_dma_gbps() - 4915.2).abs() < 1e-6, "{}", c.peak_dma_gbps());
    assert!((c.peak_hbm_gbps() / c.spec.documented.hbm_GBps - 1.0).abs() < 0.01);
    assert_eq!(c.dma.start_latency, trnsim_kernel::Dur::from_ns(1300));
    let t2 = trn2().unwrap();
    assert_eq!(t2.spec.cores * t2.dma.engines, 128);
    assert!((t2.peak_dma_gbps() - 3481.6).abs() < 1e-6);
    assert!(!c.spec.estimated.is_empty() && !t2.spec.estimated.is_empty());
}

fn err(text: &str) -> String {
    parse("chip.ron", text).unwrap_err().to_string()
}

#[test]
fn bad_files_fail_with_file_line_column_and_field() {
    let e = err(&TRN3_CHIP_RON.replace("core: \"nc-v4\"", "core: \"nc-v9\""));
    assert!(e.starts_with("chip.ron:") && e.contains(": core: unknown core \"nc-v9\""), "{e}");
    let e = err(&TRN3_CHIP_RON.replace("cores_per_stack: 2", "cores_per_stack: 3"));
    assert!(e.contains(": hbm.cores_per_stack: stacks (4) x cores_per_stack (3)"), "{e}");
    let line = TRN3_CHIP_RON.lines().position(|l| l.contains("cores_per_stack:")).unwrap() + 1;
    assert!(e.starts_with(&format!("chip.ron:{line}:")), "{e}");
    let e = err(&TRN3_CHIP_RON.replace("\"hbm3e-9600\"", "\"hbm9\""));
    assert!(e.contains(": hbm.preset: unknown HBM preset \"hbm9\" (allowed: hbm2-2000"), "{e}");
    let e = err(&TRN3_CHIP_RON.replace("engines_per_core: 16", "engines_per_core: 24"));
    assert!(e.contains(": dma.engines_per_core: 24 is out of range"), "{e}");
    let e = err(&TRN3_CHIP_RON.replace("\"1300ns\"", "\"fast\""));
    assert!(e.contains(": dma.start_latency: "), "{e}");
    // A misspelt key is a parse error located at the key, naming the field before it.
    let e = err(&TRN3_CHIP_RON.replace("queues: 16", "queue: 16"));
    let line = TRN3_CHIP_RON.lines().position(|l| l.contains("queues: 16")).unwrap() + 1;
    assert!(e.starts_with(&format!("chip.ron:{line}:")) && e.contains("queue"), "{e}");
    let e = parse("x.ron", "ChipSpec(").unwrap_err();
    assert!(e.line >= 1 && e.col >= 1, "{e}");
}
