use trnsim_harness::{cpu::Stopwatch, ring};
use trnsim_kernel::{ClockId, SimOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let tokens: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(16);
    let cycles: u64 = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let p = ring::RingParams {
        modules: 64,
        tokens,
        depth: 4,
    };
    let mut sim = ring::build(p, SimOptions::default()).unwrap();
    let sw = Stopwatch::start();
    sim.run_cycles(ClockId::first(), cycles).unwrap();
    let (wall, cpu) = sw.elapsed();
    let (hops, sum) = ring::tally(&mut sim).unwrap();
    println!(
        "hops {hops} sum {sum} wall {wall:.3} cpu {cpu:.3} hops/cpu-s {:.3e} ticks {}",
        hops as f64 / cpu,
        sim.counters().ticks
    );
}
