//! Property: every program the assembler accepts runs on a core for a bounded simulated time
//! without a panic, and a program that does not finish is stopped with an error located at its
//! source line; every program it refuses gets a located error. Inputs are hostile mutations of
//! the shipped program and of a loop, from a fixed seed.

use crate::common::{fuzz_bytes, mutate, root, FuzzBudget};
use arbitrary::Unstructured;
use trnsim_harness::neuroncore::{assemble_text, run_cores_for};
use trnsim_kernel::{Dur, TickOrder};

const LOOP: &str = ".engine vector\nloop:\n    sem_inc s1, 1\n    branch always loop\n    halt\n";

#[test]
fn fuzz_programs_are_refused_located_or_run_bounded() {
    let softmax = std::fs::read_to_string(root().join("models/programs/softmax_rows.asm")).expect("program");
    let budget = FuzzBudget::from_env(100);
    for seed in budget.seeds() {
        let bytes = fuzz_bytes(seed, 2048);
        let mut u = Unstructured::new(&bytes);
        let base = if seed % 3 == 0 { LOOP } else { softmax.as_str() };
        let text = mutate(base, &mut u);
        let r = std::panic::catch_unwind(|| match assemble_text("p.asm", &text) {
            Err(e) => assert!(e.contains("p.asm:"), "unlocated assembler error: {e}"),
            Ok(p) => {
                if let Err(e) = run_cores_for(&p, 1, TickOrder::Structural, None, Dur::from_us(20)) {
                    assert!(e.starts_with("p.asm:") || e.contains("p.asm"), "unlocated run error: {e}");
                    assert!(!e.contains('\n'), "multi-line error: {e}");
                }
            }
        });
        assert!(r.is_ok(), "panicked on\n{text}");
    }
}

#[test]
fn a_loop_that_never_halts_stops_at_the_limit_naming_engine_and_line() {
    let p = assemble_text("loop.asm", LOOP).expect("assembles");
    let e = run_cores_for(&p, 1, TickOrder::Structural, None, Dur::from_us(10)).err().expect("stopped");
    assert!(e.starts_with("loop.asm:3: nc0.") || e.starts_with("loop.asm:4: nc0."), "{e}");
    assert!(e.contains("vector") && e.contains("--max-sim-time 10us"), "{e}");
}
