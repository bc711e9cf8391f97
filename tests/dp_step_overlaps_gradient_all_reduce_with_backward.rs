//! A data-parallel step across UltraServers (`dp-step-N`): the gradient all-reduce overlaps the
//! backward pass bucket by bucket, the step is identical serially, on threads and over bytes
//! (each partition making only its own components), and bad names are refused.

use trnsim_benchmarks::dp::{DpStep, DpSystem};
use trnsim_benchmarks::parallel::system;
use trnsim_kernel::{
    run_threads, run_transport, BuildScope, LoopbackTransport, ParallelConfig, PartitionRule, TickOrder,
};

fn headline(h: &[(String, f64)], key: &str) -> f64 {
    h.iter().find(|(k, _)| k == key).unwrap_or_else(|| panic!("no {key} in {h:?}")).1
}

/// Two UltraServers (288 chips), 1 MiB of gradient in 4 buckets over 262,144 tokens (about as
/// long per bucket as one bucket's all-reduce).
const SMALL: &str = "dp-step-2:1M:4:262144";

#[test]
fn the_step_overlaps_communication_with_the_backward_pass() {
    let sys = system(SMALL, TickOrder::Structural).unwrap();
    let (stats, _) = sys.run_serial(None).unwrap();
    let h = sys.headline(&stats).unwrap();
    let dp = DpSystem::new(DpStep::parse(SMALL).unwrap()).unwrap();
    assert_eq!(headline(&h, "chips"), 288.0);
    // The backward pass is what the FLOPs give: 4 x 0.5 M params x 262,144 tokens at 60 % of peak.
    let want_us = 4.0 * (1 << 19) as f64 * 262_144.0 / (dp.peak_tflops * 1e12 * 0.6) * 1e6;
    let backward = headline(&h, "backward_us");
    assert!((backward - want_us).abs() < 1e-3, "backward {backward} us, FLOPs give {want_us}");
    // The step is the backward pass plus what communication it leaves exposed, and that is
    // less than all the buckets' all-reduces in a row: the first buckets ran during the pass.
    let (step, exposed, last) =
        (headline(&h, "step_us"), headline(&h, "exposed_comm_us"), headline(&h, "last_allreduce_us"));
    assert!((step - backward - exposed).abs() < 1e-6, "{h:?}");
    assert!(exposed > last && exposed < 4.0 * last, "exposed {exposed} us, one all-reduce {last} us: {h:?}");
    // Each bucket's all-reduce starts only after its doorbell: none began before its bucket.
    let bucket_ps = dp.bucket_ps;
    for (owner, s) in &stats.owners {
        if !s.contains_key("finish_ps") {
            continue; // not a chip's collective engine
        }
        for k in 0..4u64 {
            let ready = s.get(&format!("phase{k}_ready_ps")).map(|v| v.as_f64() as u64).unwrap();
            assert!(ready >= (k + 1) * bucket_ps, "{owner} bucket {k} ready at {ready} ps, before its compute ended");
        }
    }
}

#[test]
fn the_step_is_identical_serial_on_threads_and_over_bytes() {
    let sys = system(SMALL, TickOrder::Structural).unwrap();
    let (serial, _) = sys.run_serial(None).unwrap();
    let serial = serde_json::to_string(&serial).unwrap();
    let dp = DpSystem::new(DpStep::parse(SMALL).unwrap()).unwrap();
    let build = || dp.declare(TickOrder::Structural);
    let limit = trnsim_kernel::Dur::from_ms(10_000);
    let by_us = PartitionRule::ByName { depth: 1 };
    let cfg = ParallelConfig {
        workers: None,
        threads: 2,
        rule: by_us.clone(),
        min_lookahead: None,
        on_window: None,
        report_where: None,
    };
    let (run, _) = run_threads(build, &cfg, limit, None, |_| ()).unwrap();
    assert_eq!(serial, serde_json::to_string(&run.report).unwrap(), "2 threads by UltraServer");
    // Over bytes with the default rule: by UltraServer, the EFA switches spread.
    let default_rule = sys.default_rule(2);
    assert_eq!(default_rule.to_string(), "by-name:1,attach=efa");
    let two = ParallelConfig::new(2, default_rule.clone());
    let reports = std::thread::scope(|s| {
        let mut eps = LoopbackTransport::group(2);
        let mut t1 = eps.pop().unwrap();
        let mut t0 = eps.pop().unwrap();
        let cfg = &two;
        let h = s.spawn(move || run_transport(build, cfg, &mut t1, limit, None, None).map(|r| r.is_none()));
        let r0 = run_transport(build, cfg, &mut t0, limit, None, None).unwrap();
        assert!(h.join().unwrap().unwrap(), "rank 1 returns nothing");
        r0.unwrap().report
    });
    assert_eq!(serial, serde_json::to_string(&reports).unwrap(), "2 ranks over bytes");
}

#[test]
fn a_partition_prepares_only_its_own_chips() {
    // Declared to plan: nothing made, nothing to build serially.
    let dp = DpSystem::new(DpStep::parse(SMALL).unwrap()).unwrap();
    let declared = BuildScope::Declare.enter(|| dp.declare(TickOrder::Structural)).unwrap();
    let plan = declared.plan(&PartitionRule::ByName { depth: 1 }, 2, None).unwrap();
    let err = declared.build().err().expect("a declaration does not build").to_string();
    assert!(err.contains("planning only"), "{err}");
    // Partition 1 makes the second UltraServer's chips and none of the first's.
    let scope = BuildScope::Part { part_of: plan.part_of.clone().into(), links: plan.links, me: 1, tracks: false };
    let b = scope.enter(|| dp.declare(TickOrder::Structural)).unwrap();
    let sim = b.build_partition(&plan, 1).unwrap();
    let id = |chip: usize| {
        let n = trnsim_fabric::system::node_name(&dp.topo, chip);
        sim.component_id(&n).unwrap_or_else(|| panic!("{n} declared in every partition"))
    };
    assert!(sim.component::<trnsim_fabric::system::ChipNode>(id(144)).is_some(), "us1's first chip is made");
    assert!(sim.component::<trnsim_fabric::system::ChipNode>(id(0)).is_none(), "us0's first chip is not");
    // A builder declared for one partition refuses to build another.
    let scope = BuildScope::Part { part_of: plan.part_of.clone().into(), links: plan.links, me: 1, tracks: false };
    let b = scope.enter(|| dp.declare(TickOrder::Structural)).unwrap();
    let err = b.build_partition(&plan, 0).err().expect("wrong partition").to_string();
    assert!(err.contains("partition 1"), "{err}");
}

#[test]
fn bad_step_names_are_refused_with_the_syntax() {
    for (name, says) in [
        ("dp-step-0", "N \"0\""),
        ("dp-step-9", "N \"9\""),
        ("dp-step-2:0", "GRADIENT \"0\""),
        ("dp-step-2:8G", "GRADIENT \"8G\""),
        ("dp-step-2:1M:0", "BUCKETS \"0\""),
        ("dp-step-2:1M:65", "BUCKETS \"65\""),
        ("dp-step-2:1M:4:0", "TOKENS \"0\""),
        ("dp-step-2:1M:4:64:1", "field \"1\""),
        ("dp-step-2:1000K:3", "does not split into 3 equal buckets"),
    ] {
        let err = DpStep::parse(name).err().unwrap_or_else(|| panic!("{name} accepted"));
        assert!(err.contains(says), "{name}: {err}");
    }
    let err = system("dp-step-x", TickOrder::Structural).err().unwrap();
    assert!(err.contains("dp-step-N[:GRADIENT"), "{err}");
}
