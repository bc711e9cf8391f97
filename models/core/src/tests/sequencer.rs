//! Sequencer control flow: registers and branches run loops; the loop body's instructions run
//! as many times as the loop says, and their timing is the cost model's.

use crate::core::{build, CoreOptions};
use crate::engine::EngineUnit;
use crate::isa::asm::{assemble, AsmOptions};
use trnsim_kernel::{Dur, SimBuilder};

#[test]
fn a_register_loop_runs_its_body_the_counted_number_of_times() {
    let text = "\
.engine vector
    reg mov r1, 0
loop:
    tensor_scalar mul sbuf[0:128] +0x0 [256:1] fp32, 2.0 -> sbuf[0:128] +0x4000 [256:1] fp32
    reg add r1, r1, 1
    branch lt r1, 10, loop
    reg mul r2, r1, 3
    halt
";
    let program = assemble("loop.asm", text, &AsmOptions::default()).unwrap();
    let mut b = SimBuilder::new();
    let ids = build(&mut b, "nc0", &program, &CoreOptions::default(), None).unwrap();
    let mut sim = b.build().unwrap();
    sim.run_until_idle(Dur::from_us(100)).unwrap();
    let e = sim.component::<EngineUnit>(ids.engines[0].1).unwrap();
    assert!(e.finished());
    assert_eq!(e.stats.instrs, 10, "ten tensor_scalar instructions retired");
    assert_eq!((e.reg(1), e.reg(2)), (10, 30));
    // Ten back-to-back max(64, 256) intervals: the control instructions between them take one
    // cycle each but overlap the datapath's interval.
    assert_eq!(e.stats.last_issue - e.stats.first.unwrap(), 9 * 256);
}
