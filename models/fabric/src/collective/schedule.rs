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

/// The steps of one chip as runs of equal steps: (step, how many times in a row, >= 1).
pub type Runs = Vec<(Step, u32)>;

/// `prog` as runs of equal consecutive steps.
pub fn runs_of(prog: Program) -> Runs {
    let mut out: Runs = Vec::new();
    for st in prog {
        match out.last_mut() {
            Some((last, n)) if *last == st && *n < u32::MAX => *n += 1,
            _ => out.push((st, 1)),
        }
    }
    out
}

/// [`build_in`] as runs of equal steps ([`runs_of`]), built without the step lists where the
/// algorithm's steps repeat (hierarchical: three runs per rank however many ranks).
pub fn build_runs(
    op: Op,
    algo: Algo,
    n: usize,
    size: u64,
    ring: &[usize],
    per_server: usize,
) -> Result<Vec<Runs>, String> {
    let resolved = if algo == Algo::Auto { crate::collective::auto_algo(op, n, size) } else { algo };
    if resolved == Algo::Hierarchical && n >= 2 && matches!(op, Op::AllReduce | Op::AllGather | Op::ReduceScatter) {
        return hierarchical_runs(op, n, size, per_server);
    }
    if resolved == Algo::HierarchicalRhd && n >= 2 && op == Op::AllReduce {
        let k = hierarchical_rhd_check(n, per_server)?;
        return Ok((0..n).map(|r| hierarchical_rhd_rank(n, size, k, r)).collect());
    }
    Ok(build_in(op, resolved, n, size, ring, per_server)?.into_iter().map(runs_of).collect())
}

/// Builds one program per rank (index = rank) for `n` ranks and `size` bytes; `ring` is the
/// ring order of the ranks, and ranks `s x per_server .. (s + 1) x per_server` share a server.
pub type ScheduleFn =
    fn(op: Op, n: usize, size: u64, ring: &[usize], per_server: usize) -> Result<Vec<Program>, String>;

/// Checks that `algo` implements `op` ([`Algo::Auto`] picks one that does); the error lists
/// the operations it implements.
pub fn supports(algo: Algo, op: Op) -> Result<(), String> {
    match REGISTRY.iter().find(|(a, _, _)| *a == algo) {
        Some((_, ops, _)) if !ops.contains(&op) => Err(unsupported(algo, op, ops)),
        _ => Ok(()),
    }
}

fn unsupported(algo: Algo, op: Op, ops: &[Op]) -> String {
    let names: Vec<&str> = ops.iter().map(|o| o.name()).collect();
    format!("algorithm {} does not implement {} (it does: {})", algo.name(), op.name(), names.join(", "))
}

/// The algorithms: (algorithm, operations it implements, builder). One entry per algorithm.
pub const REGISTRY: &[(Algo, &[Op], ScheduleFn)] = &[
    (Algo::Ring, &[Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::Broadcast, Op::Permute], ring),
    (Algo::Direct, &[Op::AllToAll, Op::AllReduce, Op::Permute], direct),
    (Algo::HalvingDoubling, &[Op::AllReduce], halving_doubling),
    (Algo::Tree, &[Op::Broadcast], binomial_tree),
    (Algo::Hierarchical, &[Op::AllReduce, Op::AllGather, Op::ReduceScatter], hierarchical),
    (Algo::Pipelined, &[Op::AllReduce], pipelined),
    (Algo::HierarchicalRhd, &[Op::AllReduce], hierarchical_rhd),
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
    build_in(op, algo, n, size, ring, n)
}

/// [`build`] with ranks grouped `per_server` to a server (for the hierarchical algorithm).
pub fn build_in(
    op: Op,
    algo: Algo,
    n: usize,
    size: u64,
    ring: &[usize],
    per_server: usize,
) -> Result<Vec<Program>, String> {
    let algo = if algo == Algo::Auto { crate::collective::auto_algo(op, n, size) } else { algo };
    let (_, ops, f) = REGISTRY.iter().find(|(a, _, _)| *a == algo).ok_or_else(|| format!("no algorithm {algo:?}"))?;
    if !ops.contains(&op) {
        return Err(unsupported(algo, op, ops));
    }
    if n < 2 {
        return Err(format!("a collective needs at least 2 chips, got {n}"));
    }
    f(op, n, size, ring, per_server)
}

/// The programs of a collective among the chips `members` of a `chips`-chip topology whose
/// servers hold `chips_per_server` chips: one per chip, empty for the chips not among the
/// members. Ranks are the members in the order given (that is the ring order); a member's
/// server is `chip / chips_per_server`, and the hierarchical algorithm needs the members to
/// fill their servers alike and be listed server by server.
pub fn for_members(
    op: Op,
    algo: Algo,
    chips: usize,
    members: &[usize],
    size: u64,
    chips_per_server: usize,
) -> Result<Vec<Program>, String> {
    let n = members.len();
    let mut sorted = members.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(format!("a chip is listed twice among the members {members:?}"));
    }
    if let Some(&c) = members.iter().find(|&&c| c >= chips) {
        return Err(format!("member chip {c}, but the topology has {chips} chips (0..{})", chips.saturating_sub(1)));
    }
    let per_server = members_per_server(members, chips_per_server.max(1));
    if matches!(algo, Algo::Hierarchical | Algo::HierarchicalRhd | Algo::Pipelined) && per_server.is_none() {
        return Err(format!(
            "{} needs the members listed server by server with the same number on each server of {chips_per_server} chips",
            algo.name()
        ));
    }
    let ring: Vec<usize> = (0..n).collect();
    let local = build_in(op, algo, n, size, &ring, per_server.unwrap_or(n))?;
    let mut progs = vec![Vec::new(); chips];
    for (r, prog) in local.into_iter().enumerate() {
        progs[members[r]] = prog
            .into_iter()
            .map(|st| Step { sends: st.sends.into_iter().map(|(d, bytes)| (members[d], bytes)).collect(), ..st })
            .collect();
    }
    Ok(progs)
}

/// Members per server when the members come server by server, the same number from each.
pub fn members_per_server(members: &[usize], chips_per_server: usize) -> Option<usize> {
    let server = |c: usize| c / chips_per_server;
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &c in members {
        match runs.last_mut() {
            Some((s, k)) if *s == server(c) => *k += 1,
            _ => runs.push((server(c), 1)),
        }
    }
    let k = runs.first()?.1;
    let mut servers: Vec<usize> = runs.iter().map(|r| r.0).collect();
    servers.sort_unstable();
    servers.dedup();
    (runs.iter().all(|r| r.1 == k) && servers.len() == runs.len()).then_some(k)
}

/// Ring: the chips in `ring` order; each step sends `size / n` to the next chip and receives
/// from the previous one. All-reduce = reduce-scatter (n - 1 steps) then all-gather (n - 1).
/// Broadcast is a pipelined chain instead (see [`chain_broadcast`]).
fn ring(op: Op, n: usize, size: u64, ring: &[usize], _per_server: usize) -> Result<Vec<Program>, String> {
    if op == Op::Broadcast {
        return Ok(chain_broadcast(n, size, ring));
    }
    if op == Op::Permute {
        return Ok(permute(n, size, ring));
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
fn direct(op: Op, n: usize, size: u64, ring: &[usize], _per_server: usize) -> Result<Vec<Program>, String> {
    if op == Op::Permute {
        return Ok(permute(n, size, ring));
    }
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
fn halving_doubling(_op: Op, n: usize, size: u64, _ring: &[usize], _per_server: usize) -> Result<Vec<Program>, String> {
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
fn binomial_tree(_op: Op, n: usize, size: u64, _ring: &[usize], _per_server: usize) -> Result<Vec<Program>, String> {
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

/// Permute (send/recv): one step in which every rank sends its whole buffer to the next rank
/// of `ring` and receives the previous one's.
fn permute(n: usize, size: u64, ring: &[usize]) -> Vec<Program> {
    let mut progs = vec![Program::new(); n];
    for (p, &c) in ring.iter().enumerate() {
        progs[c] = vec![Step { sends: vec![(ring[(p + 1) % n], size)], recvs: 1 }];
    }
    progs
}

/// Hierarchical collectives over `m` servers of `k = per_server` ranks (ranks `s x k ..` on
/// server `s`), each phase a ring among the ranks of one server ("inside": rank `(s, j)` sends
/// to `(s, j + 1)`) or among the ranks with the same local index on every server ("across":
/// `(s, j)` to `(s + 1, j)`):
/// - all-reduce: reduce-scatter inside (`k - 1` steps of `size / k`), all-reduce across
///   (`2(m - 1)` steps of `size / (k m)`), all-gather inside (`k - 1` steps of `size / k`);
/// - all-gather (`size` the gathered buffer, `size / n` from each rank): all-gather across
///   first (`m - 1` steps of `size / n`), then inside (`k - 1` steps of `size / k`), so each
///   piece crosses between servers once and the slower links carry `(m - 1) / n` of the buffer;
/// - reduce-scatter: the mirror, inside first (`k - 1` steps of `size / k`), then across
///   (`m - 1` steps of `size / n`).
///
/// Each rank's steps run in that order; a phase with one rank is empty.
fn hierarchical(op: Op, n: usize, size: u64, _ring: &[usize], per_server: usize) -> Result<Vec<Program>, String> {
    let runs = hierarchical_runs(op, n, size, per_server)?;
    Ok(runs
        .into_iter()
        .map(|p| p.into_iter().flat_map(|(st, c)| std::iter::repeat_n(st, c as usize)).collect())
        .collect())
}

/// [`hierarchical`] as runs of equal steps: at most three runs per rank however many ranks
/// (a phase with one rank none).
fn hierarchical_runs(op: Op, n: usize, size: u64, per_server: usize) -> Result<Vec<Runs>, String> {
    let k = per_server.max(1);
    if !n.is_multiple_of(k) {
        return Err(format!("hierarchical: {n} ranks do not fill servers of {k}"));
    }
    let m = n / k;
    let count = |x: usize| u32::try_from(x).map_err(|_| format!("hierarchical: {x} steps in one phase"));
    let (inside_n, across_n) = (count(k - 1)?, count(if op == Op::AllReduce { 2 * (m - 1) } else { m - 1 })?);
    let piece = size.div_ceil(k as u64);
    let across = piece.div_ceil(m as u64);
    Ok((0..n)
        .map(|r| {
            let (s, j) = (r / k, r % k);
            let inside = Step { sends: vec![(s * k + (j + 1) % k, piece)], recvs: 1 };
            let remote = Step { sends: vec![(((s + 1) % m) * k + j, across)], recvs: 1 };
            let phases: [(&Step, u32); 3] = match op {
                Op::AllGather => [(&remote, across_n), (&inside, inside_n), (&inside, 0)],
                Op::ReduceScatter => [(&inside, inside_n), (&remote, across_n), (&inside, 0)],
                _ => [(&inside, inside_n), (&remote, across_n), (&inside, inside_n)],
            };
            phases.into_iter().filter(|(_, c)| *c > 0).map(|(st, c)| (st.clone(), c)).collect()
        })
        .collect())
}

/// The pipelined multi-level all-reduce: see [`crate::collective::pipelined`].
fn pipelined(_op: Op, n: usize, size: u64, _ring: &[usize], per_server: usize) -> Result<Vec<Program>, String> {
    crate::collective::pipelined::programs(n, size, per_server)
}

/// The hierarchical all-reduce with recursive halving-doubling across servers (as NCCL's and
/// ASTRA-sim's multi-dimensional all-reduces): a ring reduce-scatter inside each server
/// (`k - 1` steps of `size / k`), an all-reduce of that piece among the ranks with the same
/// local index on every server by recursive halving-doubling (Rabenseifner; `2 log2 p` steps,
/// halving then doubling, exchanging `piece / 2^(t + 1)` with the partner at distance
/// `p / 2^(t + 1)`), and a ring all-gather inside each server. When the `m` servers are not a
/// power of two, `p` is the largest power of two below `m` and the first `2 (m - p)` servers
/// pair up: each even one sends its whole piece to the odd one after it first (one step),
/// takes no part in the halving-doubling, and receives the result from it last (one step);
/// the other ranks spend those two steps idle (each still costs its step overhead, as every
/// step of the step model does). `2(k - 1) + 2 log2 p (+ 2)` steps against the hierarchical
/// ring's `2(k - 1) + 2(m - 1)`: across 6,945 UltraServers, 26 steps across instead of 13,888.
fn hierarchical_rhd(_op: Op, n: usize, size: u64, _ring: &[usize], per_server: usize) -> Result<Vec<Program>, String> {
    let k = hierarchical_rhd_check(n, per_server)?;
    Ok((0..n)
        .map(|r| {
            let runs = hierarchical_rhd_rank(n, size, k, r);
            runs.into_iter().flat_map(|(st, c)| std::iter::repeat_n(st, c as usize)).collect()
        })
        .collect())
}

/// The ranks per server [`hierarchical_rhd`] groups `n` ranks by, or why not.
pub fn hierarchical_rhd_check(n: usize, per_server: usize) -> Result<usize, String> {
    let k = per_server.max(1);
    if !n.is_multiple_of(k) {
        return Err(format!("hierarchical_rhd: {n} ranks do not fill servers of {k}"));
    }
    if u32::try_from(n).is_err() {
        return Err(format!("hierarchical_rhd: {n} ranks: too many"));
    }
    Ok(k)
}

/// Rank `r`'s program of [`hierarchical_rhd`] as runs of equal steps (built one rank at a
/// time: a million ranks' programs are never all held as steps at once). `k` from
/// [`hierarchical_rhd_check`].
pub fn hierarchical_rhd_rank(n: usize, size: u64, k: usize, r: usize) -> Runs {
    let m = n / k;
    let (s, j) = (r / k, r % k);
    let piece = size.div_ceil(k as u64);
    let chip = |server: usize| server * k + j;
    let step = |sends: Vec<(usize, u64)>, recvs: u32| Step { sends, recvs };
    let mut steps: Vec<Step> = Vec::new();
    if m >= 2 {
        let p = 1usize << (usize::BITS - 1 - m.leading_zeros());
        let extra = m - p;
        let levels = p.trailing_zeros() as usize;
        // Servers below `2 extra`: the even ones fold into the odd ones after them.
        let folded = s < 2 * extra && s % 2 == 0;
        let virt = if s < 2 * extra { s / 2 } else { s - extra };
        let real = |v: usize| if v < extra { 2 * v + 1 } else { v + extra };
        if extra > 0 {
            steps.push(match (s < 2 * extra, folded) {
                (true, true) => step(vec![(chip(s + 1), piece)], 0),
                (true, false) => step(vec![], 1),
                _ => step(vec![], 0),
            });
        }
        let exchange = |t: usize| {
            if folded {
                return step(vec![], 0);
            }
            let bytes = piece.div_ceil(1u64 << (t + 1)).max(1);
            step(vec![(chip(real(virt ^ (p >> (t + 1)))), bytes)], 1)
        };
        steps.extend((0..levels).map(exchange));
        steps.extend((0..levels).rev().map(exchange));
        if extra > 0 {
            steps.push(match (s < 2 * extra, folded) {
                (true, true) => step(vec![], 1),
                (true, false) => step(vec![(chip(s - 1), piece)], 0),
                _ => step(vec![], 0),
            });
        }
    }
    let inside = Step { sends: vec![(s * k + (j + 1) % k, piece)], recvs: 1 };
    let mut runs: Runs = Vec::with_capacity(steps.len() + 2);
    if k > 1 {
        runs.push((inside.clone(), (k - 1) as u32));
    }
    runs.extend(runs_of(steps));
    if k > 1 {
        runs.push((inside, (k - 1) as u32));
    }
    runs
}
