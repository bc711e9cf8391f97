//! The per-node build against the single-component reference ([`crate::collective::run`]),
//! first principles, conservation and determinism.

use super::{build_collective, run_kernel, run_kernel_with, FabricClock};
use crate::collective::{run, Collective, Params, RunResult};
use crate::topo::{self, Topology};
use trnsim_kernel::{SimBuilder, SimOptions, TickOrder};

fn preset(name: &str) -> Topology {
    topo::load(&topo::presets_dir().join(format!("{name}.ron"))).unwrap_or_else(|e| panic!("{e}"))
}

fn coll(s: &str) -> Collective {
    s.parse().unwrap()
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

/// Old and new completion times for one case, and the relative difference.
fn compare(t: &Topology, c: &str, size: u64) -> (RunResult, RunResult, f64) {
    let p = Params::default();
    let old = run(t, coll(c), size, &p).unwrap_or_else(|e| panic!("{} {c} {size}: {e}", t.name));
    let new = run_kernel(t, coll(c), size, &p).unwrap_or_else(|e| panic!("{} {c} {size}: {e}", t.name));
    let rel = new.finish_ps as f64 / old.finish_ps as f64 - 1.0;
    (old, new, rel)
}

/// Prints the agreement table of docs/fabric.md ("Per-node kernel build"):
/// `cargo test --release -p trnsim-fabric agreement_table -- --ignored --nocapture`.
#[test]
#[ignore]
fn agreement_table() {
    let cases: &[(&str, &[&str])] = &[
        ("trn2-server-4x4", &["ring", "direct", "halving_doubling"]),
        ("trn2-ultraserver-4x4x4", &["ring", "direct", "halving_doubling"]),
        ("trn3-gen1-nl32x2", &["ring", "direct", "halving_doubling", "pipelined"]),
        ("trn3-gen2-nl72x2", &["ring", "direct", "pipelined"]),
    ];
    for &(name, algos) in cases {
        let t = preset(name);
        for a in algos {
            for size in [64 * KIB, MIB, 16 * MIB] {
                let c = format!("all_reduce:{a}");
                let (old, new, rel) = compare(&t, &c, size);
                eprintln!(
                    "| {name} | {a} | {} KiB | {:.3} | {:.3} | {:+.4} % |",
                    size / KIB,
                    old.finish_ps as f64 * 1e-6,
                    new.finish_ps as f64 * 1e-6,
                    rel * 100.0
                );
            }
        }
    }
}

/// Tolerance of completion times against the reference: 1 %. Sources (measured in
/// `agreement_table`, worst +0.65 %): a packet that is not a multiple of the bytes per cycle
/// rounds up to a whole cycle (a 456-byte direct all-reduce chunk on 144 chips: 15 cycles
/// instead of 14.25, +5 % on every packet; a 4x finer clock brings that case to +0.001 %), and
/// packets arriving at one node within one cycle are queued in input-port order instead of
/// exact arrival order (one packet's serialization on a contended link: -0.47 % on the 64-chip
/// torus' 64 KiB direct all-reduce). Latency rounding (<= half a cycle per hop) and step
/// timers on edges (< 1 cycle per step) add < 0.05 %. Bandwidth-bound cases with full packets
/// agree within 0.05 %.
const TOLERANCE: f64 = 0.01;

/// All-reduces of `algos` and `sizes` on preset `name` finish when the single-component
/// reference says (within 1 %; 0.05 % at 16 MiB).
fn completion_times_agree(name: &str, algos: &[&str], sizes: &[u64]) {
    let t = preset(name);
    for a in algos {
        for &size in sizes {
            let (_, _, rel) = compare(&t, &format!("all_reduce:{a}"), size);
            assert!(rel.abs() < TOLERANCE, "{name} {a} {size}: {:+.3} %", rel * 100.0);
            if size == 16 * MIB {
                assert!(rel.abs() < 5e-4, "{name} {a} {size}: {:+.4} %", rel * 100.0);
            }
        }
    }
}

// One test per preset, so the test threads share them.
#[test]
fn completion_times_agree_with_the_single_component_reference_trn2_server() {
    completion_times_agree("trn2-server-4x4", &["ring", "direct", "halving_doubling"], &[64 * KIB, MIB, 16 * MIB]);
}

#[test]
fn completion_times_agree_with_the_single_component_reference_trn2_ultraserver() {
    let sizes = [64 * KIB, MIB, 16 * MIB];
    completion_times_agree("trn2-ultraserver-4x4x4", &["ring", "direct", "halving_doubling"], &sizes);
}

#[test]
fn completion_times_agree_with_the_single_component_reference_trn3_gen1() {
    completion_times_agree("trn3-gen1-nl32x2", &["ring", "direct", "halving_doubling"], &[64 * KIB, MIB, 16 * MIB]);
    completion_times_agree("trn3-gen1-nl32x2", &["hierarchical", "pipelined"], &[MIB, 16 * MIB]);
}

#[test]
fn completion_times_agree_with_the_single_component_reference_trn3_gen2() {
    completion_times_agree("trn3-gen2-nl72x2", &["ring", "direct", "pipelined"], &[64 * KIB, MIB]);
}

#[test]
fn every_byte_is_delivered_exactly_once_and_links_count_it_per_hop() {
    for (name, c) in [
        ("trn2-server-4x4", "all_reduce:ring"),
        ("trn2-ultraserver-4x4x4", "all_reduce:halving_doubling"),
        ("trn3-gen1-nl32x2", "all_reduce:direct"),
        ("trn3-gen2-nl72x2", "all_to_all"),
        ("trn3-gen1-nl32x2", "broadcast:ring"),
    ] {
        let t = preset(name);
        let size = 3 * MIB + 1234;
        let (old, new, _) = compare(&t, c, size);
        assert!(new.msgs.iter().all(|m| m.left == 0 && m.delivered_bytes == m.bytes && m.done_ps.is_some()), "{c}");
        let sum = |r: &RunResult| r.msgs.iter().map(|m| m.bytes).sum::<u64>();
        assert_eq!(sum(&new), sum(&old), "{name} {c}: same messages");
        assert_eq!(new.msgs.len(), old.msgs.len());
        // Each message crosses every hop of its path once, on the edges and on the kernel links.
        let hop_bytes: u64 = new.msgs.iter().map(|m| m.bytes * t.hops(m.src, m.dst) as u64).sum();
        assert_eq!(new.edge_stats.iter().map(|s| s.bytes).sum::<u64>(), hop_bytes, "{name} {c}");
        let link_bytes: u64 = new
            .report
            .owners
            .iter()
            .filter(|(k, _)| k.starts_with("link:"))
            .map(|(k, _)| new.report.int(k, "bytes").unwrap())
            .sum();
        assert_eq!(link_bytes, hop_bytes, "{name} {c}: kernel link statistics");
        // Per chip: everything it was sent, and credits never held a packet back.
        for c in 0..t.chips {
            let owner = super::node_name(&t, c);
            let got: u64 = new.msgs.iter().filter(|m| m.dst == c).map(|m| m.bytes).sum();
            assert_eq!(new.report.int(&owner, "bytes_received"), Some(got));
        }
        for (owner, stats) in &new.report.owners {
            if let Some(trnsim_kernel::StatValue::Int(v)) = stats.get("credit_stalls") {
                assert_eq!(*v, 0, "{owner}");
            }
        }
    }
}

#[test]
fn ring_all_reduce_on_16_chips_matches_the_analytic_model() {
    let t = preset("trn2-server-4x4");
    let (n, b) = (16.0, 16 * MIB);
    let r = run_kernel(&t, coll("all_reduce:ring"), b, &Params::default()).unwrap();
    let e = &t.edges[0];
    let bw = e.bytes_per_s * f64::from(e.servers);
    let steps = 2.0 * (n - 1.0);
    let analytic = steps / n * b as f64 / bw + steps * 1.5e-6;
    let sim = r.finish_ps as f64 * 1e-12;
    assert!((sim / analytic - 1.0).abs() < 0.01, "sim {sim} vs analytic {analytic}");
}

fn report_json(opts: SimOptions, t: &Topology, c: &str, size: u64) -> String {
    let r = run_kernel_with(SimBuilder::with_options(opts), t, coll(c), size, &Params::default()).unwrap();
    serde_json::to_string(&r.report).unwrap()
}

#[test]
fn runs_are_deterministic_whatever_the_tick_order() {
    let t = preset("trn3-gen1-nl32x2");
    for (c, size) in [("all_reduce:direct", MIB), ("all_reduce:ring", 256 * KIB)] {
        let a = report_json(SimOptions::default(), &t, c, size);
        let b = report_json(SimOptions::default(), &t, c, size);
        assert_eq!(a, b, "{c}");
        let shuffled = SimOptions { tick_order: TickOrder::Shuffled(7), ..SimOptions::default() };
        let s1 = report_json(shuffled.clone(), &t, c, size);
        let s2 = report_json(shuffled, &t, c, size);
        assert_eq!(s1, s2, "{c}");
        assert_eq!(a, s1, "{c}: tick order changes nothing");
        let reversed = SimOptions { tick_order: TickOrder::Reversed, ..SimOptions::default() };
        assert_eq!(a, report_json(reversed, &t, c, size), "{c}");
    }
}

#[test]
fn components_are_named_per_node_and_links_carry_the_topology_latency() {
    let t = preset("trn3-gen2-nl72x2");
    let mut b = SimBuilder::new();
    let h = build_collective(&mut b, &t, coll("all_reduce:ring"), MIB, &Params::default()).unwrap();
    let sim = b.build().unwrap();
    let names = sim.component_names();
    assert_eq!(names.len(), t.nodes.len());
    assert_eq!((names[0].as_str(), names[143].as_str(), names[144].as_str()), ("chip000", "chip143", "sw000"));
    assert_eq!(names.last().map(String::as_str), Some(format!("sw{:03}", t.nodes.len() - 145).as_str()));
    // One kernel link per physical link direction.
    let physical: u32 = t.edges.iter().map(|e| e.servers).sum();
    assert_eq!(sim.links().len(), physical as usize);
    let clock = FabricClock::for_topology(&t);
    let period_ps = 1e12 / clock.freq.as_hz() as f64;
    let mut i = 0;
    for e in &t.edges {
        for _ in 0..e.servers {
            let l = &sim.links()[i];
            assert!(l.spec.latency.0 >= 1);
            // Latency = the edge's fixed latency (to half a cycle) + the first byte's cycle.
            let want = e.latency_ps as f64 / period_ps + 1.0;
            assert!((l.spec.latency.0 as f64 - want).abs() <= 0.5, "{}: {:?} vs {want}", l.name, l.spec.latency);
            i += 1;
        }
    }
    // A partitioner's lookahead: the smallest latency or credit latency of a (cut) link.
    let min_lat = sim.links().iter().map(|l| l.spec.latency.0.min(l.spec.credit_latency.0)).min().unwrap();
    assert!((min_lat as f64 * period_ps - 55_000.0).abs() < period_ps, "lookahead = the 55 ns link latency");
    assert_eq!(h.nodes.len(), t.nodes.len());
}

#[test]
fn the_clock_makes_full_packets_exact() {
    for name in ["trn2-server-4x4", "trn3-gen2-nl72x2"] {
        let t = preset(name);
        let c = FabricClock::for_topology(&t);
        let hz = c.freq.as_hz();
        assert!((1_000_000_000..2_000_000_000).contains(&hz), "{name}: {hz}");
        let e = &t.edges[0];
        let ser_ps = c.serialization_cycles(e, t.packet_bytes) as f64 * 1e12 / hz as f64;
        assert!((ser_ps - e.serialization_ps(t.packet_bytes) as f64).abs() < 1.0, "{name}: {ser_ps}");
        // The kernel's busy time (whole picoseconds per cycle) ends within the packet's last
        // cycle, so the kernel link and this model agree on when it frees.
        let q = 1_000_000_000_000 / hz;
        let lost = c.serialization_cycles(e, t.packet_bytes) as f64 * (1e12 / hz as f64 - q as f64);
        assert!(lost < q as f64, "{name}");
    }
}

// ---- Sequences of collectives (build_jobs) and the doorbell/done hookup ----

use super::{build_jobs, reserve_nodes, ChipHooks, ChipNode, Job};
use trnsim_kernel::{Activity, Component, ComponentId, Ctx, Dur, InPort, LinkSpec, OutPort, Simulation, Time};

/// Rings a doorbell once at `at` with `value`, and counts completions.
struct Bell {
    out: OutPort<u32>,
    done: InPort<u32>,
    at: Time,
    value: u32,
    rung: bool,
    completions: u32,
}

impl Component for Bell {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        while let Some(v) = cx.recv(self.done) {
            self.completions += v;
        }
        if !self.rung && cx.now() >= self.at && cx.send(self.out, self.value).is_ok() {
            self.rung = true;
        }
        if !self.rung {
            cx.wake_at(self.at);
        }
        Activity::Idle
    }
}

fn small_link() -> LinkSpec {
    LinkSpec { latency: trnsim_kernel::Cycles(1), depth: 8, ..LinkSpec::default() }
}

/// `jobs` on `t`, chips `bells` each hooked to one [`Bell`] ringing `(at, value)`, built but
/// not run; with the fabric node ids and the bells' ids.
fn build_with_bells(
    t: &Topology,
    jobs: &[Job],
    bells: &[(usize, Time, u32)],
) -> (Simulation, Vec<ComponentId>, Vec<ComponentId>) {
    let mut b = SimBuilder::new();
    let nodes = reserve_nodes(&mut b, t).unwrap();
    let mut hooks = vec![ChipHooks::default(); t.chips];
    let mut bell_ids = Vec::new();
    for &(c, at, value) in bells {
        let id = b.reserve(&format!("bell{c}"), nodes.clock_id).unwrap();
        let (out, rx) = b.link::<u32>(id, "ring", nodes.ids[c], "doorbell", small_link()).unwrap();
        let (tx, done) = b.link::<u32>(nodes.ids[c], "done", id, "done", small_link()).unwrap();
        hooks[c].doorbells.push(rx);
        hooks[c].done.push(tx);
        b.install(id, Bell { out, done, at, value, rung: false, completions: 0 }).unwrap();
        bell_ids.push(id);
    }
    build_jobs(&mut b, t, &nodes, jobs, &Params::default(), hooks, false).unwrap();
    (b.build().unwrap(), nodes.ids, bell_ids)
}

/// [`build_with_bells`], run until idle.
fn run_jobs(
    t: &Topology,
    jobs: &[Job],
    bells: &[(usize, Time, u32)],
) -> (Simulation, Vec<ComponentId>, Vec<ComponentId>) {
    let (mut sim, ids, bell_ids) = build_with_bells(t, jobs, bells);
    sim.run_until_idle(Dur::from_us(100_000)).unwrap();
    (sim, ids, bell_ids)
}

fn finish(sim: &Simulation, ids: &[ComponentId], chips: &[usize]) -> u64 {
    chips.iter().map(|&c| sim.component::<ChipNode>(ids[c]).unwrap().done_ps().expect("finished")).max().unwrap()
}

#[test]
fn a_sequence_of_two_collectives_runs_them_back_to_back() {
    let t = preset("trn2-server-4x4");
    let all: Vec<usize> = (0..t.chips).collect();
    let ar = coll("all_reduce:ring");
    let a = Job::collective("a", ar, t.chips, MIB, &t.ring, 0).unwrap();
    let alone = run_kernel(&t, ar, MIB, &Params::default()).unwrap().finish_ps;
    let (sim, ids, _) = run_jobs(&t, &[a.clone(), a], &[]);
    let both = finish(&sim, &ids, &all);
    // The second starts on each chip one overhead after its first completes: chips finish the
    // first within a few packet times of each other, so two take twice one, give or take that.
    let rel = both as f64 / (2 * alone) as f64 - 1.0;
    assert!(rel.abs() < 0.01, "two ring all-reduces {both} ps vs 2 x {alone} ps ({:+.3} %)", rel * 100.0);
    let node = sim.component::<ChipNode>(ids[0]).unwrap();
    assert_eq!(node.phase_done_ps().len(), 2);
    assert_eq!(node.phase_done_ps()[1], node.done_ps());
}

#[test]
fn a_collective_waits_for_every_chips_doorbell_and_signals_completion() {
    let t = preset("trn2-server-4x4");
    let all: Vec<usize> = (0..t.chips).collect();
    let ar = coll("all_reduce:ring");
    let job = Job::collective("a", ar, t.chips, 64 * KIB, &t.ring, 3).unwrap();
    let alone = run_kernel(&t, ar, 64 * KIB, &Params::default()).unwrap().finish_ps;
    // Chip 5 rings late (20 us); the others at 1 us. A ring all-reduce cannot finish before
    // chip 5 starts, and no chip may issue before its own doorbell.
    let late = Time::from_ps(20_000_000);
    let bells: Vec<(usize, Time, u32)> =
        all.iter().map(|&c| (c, if c == 5 { late } else { Time::from_ps(1_000_000) }, 3)).collect();
    let (sim, ids, bell_ids) = run_jobs(&t, &[job], &bells);
    let overhead = Params::default().step_overhead.as_ps();
    for &c in &all {
        let node = sim.component::<ChipNode>(ids[c]).unwrap();
        let first = node.issued_ps()[0].unwrap();
        let rung = if c == 5 { late.as_ps() } else { 1_000_000 };
        assert!(first >= rung + overhead, "chip {c} issued at {first} ps before its doorbell at {rung} + overhead");
        assert_eq!(node.doorbells(), 3);
    }
    let end = finish(&sim, &ids, &all);
    assert!(end >= late.as_ps() + alone - overhead, "finished at {end} ps, before chip 5 could have taken part");
    for id in bell_ids {
        assert_eq!(sim.component::<Bell>(id).unwrap().completions, 1, "one completion per collective");
    }
}

#[test]
fn too_few_doorbells_leave_the_collective_waiting_and_the_run_reports_it() {
    let t = preset("trn2-server-4x4");
    let job = Job::collective("a", coll("all_reduce:ring"), t.chips, 64 * KIB, &t.ring, 4).unwrap();
    let bells: Vec<(usize, Time, u32)> = (0..t.chips).map(|c| (c, Time::from_ps(1000), 3)).collect();
    let (mut sim, _, _) = build_with_bells(&t, &[job], &bells);
    let err = sim.run_until_idle(Dur::from_us(1000)).unwrap_err().to_string();
    assert!(err.contains("chip"), "a deadlock naming the waiting chips, got: {err}");
}

#[test]
fn doorbells_without_hooks_are_a_build_error() {
    let t = preset("trn2-server-4x4");
    let job = Job::collective("a", coll("all_reduce:ring"), t.chips, 64 * KIB, &t.ring, 1).unwrap();
    let mut b = SimBuilder::new();
    let nodes = reserve_nodes(&mut b, &t).unwrap();
    let err = build_jobs(&mut b, &t, &nodes, &[job], &Params::default(), Vec::new(), false).unwrap_err();
    assert!(err.contains("chip0") && err.contains("doorbell"), "{err}");
}

#[test]
fn a_collective_among_some_chips_leaves_the_others_out() {
    let t = preset("trn3-gen1-nl32x2");
    let members = [0, 5, 9, 40];
    let job = Job::among("sub", coll("all_reduce:ring"), t.chips, &members, MIB, 0).unwrap();
    let (sim, ids, _) = run_jobs(&t, &[job], &[]);
    let end = finish(&sim, &ids, &members);
    for (c, &id) in ids.iter().enumerate().take(t.chips) {
        let node = sim.component::<ChipNode>(id).unwrap();
        if members.contains(&c) {
            assert_eq!(node.issued_ps().len(), 2 * (members.len() - 1), "ring: 2(n-1) steps");
        } else {
            assert_eq!((node.issued_ps().len(), node.done_ps()), (0, Some(0)), "chip {c} takes no part");
        }
    }
    // 4 chips, 1 MiB, ring: 6 steps of 256 KiB, each at least one overhead and the chunk at
    // the chip's whole injection bandwidth.
    let p = Params::default();
    let xfer_ps = (256 * KIB) as f64 / t.injection_bytes_per_s(0) * 1e12;
    let bound = 6.0 * (p.step_overhead.as_ps() as f64 + xfer_ps);
    assert!(end as f64 >= bound, "{end} ps is faster than 6 ring steps allow ({bound} ps)");
    assert!((end as f64) < 2.0 * bound, "{end} ps: 4 chips on a switched fabric should not take 2x the bound");
    let bytes: u64 =
        members.iter().map(|&c| sim.report().int(&super::node_name(&t, c), "bytes_received").unwrap()).sum();
    assert_eq!(bytes, 4 * 2 * 3 * 256 * KIB, "every member receives 2(n-1) chunks of size/n");
}

#[test]
fn a_chip_listed_twice_among_members_is_an_error() {
    let t = preset("trn2-server-4x4");
    let err = Job::among("dup", coll("all_reduce:ring"), t.chips, &[0, 3, 3], MIB, 0).unwrap_err();
    assert!(err.contains("dup") && err.contains("twice"), "{err}");
}
