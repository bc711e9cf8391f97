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
    (Algo::Ring, &[Op::AllReduce, Op::AllGather, Op::ReduceScatter], ring),
    (Algo::Direct, &[Op::AllToAll, Op::AllReduce], direct),
    (Algo::HalvingDoubling, &[Op::AllReduce], halving_doubling),
];

/// The programs of `algo` for `op`, or why not.
pub fn build(op: Op, algo: Algo, n: usize, size: u64, ring: &[usize]) -> Result<Vec<Program>, String> {
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
fn ring(op: Op, n: usize, size: u64, ring: &[usize]) -> Result<Vec<Program>, String> {
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
