//! Collectives as real traffic: per-chip collective engines issue the messages of ring,
//! direct (mesh), recursive halving-doubling, pipelined-chain, binomial-tree, hierarchical and
//! pipelined multi-level algorithms over the packet-level network of [`crate::topo`], and
//! report nccl-tests-style tables.
//!
//! - [`schedule`]: each algorithm as per-chip step programs, and the registry table.
//! - [`pipelined`]: the pipelined multi-level all-reduce's plan.
//! - [`runner`]: the engines and the network as one kernel component ([`runner::FabricRun`]).
//! - Here: the operations, parameters, the by-size policies ([`auto_algo`], [`auto_algo_in`]),
//!   [`run`] for one size and [`run_table`] for a sweep.
//!
//! Names: `op[:algo]`, op one of all_reduce, all_gather, reduce_scatter, all_to_all,
//! broadcast (root chip 0); algo one of ring (broadcast: pipelined chain), direct,
//! halving_doubling, tree (binomial, broadcast), hierarchical and pipelined (all_reduce), auto
//! (all_reduce and broadcast: spec §7's by-size policy, see [`auto_algo`]; [`run`] and
//! [`run_group`] also weigh the servers spanned, see [`auto_algo_in`]).
//!
//! Metrics as nccl-tests doc/PERFORMANCE.md: `algbw = size / time` (GB/s, GB =
//! 1e9 B); `busbw = algbw x 2(n-1)/n` for all-reduce, `= algbw` for broadcast, and
//! `x (n-1)/n` for all-gather, reduce-scatter and all-to-all. `size` is the per-chip buffer:
//! the all-reduce input, the all-gather output, the reduce-scatter input, the all-to-all send
//! buffer, the broadcast buffer.
//!
//! Leaves out: the reduction arithmetic and its HBM/DMA cost (spec §7: DMA compute), DMA
//! engine contention with compute, chunking/pipelining within a step (the broadcast chain and
//! the pipelined all-reduce pipeline by steps), independent streams per chip, and
//! KangaRing's two Hamiltonian cycles.

pub mod flow;
pub mod pipelined;
pub mod runner;
pub mod schedule;

#[cfg(test)]
mod tests;

use crate::topo::{EdgeStats, Message, Network, Topology};
use runner::FabricRun;
use trnsim_kernel::{Dur, Frequency, Histogram, SimBuilder};

/// A collective operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Every chip ends with the sum of all chips' buffers.
    AllReduce,
    /// Every chip ends with all chips' `size / n` pieces.
    AllGather,
    /// Every chip ends with its `size / n` piece of the sum.
    ReduceScatter,
    /// Every chip sends a distinct `size / n` piece to every chip.
    AllToAll,
    /// Every chip ends with the root's (chip 0's) buffer of `size` bytes.
    Broadcast,
    /// Every chip sends its `size`-byte buffer to the next chip of the ring and receives the
    /// previous one's (send/recv, as nccom-test's permute).
    Permute,
}

/// All operations, in the order error messages list them.
pub const OPS: [Op; 6] = [Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::AllToAll, Op::Broadcast, Op::Permute];

impl Op {
    /// Name as in configurations ("all_reduce").
    pub fn name(self) -> &'static str {
        match self {
            Op::AllReduce => "all_reduce",
            Op::AllGather => "all_gather",
            Op::ReduceScatter => "reduce_scatter",
            Op::AllToAll => "all_to_all",
            Op::Broadcast => "broadcast",
            Op::Permute => "permute",
        }
    }

    /// nccl-tests bus-bandwidth factor for `n` chips: 2(n-1)/n for all-reduce, 1 for
    /// broadcast, (n-1)/n else.
    pub fn busbw_factor(self, n: usize) -> f64 {
        let f = (n as f64 - 1.0) / n as f64;
        match self {
            Op::AllReduce => 2.0 * f,
            Op::Broadcast | Op::Permute => 1.0,
            _ => f,
        }
    }
}

/// A collective algorithm (see [`schedule::REGISTRY`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// Ring over the topology's ring order (spec §7 Ring).
    Ring,
    /// Every chip to every chip at once (spec §7 Mesh; all-to-all).
    Direct,
    /// Recursive halving-doubling (spec §7 RDH).
    HalvingDoubling,
    /// Binomial tree (broadcast).
    Tree,
    /// All-reduce in three phases: ring reduce-scatter inside each server, ring all-reduce
    /// across servers among the chips that hold the same piece, ring all-gather inside each
    /// server: `2(k - 1) + 2(m - 1)` steps for `m` servers of `k` chips instead of `2(km - 1)`.
    Hierarchical,
    /// All-reduce over up to three levels (server mates; paired servers `s` and `s + m / 2`,
    /// which the switched presets' direct links join; the other servers), cut into chunks
    /// that flow through the levels as a pipeline, in two lanes that visit the levels in
    /// different orders: every group of a chip's links carries traffic at once
    /// ([`pipelined`]).
    Pipelined,
    /// Chosen by size: [`auto_algo`] (spec §7's sweet spots). Resolved before a run.
    Auto,
    /// All-reduce as [`Algo::Hierarchical`], with recursive halving-doubling across servers
    /// instead of a ring: `2 log2 m` steps across (two more when `m` is not a power of two)
    /// instead of `2(m - 1)` ([`schedule`]'s `hierarchical_rhd`).
    HierarchicalRhd,
}

/// All algorithms, in the order error messages list them.
pub const ALGOS: [Algo; 8] = [
    Algo::Ring,
    Algo::Direct,
    Algo::HalvingDoubling,
    Algo::Tree,
    Algo::Hierarchical,
    Algo::HierarchicalRhd,
    Algo::Pipelined,
    Algo::Auto,
];

impl Algo {
    /// Name as in configurations ("ring").
    pub fn name(self) -> &'static str {
        match self {
            Algo::Ring => "ring",
            Algo::Direct => "direct",
            Algo::HalvingDoubling => "halving_doubling",
            Algo::Tree => "tree",
            Algo::Hierarchical => "hierarchical",
            Algo::Pipelined => "pipelined",
            Algo::Auto => "auto",
            Algo::HierarchicalRhd => "hierarchical_rhd",
        }
    }
}

/// A collective: an operation and an algorithm. Parses from "all_reduce:ring" (the algorithm
/// defaults to ring, or direct for all-to-all).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Collective {
    /// The operation.
    pub op: Op,
    /// The algorithm.
    pub algo: Algo,
}

impl std::str::FromStr for Collective {
    type Err = String;
    fn from_str(s: &str) -> Result<Collective, String> {
        let (o, a) = s.split_once(':').map_or((s, None), |(o, a)| (o, Some(a)));
        let list = |names: Vec<&str>| names.join(", ");
        let op = OPS.into_iter().find(|x| x.name() == o).ok_or_else(|| {
            format!("unknown collective {o:?} (allowed: {})", list(OPS.iter().map(|x| x.name()).collect()))
        })?;
        let algo = match a {
            None if matches!(op, Op::AllToAll | Op::Permute) => Algo::Direct,
            None => Algo::Ring,
            Some(a) => ALGOS.into_iter().find(|x| x.name() == a).ok_or_else(|| {
                format!("unknown algorithm {a:?} (allowed: {})", list(ALGOS.iter().map(|x| x.name()).collect()))
            })?,
        };
        Ok(Collective { op, algo })
    }
}

/// From this many servers on, `auto` runs an all-reduce as [`Algo::HierarchicalRhd`]: the
/// pipelined and direct algorithms send every rank a message to each of `m / 2` (pipelined)
/// or `n` (direct) peers per step, and the hierarchical ring takes `2(m - 1)` steps across,
/// where halving-doubling takes `2 log2 m`. Twice the largest preset's 64 servers, so every
/// preset keeps its choice; the crossover against pipelined is not measured (E).
pub const RHD_ACROSS_FROM_SERVERS: usize = 128;

/// Spec §7 (D A10, Trn2 intra-node): Mesh below 1 MB ...
pub const MESH_BELOW_BYTES: u64 = 1_000_000;
/// ... RDH from 1 MB to 56 MB, (Kanga)Ring above (MB = 1e6 B).
pub const RDH_UP_TO_BYTES: u64 = 56_000_000;

/// The algorithm `auto` stands for, for `op` on `n` chips with a per-chip buffer of `size`
/// bytes.
///
/// - all-reduce, spec §7's by-size policy: direct (Mesh) below 1 MB; halving-doubling (RDH)
///   up to 56 MB when `n` is a power of two (ring otherwise); ring above (KangaRing is not
///   modelled). The thresholds are AWS's for the Trn2 16-chip torus (D A10); using them
///   unchanged on other topologies and chip counts is an estimate (E).
/// - broadcast (AWS documents no policy; E): whichever of binomial tree and pipelined chain
///   a step model predicts faster. With `y = size / PIPELINE_STEP_BYTES` (the bytes one step
///   overhead is worth), the tree costs `log2 n x (1 + y)` step overheads and the chain at its
///   best chunk count `(sqrt(n - 2) + sqrt(y))^2`; on 64 chips the chain wins from ~12 MB.
/// - any other operation: its default algorithm.
pub fn auto_algo(op: Op, n: usize, size: u64) -> Algo {
    match op {
        Op::AllReduce if size < MESH_BELOW_BYTES => Algo::Direct,
        Op::AllReduce if size <= RDH_UP_TO_BYTES && n.is_power_of_two() => Algo::HalvingDoubling,
        Op::Broadcast if broadcast_tree_is_faster(n, size) => Algo::Tree,
        Op::AllToAll | Op::Permute => Algo::Direct,
        _ => Algo::Ring,
    }
}

/// The algorithm `auto` stands for in [`run`] and [`run_group`], which know the ranks'
/// servers: `per_server` ranks to a server when the ranks come server by server, the same
/// number on each (None otherwise). An all-reduce of at least [`MESH_BELOW_BYTES`] over two
/// or more servers runs [`Algo::Pipelined`], faster there than ring and halving-doubling at
/// every size measured on the Trn2 and Trn3 UltraServers (docs/whatif.md); an all-gather or
/// reduce-scatter over two or more servers runs [`Algo::Hierarchical`] (each piece crosses
/// between servers once, and there are `m + k - 2` steps instead of the ring's `n - 1`:
/// faster than the ring at every size measured, 64 KiB to 256 MiB, on the Trn2 and Trn3
/// UltraServers and across two UltraServers, docs/scaleout.md); anything else is
/// [`auto_algo`]'s spec policy. (Direct stays faster than pipelined up to ~3 MB on the Trn3
/// presets, ~0.7 MB on the Trn2 torus; the 1 MB threshold is the spec's.) From
/// [`RHD_ACROSS_FROM_SERVERS`] servers on, an all-reduce of any size runs
/// [`Algo::HierarchicalRhd`].
pub fn auto_algo_in(op: Op, n: usize, size: u64, per_server: Option<usize>) -> Algo {
    let servers = per_server.filter(|&k| k > 0 && n.is_multiple_of(k)).map_or(1, |k| n / k);
    if op == Op::AllReduce && servers >= RHD_ACROSS_FROM_SERVERS {
        return Algo::HierarchicalRhd;
    }
    if op == Op::AllReduce && size >= MESH_BELOW_BYTES && servers >= 2 {
        return Algo::Pipelined;
    }
    if matches!(op, Op::AllGather | Op::ReduceScatter) && servers >= 2 {
        return Algo::Hierarchical;
    }
    auto_algo(op, n, size)
}

fn broadcast_tree_is_faster(n: usize, size: u64) -> bool {
    let y = size as f64 / schedule::PIPELINE_STEP_BYTES as f64;
    let tree = f64::from(n.next_power_of_two().trailing_zeros()) * (1.0 + y);
    let chain = ((n.saturating_sub(2)) as f64).sqrt() + y.sqrt();
    tree <= chain * chain
}

impl Collective {
    /// The collective with `auto` replaced by the algorithm [`auto_algo`] picks.
    pub fn resolve(self, n: usize, size: u64) -> Collective {
        match self.algo {
            Algo::Auto => Collective { op: self.op, algo: auto_algo(self.op, n, size) },
            _ => self,
        }
    }
}

impl Collective {
    /// The collective with `auto` replaced by the algorithm [`auto_algo_in`] picks.
    pub fn resolve_in(self, n: usize, size: u64, per_server: Option<usize>) -> Collective {
        match self.algo {
            Algo::Auto => Collective { op: self.op, algo: auto_algo_in(self.op, n, size, per_server) },
            _ => self,
        }
    }
}

/// Run parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Software time before each step's sends (spec §10: per-hop collective step 1-2 us;
    /// default 1.5 us, E).
    pub step_overhead: Dur,
    /// Simulated-time limit of one run (default 1 s).
    pub limit: Dur,
}

impl Default for Params {
    fn default() -> Params {
        Params { step_overhead: Dur::from_ps(1_500_000), limit: Dur::from_us(1_000_000) }
    }
}

/// One line of an nccl-tests-style table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    /// Per-chip buffer size, in bytes.
    pub size_bytes: u64,
    /// Time from start until the last chip finished, in microseconds.
    pub time_us: f64,
    /// size / time, in GB/s.
    pub algbw_gbps: f64,
    /// algbw x the operation's bus factor, in GB/s.
    pub busbw_gbps: f64,
}

/// What one run leaves behind: the table row and the network's statistics.
pub struct RunResult {
    /// The row.
    pub row: Row,
    /// The algorithm that ran (`auto` resolved).
    pub algo: Algo,
    /// Per-edge counters (index = edge of the topology).
    pub edge_stats: Vec<EdgeStats>,
    /// Every message sent.
    pub msgs: Vec<Message>,
    /// Message latency (send to last packet), in picoseconds.
    pub latency: Histogram,
    /// When the last chip finished, in picoseconds.
    pub finish_ps: u64,
    /// The kernel's statistics report (component "fabric": per-edge bytes and utilization).
    pub report: trnsim_kernel::StatsReport,
}

/// Runs `coll` once on `topo` with a per-chip buffer of `size` bytes (`auto` resolved by
/// [`Collective::resolve_in`] with the topology's servers).
pub fn run(topo: &Topology, coll: Collective, size: u64, p: &Params) -> Result<RunResult, String> {
    let coll = coll.resolve_in(topo.chips, size, Some(topo.chips_per_server));
    let progs = schedule::build_in(coll.op, coll.algo, topo.chips, size, &topo.ring, topo.chips_per_server)?;
    run_programs(topo, coll, size, topo.chips, progs, p)
}

/// [`run`] on the flow-level network ([`flow`]): the same programs, messages as fluid flows
/// (split over the source's links by their queues; links shared older step first, max-min
/// fairly within a step).
pub fn run_flow(topo: &Topology, coll: Collective, size: u64, p: &Params) -> Result<Row, String> {
    let coll = coll.resolve_in(topo.chips, size, Some(topo.chips_per_server));
    let (overhead, limit) = (p.step_overhead.as_ps(), p.limit.as_ps());
    let r = if coll.algo == Algo::HierarchicalRhd && coll.op == Op::AllReduce && topo.chips >= 2 {
        // One rank's program at a time: a million ranks' steps would take gigabytes at once.
        let (n, k) = (topo.chips, schedule::hierarchical_rhd_check(topo.chips, topo.chips_per_server)?);
        flow::run_runs(topo, (0..n).map(|r| schedule::hierarchical_rhd_rank(n, size, k, r)), overhead, limit)?
    } else {
        let progs = schedule::build_runs(coll.op, coll.algo, topo.chips, size, &topo.ring, topo.chips_per_server)?;
        flow::run_runs(topo, progs, overhead, limit)?
    };
    let time_s = r.finish_ps() * 1e-12;
    let algbw = if time_s <= 0.0 { 0.0 } else { size as f64 / time_s / 1e9 };
    let busbw_gbps = algbw * coll.op.busbw_factor(topo.chips);
    Ok(Row { size_bytes: size, time_us: time_s * 1e6, algbw_gbps: algbw, busbw_gbps })
}

/// Runs `coll` once among the chips `members` of `topo` (in ring order; the others take no
/// part) with a per-chip buffer of `size` bytes (`auto` resolved by [`Collective::resolve_in`]
/// with the members' servers). Bus bandwidth uses the group's size.
pub fn run_group(
    topo: &Topology,
    coll: Collective,
    size: u64,
    members: &[usize],
    p: &Params,
) -> Result<RunResult, String> {
    let n = members.len();
    let per_server = schedule::members_per_server(members, topo.chips_per_server.max(1));
    let coll = coll.resolve_in(n, size, per_server);
    let progs = schedule::for_members(coll.op, coll.algo, topo.chips, members, size, topo.chips_per_server)?;
    run_programs(topo, coll, size, n, progs, p)
}

/// Runs per-chip step programs (index = chip; empty = no part) on `topo` from time 0, as one
/// concurrent run: several groups' collectives at once contend for the links they share.
/// Returns each chip's completion time in picoseconds (0 for chips with no program).
pub fn run_concurrent(topo: &Topology, progs: Vec<schedule::Program>, p: &Params) -> Result<Vec<u64>, String> {
    if progs.len() != topo.chips {
        return Err(format!("{} programs for {} chips", progs.len(), topo.chips));
    }
    let (sim, id) = simulate(topo, progs, p)?;
    let f = sim.component::<FabricRun>(id).ok_or("the fabric component is missing")?;
    (0..topo.chips)
        .map(|c| {
            f.done_ps(c).ok_or_else(|| {
                format!("chip {c} did not finish within the run's limit of {} of simulated time", p.limit)
            })
        })
        .collect()
}

/// The most memory the packet-level network may keep for `progs`' pending packets: each
/// chip's largest step, every packet of its messages placed on its first hop when the step
/// starts (the first hops are kept until each packet leaves), summed over the chips.
pub fn pending_bytes(progs: &[schedule::Program], packet_bytes: u32) -> u64 {
    let pkt = u64::from(packet_bytes.max(1));
    let step = |s: &schedule::Step| s.sends.iter().map(|&(_, b)| b.div_ceil(pkt)).fold(0, u64::saturating_add);
    let packets = progs.iter().map(|prog| prog.iter().map(step).max().unwrap_or(0)).fold(0, u64::saturating_add);
    packets.saturating_mul(Network::PENDING_BYTES_PER_PACKET)
}

/// The fabric running `progs` as one kernel component, run until idle (at most `p.limit`).
/// Refused before anything is built when the packets it would keep pending do not fit in the
/// host's memory.
fn simulate(
    topo: &Topology,
    progs: Vec<schedule::Program>,
    p: &Params,
) -> Result<(trnsim_kernel::Simulation, trnsim_kernel::ComponentId), String> {
    let largest = progs.iter().flatten().flat_map(|s| s.sends.iter().map(|&(_, b)| b)).max().unwrap_or(0);
    trnsim_kernel::host::check_fits(
        &format!(
            "the packet-level network (messages of up to {largest} B in {} B packets, {} B kept per packet until it leaves)",
            topo.packet_bytes,
            Network::PENDING_BYTES_PER_PACKET
        ),
        pending_bytes(&progs, topo.packet_bytes),
    )?;
    let fabric = FabricRun::new(Network::new(topo.clone()), progs, p.step_overhead.as_ps());
    let mut b = SimBuilder::new();
    let clk = b.clock("fabric", Frequency::from_mhz(1000)).map_err(|e| e.to_string())?;
    let id = b.add("fabric", clk, fabric).map_err(|e| e.to_string())?;
    // The network is one component: a packet on its slowest hop (latency, switch included,
    // plus its serialization) or a step's overhead is silence the deadlock check must allow.
    let hop = topo
        .edges
        .iter()
        .map(|e| e.latency_ps.saturating_add(e.serialization_ps(topo.packet_bytes)))
        .max()
        .unwrap_or(0);
    b.expect_silence(Dur::from_ps(hop.max(p.step_overhead.as_ps())));
    let mut sim = b.build().map_err(|e| e.to_string())?;
    sim.run_until_idle(p.limit).map_err(|e| e.to_string())?;
    Ok((sim, id))
}

/// Runs the per-chip `progs` of `coll` among `n` ranks.
fn run_programs(
    topo: &Topology,
    coll: Collective,
    size: u64,
    n: usize,
    progs: Vec<schedule::Program>,
    p: &Params,
) -> Result<RunResult, String> {
    let (mut sim, id) = simulate(topo, progs, p)?;
    let report = sim.report();
    let f = sim.component_mut::<FabricRun>(id).ok_or("the fabric component is missing")?;
    let ps = f.finish_ps().ok_or_else(|| {
        format!("{} did not finish within the run's limit of {} of simulated time", coll.op.name(), p.limit)
    })?;
    let (edge_stats, msgs) = (std::mem::take(&mut f.net.edge_stats), std::mem::take(&mut f.net.msgs));
    let latency = std::mem::take(&mut f.net.latency);
    let time_s = ps as f64 * 1e-12;
    let algbw = if ps == 0 { 0.0 } else { size as f64 / time_s / 1e9 };
    let row =
        Row { size_bytes: size, time_us: time_s * 1e6, algbw_gbps: algbw, busbw_gbps: algbw * coll.op.busbw_factor(n) };
    Ok(RunResult { row, algo: coll.algo, edge_stats, msgs, latency, finish_ps: ps, report })
}

/// Runs `coll` on the topology in a RON file (or a preset name in models/configs/fabric,
/// e.g. "trn3-gen1-nl32x2") for each size; the harness's entry point.
pub fn run_table(topology: &str, coll: &str, sizes: &[u64], p: &Params) -> Result<Vec<Row>, String> {
    let path = std::path::Path::new(topology);
    let path =
        if path.exists() { path.to_path_buf() } else { crate::topo::presets_dir().join(format!("{topology}.ron")) };
    let topo = crate::topo::load(&path)?;
    let coll: Collective = coll.parse()?;
    sizes.iter().map(|&s| run(&topo, coll, s, p).map(|r| r.row)).collect()
}

/// Formats rows as an nccl-tests-style table.
pub fn format_table(rows: &[Row]) -> String {
    let mut s = format!("{:>12} {:>12} {:>12} {:>12}\n", "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)");
    for r in rows {
        s += &format!("{:>12} {:>12.2} {:>12.2} {:>12.2}\n", r.size_bytes, r.time_us, r.algbw_gbps, r.busbw_gbps);
    }
    s
}
