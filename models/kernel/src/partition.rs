//! Partitioning: which component runs in which partition of a parallel run, and the lookahead
//! that makes the partitions independent for a window of simulated time.
//!
//! ```text
//!   partition 0                 cut link (latency >= lookahead)          partition 1
//!   ┌──────────────┐  ─────────────────────────────────────────────►  ┌──────────────┐
//!   │ chip000 ...  │  ◄──────────── credits (credit latency >= L) ──  │ chip072 ...  │
//!   └──────────────┘                                                  └──────────────┘
//! ```
//!
//! A message sent at `t` on a cut link arrives no earlier than `t + lookahead`, and a credit
//! returned at `t` is back no earlier than `t + lookahead`, so within a window
//! `[W, W + lookahead)` no partition can affect another: each runs its window alone and the
//! cut-link traffic is exchanged at the window's end (SST's conservative scheme).
//!
//! Rules: [`PartitionRule::Auto`] cuts the links of largest latency first, then grows each
//! partition greedily over the remaining groups (most links into it first) to its share of
//! the weight (1 + link count per component, a proxy for work); [`PartitionRule::ByName`] keeps components whose names share their first
//! `depth` dotted segments together ("chip017.core3.pe" with depth 1 groups by chip), and
//! [`PartitionRule::ByNameAttached`] does so but spreads one group's components (a cluster's
//! scale-out switches) over the partitions, each next to most of its links, and
//! [`PartitionRule::ByNameSinglesAttached`] spreads every group of one component (a fabric's
//! switches, the fabric nodes of chips that run nothing) the same way;
//! [`PartitionRule::Explicit`] gives every component's partition. Mistakes (a cut link shorter
//! than the requested lookahead, a partition left empty, a wrong count) are located errors.

use crate::component::ComponentId;
use crate::link::LinkId;
use crate::time::Dur;
use std::fmt;

/// How to split a system into partitions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PartitionRule {
    /// Cut the links of largest latency (the fewest, longest links that leave at least as
    /// many groups as partitions), then grow partitions over the groups greedily, keeping
    /// linked groups together and balancing weight (1 + link count per component).
    Auto,
    /// Components whose names share their first `depth` dotted segments stay together; groups
    /// are dealt to partitions in name order, balancing component counts.
    ByName {
        /// Dotted segments that form the group key (1 = "chip017" of "chip017.core3").
        depth: usize,
    },
    /// As [`PartitionRule::ByName`], except that the components of group `attach` (switches
    /// shared by many groups, such as a cluster's scale-out network) form no group: each joins
    /// a partition holding most of its already placed link neighbours, no partition taking more
    /// than its share (rounded up) of them; ties go to the partition with the fewest attached
    /// components, then the lowest index. Attached components are placed in id order.
    ByNameAttached {
        /// Dotted segments that form the group key.
        depth: usize,
        /// The group key whose components are spread (`efa` for `efa.leaf3`, depth 1).
        attach: String,
    },
    /// As [`PartitionRule::ByNameAttached`], the attached components being those alone in
    /// their group: on a fabric of whole chips each busy chip (`chip003` and its
    /// `chip003.nc0…`) is a group, and the switches (`sw000`) and the fabric nodes of chips
    /// that run nothing join the partitions next to most of their links. (Dealt as groups,
    /// those took a partition's share, leaving two busy chips in another.)
    ByNameSinglesAttached {
        /// Dotted segments that form the group key.
        depth: usize,
    },
    /// Partition of every component, by component id.
    Explicit(Vec<u32>),
}

impl PartitionRule {
    /// Parses `auto`, `by-name` / `by-name:DEPTH`, optionally followed by `,attach=GROUP` or
    /// `,attach-singles`.
    pub fn parse(s: &str) -> Result<PartitionRule, String> {
        if let Some(base) = s.strip_suffix(",attach-singles") {
            return match PartitionRule::parse(base) {
                Ok(PartitionRule::ByName { depth }) => Ok(PartitionRule::ByNameSinglesAttached { depth }),
                _ => Err(format!("`{s}` is not a partition rule (`,attach-singles` follows by-name or by-name:DEPTH)")),
            };
        }
        if let Some((base, attach)) = s.split_once(",attach=") {
            let depth = match PartitionRule::parse(base) {
                Ok(PartitionRule::ByName { depth }) => depth,
                _ => {
                    return Err(format!(
                        "`{s}` is not a partition rule (`,attach=GROUP` follows by-name or by-name:DEPTH)"
                    ))
                }
            };
            if attach.is_empty() || attach.contains(',') {
                return Err(format!("`{s}` is not a partition rule (attach= names one group key, such as efa)"));
            }
            return Ok(PartitionRule::ByNameAttached { depth, attach: attach.to_string() });
        }
        match s {
            "auto" => Ok(PartitionRule::Auto),
            "by-name" => Ok(PartitionRule::ByName { depth: 1 }),
            _ => match s.strip_prefix("by-name:").map(str::parse::<usize>) {
                Some(Ok(depth)) if depth >= 1 => Ok(PartitionRule::ByName { depth }),
                _ => Err(format!(
                    "`{s}` is not a partition rule (expected auto, by-name or by-name:DEPTH with DEPTH >= 1, optionally followed by ,attach=GROUP or ,attach-singles)"
                )),
            },
        }
    }
}

/// As `--partition` takes it: `auto`, `by-name:DEPTH`, or `explicit` (a list from code).
impl fmt::Display for PartitionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PartitionRule::Auto => f.write_str("auto"),
            PartitionRule::ByName { depth } => write!(f, "by-name:{depth}"),
            PartitionRule::ByNameAttached { depth, attach } => write!(f, "by-name:{depth},attach={attach}"),
            PartitionRule::ByNameSinglesAttached { depth } => write!(f, "by-name:{depth},attach-singles"),
            PartitionRule::Explicit(v) => write!(f, "explicit ({} assignments)", v.len()),
        }
    }
}

/// A computed partitioning of one system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionPlan {
    /// Number of partitions.
    pub parts: u32,
    /// Partition of every component, by component id.
    pub part_of: Vec<u32>,
    /// Links whose ends are in different partitions.
    pub cut: Vec<LinkId>,
    /// The window length: the smallest latency (or credit latency) of a cut link; `Dur::MAX`
    /// when nothing is cut.
    pub lookahead: Dur,
    /// Components per partition.
    pub sizes: Vec<usize>,
    /// Links the system declares (a partition's per-link tables are sized to it once).
    pub links: usize,
}

/// A partitioning mistake, naming what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PartitionError {
    /// Fewer than one partition asked for.
    NoPartitions,
    /// More partitions than the system can be split into under the rule.
    TooFewGroups {
        /// Groups the rule leaves.
        groups: usize,
        /// Partitions asked for.
        parts: u32,
    },
    /// An explicit assignment of the wrong length or out of range.
    BadAssignment {
        /// What is wrong.
        why: String,
    },
    /// A cut link whose latency is below the requested lookahead.
    ShortCut {
        /// "src.port -> dst.port".
        link: String,
        /// Its latency (the smaller of message and credit latency).
        latency: Dur,
        /// The requested lookahead.
        lookahead: Dur,
    },
    /// Planned from a partition's builder, which holds only that partition's links.
    PartitionBuilder,
}

impl fmt::Display for PartitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PartitionError::NoPartitions => write!(f, "partition: at least one partition is needed"),
            PartitionError::TooFewGroups { groups, parts } => write!(
                f,
                "partition: the rule leaves {groups} group(s) of components that must stay together, fewer than the {parts} partitions asked for"
            ),
            PartitionError::BadAssignment { why } => write!(f, "partition: {why}"),
            PartitionError::PartitionBuilder => write!(
                f,
                "partition: plan from the declared system (or a serial builder), not from a partition's builder: it keeps only its own links' facts"
            ),
            PartitionError::ShortCut { link, latency, lookahead } => write!(
                f,
                "partition: link {link} is cut between partitions but its latency {latency} is below the requested lookahead {lookahead} (a cut link's latency is the window in which partitions run alone)"
            ),
        }
    }
}

impl std::error::Error for PartitionError {}

/// What the planner needs to know about one link.
#[derive(Clone, Debug)]
pub(crate) struct LinkEdge<'a> {
    pub src: ComponentId,
    pub dst: ComponentId,
    /// min(latency, credit latency) in time.
    pub latency: Dur,
    pub name: &'a str,
}

/// Computes a plan for `names` (by component id) and `links` under `rule`.
pub(crate) fn plan(
    names: &[String],
    links: &[LinkEdge],
    rule: &PartitionRule,
    parts: u32,
    min_lookahead: Option<Dur>,
) -> Result<PartitionPlan, PartitionError> {
    if parts == 0 {
        return Err(PartitionError::NoPartitions);
    }
    let n = names.len();
    let part_of = match rule {
        PartitionRule::Explicit(v) => {
            if v.len() != n {
                return Err(PartitionError::BadAssignment {
                    why: format!("{} assignments for {n} components", v.len()),
                });
            }
            if let Some((i, p)) = v.iter().enumerate().find(|(_, &p)| p >= parts) {
                return Err(PartitionError::BadAssignment {
                    why: format!("component {:?} is assigned to partition {p} of {parts}", names[i]),
                });
            }
            v.clone()
        }
        PartitionRule::ByName { depth } => by_name(names, *depth, Attach::None, links, parts)?,
        PartitionRule::ByNameAttached { depth, attach } => by_name(names, *depth, Attach::Group(attach), links, parts)?,
        PartitionRule::ByNameSinglesAttached { depth } => by_name(names, *depth, Attach::Singles, links, parts)?,
        PartitionRule::Auto => auto(n, links, parts)?,
    };
    let mut sizes = vec![0usize; parts as usize];
    for &p in &part_of {
        sizes[p as usize] += 1;
    }
    if let Some(p) = sizes.iter().position(|&s| s == 0) {
        return Err(PartitionError::BadAssignment { why: format!("partition {p} has no components") });
    }
    let mut cut = Vec::new();
    let mut lookahead = Dur::MAX;
    for (i, l) in links.iter().enumerate() {
        if part_of[l.src.index()] != part_of[l.dst.index()] {
            cut.push(LinkId(i as u32));
            if let Some(min) = min_lookahead {
                if l.latency < min {
                    let (link, latency) = (l.name.to_string(), l.latency);
                    return Err(PartitionError::ShortCut { link, latency, lookahead: min });
                }
            }
            lookahead = lookahead.min(l.latency);
        }
    }
    Ok(PartitionPlan { parts, part_of, cut, lookahead, sizes, links: links.len() })
}

/// Which components [`by_name`] attaches instead of dealing them as groups.
#[derive(Clone, Copy)]
enum Attach<'a> {
    None,
    /// Those of this group key.
    Group(&'a str),
    /// Those alone in their group.
    Singles,
}

/// Groups components by the first `depth` dotted segments of their names and deals the groups
/// contiguously in name order; the attached components are then placed one by one (see
/// [`PartitionRule::ByNameAttached`]).
fn by_name(
    names: &[String],
    depth: usize,
    attach: Attach<'_>,
    links: &[LinkEdge],
    parts: u32,
) -> Result<Vec<u32>, PartitionError> {
    let key = |s: &str| -> String { s.split('.').take(depth).collect::<Vec<_>>().join(".") };
    let mut members = std::collections::BTreeMap::<String, usize>::new();
    if matches!(attach, Attach::Singles) {
        for name in names {
            *members.entry(key(name)).or_default() += 1;
        }
    }
    let attached_key = |k: &str| match attach {
        Attach::None => false,
        Attach::Group(g) => k == g,
        Attach::Singles => members.get(k) == Some(&1),
    };
    // Grouped components (not attached), by their index among grouped components.
    let mut grouped: Vec<u32> = Vec::with_capacity(names.len());
    let mut attached: Vec<u32> = Vec::new();
    let mut group_of = Vec::with_capacity(names.len());
    let mut keys: Vec<String> = Vec::new();
    let mut index = std::collections::BTreeMap::new();
    for (i, name) in names.iter().enumerate() {
        let k = key(name);
        if attached_key(&k) {
            attached.push(i as u32);
            continue;
        }
        let g = *index.entry(k.clone()).or_insert_with(|| {
            keys.push(k);
            keys.len() as u32 - 1
        });
        grouped.push(i as u32);
        group_of.push(g);
    }
    // Groups in name order, dealt contiguously so neighbours stay together.
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    order.sort_by(|a, b| keys[*a as usize].cmp(&keys[*b as usize]));
    let dealt = contiguous(&group_of, &order, parts)?;
    const UNPLACED: u32 = u32::MAX;
    let mut part_of = vec![UNPLACED; names.len()];
    for (&c, &p) in grouped.iter().zip(&dealt) {
        part_of[c as usize] = p;
    }
    if attached.is_empty() {
        return Ok(part_of);
    }
    // Neighbours of each attached component (by its index in `attached`).
    let mut slot = vec![u32::MAX; names.len()];
    for (k, &c) in attached.iter().enumerate() {
        slot[c as usize] = k as u32;
    }
    let mut nbrs: Vec<Vec<u32>> = vec![Vec::new(); attached.len()];
    for l in links {
        for (a, b) in [(l.src.0, l.dst.0), (l.dst.0, l.src.0)] {
            let k = slot[a as usize];
            if k != u32::MAX {
                nbrs[k as usize].push(b);
            }
        }
    }
    let cap = attached.len().div_ceil(parts as usize);
    let mut taken = vec![0usize; parts as usize];
    let mut near = vec![0usize; parts as usize];
    for (k, &c) in attached.iter().enumerate() {
        near.iter_mut().for_each(|x| *x = 0);
        for &b in &nbrs[k] {
            let p = part_of[b as usize];
            if p != UNPLACED {
                near[p as usize] += 1;
            }
        }
        let best = (0..parts as usize)
            .filter(|&p| taken[p] < cap)
            .min_by_key(|&p| (std::cmp::Reverse(near[p]), taken[p], p))
            .expect("the share, rounded up, leaves room for every attached component");
        taken[best] += 1;
        part_of[c as usize] = best as u32;
    }
    Ok(part_of)
}

/// Deals groups (in `order`) to `parts` partitions contiguously, each taking groups until it
/// holds about its share of components.
fn contiguous(group_of: &[u32], order: &[u32], parts: u32) -> Result<Vec<u32>, PartitionError> {
    let groups = order.len();
    if groups < parts as usize {
        return Err(PartitionError::TooFewGroups { groups, parts });
    }
    let mut size = vec![0usize; groups];
    for &g in group_of {
        size[g as usize] += 1;
    }
    let total = group_of.len();
    let mut part_of_group = vec![0u32; groups];
    let (mut p, mut filled) = (0u32, 0usize);
    for (k, &g) in order.iter().enumerate() {
        // Move on when this partition has its share, but leave enough groups for the rest.
        let share = (total * (p as usize + 1)).div_ceil(parts as usize);
        let left_groups = groups - k;
        let left_parts = (parts - p) as usize;
        if p + 1 < parts && ((filled >= share && filled > 0) || left_groups < left_parts) {
            p += 1;
        }
        part_of_group[g as usize] = p;
        filled += size[g as usize];
    }
    Ok(group_of.iter().map(|&g| part_of_group[g as usize]).collect())
}

/// Cuts the longest links: the largest latency threshold such that components joined by
/// shorter links form at least `parts` groups; the groups are then dealt by [`grow`], so the
/// result depends only on the system.
fn auto(n: usize, links: &[LinkEdge], parts: u32) -> Result<Vec<u32>, PartitionError> {
    let mut lat: Vec<Dur> = links.iter().map(|l| l.latency).collect();
    lat.sort_unstable();
    lat.dedup();
    let groups_below = |tau: Option<Dur>| -> (usize, Vec<u32>) {
        let mut uf = UnionFind::new(n);
        for l in links {
            if tau.is_none_or(|t| l.latency < t) {
                uf.union(l.src.0, l.dst.0);
            }
        }
        uf.groups()
    };
    // Thresholds from the largest down: cutting links with latency >= tau.
    let mut chosen = None;
    for &tau in lat.iter().rev() {
        let (k, g) = groups_below(Some(tau));
        if k >= parts as usize {
            chosen = Some((k, g));
            break;
        }
    }
    let (k, group_of) = match chosen {
        Some(c) => c,
        None => {
            let (k, g) = groups_below(None);
            if k < parts as usize {
                return Err(PartitionError::TooFewGroups { groups: k, parts });
            }
            (k, g)
        }
    };
    Ok(grow(k, &group_of, links, parts))
}

/// Deals `k` groups to `parts` partitions by greedy graph growing: a partition starts from the
/// lowest-numbered free group and takes, one at a time, the free group with the most links
/// into it (ties: lowest number) until it holds its share of the weight. A component weighs
/// 1 + its link count (links are where a component's work comes from: a 144-port switch
/// routes far more than a chip). Keeps neighbours together (fewer cut links, less traffic
/// between partitions) and balances work; deterministic.
fn grow(k: usize, group_of: &[u32], links: &[LinkEdge], parts: u32) -> Vec<u32> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut weight = vec![0u64; k];
    for &g in group_of {
        weight[g as usize] += 1;
    }
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); k];
    for l in links {
        let (a, b) = (group_of[l.src.index()], group_of[l.dst.index()]);
        weight[a as usize] += 1;
        weight[b as usize] += 1;
        if a != b {
            adj[a as usize].push(b);
            adj[b as usize].push(a);
        }
    }
    let mut part_of_group = vec![u32::MAX; k];
    let mut remaining: u64 = weight.iter().sum();
    let mut free = k;
    let mut lowest = 0usize;
    for p in 0..parts {
        if p + 1 == parts {
            for g in part_of_group.iter_mut().filter(|g| **g == u32::MAX) {
                *g = p;
            }
            break;
        }
        let target = remaining / u64::from(parts - p);
        let mut gain = vec![0u32; k];
        let mut heap: BinaryHeap<(u32, Reverse<u32>)> = BinaryHeap::new();
        let mut load = 0u64;
        loop {
            // Leave at least one group for each later partition.
            if free <= (parts - p - 1) as usize {
                break;
            }
            let next = loop {
                match heap.pop() {
                    Some((gn, Reverse(g))) if part_of_group[g as usize] == u32::MAX && gain[g as usize] == gn => {
                        break Some(g)
                    }
                    Some(_) => continue,
                    None => break None,
                }
            };
            let g = match next {
                Some(g) => g,
                None => {
                    while part_of_group[lowest] != u32::MAX {
                        lowest += 1;
                    }
                    lowest as u32
                }
            };
            let w = weight[g as usize];
            // Stop where the partition is closest to its share.
            if load > 0 && load + w > target && load + w - target > target.saturating_sub(load) {
                break;
            }
            part_of_group[g as usize] = p;
            load += w;
            remaining -= w;
            free -= 1;
            for &h in &adj[g as usize] {
                if part_of_group[h as usize] == u32::MAX {
                    gain[h as usize] += 1;
                    heap.push((gain[h as usize], Reverse(h)));
                }
            }
            if load >= target {
                break;
            }
        }
    }
    group_of.iter().map(|&g| part_of_group[g as usize]).collect()
}

struct UnionFind {
    parent: Vec<u32>,
}

impl UnionFind {
    fn new(n: usize) -> UnionFind {
        UnionFind { parent: (0..n as u32).collect() }
    }
    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let p = self.parent[x as usize];
            self.parent[x as usize] = self.parent[p as usize];
            x = p;
        }
        x
    }
    fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            // The smaller root wins, so group numbering is independent of link order.
            let (lo, hi) = (ra.min(rb), ra.max(rb));
            self.parent[hi as usize] = lo;
        }
    }
    /// (number of groups, group of each element), groups numbered by their lowest member.
    fn groups(&mut self) -> (usize, Vec<u32>) {
        let n = self.parent.len();
        let mut id = vec![u32::MAX; n];
        let mut out = vec![0u32; n];
        let mut k = 0u32;
        for i in 0..n as u32 {
            let r = self.find(i);
            if id[r as usize] == u32::MAX {
                id[r as usize] = k;
                k += 1;
            }
            out[i as usize] = id[r as usize];
        }
        (k as usize, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(s: u32, d: u32, ns: u64) -> LinkEdge<'static> {
        // (A test's few names, leaked: an edge borrows its name from the builder's links.)
        let name = Box::leak(format!("c{s} -> c{d}").into_boxed_str());
        LinkEdge { src: ComponentId(s), dst: ComponentId(d), latency: Dur::from_ns(ns), name }
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("chip{}.part{}", i / 2, i % 2)).collect()
    }

    #[test]
    fn auto_cuts_the_longest_links_and_balances() {
        // Two pairs joined by 1 ns links, the pairs joined by 100 ns links.
        let links = [edge(0, 1, 1), edge(1, 0, 1), edge(2, 3, 1), edge(3, 2, 1), edge(1, 2, 100), edge(2, 1, 100)];
        let p = plan(&names(4), &links, &PartitionRule::Auto, 2, None).unwrap();
        assert_eq!(p.part_of, vec![0, 0, 1, 1]);
        assert_eq!(p.lookahead, Dur::from_ns(100));
        assert_eq!(p.cut.len(), 2);
        assert_eq!(p.sizes, vec![2, 2]);
    }

    #[test]
    fn by_name_groups_by_prefix_contiguously() {
        let links = [edge(0, 2, 5), edge(2, 4, 7)];
        let p = plan(&names(6), &links, &PartitionRule::ByName { depth: 1 }, 3, None).unwrap();
        assert_eq!(p.part_of, vec![0, 0, 1, 1, 2, 2]);
        assert_eq!(p.lookahead, Dur::from_ns(5));
        let err = plan(&names(6), &links, &PartitionRule::ByName { depth: 1 }, 4, None).unwrap_err();
        assert_eq!(err, PartitionError::TooFewGroups { groups: 3, parts: 4 });
    }

    #[test]
    fn attached_components_spread_next_to_their_links() {
        // Groups a, b (two components each); switches s.0 and s.1 each linked to both groups,
        // s.2 linked to b only; s.3 linked to the switches only.
        let names: Vec<String> =
            ["a.0", "a.1", "b.0", "b.1", "s.0", "s.1", "s.2", "s.3"].iter().map(|s| s.to_string()).collect();
        let links =
            [edge(0, 4, 5), edge(2, 4, 5), edge(1, 5, 5), edge(3, 5, 5), edge(6, 3, 5), edge(4, 7, 3), edge(7, 6, 3)];
        let rule = PartitionRule::parse("by-name:1,attach=s").unwrap();
        assert_eq!(rule.to_string(), "by-name:1,attach=s");
        let p = plan(&names, &links, &rule, 2, None).unwrap();
        // s.0 and s.1 tie on neighbours: the partition with fewer switches takes s.1; s.2 goes
        // to b; s.3 (one neighbour in each) to the partition with fewer.
        assert_eq!(p.part_of, vec![0, 0, 1, 1, 0, 1, 1, 0]);
        assert_eq!(p.lookahead, Dur::from_ns(3));
        // No partition takes more than its share of switches (2 of 4), even if closer.
        let links = [edge(0, 4, 5), edge(0, 5, 5), edge(0, 6, 5), edge(0, 7, 5)];
        let p = plan(&names, &links, &rule, 2, None).unwrap();
        assert_eq!(p.part_of[4..], [0, 0, 1, 1]);
        for bad in ["by-name,attach=", "auto,attach=s", "by-name:1,attach=s,t", "by-name:0,attach=s"] {
            assert!(PartitionRule::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            PartitionRule::parse("by-name,attach=efa"),
            Ok(PartitionRule::ByNameAttached { depth: 1, attach: "efa".into() })
        );
    }

    #[test]
    fn components_alone_in_their_group_spread_next_to_their_links() {
        // Groups a and b (two components each) and four single-component groups: s0 linked to
        // a, s1 to b, s2 to both, t (a group of one, like an idle chip's fabric node) to b.
        let names: Vec<String> =
            ["a.0", "a.1", "b.0", "b.1", "s0", "s1", "s2", "t"].iter().map(|s| s.to_string()).collect();
        let links = [edge(0, 4, 5), edge(2, 5, 5), edge(1, 6, 5), edge(3, 6, 5), edge(7, 3, 5)];
        let rule = PartitionRule::parse("by-name,attach-singles").unwrap();
        assert_eq!(rule, PartitionRule::ByNameSinglesAttached { depth: 1 });
        assert_eq!(rule.to_string(), "by-name:1,attach-singles");
        assert_eq!(PartitionRule::parse(&rule.to_string()), Ok(rule.clone()));
        let p = plan(&names, &links, &rule, 2, None).unwrap();
        assert_eq!(p.part_of, vec![0, 0, 1, 1, 0, 1, 0, 1]);
        // Dealt as groups instead, the four singles take the second partition's share and the
        // two real groups share the first.
        let p = plan(&names, &links, &PartitionRule::ByName { depth: 1 }, 2, None).unwrap();
        assert_eq!(p.part_of[..4], [0, 0, 0, 0]);
        // Only real groups are dealt: two of them make at most two partitions.
        let err = plan(&names, &links, &rule, 3, None).unwrap_err();
        assert_eq!(err, PartitionError::TooFewGroups { groups: 2, parts: 3 });
        for bad in ["auto,attach-singles", "by-name:0,attach-singles", "by-name,attach=s,attach-singles"] {
            assert!(PartitionRule::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn short_cut_links_are_located_errors() {
        let links = [edge(0, 2, 5)];
        let err = plan(&names(4), &links, &PartitionRule::ByName { depth: 1 }, 2, Some(Dur::from_ns(10))).unwrap_err();
        assert!(err.to_string().contains("link c0 -> c2 is cut"), "{err}");
        assert!(err.to_string().contains("below the requested lookahead 10"), "{err}");
    }

    #[test]
    fn explicit_assignments_are_checked() {
        let e = plan(&names(2), &[], &PartitionRule::Explicit(vec![0]), 2, None).unwrap_err();
        assert!(e.to_string().contains("1 assignments for 2 components"));
        let e = plan(&names(2), &[], &PartitionRule::Explicit(vec![0, 0]), 2, None).unwrap_err();
        assert!(e.to_string().contains("partition 1 has no components"));
        assert_eq!(PartitionRule::parse("by-name:2"), Ok(PartitionRule::ByName { depth: 2 }));
        assert!(PartitionRule::parse("by-name:0").is_err());
    }
}
