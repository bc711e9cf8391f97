//! [`SystemCosts`]: node times from trnsim's models of a chip and its fabric.
//!
//! - **Memory** (Load, Store): the chip model itself, cycle by cycle: every core's DMA
//!   engines move the node's share of the bytes between its HBM stack and SBUF (512 KiB
//!   transfers, 4 KiB per partition). Runs are cached by size; above [`MEMORY_SIM_CAP`]
//!   bytes the time is the capped run's scaled linearly (streaming is at steady state there).
//! - **Compute** (Gemm, Attention, Elementwise): a roofline per node: the larger of the
//!   tensor (or vector) engine time at the chip's peak times an efficiency, and the HBM time
//!   of its operands at the bandwidth the memory model achieves. The GEMM efficiency is a
//!   parameter, measured by the caller on the cycle-level chip (the harness runs a GEMM tile
//!   once per chip); attention's softmax runs on the scalar engine alongside (the larger of
//!   the two counts).
//! - **Communication**: the packet-level fabric, all groups of a node at once (so groups
//!   that share links contend), cached by (operation, algorithm, size, groups).
//!
//! Left out: per-op cycle-level compute (the roofline replaces it), SBUF capacity and
//! tiling effects on arbitrary shapes, and the collective engine's own HBM traffic.

use crate::format::{dtype_size, Op};
use std::collections::HashMap;
use std::fmt::Write as _;
use trnsim_core::isa::{Engine, Program};
use trnsim_fabric::collective::{self, schedule, Algo, Params};
use trnsim_fabric::topo::Topology;
use trnsim_kernel::{Dur, SimBuilder, TickOrder};
use trnsim_system::chip::{self, Chip};

/// Largest Load/Store simulated cycle by cycle, in bytes (larger ones scale linearly).
pub const MEMORY_SIM_CAP: u64 = 64 << 20;
/// Most bytes per partition of one simulated DMA transfer (spec: >= 4 KiB saturates an
/// engine); fewer where the streams sharing a stack would not fit in its open rows.
const DMA_BPP: u64 = 4096;
/// Fewest bytes per partition of one simulated DMA transfer.
const DMA_BPP_MIN: u64 = 512;
/// HBM padding after each row, as the benchmarks use (spreads rows over channels).
const PAD: u64 = 512;

/// Node times on one chip type and fabric.
pub struct SystemCosts<'a> {
    /// The chip every rank runs on.
    pub chip: &'a Chip,
    /// The fabric (None: a single chip; collectives are then an error).
    pub fabric: Option<&'a Topology>,
    /// Fraction of the tensor engines' peak a GEMM reaches (0 < e <= 1).
    pub gemm_efficiency: f64,
    /// The collective engine's per-step software time.
    pub comm: Params,
    memory: HashMap<(bool, u64), f64>,
    comms: HashMap<String, Vec<f64>>,
}

impl<'a> SystemCosts<'a> {
    /// Costs on `chip` (and `fabric`), GEMMs at `gemm_efficiency` of peak.
    pub fn new(chip: &'a Chip, fabric: Option<&'a Topology>, gemm_efficiency: f64) -> SystemCosts<'a> {
        SystemCosts {
            chip,
            fabric,
            gemm_efficiency,
            comm: Params::default(),
            memory: HashMap::new(),
            comms: HashMap::new(),
        }
    }

    /// HBM bandwidth the chip's DMA reaches on a 16 MiB load (steady state), in bytes per
    /// ns (memory model).
    pub fn hbm_bytes_per_ns(&mut self) -> Result<f64, String> {
        let bytes = 16 << 20;
        let t = self.memory_run(false, bytes)?;
        Ok(bytes as f64 / t)
    }

    /// A Load (`store` false) or Store of `bytes` on the cycle-level chip, in ns.
    fn memory_run(&mut self, store: bool, bytes: u64) -> Result<f64, String> {
        let sim_bytes = bytes.min(MEMORY_SIM_CAP);
        let key = (store, sim_bytes);
        let t = match self.memory.get(&key) {
            Some(t) => *t,
            None => {
                let t = simulate_dma_cached(self.chip, store, sim_bytes)?;
                self.memory.insert(key, t);
                t
            }
        };
        Ok(t * bytes as f64 / sim_bytes as f64)
    }

    /// Tensor-engine time of `flops` in `dtype` at the core's rate for that format (its
    /// `tensor.formats`, relative to BF16) times the GEMM efficiency.
    fn tensor_ns(&self, flops: f64, dtype: &str) -> Result<f64, String> {
        let rate = tensor_rate(&self.chip.core, dtype).ok_or_else(|| {
            let have: Vec<&str> = self.chip.core.tensor.formats.entries().filter(|(_, r)| r.is_some()).map(|(f, _)| f).collect();
            format!(
                "dtype {dtype}: core {} of {} has no {dtype} matmul (its formats: {}; a what-if: --set chip.core.tensor.formats.{}...)",
                self.chip.core.name,
                self.chip.spec.name,
                have.join(", "),
                format_name(dtype)
            )
        })?;
        Ok(flops / (self.chip.peak_bf16_tflops() * 1e3 * rate * self.gemm_efficiency))
    }

    /// Scalar/vector work: `ops` element operations over all cores, one element per lane per
    /// cycle on 128 lanes.
    fn vector_ns(&self, ops: f64) -> f64 {
        let hz = self.chip.core.clock(Engine::Vector).as_hz() as f64;
        ops / (f64::from(self.chip.spec.cores) * 128.0 * hz) * 1e9
    }
}

/// Vector-engine operations a GEMM's number formats cost, for `a_elems` activation elements
/// and `b_elems` weight elements: activations in an MX format are quantized (a block's
/// absolute maximum, its shared scale, the scaled cast: 4 operations per element, OCP MX
/// v1.0's conversion); weights in an MX format multiplied against a non-MX `dtype` are
/// dequantized (the scale's multiply and the cast: 2 per element). Same-format GEMMs cost
/// none. The block scales applied inside the tensor engine's MX matmul are in its rate.
pub fn scaling_ops(dtype: &str, weight_dtype: &str, a_elems: f64, b_elems: f64) -> f64 {
    let mx = |d: &str| d.starts_with("mx");
    let quantize = if mx(dtype) && weight_dtype != dtype { 4.0 * a_elems } else { 0.0 };
    let dequantize = if mx(weight_dtype) && !mx(dtype) { 2.0 * b_elems } else { 0.0 };
    quantize + dequantize
}

/// Vector-engine operations per activation element (at one element per lane per cycle) that
/// quantizing 16-bit activations to MXFP8 costs on `core` (its `costs.vector.quantize_mx`
/// rate), when a GEMM of `dtype` activations against `weight_dtype` weights is run that way:
/// BF16 or FP16 activations against MX weights on a core with `quantize_mx` and an MXFP8
/// matmul, as NKI's MX kernels quantize activations on the fly. None otherwise.
pub fn quantize_mx_ops(core: &trnsim_core::spec::CoreSpec, dtype: &str, weight_dtype: &str) -> Option<f64> {
    let q = core.costs.vector.quantize_mx?;
    let applies = matches!(dtype, "bf16" | "fp16")
        && matches!(weight_dtype, "mxfp4" | "mxfp8")
        && core.tensor.formats.mxfp8.is_some();
    applies.then(|| f64::from(q.cycles) / f64::from(q.elements.max(1)))
}

/// Checks that `chip`'s core multiplies in every format the workload's compute nodes name
/// (a GEMM's `dtype` and `weight_dtype`, an attention's or a kernel's `dtype`), before
/// anything runs; the error is located at the first node that names a missing one.
pub fn check_formats(w: &crate::format::Checked, chip: &Chip) -> Result<(), String> {
    for (i, n) in w.w.nodes.iter().enumerate() {
        let named: Vec<(&str, &str)> = match &n.op {
            Op::Gemm { dtype, weight_dtype, .. } => std::iter::once(("dtype", dtype.as_str()))
                .chain(weight_dtype.as_deref().map(|d| ("weight_dtype", d)))
                .collect(),
            Op::Attention { dtype, .. } | Op::Kernel { dtype, .. } => vec![("dtype", dtype.as_str())],
            _ => continue,
        };
        for (key, d) in named {
            if tensor_rate(&chip.core, d).is_none() {
                let have: Vec<&str> =
                    chip.core.tensor.formats.entries().filter(|(_, r)| r.is_some()).map(|(f, _)| f).collect();
                let m = format!(
                    "core {} of {} has no {d} matmul (its formats: {}; a what-if: --set chip.core.tensor.formats.{}...)",
                    chip.core.name,
                    chip.spec.name,
                    have.join(", "),
                    format_name(d)
                );
                return Err(w.node_error(i, &format!("op.{key}"), &m));
            }
        }
    }
    Ok(())
}

/// The core format a workload dtype multiplies in (`fp8` is FP8 E4M3).
fn format_name(dtype: &str) -> &str {
    if dtype == "fp8" {
        "fp8e4m3"
    } else {
        dtype
    }
}

/// The matmul rate of workload dtype `dtype` on `core` relative to its BF16 rate (None: the
/// core has no such matmul). BF16 is exactly 1.
pub fn tensor_rate(core: &trnsim_core::spec::CoreSpec, dtype: &str) -> Option<f64> {
    let want = format_name(dtype);
    let (_, rate) = core.tensor.formats.entries().find(|(f, _)| *f == want)?;
    let bf16 = core.tensor.formats.bf16?;
    Some(core.peak_flops(rate?) / core.peak_flops(bf16))
}

impl crate::exec::Costs for SystemCosts<'_> {
    fn compute_ns(&mut self, op: &Op) -> Result<f64, String> {
        let bw = self.hbm_bytes_per_ns()?;
        Ok(match op {
            Op::Gemm { m, k, n, dtype, count, a_resident, b_resident, weight_dtype } => {
                let e = dtype_size(dtype).unwrap_or(2.0);
                let wd = weight_dtype.as_deref().unwrap_or(dtype);
                let we = dtype_size(wd).unwrap_or(2.0);
                let (m, k, n, c) = (*m as f64, *k as f64, *n as f64, f64::from(*count));
                let flops = 2.0 * m * k * n * c;
                let (a, b) = (if *a_resident { 0.0 } else { m * k }, if *b_resident { 0.0 } else { k * n });
                let bytes = ((a + m * n) * e + b * we) * c;
                // 16-bit activations against MX weights on a core that quantizes to MX: the
                // activations are quantized on the vector engine (at its quantize_mx rate)
                // and the matmul runs at the weights' rate. Otherwise mixed formats multiply
                // at the slower format's rate (both must exist on the core); scaling work on
                // the vector engine runs beside the tensor engine.
                let (tensor, scaling) = match quantize_mx_ops(&self.chip.core, dtype, wd) {
                    Some(per_elem) => (self.tensor_ns(flops, wd)?, self.vector_ns(per_elem * m * k * c)),
                    None => (
                        self.tensor_ns(flops, dtype)?.max(self.tensor_ns(flops, wd)?),
                        self.vector_ns(scaling_ops(dtype, wd, m * k * c, k * n * c)),
                    ),
                };
                tensor.max(scaling).max(bytes / bw)
            }
            Op::Attention { batch, heads, seq, kv_seq, kv_heads, head_dim, causal, dtype } => {
                let (b, h, s, d) = (*batch as f64, *heads as f64, *seq as f64, *head_dim as f64);
                let kv = kv_seq.unwrap_or(*seq) as f64;
                let kvh = kv_heads.unwrap_or(*heads) as f64;
                let frac = if *causal { 0.5 } else { 1.0 };
                let scores = b * h * s * kv * frac;
                let tensor = self.tensor_ns(4.0 * scores * d, dtype)?;
                // Softmax: max, subtract, exp, sum, scale (5 operations per score).
                let softmax = self.vector_ns(5.0 * scores);
                let e = dtype_size(dtype).unwrap_or(2.0);
                // Q in and O out for every query head, K and V for every KV head: at decode
                // (s = 1) the KV cache's read bounds the node.
                let io = b * (2.0 * h * s + 2.0 * kvh * kv) * d * e;
                tensor.max(softmax).max(io / bw)
            }
            Op::Kernel { flops, bytes, duration_ns, dtype } => {
                let roofline = self.tensor_ns(*flops as f64, dtype)?.max(*bytes as f64 / bw);
                roofline.max(*duration_ns as f64)
            }
            Op::Elementwise { elements, ops, dtype } => {
                let e = dtype_size(dtype).unwrap_or(2.0);
                let n = *elements as f64;
                self.vector_ns(n * f64::from(*ops)).max(2.0 * n * e / bw)
            }
            other => return Err(format!("{} is not a compute operation", other.kind())),
        })
    }

    fn memory_ns(&mut self, op: &Op) -> Result<f64, String> {
        match op {
            Op::Load { bytes } => self.memory_run(false, *bytes),
            Op::Store { bytes } => self.memory_run(true, *bytes),
            other => Err(format!("{} is not a memory operation", other.kind())),
        }
    }

    fn comm_ns(&mut self, op: &Op, groups: &[Vec<usize>]) -> Result<Vec<f64>, String> {
        if let Op::AllToAllV(v) = op {
            return self.alltoallv_ns(&v.sizes, groups);
        }
        let c = op.comm().ok_or_else(|| format!("{} is not a collective", op.kind()))?;
        if c.bytes == 0 {
            // A measured collective (a trace's runtime without a size): its time as recorded.
            return Ok(vec![c.duration_ns as f64; groups.len()]);
        }
        let key = format!("{}:{:?}:{}:{groups:?}", op.kind(), c.algo, c.bytes);
        if let Some(t) = self.comms.get(&key) {
            return Ok(t.clone());
        }
        let topo = self.fabric.ok_or("a collective needs a system with a fabric (an UltraServer or a fabric)")?;
        let kind = match op {
            Op::AllReduce(_) => collective::Op::AllReduce,
            Op::AllGather(_) => collective::Op::AllGather,
            Op::ReduceScatter(_) => collective::Op::ReduceScatter,
            Op::AllToAll(_) => collective::Op::AllToAll,
            _ => collective::Op::Broadcast,
        };
        let algo = match c.algo.as_deref().unwrap_or("auto") {
            "ring" => Algo::Ring,
            "rhd" => Algo::HalvingDoubling,
            "direct" => Algo::Direct,
            "tree" => Algo::Tree,
            "hierarchical" => Algo::Hierarchical,
            "pipelined" => Algo::Pipelined,
            _ => Algo::Auto,
        };
        let mut progs = vec![Vec::new(); topo.chips];
        for g in groups {
            // `auto`: the runtime's size policy for an all-reduce (spec §7); an all-gather or
            // reduce-scatter whose group spans servers (listed server by server) runs
            // hierarchical, each piece crossing between servers once.
            let coll = collective::Collective { op: kind, algo };
            let coll = if matches!(kind, collective::Op::AllGather | collective::Op::ReduceScatter) {
                coll.resolve_in(g.len(), c.bytes, schedule::members_per_server(g, topo.chips_per_server.max(1)))
            } else {
                coll.resolve(g.len(), c.bytes)
            };
            let p = schedule::for_members(coll.op, coll.algo, topo.chips, g, c.bytes, topo.chips_per_server)?;
            for &m in g {
                progs[m] = p[m].clone();
            }
        }
        let done = collective::run_concurrent(topo, progs, &self.comm)?;
        let t: Vec<f64> = groups.iter().map(|g| g.iter().map(|&m| done[m]).max().unwrap_or(0) as f64 / 1e3).collect();
        self.comms.insert(key, t.clone());
        Ok(t)
    }

    fn send_recv_ns(&mut self, bytes: u64, pairs: &[(usize, usize)]) -> Result<Vec<f64>, String> {
        let topo = self.fabric.ok_or("a send/recv needs a system with a fabric (an UltraServer or a fabric)")?;
        let mut progs = vec![Vec::new(); topo.chips];
        let mut recvs = vec![0u32; topo.chips];
        for &(_, d) in pairs {
            recvs[d] += 1;
        }
        for &(s, d) in pairs {
            progs[s] = vec![schedule::Step { sends: vec![(d, bytes)], recvs: recvs[s] }];
        }
        for (c, &r) in recvs.iter().enumerate() {
            if r > 0 && progs[c].is_empty() {
                progs[c] = vec![schedule::Step { sends: vec![], recvs: r }];
            }
        }
        let done = collective::run_concurrent(topo, progs, &self.comm)?;
        Ok(pairs.iter().map(|&(s, d)| done[s].max(done[d]) as f64 / 1e3).collect())
    }
}

impl SystemCosts<'_> {
    /// An all-to-allv run by every group of `groups` at once: member i sends `sizes[i][j]`
    /// bytes to member j, every pair a message (empty ones too: the counts travel anyway), in
    /// one step. Each group's time in ns.
    fn alltoallv_ns(&mut self, sizes: &[Vec<u64>], groups: &[Vec<usize>]) -> Result<Vec<f64>, String> {
        let topo = self.fabric.ok_or("a collective needs a system with a fabric (an UltraServer or a fabric)")?;
        let mut progs = vec![Vec::new(); topo.chips];
        for g in groups {
            if g.len() != sizes.len() {
                return Err(format!("an all-to-allv of {} rows run on a group of {}", sizes.len(), g.len()));
            }
            let recvs = u32::try_from(g.len() - 1).map_err(|_| "an all-to-allv group is too large".to_string())?;
            for (i, &m) in g.iter().enumerate() {
                let sends = g.iter().enumerate().filter(|(j, _)| *j != i).map(|(j, &d)| (d, sizes[i][j])).collect();
                progs[m] = vec![schedule::Step { sends, recvs }];
            }
        }
        let done = collective::run_concurrent(topo, progs, &self.comm)?;
        Ok(groups.iter().map(|g| g.iter().map(|&m| done[m]).max().unwrap_or(0) as f64 / 1e3).collect())
    }
}

/// The per-core DMA program of a Load (or Store) of `per_core` bytes for core `core`. The
/// cores sharing a stack take turns through one region, 512 KiB transfer by transfer (core
/// `k` of a stack takes transfers `k`, `k + cores_per_stack`, ...), as a sharded tensor is
/// laid out, so their streams share open rows instead of fighting over the banks.
pub fn dma_program(chip: &Chip, core: u32, store: bool, per_core: u64) -> String {
    let bpp = dma_bytes_per_partition(chip);
    let elems = bpp / 2;
    let per_dma = 128 * bpp;
    let count = per_core.div_ceil(per_dma).max(1);
    let stride = bpp + PAD;
    let sharers = u64::from(chip.spec.hbm.cores_per_stack);
    let k = u64::from(core) % sharers;
    let mut sync = String::from(".engine sync\n");
    for j in 0..count {
        let hbm = (j * sharers + k) * 128 * stride;
        let sbuf = (j % 4) * bpp;
        let _ = if store {
            writeln!(
                sync,
                "    dma_start q1 sbuf[0:128] +{sbuf:#x} [{elems}:1] bf16 -> hbm {hbm:#x} stride {stride}, sem=s0"
            )
        } else {
            writeln!(
                sync,
                "    dma_start q0 hbm {hbm:#x} stride {stride} -> sbuf[0:128] +{sbuf:#x} [{elems}:1] bf16, sem=s0"
            )
        };
    }
    let _ = writeln!(sync, "    sem_wait s0 >= {}", 16 * count);
    sync.push_str("    halt\n");
    sync
}

/// Bytes per partition of the transfers [`dma_program`] lays out: 4 KiB, halved (down to
/// 512 B) until the transfers the cores of a stack run at once (`cores_per_stack` x 128
/// partitions x (bytes + padding)) fit in the stack's open rows (one row per bank). Larger
/// concurrent footprints make streams close each other's rows: a quarter of the reads then
/// need an activate, and the four-activate window, not the data bus, bounds the stack.
pub fn dma_bytes_per_partition(chip: &Chip) -> u64 {
    let org = chip.hbm.org.clone();
    let open =
        u64::from(org.pcs()) * u64::from(org.banks_per_pc()) * u64::from(org.columns) * u64::from(org.dq_bits) / 8;
    let sharers = u64::from(chip.spec.hbm.cores_per_stack);
    let mut bpp = DMA_BPP;
    while bpp > DMA_BPP_MIN && sharers.saturating_mul(128 * (bpp + PAD)) > open {
        bpp /= 2;
    }
    bpp
}

/// [`simulate_dma`] once per process for each (chip, direction, size): sweeps, comparisons and
/// repeated workload runs on one chip reuse the simulated time (the simulation is
/// deterministic, so the cached time is the one a new run would give). The key is the chip
/// spec as text; entries are a few hundred bytes, one per distinct transfer asked for.
fn simulate_dma_cached(chip: &Chip, store: bool, bytes: u64) -> Result<f64, String> {
    use std::sync::{Mutex, OnceLock};
    type Cache = Mutex<HashMap<(String, bool, u64), f64>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (format!("{:?}", chip.spec), store, bytes);
    if let Some(&t) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(t);
    }
    let t = simulate_dma(chip, store, bytes)?;
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(key, t);
    Ok(t)
}

/// Simulates a Load or Store of `bytes` spread over every core of `chip`; its time in ns.
fn simulate_dma(chip: &Chip, store: bool, bytes: u64) -> Result<f64, String> {
    let cores = u64::from(chip.spec.cores);
    let per_core = bytes.div_ceil(cores);
    let bpp = dma_bytes_per_partition(chip);
    let span = per_core.div_ceil(128 * bpp) * 128 * (bpp + PAD) * u64::from(chip.spec.hbm.cores_per_stack);
    if span > chip.stack_bytes() {
        return Err(format!(
            "a {bytes}-byte transfer does not fit in the chip's HBM stacks ({} bytes laid out per stack, {} per stack)",
            span,
            chip.stack_bytes()
        ));
    }
    let programs: Vec<Program> = (0..chip.spec.cores)
        .map(|i| {
            let src = dma_program(chip, i, store, per_core);
            let name = format!("dma nc{i}.asm (generated)");
            trnsim_core::isa::asm::assemble(&name, &src, &Default::default())
                .map_err(|e| trnsim_core::isa::asm::render_errors(&e))
        })
        .collect::<Result<_, _>>()?;
    let mut b =
        SimBuilder::with_options(trnsim_kernel::SimOptions { tick_order: TickOrder::Structural, ..Default::default() });
    let ids = chip::build(&mut b, chip, &programs, false)?;
    let sim = chip::run_to_end(b, &[ids], None, Dur::from_us(100_000))?;
    Ok(sim.now().as_ns_f64())
}

/// Round trip of one DMA engine's HBM reads, in ns: one NC-v4 core alone on an HBM3E stack
/// moves 128 x 64 KiB HBM -> SBUF at 529 GB/s with 64 x 32 B bursts outstanding per engine
/// (docs/validation.md, "DMA"), so by Little's law 16 x 64 x 32 B / 529 B/ns = 62 ns.
/// Measured on that lone core, not on the Load it estimates.
pub const DMA_ROUND_TRIP_NS: f64 = 62.0;

/// Bytes per ns one of `chip`'s HBM stacks streams sequential reads at (the data-bus ceiling
/// less what refresh takes: 93.9 % of the pin rate on HBM3E, docs/validation.md "Streaming"),
/// measured on the stack model alone: 100,000 reads, 4096 in flight, 64 offered per clock.
pub fn stack_stream_bytes_per_ns(chip: &Chip) -> Result<f64, String> {
    use trnsim_mem::hbm::traffic::{attach, GenParams, Pattern, Synthetic};
    use trnsim_mem::hbm::HbmStack;
    let cfg = chip.stack_config();
    let n = 100_000;
    let mut b = SimBuilder::new();
    let clk = b.clock("hbm", cfg.timing.frequency()).map_err(|e| e.to_string())?;
    let map = HbmStack::new(&cfg)?.address_map().clone();
    let access = cfg.org.access_bytes();
    let src = Synthetic::new(Pattern::StreamRead, n, 1, map.capacity(), u64::from(access), &map, cfg.org.rows);
    let gp = GenParams { width: 64, in_flight: 4096, rate: f64::INFINITY, bytes: access };
    attach(&mut b, "hbm", clk, &cfg, Box::new(src), gp, false)?;
    let mut sim = b.build().map_err(|e| e.to_string())?;
    sim.run_until_idle(Dur::from_us(100_000)).map_err(|e| e.to_string())?;
    Ok((n * u64::from(access)) as f64 / sim.now().as_ns_f64())
}

/// The analytic time of a Load of `bytes` spread over every core, in ns: the DMA start
/// latency plus each core's share at the smallest of three rates: its engines' peak, its
/// share of its stack's streaming rate ([`stack_stream_bytes_per_ns`]), and what its
/// engines' outstanding reads sustain at the DMA round trip ([`DMA_ROUND_TRIP_NS`]).
/// Left out: row conflicts between the cores' streams, and queueing that lengthens the round
/// trip as a stack nears its ceiling (together 5-9 % on `trn3-chip`, docs/validation.md).
/// The cycle-level memory model is checked against it.
pub fn load_estimate_ns(chip: &Chip, bytes: u64) -> Result<f64, String> {
    let d = &chip.dma;
    let engines = f64::from(d.engines);
    let core_gbps = (engines * d.peak_bytes_per_ns)
        .min(stack_stream_bytes_per_ns(chip)? / f64::from(chip.spec.hbm.cores_per_stack))
        .min(engines * f64::from(d.outstanding) * f64::from(d.access_bytes) / DMA_ROUND_TRIP_NS);
    let per_core = bytes.div_ceil(u64::from(chip.spec.cores)) as f64;
    Ok(d.start_latency.as_ps() as f64 / 1e3 + per_core / core_gbps)
}
