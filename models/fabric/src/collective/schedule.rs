//! Collective algorithms as per-chip programs of steps, and the registry of algorithms.
//!
//! **Contract.** An algorithm only says, for each chip, which messages it sends in each step
//! and how many it must receive before that step is complete; it knows nothing of time or the
//! network. A chip issues step `s`'s sends once step `s - 1` is complete (plus the per-step
//! software overhead), and step `s` completes when its sends are issued and its receives have
//! arrived. Data dependencies (a ring step forwards what the previous step received) are thus
//! respected without modelling the data.

use crate::collective::{Algo, Op};

/// One step of one chip.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// Messages sent: (destination chip, payload bytes).
    pub sends: Vec<(usize, u64)>,
    /// Messages (tagged with this step) that must arrive before the step is complete.
    pub recvs: u32,
}

/// The steps of one chip, in order.
pub type Program = Vec<Step>;

/// Builds one program per chip (index = chip) for `n` chips and `size` bytes.
pub type ScheduleFn = fn(op: Op, n: usize, size: u64, ring: &[usize]) -> Result<Vec<Program>, String>;

/// The algorithms: (algorithm, operations it implements, builder). One entry per algorithm.
pub const REGISTRY: &[(Algo, &[Op], ScheduleFn)] = &[
    (Algo::Ring, &[Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::Broadcast], ring),
    (Algo::Direct, &[Op::AllToAll, Op::AllReduce], direct),
    (Algo::HalvingDoubling, &[Op::AllReduce], halving_doubling),
    (Algo::Tree, &[Op::Broadcast], binomial_tree),
];

/// Pipelined-chain broadcast: the buffer is cut into about `sqrt((n - 2) x size /
/// PIPELINE_STEP_BYTES)` chunks, the count that minimises `(chunks + n - 2) x (overhead +
/// chunk / bandwidth)` when one step overhead moves this many bytes (1.5 us x ~175 GB/s,
/// E: between one x8 link and a switched chip's 9 links). That cost is an upper bound: as a
/// chip's sends do not hold up its next step, the simulated chain fills in `n - 1` steps and
/// then delivers a chunk every `max(overhead, chunk / bandwidth)`.
pub const PIPELINE_STEP_BYTES: u64 = 256 << 10;

/// The broadcast root.
pub const ROOT: usize = 0;

/// The programs of `algo` for `op` (`auto` resolved by [`crate::collective::auto_algo`]),
/// or why not.
pub fn build(op: Op, algo: Algo, n: usize, size: u64, ring: &[usize]) -> Result<Vec<Program>, String> {
    let algo = if algo == Algo::Auto { crate::collective::auto_algo(op, n, size) } else { algo };
    let (_, ops, f) = REGISTRY.iter().find(|(a, _, _)| *a == algo).ok_or_else(|| format!("no algorithm {algo:?}"))?;
    if !ops.contains(&op) {
        return Err(format!("algorithm {} does not implement {} (it does: {:?})", algo.name(), op.name(), ops));
    }
    if n < 2 {
        return Err(format!("a collective needs at least 2 chips, got {n}"));
    }
    f(op, n, size, ring)
}

/// Ring: the chips in `ring` order; each step sends `size / n` to the next chip and receives
/// from the previous one. All-reduce = reduce-scatter (n - 1 steps) then all-gather (n - 1).
/// Broadcast is a pipelined chain instead (see [`chain_broadcast`]).
fn ring(op: Op, n: usize, size: u64, ring: &[usize]) -> Result<Vec<Program>, String> {
    if op == Op::Broadcast {
        return Ok(chain_broadcast(n, size, ring));
    }
    let steps = if op == Op::AllReduce { 2 * (n - 1) } else { n - 1 };
    let chunk = size.div_ceil(n as u64);
    let mut progs = vec![Program::new(); n];
    for (p, &c) in ring.iter().enumerate() {
        let next = ring[(p + 1) % n];
        progs[c] = (0..steps).map(|_| Step { sends: vec![(next, chunk)], recvs: 1 }).collect();
    }
    Ok(progs)
}

/// Direct (mesh): every chip sends `size / n` to every other chip in one step, starting with
/// its successor (c + 1, c + 2, ...) so no chip is everyone's first target. All-reduce is a
/// direct reduce-scatter followed by a direct all-gather (spec §7 Mesh, 2 steps).
fn direct(op: Op, n: usize, size: u64, _ring: &[usize]) -> Result<Vec<Program>, String> {
    let chunk = size.div_ceil(n as u64);
    let steps = if op == Op::AllReduce { 2 } else { 1 };
    Ok((0..n)
        .map(|c| {
            let sends: Vec<(usize, u64)> = (1..n).map(|k| ((c + k) % n, chunk)).collect();
            (0..steps).map(|_| Step { sends: sends.clone(), recvs: (n - 1) as u32 }).collect()
        })
        .collect())
}

/// Recursive halving-doubling all-reduce (spec §7 RDH): log2 n halving steps exchanging
/// `size / 2^(k+1)` with partner `c xor n / 2^(k+1)`, then the doubling steps in reverse.
/// Chip indices are the partners, so on a torus with power-of-two dimensions the partner
/// differs in one coordinate (the torus seen as a hypercube). `n` must be a power of two.
fn halving_doubling(_op: Op, n: usize, size: u64, _ring: &[usize]) -> Result<Vec<Program>, String> {
    if !n.is_power_of_two() {
        return Err(format!("halving-doubling needs a power-of-two chip count, got {n}"));
    }
    let levels = n.trailing_zeros() as usize;
    let halving = |c: usize, k: usize| Step { sends: vec![(c ^ (n >> (k + 1)), size >> (k + 1))], recvs: 1 };
    Ok((0..n)
        .map(|c| {
            let mut p: Program = (0..levels).map(|k| halving(c, k)).collect();
            p.extend((0..levels).rev().map(|k| halving(c, k)));
            p
        })
        .collect())
}

/// Pipelined chain broadcast: the chips in `ring` order rotated to start at [`ROOT`]; the
/// buffer is cut into `c` chunks (see [`PIPELINE_STEP_BYTES`]), and chip `q` of the chain
/// receives chunk `j` in step `q - 1 + j` and forwards it in step `q + j`. The last chip's
/// last chunk arrives after `c + n - 2` steps; each link carries the buffer once.
pub fn chain_broadcast(n: usize, size: u64, ring: &[usize]) -> Vec<Program> {
    let at = ring.iter().position(|&c| c == ROOT).unwrap_or(0);
    let order: Vec<usize> = (0..n).map(|p| ring[(at + p) % n]).collect();
    let c = chain_chunks(n, size) as usize;
    let piece = |j: usize| size / c as u64 + u64::from((j as u64) < size % c as u64);
    let mut progs = vec![Program::new(); n];
    for (q, &chip) in order.iter().enumerate() {
        let forwards = q + 1 < n;
        let len = if q == 0 { c } else { q + c - 1 + usize::from(forwards) };
        progs[chip] = (0..len)
            .map(|t| {
                let recvs = u32::from(q > 0 && t + 1 >= q && t + 1 < q + c);
                let sends = if forwards && t >= q && t < q + c { vec![(order[q + 1], piece(t - q))] } else { vec![] };
                Step { sends, recvs }
            })
            .collect();
    }
    progs
}

/// Chunks of a pipelined chain of `n` chips for `size` bytes: round(sqrt((n - 2) x size /
/// [`PIPELINE_STEP_BYTES`])), at least 1, at most one per 4 KiB.
pub fn chain_chunks(n: usize, size: u64) -> u64 {
    let c = ((n.saturating_sub(2)) as f64 * size as f64 / PIPELINE_STEP_BYTES as f64).sqrt().round() as u64;
    c.clamp(1, size.div_ceil(4096).max(1))
}

/// Binomial-tree broadcast from [`ROOT`] (chip index = rank): in step `k` every chip of rank
/// `r < 2^k` that has the buffer sends all of it to rank `r + 2^k`; ceil(log2 n) steps, each
/// chip receives the buffer once.
fn binomial_tree(_op: Op, n: usize, size: u64, _ring: &[usize]) -> Result<Vec<Program>, String> {
    let steps = n.next_power_of_two().trailing_zeros() as usize;
    Ok((0..n)
        .map(|r| {
            (0..steps)
                .map(|k| {
                    let sends = if r < 1 << k && r + (1 << k) < n { vec![(r + (1 << k), size)] } else { vec![] };
                    Step { sends, recvs: u32::from(r >= 1 << k && r < 2 << k) }
                })
                .collect()
        })
        .collect())
}
