//! `dp-step-N`: one data-parallel training step's backward pass and gradient all-reduce on `N`
//! Trn3 Gen2 UltraServers joined by EFA (`trn3-gen2-ultracluster-2` reshaped to `N`
//! UltraServers: 144 N chips), on the packet-level fabric built one component per chip and
//! switch, so that it splits by UltraServer over threads or MPI ranks.
//!
//! ```text
//!   us0.chip0000.bwd: |-- bucket 0 --|-- bucket 1 --|-- bucket 2 --| ...   backward compute
//!                                    ring            ring           ring   (one doorbell per bucket)
//!   us0.chip0000:                    [all-reduce 0 ][all-reduce 1 ]...     hierarchical, over
//!                                                                          NeuronLink and EFA
//! ```
//!
//! Every chip holds the whole gradient (`gradient` bytes, BF16) and computes its backward pass
//! over `tokens` tokens; the gradient is all-reduced in `buckets` equal buckets, each as soon as
//! the backward pass has produced it (bucket `b` at the end of `(b + 1) / buckets` of the
//! backward time) and after the previous bucket's all-reduce (one communication queue, as in
//! PyTorch DDP), so communication overlaps the rest of the backward pass. The backward pass is
//! `4 x parameters x tokens` FLOPs (twice the forward's `2 P T`) at the chip's dense BF16 peak
//! times `efficiency`.
//!
//! Leaves out: the forward pass and the optimizer step; compute inside the chip (a span's
//! length is given: [`trnsim_fabric::system::ComputeTimeline`]); contention of the
//! collectives' DMA and HBM traffic with the compute; gradient compression and sharded
//! optimizers (ZeRO).

use trnsim_fabric::collective::schedule;
use trnsim_fabric::collective::{Algo, Collective, Op, Params};
use trnsim_fabric::system::{build_jobs, reserve_nodes, ChipHooks, ComputeTimeline, Job};
use trnsim_fabric::topo::Topology;
use trnsim_kernel::{Dur, LinkSpec, SimBuilder, SimOptions, StatsReport, TickOrder};

/// What one step computes and communicates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DpStep {
    /// Trn3 Gen2 UltraServers (144 chips each), 1..=8.
    pub ultraservers: u32,
    /// Gradient bytes per chip (BF16: two bytes per parameter), 1 KiB ..= 4 GiB.
    pub gradient: u64,
    /// All-reduce buckets the gradient is split into, 1..=64 (each a whole number of bytes).
    pub buckets: u32,
    /// Tokens each chip's backward pass covers, 1..=1,048,576.
    pub tokens: u64,
    /// Fraction of the chip's dense BF16 peak the backward pass reaches (0 < e <= 1).
    pub efficiency: f64,
}

/// The defaults: 64 MiB of gradient (a 32 M-parameter shard) in 4 buckets, 4,096 tokens per
/// chip at 60 % of peak (about 1.5 ms of backward on a Trn3 chip).
pub const DEFAULT: DpStep = DpStep { ultraservers: 8, gradient: 64 << 20, buckets: 4, tokens: 4096, efficiency: 0.6 };

/// How to write the name (`trnsim list`, errors).
pub const SYNTAX: &str = "dp-step-N[:GRADIENT[:BUCKETS[:TOKENS]]], N Trn3 Gen2 UltraServers (1..=8), GRADIENT bytes per chip (1K..=4G, default 64M), BUCKETS (1..=64, default 4), TOKENS per chip (1..=1048576, default 4096)";

impl DpStep {
    /// Parses `dp-step-N[:GRADIENT[:BUCKETS[:TOKENS]]]`, every field range-checked.
    pub fn parse(name: &str) -> Result<DpStep, String> {
        let rest = name.strip_prefix("dp-step-").ok_or_else(|| format!("{name:?}: expected {SYNTAX}"))?;
        let mut f = rest.split(':');
        let field = |what: &str, v: &str| format!("{name:?}: {what} {v:?} is not valid; expected {SYNTAX}");
        let mut s = DEFAULT;
        let n = f.next().unwrap_or("");
        s.ultraservers = n.parse().ok().filter(|u| (1..=8).contains(u)).ok_or_else(|| field("N", n))?;
        if let Some(g) = f.next() {
            s.gradient = crate::limits::parse_size(g)
                .ok()
                .filter(|b| (1 << 10..=4 << 30).contains(b))
                .ok_or_else(|| field("GRADIENT", g))?;
        }
        if let Some(b) = f.next() {
            s.buckets = b.parse().ok().filter(|b| (1..=64).contains(b)).ok_or_else(|| field("BUCKETS", b))?;
        }
        if let Some(t) = f.next() {
            s.tokens = t.parse().ok().filter(|t| (1..=1 << 20).contains(t)).ok_or_else(|| field("TOKENS", t))?;
        }
        if let Some(extra) = f.next() {
            return Err(field("field", extra));
        }
        if !s.gradient.is_multiple_of(u64::from(s.buckets)) {
            return Err(format!("{name:?}: GRADIENT {} does not split into {} equal buckets", s.gradient, s.buckets));
        }
        Ok(s)
    }

    /// Bytes per bucket.
    pub fn bucket_bytes(&self) -> u64 {
        self.gradient / u64::from(self.buckets)
    }

    /// The backward pass's FLOPs per chip: `4 x (gradient / 2) x tokens`.
    pub fn backward_flops(&self) -> f64 {
        4.0 * (self.gradient as f64 / 2.0) * self.tokens as f64
    }

    /// Each bucket's backward time, in picoseconds, on a chip of `peak_tflops` dense BF16.
    pub fn bucket_ps(&self, peak_tflops: f64) -> u64 {
        let s = self.backward_flops() / (peak_tflops * 1e12 * self.efficiency) / f64::from(self.buckets);
        (s * 1e12).round() as u64
    }
}

/// The system: the cluster's topology, the chip's peak, and a builder of the whole step.
#[derive(Clone)]
pub struct DpSystem {
    /// The step.
    pub step: DpStep,
    /// The cluster (`trn3-gen2-ultracluster-2` with `ultraservers` set).
    pub topo: Topology,
    /// Backward time of one bucket, in picoseconds.
    pub bucket_ps: u64,
    /// The chip's dense BF16 peak, TFLOPS.
    pub peak_tflops: f64,
}

impl DpSystem {
    /// Resolves the cluster and the chip for `step`.
    pub fn new(step: DpStep) -> Result<DpSystem, String> {
        let mut doc = trnsim_system::doc::SystemDoc::open("trn3-gen2-ultracluster-2")?;
        doc.set(&format!("ultraservers={}", step.ultraservers))?;
        let sys = doc.resolve()?;
        let topo = sys.fabric().ok_or("trn3-gen2-ultracluster-2 has no fabric")?.clone();
        let chip = sys.chip().ok_or("trn3-gen2-ultracluster-2 has no chip")?;
        let peak_tflops = chip.peak_bf16_tflops();
        let bucket_ps = step.bucket_ps(peak_tflops);
        Ok(DpSystem { step, topo, bucket_ps, peak_tflops })
    }

    /// Simulation options: the deadlock window must outlast a bucket's compute, during which a
    /// chip waiting for its doorbell makes no progress.
    pub fn options(&self, order: TickOrder) -> SimOptions {
        let window = Dur::from_ps(self.bucket_ps.saturating_mul(2)).max(Dur::from_us(100));
        SimOptions { tick_order: order, deadlock_window: window, ..SimOptions::default() }
    }

    /// Declares the step in a new builder: the cluster's nodes, one compute timeline per chip
    /// (`<chip>.bwd`, linked to its chip's doorbell), one hierarchical all-reduce per bucket.
    pub fn declare(&self, order: TickOrder) -> Result<SimBuilder, String> {
        let mut b = SimBuilder::with_options(self.options(order));
        let topo = &self.topo;
        let n = topo.chips;
        let nodes = reserve_nodes(&mut b, topo)?;
        let mut hooks = Vec::with_capacity(n);
        let spans = vec![self.bucket_ps; self.step.buckets as usize];
        for c in 0..n {
            let name = format!("{}.bwd", b.name(nodes.ids[c]));
            let id = b.reserve(&name, nodes.clock_id).map_err(|e| e.to_string())?;
            let (o, i) = b
                .link::<u32>(id, "doorbell", nodes.ids[c], "doorbell.bwd", LinkSpec::default())
                .map_err(|e| e.to_string())?;
            let spans = spans.clone();
            b.install_with(id, move || ComputeTimeline::new(&spans, o)).map_err(|e| e.to_string())?;
            hooks.push(ChipHooks { doorbells: vec![i], done: Vec::new() });
        }
        let coll = Collective { op: Op::AllReduce, algo: Algo::Hierarchical };
        let jobs = (0..self.step.buckets)
            .map(|k| {
                let progs = schedule::build_runs(
                    coll.op,
                    coll.algo,
                    n,
                    self.step.bucket_bytes(),
                    &topo.ring,
                    topo.chips_per_server,
                )?;
                Ok(Job { name: format!("all-reduce bucket {k}"), progs, doorbells: 1 })
            })
            .collect::<Result<Vec<_>, String>>()?;
        build_jobs(&mut b, topo, &nodes, &jobs, &Params::default(), hooks, false)?;
        Ok(b)
    }

    /// The headline figures read from a run's statistics: the step's time, the backward
    /// compute, the communication left exposed after it, and the all-reduces' times.
    pub fn headline(&self, stats: &StatsReport) -> Result<Vec<(String, f64)>, String> {
        let (mut finish, mut compute, mut chips) = (0u64, 0u64, 0usize);
        let buckets = self.step.buckets as usize;
        // Per bucket: the latest ready (doorbell) and done over all chips.
        let (mut ready, mut done) = (vec![0u64; buckets], vec![0u64; buckets]);
        for (owner, s) in &stats.owners {
            if let Some(v) = s.get("compute_end_ps") {
                compute = compute.max(v.as_f64() as u64);
            }
            let Some(v) = s.get("finish_ps") else { continue };
            if !owner.contains(".chip") {
                continue;
            }
            chips += 1;
            finish = finish.max(v.as_f64() as u64);
            for k in 0..buckets {
                let get = |key: String| {
                    s.get(&key)
                        .map(|v| v.as_f64() as u64)
                        .ok_or(format!("{owner}: no {key} statistic: the step did not finish"))
                };
                ready[k] = ready[k].max(get(format!("phase{k}_ready_ps"))?);
                done[k] = done[k].max(get(format!("phase{k}_done_ps"))?);
            }
        }
        if chips != self.topo.chips {
            return Err(format!("statistics of {chips} chips, {} expected", self.topo.chips));
        }
        let us = |ps: u64| ps as f64 / 1e6;
        // The all-reduce of bucket k runs from when it may start (its doorbell, and the previous
        // bucket done) to when the last chip finishes it.
        let last = buckets - 1;
        let start_last = ready[last].max(if last > 0 { done[last - 1] } else { 0 });
        let ar_us = us(done[last].saturating_sub(start_last));
        let busbw =
            Op::AllReduce.busbw_factor(self.topo.chips) * self.step.bucket_bytes() as f64 / (ar_us * 1e3).max(1e-9);
        Ok(vec![
            ("chips".into(), self.topo.chips as f64),
            ("step_us".into(), us(finish)),
            ("backward_us".into(), us(compute)),
            ("exposed_comm_us".into(), us(finish.saturating_sub(compute))),
            ("last_allreduce_us".into(), ar_us),
            ("last_allreduce_busbw_GBps".into(), busbw),
        ])
    }
}
