//! Property: every program the assembler accepts runs on a core for a bounded simulated time
//! without a panic, and a program that does not finish is stopped with an error located at its
//! source line; every program it refuses gets a located error. Inputs are hostile mutations of
//! the shipped programs and of a loop, from a fixed seed.

use crate::common::{fuzz_bytes, mutate, root, FuzzBudget};
use arbitrary::Unstructured;
use trnsim_benchmarks::neuroncore::{assemble_text, run_cores_for};
use trnsim_kernel::{Dur, TickOrder};

const LOOP: &str = ".engine vector\nloop:\n    sem_inc s1, 1\n    branch always loop\n    halt\n";

#[test]
fn fuzz_programs_are_refused_located_or_run_bounded() {
    let read = |name: &str| std::fs::read_to_string(root().join("models/programs").join(name)).expect("program");
    let (softmax, every) = (read("softmax_rows.asm"), read("every_instruction.asm"));
    let budget = FuzzBudget::from_env(100);
    for seed in budget.seeds() {
        let bytes = fuzz_bytes(seed, 2048);
        let mut u = Unstructured::new(&bytes);
        // Every instruction once (matmuls, PSUM, DMA both ways, loops), the shipped softmax,
        // and a loop that never halts.
        let base = [every.as_str(), softmax.as_str(), LOOP][(seed % 3) as usize];
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
fn the_every_instruction_program_runs_to_its_end() {
    let text = std::fs::read_to_string(root().join("models/programs/every_instruction.asm")).expect("program");
    let p = assemble_text("every_instruction.asm", &text).expect("assembles");
    run_cores_for(&p, 1, TickOrder::Structural, None, Dur::from_us(20)).expect("runs to its end");
}

#[test]
fn a_dma_whose_first_partition_is_inside_an_engine_s_eight_runs() {
    // Partitions 23..65: engine 2 moves one row (23), engines 3-7 eight each, engine 8 one. A
    // fuzzed program found the model refusing engine 2's row at the SBUF, with a panic.
    let text = ".engine sync\n    dma_start q0 hbm 0x0 stride 2048 -> sbuf[23:42] +0x0 [512:1] fp32, bytes=2048, sem=s0\n    sem_wait s0 >= 7\n    halt\n";
    let p = assemble_text("dma23.asm", text).expect("assembles");
    let (sim, _) = run_cores_for(&p, 1, TickOrder::Structural, None, Dur::from_us(20)).expect("runs to its end");
    let s = sim.report();
    let bytes = |name: &str| s.int("nc0.dma", name).expect("the DMA block's statistic");
    assert_eq!(bytes("bytes"), 42 * 2048, "every row moved");
    assert_eq!([bytes("engine2.bytes"), bytes("engine3.bytes"), bytes("engine8.bytes")], [2048, 8 * 2048, 2048]);
}

#[test]
fn a_loop_that_never_halts_stops_at_the_limit_naming_engine_and_line() {
    let p = assemble_text("loop.asm", LOOP).expect("assembles");
    let e = run_cores_for(&p, 1, TickOrder::Structural, None, Dur::from_us(10)).err().expect("stopped");
    assert!(e.starts_with("loop.asm:3: nc0.") || e.starts_with("loop.asm:4: nc0."), "{e}");
    assert!(e.contains("vector") && e.contains("--max-sim-time 10us"), "{e}");
}
