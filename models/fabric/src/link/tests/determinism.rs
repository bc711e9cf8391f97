//! The same seed gives identical statistics; another seed gives other bit errors.

use super::{run, Setup};

#[test]
fn same_seed_gives_identical_statistics() {
    let s = Setup::new("pcie-gen6", 8, 2e-5, 2_000, &[64, 256, 1000, 4096]);
    let a = run(&s);
    let b = run(&s);
    assert!(a.tx.flits_corrupted > 10);
    assert_eq!(a.report, b.report);
    assert_eq!(a.end, b.end);
    let c = run(&Setup { seed: s.seed + 1, ..s.clone() });
    assert_ne!(a.tx.flits_corrupted, c.tx.flits_corrupted, "another seed, other errors");
    assert_eq!(c.verdict, Ok(()));
}
