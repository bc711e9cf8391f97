//! Partitioned runs of the systems that can be split (`trnsim run --threads N`) by name, and
//! the serial-against-parallel speed benchmark (`trnsim bench parallel`). The runs themselves
//! are [`crate::partitioned`]'s, re-exported here with the whole-chip systems of
//! [`crate::tp`] and [`crate::moe`].

pub use crate::moe::moe_system;
use crate::partitioned::Kind;
pub use crate::partitioned::{result, run_in_windows, workers_for, System, WINDOW_FLOOR};
use crate::result::BenchResult;
pub use crate::tp::tp_system;
use trnsim_fabric::collective::{Collective, Params};
use trnsim_fabric::topo::Topology;
use trnsim_kernel::{Dur, PartitionRule, SimBuilder, SimOptions, TickOrder, TraceOptions, TraceSink};

/// The systems `--threads` can split, with what they are.
pub const PARTITIONABLE: &[(&str, &str)] = &[
    (
        "fabric-allreduce-nl72x2-nodes",
        "144-chip Trn3 Gen2 (NL72x2) ring all-reduce of 16 MiB, built per chip and switch (partitionable)",
    ),
    (
        "fabric-allreduce-ultracluster-nodes",
        "128-chip Trn3 Gen1 UltraCluster (2 UltraServers over EFA) hierarchical all-reduce of 4 MiB, built per chip and switch (partitionable; by UltraServer by default)",
    ),
    (
        "tp-matmul-N",
        "N whole Trn3 chips (8 NeuronCores, 4 HBM3E stacks each) on the Gen1 UltraServer fabric: the tensor-parallel matmul (partitionable by chip, the default; a partition holds whole chips)",
    ),
    (
        "moe-alltoall-144",
        "one mixture-of-experts step on the 144 whole Trn3 chips of the Gen2 UltraServer: dispatch all-to-all, experts, combine all-to-all (partitionable by chip, the default; a partition holds whole chips)",
    ),
    (
        "dp-step-N",
        "a data-parallel step on N Trn3 Gen2 UltraServers over EFA (144 N chips): backward compute per chip, gradient all-reduced bucket by bucket, overlapped (partitionable; by UltraServer by default; dp-step-N:GRADIENT:BUCKETS:TOKENS)",
    ),
    ("kernel-ring", "64-module token ring (1-cycle links: one window per cycle; correctness, not speed)"),
    ("kernel-random-graph:SEED", "a random graph of chattering components (the kernel's stress system; many deadlock)"),
];

/// The topology and collective of the 144-chip benchmark.
fn nl72x2() -> Result<(Topology, Collective), String> {
    let topo = trnsim_fabric::topo::load(&trnsim_fabric::topo::presets_dir().join("trn3-gen2-nl72x2.ron"))?;
    let coll: Collective = "all_reduce:ring".parse()?;
    Ok((topo, coll))
}

/// The topology and collective of the UltraCluster benchmark: 2 Trn3 Gen1 UltraServers.
fn ultracluster() -> Result<(Topology, Collective), String> {
    let sys = trnsim_system::doc::SystemDoc::open("trn3-gen1-ultracluster-2")?.resolve()?;
    let topo = sys.fabric().ok_or("trn3-gen1-ultracluster-2 has no fabric")?.clone();
    let coll: Collective = "all_reduce:hierarchical".parse()?;
    Ok((topo, coll))
}

/// The partitionable system `name`, with tick order `order`.
pub fn system(name: &str, order: TickOrder) -> Result<System, String> {
    let opts = move || SimOptions { tick_order: order, ..SimOptions::default() };
    match name {
        "fabric-allreduce-nl72x2-nodes" => {
            let (topo, coll) = nl72x2()?;
            let size = 16u64 << 20;
            let p = Params::default();
            let limit = p.limit;
            let (chips, busbw_factor) = (topo.chips, coll.op.busbw_factor(topo.chips));
            let build = move || -> Result<SimBuilder, String> {
                let mut b = SimBuilder::with_options(opts());
                trnsim_fabric::system::build_collective(&mut b, &topo, coll, size, &p)?;
                Ok(b)
            };
            let kind = Kind::Collective { size, chips, busbw_factor };
            Ok(System::new(build, limit, kind))
        }
        "fabric-allreduce-ultracluster-nodes" => {
            let (topo, coll) = ultracluster()?;
            let size = 4u64 << 20;
            let p = Params::default();
            let limit = p.limit;
            let (chips, busbw_factor) = (topo.chips, coll.op.busbw_factor(topo.chips));
            let ultraservers = (topo.chips / topo.chips_per_server.max(1)) as u32;
            let build = move || -> Result<SimBuilder, String> {
                let mut b = SimBuilder::with_options(opts());
                trnsim_fabric::system::build_collective(&mut b, &topo, coll, size, &p)?;
                Ok(b)
            };
            let kind = Kind::Collective { size, chips, busbw_factor };
            // By UltraServer: components are named `us0.…`, `us1.…`, `efa.…`; as many
            // partitions as UltraServers at most, the EFA switches spread among them.
            let default_rule = (by_ultraserver(), ultraservers);
            Ok(System::new(build, limit, kind).with_default_rule(default_rule))
        }
        "kernel-ring" => {
            let p = crate::ring::RingParams { modules: 64, tokens: 16, depth: 4 };
            let cycles = 200_000;
            let build = move || crate::ring::builder(p, opts());
            // The ring's clock is 1 GHz: `cycles` cycles are `cycles` ns.
            let (limit, kind) = (Dur::from_ns(cycles), Kind::Ring { cycles });
            Ok(System::new(build, limit, kind))
        }
        n if n.starts_with("tp-matmul-") => {
            let us = trnsim_system::chip::ultraserver::trn3_gen1()?;
            let chips = crate::tp::chips_of(n, us.topology.chips)?;
            tp_system(us.chip, us.topology, crate::tp::SHAPE, chips, order)
        }
        "moe-alltoall-144" => {
            let us = trnsim_system::chip::trn3_gen2()?;
            moe_system(us.chip, us.topology, crate::moe::SHAPE, order)
        }
        n if n.starts_with("dp-step-") => {
            let dp = crate::dp::DpSystem::new(crate::dp::DpStep::parse(n)?)?;
            let ultraservers = dp.step.ultraservers;
            let d2 = dp.clone();
            let build = move || d2.declare(order);
            // Long enough for the backward pass and every all-reduce (the run ends when idle).
            let limit = Dur::from_ms(10_000);
            let default_rule = (by_ultraserver(), ultraservers);
            let kind = Kind::Own(Box::new(move |stats| dp.headline(stats)));
            Ok(System::new(build, limit, kind).with_default_rule(default_rule))
        }
        n if n.starts_with("kernel-random-graph:") => {
            let seed = crate::random_graph::seed_of(n)?;
            let build = move || Ok(crate::random_graph::builder(seed, order).0);
            let (limit, kind) = (Dur::from_us(200), Kind::Graph);
            Ok(System::new(build, limit, kind))
        }
        _ => {
            let names: Vec<&str> = PARTITIONABLE.iter().map(|(n, _)| *n).collect();
            Err(format!("benchmark {name:?} cannot be partitioned (partitionable: {})", names.join(", ")))
        }
    }
}

/// The default rule on a cluster: one group per UltraServer (`us3.…`), the scale-out
/// switches (`efa.leaf2`, `efa.spine0`) not a group of their own but spread over the
/// partitions, each next to most of its links (they would otherwise all join the first
/// partition, which also gathers the statistics).
fn by_ultraserver() -> PartitionRule {
    PartitionRule::ByNameAttached { depth: 1, attach: "efa".into() }
}

/// `trnsim run --threads N NAME`: one benchmark result, with the partitions' timing table.
pub fn run_named(
    name: &str,
    order: TickOrder,
    threads: u32,
    rule: Option<&PartitionRule>,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
) -> Result<(BenchResult, String), String> {
    let sys = system(name, order)?;
    if let Some(why) = sys.one_thread().filter(|_| threads > 1) {
        eprintln!("{name}: {why}");
    }
    let rule = rule.cloned().unwrap_or_else(|| sys.default_rule(threads));
    let (run, wall_s) = sys.run_parallel(threads, &rule, trace)?;
    result(name, &sys, run, wall_s, Some(("threads", threads)))
}

/// `trnsim bench parallel`: the serial run, then each thread count, best of `reps` wall times;
/// checks that every parallel run's statistics equal the serial run's.
pub fn bench(name: &str, threads: &[u32], rule: Option<&PartitionRule>, reps: u32) -> Result<String, String> {
    // Partitions report everything here, as the serial run does, so the two compare in full.
    let sys = system(name, TickOrder::Structural)?.full_reports();
    let mut best = f64::MAX;
    let mut serial_stats = None;
    for _ in 0..reps.max(1) {
        let (st, w) = sys.run_serial(None)?;
        best = best.min(w);
        serial_stats = Some(st);
    }
    let serial_stats = serial_stats.expect("at least one run");
    let serial_json = serde_json::to_string(&serial_stats).map_err(|e| e.to_string())?;
    let mut out = format!(
        "{name}\n{:>8}  {:>10}  {:>8}  {:>9}  {:>14}\n",
        "threads", "wall_s", "speedup", "windows", "wait_us/window"
    );
    out.push_str(&format!("{:>8}  {:>10.3}  {:>8.2}  {:>9}  {:>14}\n", "serial", best, 1.0, "-", "-"));
    for &t in threads {
        let mut bw = f64::MAX;
        let mut last = None;
        for _ in 0..reps.max(1) {
            let r = rule.cloned().unwrap_or_else(|| sys.default_rule(t));
            let (run, w) = sys.run_parallel(t, &r, None)?;
            let json = serde_json::to_string(&run.report).map_err(|e| e.to_string())?;
            if json != serial_json {
                return Err(format!("{name}: statistics with {t} threads differ from the serial run's"));
            }
            bw = bw.min(w);
            last = Some(run);
        }
        let run = last.expect("at least one run");
        let windows = run.partitions.first().map_or(0, |p| p.windows);
        // The least waiting partition's wait per window: sync cost plus the imbalance within
        // windows that even the busiest partition sees (an upper bound of the sync cost).
        let sync =
            run.partitions.iter().map(|p| p.waiting.as_secs_f64() / windows.max(1) as f64).fold(f64::MAX, f64::min);
        out.push_str(&format!("{:>8}  {:>10.3}  {:>8.2}  {:>9}  {:>14.2}\n", t, bw, best / bw, windows, sync * 1e6));
        out.push_str(&run.timing_table());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The busy chips (those with components below their fabric node, `chip003.…`) in each
    /// partition of `name`'s default plan for `parts` partitions.
    fn busy_chips_per_partition(name: &str, parts: u32) -> Vec<usize> {
        let sys = system(name, TickOrder::Structural).unwrap();
        let b = trnsim_kernel::BuildScope::Declare.enter(&*sys.build).unwrap();
        let plan = b.plan(&sys.default_rule(parts), parts, None).unwrap();
        let mut chips = vec![std::collections::BTreeSet::new(); parts as usize];
        for (i, &part) in plan.part_of.iter().enumerate() {
            let name = b.name(trnsim_kernel::ComponentId::from_index(i));
            if let Some((chip, _)) = name.split_once('.').filter(|(c, _)| c.starts_with("chip")) {
                chips[part as usize].insert(chip.to_string());
            }
        }
        chips.iter().map(|c| c.len()).collect()
    }

    #[test]
    fn a_run_too_small_to_gain_runs_on_one_thread_with_the_serial_results() {
        let sys = system("kernel-ring", TickOrder::Structural).unwrap().full_reports();
        assert!(sys.one_thread().is_some());
        let (serial, _) = sys.run_serial(None).unwrap();
        let (run, _) = sys.run_parallel(2, &sys.default_rule(2), None).unwrap();
        assert_eq!(run.partitions.len(), 1, "one partition, one thread");
        assert!(serde_json::to_string(&serial).unwrap() == serde_json::to_string(&run.report).unwrap());
        assert!(system("fabric-allreduce-nl72x2-nodes", TickOrder::Structural).unwrap().one_thread().is_none());
    }

    #[test]
    fn whole_chip_systems_deal_their_busy_chips_evenly_by_default() {
        // The fabric's switches and its idle chips' nodes (one component each) are spread
        // next to their links; dealt as groups they took a partition's share, and
        // tp-matmul-4 on 4 partitions put busy chips 0 and 1 in one, none in another.
        assert_eq!(busy_chips_per_partition("tp-matmul-4", 4), [1, 1, 1, 1]);
        assert_eq!(busy_chips_per_partition("tp-matmul-4", 2), [2, 2]);
        assert_eq!(busy_chips_per_partition("tp-matmul-16", 4), [4, 4, 4, 4]);
        assert_eq!(busy_chips_per_partition("moe-alltoall-144", 48), vec![3; 48]);
    }
}
