//! Property: every system config `config::parse` accepts builds and runs a bounded simulation
//! without a panic, a build error (a range the validator missed) or a false deadlock; every one
//! it refuses gets a one-line located error. Inputs are hostile mutations of the demo config
//! and configs generated from `arbitrary` data, from a fixed seed (`TRNSIM_FUZZ_*`, see
//! docs/validation.md).

use crate::common::{fuzz_bytes, hostile_number, hostile_quantity, is_located, mutate, FuzzBudget};
use arbitrary::Unstructured;
use trnsim_harness::config;
use trnsim_kernel::{Dur, RunError, TickOrder};

/// Checks one config text; returns whether it was accepted.
fn check(name: &str, text: &str) -> bool {
    let sys = match config::parse(name, text) {
        Ok(s) => s,
        Err(e) => {
            let e = e.to_string();
            assert!(is_located(&e), "unlocated error for\n{text}\n{e}");
            return false;
        }
    };
    let run = std::panic::catch_unwind(|| {
        let mut sim = trnsim_harness::system::build(&sys, TickOrder::Structural)
            .unwrap_or_else(|e| panic!("accepted config does not build: {e}"));
        let limit = sys.limit.min(Dur::from_us(2));
        match sim.run_for(limit) {
            Ok(_) => {}
            Err(RunError::Deadlock(d)) => panic!("false deadlock on an accepted config: {d}"),
            Err(e) => panic!("run failed: {e}"),
        }
        assert!(sim.now().as_ps() <= limit.as_ps(), "ran past its limit");
    });
    if let Err(p) = run {
        let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
        panic!("{name}: {}\n--- config ---\n{text}", msg.unwrap_or_default());
    }
    true
}

/// A config generated from arbitrary data: a few clocks, a chain of sources, relays and sinks
/// with hostile numbers everywhere.
fn generated(u: &mut Unstructured<'_>) -> String {
    let clocks = 1 + u.choose_index(3).unwrap_or(0);
    let mut s = String::from("(\n    seed: 1,\n    clocks: [\n");
    for c in 0..clocks {
        let freq = if u.ratio(1, 2).unwrap_or(true) {
            ["1GHz", "1.4GHz", "100MHz", "1Hz", "500GHz"][u.choose_index(5).unwrap_or(0)].to_string()
        } else {
            hostile_quantity(u)
        };
        s += &format!("        (name: \"c{c}\", freq: \"{freq}\"),\n");
    }
    s += "    ],\n    components: [\n";
    let chains = 1 + u.choose_index(2).unwrap_or(0);
    let mut links = String::new();
    for k in 0..chains {
        let small = |u: &mut Unstructured<'_>| {
            if u.ratio(2, 3).unwrap_or(true) {
                1 + u.choose_index(8).unwrap_or(0) as u64
            } else {
                hostile_number(u)
            }
        };
        let clock = |u: &mut Unstructured<'_>| u.choose_index(clocks).unwrap_or(0);
        let bytes = if u.ratio(1, 2).unwrap_or(true) { 64 } else { hostile_number(u) };
        s += &format!(
            "        (name: \"s{k}\", clock: \"c{}\", kind: Source(count: {}, bytes: {bytes}, rate: 1.0)),\n",
            clock(u),
            small(u)
        );
        let relays = u.choose_index(3).unwrap_or(0);
        let mut prev = format!("s{k}.out");
        for r in 0..relays {
            s += &format!(
                "        (name: \"r{k}_{r}\", clock: \"c{}\", kind: Relay(delay: {}, slots: {})),\n",
                clock(u),
                small(u),
                small(u)
            );
            links += &link(u, &prev, &format!("r{k}_{r}.in"));
            prev = format!("r{k}_{r}.out");
        }
        s += &format!("        (name: \"k{k}\", clock: \"c{}\", kind: Sink),\n", clock(u));
        links += &link(u, &prev, &format!("k{k}.in"));
    }
    let window = if u.ratio(1, 3).unwrap_or(false) {
        format!(", deadlock_window: \"{}\"", hostile_quantity(u))
    } else {
        String::new()
    };
    s + "    ],\n    links: [\n" + &links + &format!("    ],\n    run: (limit: \"2us\"{window}),\n)\n")
}

fn link(u: &mut Unstructured<'_>, from: &str, to: &str) -> String {
    let small = |u: &mut Unstructured<'_>| {
        if u.ratio(2, 3).unwrap_or(true) {
            1 + u.choose_index(8).unwrap_or(0) as u64
        } else {
            hostile_number(u)
        }
    };
    let bw = match u.choose_index(3).unwrap_or(0) {
        0 => String::new(),
        1 => format!(", bandwidth: \"{}B/cycle\"", small(u)),
        _ => format!(", bandwidth: \"{}\"", hostile_quantity(u)),
    };
    format!(
        "        (from: \"{from}\", to: \"{to}\", latency: {}, depth: {}, credit_latency: {}{bw}),\n",
        small(u),
        small(u),
        small(u)
    )
}

#[test]
fn fuzz_system_configs_are_refused_located_or_run_bounded() {
    let demo = trnsim_harness::system::DEMO_RON;
    let budget = FuzzBudget::from_env(300);
    let (mut accepted, mut total) = (0, 0);
    for seed in budget.seeds() {
        let bytes = fuzz_bytes(seed, 4096);
        let mut u = Unstructured::new(&bytes);
        let text = if seed % 2 == 0 { mutate(demo, &mut u) } else { generated(&mut u) };
        accepted += u64::from(check(&format!("seed{seed}.ron"), &text));
        total += 1;
    }
    // The pass must exercise both sides of the validator.
    assert!(total < 20 || (accepted > 0 && accepted < total), "{accepted} of {total} accepted");
}
