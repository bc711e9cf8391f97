//! Runs a workload's graph on a system: each rank has three in-order queues (compute,
//! memory, communication); a node starts when its queue is free and its dependencies are
//! done, a collective when that holds on every rank of its group (the group synchronizes).
//! How long each node takes comes from a [`Costs`] model; the schedule, the overlap of
//! communication with compute, and the breakdown are computed here, in exact nanoseconds.
//!
//! Compute nodes that run back to back on a rank overlap their edges (a node's first loads
//! and last stores, as a model with edges times them: [`Costs::compute_timing`],
//! [`edge_overlap_ns`]); a node without edges (the roofline's) overlaps nothing.
//!
//! Left out: contention between a rank's queues (a collective's DMA traffic does not slow
//! the compute's; separate collectives running at the same time do not share links unless
//! the cost model runs them together), and data-dependent timing.

use crate::format::{Checked, Op, Queue};
use std::collections::BTreeMap;

/// Timing models for the three kinds of node.
pub trait Costs {
    /// Told every compute node of a run before any is asked for ([`run`] calls it first): a
    /// model may work out their times ahead, e.g. on several threads. It changes no time.
    fn prepare(&mut self, _ops: &[&Op]) {}
    /// A compute node's time on one rank, in ns.
    fn compute_ns(&mut self, op: &Op) -> Result<f64, String>;
    /// A compute node's time with its edges, in ns: (time, head, tail), `head` the part before
    /// its first compute instruction (its first loads) and `tail` the part after its last (its
    /// last stores), which overlap the compute nodes before and after it on the rank
    /// ([`edge_overlap_ns`]). A model that times no such edges (the roofline) gives 0 for both.
    fn compute_timing(&mut self, op: &Op) -> Result<(f64, f64, f64), String> {
        Ok((self.compute_ns(op)?, 0.0, 0.0))
    }
    /// A memory node's time on one rank, in ns.
    fn memory_ns(&mut self, op: &Op) -> Result<f64, String>;
    /// A communication node run by every group of `groups` at once (chip numbers): each
    /// group's time in ns.
    fn comm_ns(&mut self, op: &Op, groups: &[Vec<usize>]) -> Result<Vec<f64>, String>;
    /// A send/recv where each `(src, dst)` pair moves `bytes`: each pair's time in ns.
    fn send_recv_ns(&mut self, bytes: u64, pairs: &[(usize, usize)]) -> Result<Vec<f64>, String>;
}

/// How much of two compute nodes run back to back on one rank overlaps, in ns: the next
/// node's head (its first loads, issued while the previous one computes, as a compiled graph
/// issues them) hides behind the previous node's compute (its time less its tail), and the
/// previous node's tail (its last stores) behind the next node's compute (its time less its
/// head). Left out: the bandwidth the early loads take from the previous node, and that the
/// next node's input would stay in SBUF rather than go through HBM.
pub fn edge_overlap_ns(prev_ns: f64, prev_tail: f64, next_ns: f64, next_head: f64) -> f64 {
    let hidden_head = next_head.min(prev_ns - prev_tail).max(0.0);
    let hidden_tail = prev_tail.min(next_ns - next_head).max(0.0);
    hidden_head + hidden_tail
}

/// One node instance on one rank.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Span {
    /// The rank.
    pub rank: u32,
    /// Index of the node in the file.
    pub node: usize,
    /// Which repetition.
    pub iter: u32,
    /// The queue it ran on.
    #[serde(skip)]
    pub queue: Queue,
    /// Start, in ns.
    pub start_ns: f64,
    /// End, in ns.
    pub end_ns: f64,
}

/// Where one rank's step time went, in ns.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Breakdown {
    /// The rank.
    pub rank: u32,
    /// From 0 to the rank's last node's end.
    pub step_ns: f64,
    /// Time with a compute node running.
    pub compute_ns: f64,
    /// Time with a memory node running.
    pub memory_ns: f64,
    /// Time with a collective running.
    pub comm_ns: f64,
    /// Communication not hidden behind compute.
    pub exposed_comm_ns: f64,
    /// Memory time with neither compute nor communication running (memory-bound time).
    pub memory_bound_ns: f64,
    /// Time with nothing running.
    pub idle_ns: f64,
}

/// One collective node's figures (first repetition, first group).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CommStat {
    /// Node name.
    pub name: String,
    /// Operation.
    pub op: String,
    /// Bytes per rank.
    pub bytes: u64,
    /// Ranks per group.
    pub group_size: usize,
    /// Time from the group's start to its end, in us.
    pub time_us: f64,
    /// bytes / time x the operation's bus factor, in GB/s.
    pub busbw_gbps: f64,
}

/// The result of a run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// The workload's name.
    pub workload: String,
    /// The step: the last rank's end, in ns.
    pub step_ns: f64,
    /// The rank that finished last.
    pub critical: Breakdown,
    /// Every rank's breakdown.
    pub ranks: Vec<Breakdown>,
    /// Each collective node's figures.
    pub collectives: Vec<CommStat>,
    /// Every node instance (for traces).
    #[serde(skip)]
    pub spans: Vec<Span>,
}

fn busbw_factor(op: &Op, n: usize) -> f64 {
    let f = (n as f64 - 1.0) / n as f64;
    match op {
        Op::AllReduce(_) => 2.0 * f,
        Op::Broadcast(_) | Op::SendRecv { .. } => 1.0,
        _ => f,
    }
}

/// Runs `c` with `costs`; ranks map to chips `0..ranks`, which must exist (`chips`).
pub fn run(c: &Checked, chips: usize, costs: &mut dyn Costs) -> Result<Report, String> {
    let w = &c.w;
    if w.ranks as usize > chips {
        return Err(format!("workload {:?} has {} ranks but the system has {chips} chips", w.name, w.ranks));
    }
    let ranks = w.ranks as usize;
    let n = w.nodes.len();
    let index: BTreeMap<u32, usize> = w.nodes.iter().enumerate().map(|(i, nd)| (nd.id, i)).collect();
    // Durations do not change between repetitions: one cost query per node.
    let compute: Vec<&Op> = w.nodes.iter().map(|nd| &nd.op).filter(|op| op.queue() == Queue::Compute).collect();
    costs.prepare(&compute);
    let mut dur: Vec<Vec<f64>> = Vec::with_capacity(n); // per node, per rank
    let mut edges = vec![(0.0f64, 0.0f64); n]; // per compute node: head, tail
    let mut stats = Vec::new();
    for (i, nd) in w.nodes.iter().enumerate() {
        let mut d = vec![0.0; ranks];
        match nd.op.queue() {
            Queue::Compute => {
                let (t, head, tail) = costs.compute_timing(&nd.op)?;
                edges[i] = (head, tail);
                c.node_ranks[i].iter().for_each(|&r| d[r as usize] = t);
            }
            Queue::Memory => {
                let t = costs.memory_ns(&nd.op)?;
                c.node_ranks[i].iter().for_each(|&r| d[r as usize] = t);
            }
            Queue::Comm => comm_durations(c, i, costs, &mut d, &mut stats)?,
        }
        dur.push(d);
    }
    let mut end = vec![vec![0.0f64; ranks]; n]; // per node, the latest repetition's end
    let mut free = vec![[0.0f64; 3]; ranks];
    // Per rank, the last compute node's end, length and tail: a compute node that starts as it
    // ends overlaps their edges ([`edge_overlap_ns`]).
    let mut last_compute: Vec<Option<(f64, f64, f64)>> = vec![None; ranks];
    let mut spans = Vec::new();
    let q = |queue: Queue| queue as usize;
    for iter in 0..w.repeat {
        for (i, nd) in w.nodes.iter().enumerate() {
            let qi = q(nd.op.queue());
            let ready = |r: usize, end: &Vec<Vec<f64>>| -> f64 {
                let deps = nd.data_deps.iter().chain(&nd.ctrl_deps).map(|d| end[index[d]][r]);
                deps.fold(free[r][qi], f64::max)
            };
            let groups = sync_groups(c, i);
            let mut starts = vec![0.0; ranks];
            for g in &groups {
                let s = g.iter().map(|&r| ready(r as usize, &end)).fold(0.0, f64::max);
                g.iter().for_each(|&r| starts[r as usize] = s);
            }
            for &r in &c.node_ranks[i] {
                let r = r as usize;
                let mut len = dur[i][r];
                if qi == q(Queue::Compute) {
                    let (head, tail) = edges[i];
                    // Only nodes with edges (programs timed on the chip) overlap: a node
                    // without (the roofline's) has nothing measured to hide.
                    let timed = head > 0.0 || tail > 0.0;
                    if let Some((prev_end, prev_len, prev_tail)) = last_compute[r] {
                        if timed && prev_end == starts[r] {
                            len -= edge_overlap_ns(prev_len, prev_tail, len, head);
                        }
                    }
                    last_compute[r] = timed.then_some((starts[r] + len, len, tail));
                }
                let (s, e) = (starts[r], starts[r] + len);
                end[i][r] = e;
                free[r][qi] = e;
                spans.push(Span { rank: r as u32, node: i, iter, queue: nd.op.queue(), start_ns: s, end_ns: e });
            }
        }
    }
    let mut per_rank: Vec<Vec<&Span>> = vec![Vec::new(); ranks];
    for s in &spans {
        per_rank[s.rank as usize].push(s);
    }
    let breakdowns: Vec<Breakdown> = per_rank.iter().enumerate().map(|(r, ss)| breakdown(r as u32, ss)).collect();
    let critical = breakdowns
        .iter()
        .fold(None::<&Breakdown>, |best, b| match best {
            Some(x) if x.step_ns >= b.step_ns => Some(x),
            _ => Some(b),
        })
        .cloned()
        .unwrap_or_default();
    Ok(Report {
        workload: w.name.clone(),
        step_ns: critical.step_ns,
        critical,
        ranks: breakdowns,
        collectives: stats,
        spans,
    })
}

/// The (sender, receiver) pairs of send/recv node `i`.
fn pairs(c: &Checked, i: usize) -> Vec<(u32, u32)> {
    let nd = &c.w.nodes[i];
    let Op::SendRecv { offset, .. } = nd.op else { return Vec::new() };
    let senders: Vec<u32> = nd.ranks.clone().unwrap_or_else(|| (0..c.w.ranks).collect());
    senders.iter().map(|&r| (r, crate::format::receiver(r, offset, c.w.ranks))).collect()
}

/// The groups of ranks that start node `i` together: a collective's groups, the connected
/// pairs of a send/recv, each rank alone otherwise.
fn sync_groups(c: &Checked, i: usize) -> Vec<Vec<u32>> {
    let nd = &c.w.nodes[i];
    if let Op::SendRecv { .. } = nd.op {
        // Union-find over the pairs: a ring shift is one group, pipeline hops are pairs.
        let mut parent: BTreeMap<u32, u32> = c.node_ranks[i].iter().map(|&r| (r, r)).collect();
        fn root(p: &mut BTreeMap<u32, u32>, mut x: u32) -> u32 {
            while p[&x] != x {
                x = p[&x];
            }
            x
        }
        for (s, d) in pairs(c, i) {
            let (a, b) = (root(&mut parent, s), root(&mut parent, d));
            parent.insert(a.max(b), a.min(b));
        }
        let mut groups: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for &r in &c.node_ranks[i] {
            let k = root(&mut parent, r);
            groups.entry(k).or_default().push(r);
        }
        return groups.into_values().collect();
    }
    match nd.op.group() {
        Some(group) => c.groups[group]
            .iter()
            .filter(|g| g.iter().any(|r| c.node_ranks[i].binary_search(r).is_ok()))
            .cloned()
            .collect(),
        None => c.node_ranks[i].iter().map(|&r| vec![r]).collect(),
    }
}

fn comm_durations(
    c: &Checked,
    i: usize,
    costs: &mut dyn Costs,
    d: &mut [f64],
    stats: &mut Vec<CommStat>,
) -> Result<(), String> {
    let nd = &c.w.nodes[i];
    if let Op::SendRecv { bytes, .. } = &nd.op {
        let pairs: Vec<(usize, usize)> = pairs(c, i).iter().map(|&(s, d)| (s as usize, d as usize)).collect();
        let t = costs.send_recv_ns(*bytes, &pairs).map_err(|e| c.node_error(i, "op.bytes", &e))?;
        for (&(s, r), &t) in pairs.iter().zip(&t) {
            d[s] = d[s].max(t);
            d[r] = d[r].max(t);
        }
        let first = t.first().copied().unwrap_or(0.0);
        stats.push(CommStat {
            name: nd.name.clone(),
            op: nd.op.kind().into(),
            bytes: *bytes,
            group_size: 2,
            time_us: first / 1e3,
            busbw_gbps: if first > 0.0 { *bytes as f64 / first } else { 0.0 },
        });
        return Ok(());
    }
    let groups: Vec<Vec<usize>> = sync_groups(c, i).iter().map(|g| g.iter().map(|&r| r as usize).collect()).collect();
    let t = costs.comm_ns(&nd.op, &groups).map_err(|e| c.node_error(i, "op.bytes", &e))?;
    for (g, &t) in groups.iter().zip(&t) {
        g.iter().for_each(|&r| d[r] = t);
    }
    let bytes = nd.op.comm_bytes();
    let (first, size) = (t.first().copied().unwrap_or(0.0), groups.first().map_or(0, Vec::len));
    stats.push(CommStat {
        name: nd.name.clone(),
        op: nd.op.kind().into(),
        bytes,
        group_size: size,
        time_us: first / 1e3,
        busbw_gbps: if first > 0.0 { bytes as f64 / first * busbw_factor(&nd.op, size) } else { 0.0 },
    });
    Ok(())
}

/// Merged intervals of `spans` on queue `q`.
fn union(spans: &[&Span], keep: impl Fn(Queue) -> bool) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> =
        spans.iter().filter(|s| keep(s.queue) && s.end_ns > s.start_ns).map(|s| (s.start_ns, s.end_ns)).collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

fn length(v: &[(f64, f64)]) -> f64 {
    v.iter().map(|(s, e)| e - s).sum()
}

/// Length of `a` not covered by `b` (both merged and sorted), in one pass over each: for each
/// interval of `a`, only the intervals of `b` that overlap it are visited (those ending before
/// it overlap no later one either), in order, so the sums are those of comparing every pair.
fn minus(a: &[(f64, f64)], b: &[(f64, f64)]) -> f64 {
    let mut total = 0.0;
    let mut first = 0;
    for &(s, e) in a {
        while first < b.len() && b[first].1 <= s {
            first += 1;
        }
        let mut covered = 0.0;
        for &(bs, be) in b[first..].iter().take_while(|(bs, _)| *bs < e) {
            let (lo, hi) = (s.max(bs), e.min(be));
            if hi > lo {
                covered += hi - lo;
            }
        }
        total += (e - s) - covered;
    }
    total
}

fn breakdown(rank: u32, spans: &[&Span]) -> Breakdown {
    let compute = union(spans, |q| q == Queue::Compute);
    let memory = union(spans, |q| q == Queue::Memory);
    let comm = union(spans, |q| q == Queue::Comm);
    let busy = union(spans, |_| true);
    let not_memory = union(spans, |q| q != Queue::Memory);
    let step = spans.iter().map(|s| s.end_ns).fold(0.0, f64::max);
    Breakdown {
        rank,
        step_ns: step,
        compute_ns: length(&compute),
        memory_ns: length(&memory),
        comm_ns: length(&comm),
        exposed_comm_ns: minus(&comm, &compute),
        memory_bound_ns: minus(&memory, &not_memory),
        idle_ns: step - length(&busy),
    }
}

#[cfg(test)]
mod tests {
    use super::minus;

    /// `minus` as first written: every pair compared.
    fn minus_pairwise(a: &[(f64, f64)], b: &[(f64, f64)]) -> f64 {
        let mut total = 0.0;
        for &(s, e) in a {
            let mut covered = 0.0;
            for &(bs, be) in b {
                let (lo, hi) = (s.max(bs), e.min(be));
                if hi > lo {
                    covered += hi - lo;
                }
            }
            total += (e - s) - covered;
        }
        total
    }

    /// Sorted, disjoint intervals: `n` of them from a fixed-seed stream.
    fn intervals(rng: &mut trnsim_kernel::SimRng, n: usize) -> Vec<(f64, f64)> {
        let mut at = 0.0;
        (0..n)
            .map(|_| {
                let s = at + rng.below(50) as f64 * 0.75;
                let e = s + 0.5 + rng.below(40) as f64 * 1.25;
                at = e + if rng.below(3) == 0 { 0.0 } else { 0.25 };
                (s, e)
            })
            .collect()
    }

    #[test]
    fn uncovered_length_equals_every_pair_compared_and_is_linear() {
        let mut rng = trnsim_kernel::SimRng::new(0x6d69, 0);
        for n in [0, 1, 2, 5, 40, 300] {
            for m in [0, 1, 3, 40, 300] {
                let (a, b) = (intervals(&mut rng, n), intervals(&mut rng, m));
                assert_eq!(minus(&a, &b).to_bits(), minus_pairwise(&a, &b).to_bits(), "{n} x {m}");
            }
        }
        // A rank with a million spans on each side: 10^12 pairs compared would not finish.
        let (a, b) = (intervals(&mut rng, 1_000_000), intervals(&mut rng, 1_000_000));
        let left = minus(&a, &b);
        assert!(left >= 0.0 && left <= a.iter().map(|(s, e)| e - s).sum::<f64>());
    }
}
