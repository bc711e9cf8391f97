//! The paths of the flow-level network's messages: the edges each uses, with its share of the
//! message on each, and where a message's source has several candidate links, how it splits
//! over them ([`place`]).

use super::share::Link;
use crate::topo::cluster::ClusterRoutes;
use crate::topo::Topology;

/// The edges (and aggregates) a flow uses, with its share on each ([`Paths::each`]).
pub(super) enum Route {
    /// Between UltraServers: the source NIC, the source leaf's uplinks, the downlinks to the
    /// destination leaf and the destination NIC, at the shares of `Paths::cross` (`across`
    /// leaves); or the two NICs alone, each at share 1 (on one leaf).
    Cross { edges: [u32; 4], across: bool },
    /// Inside UltraServer copy `shift / edges per UltraServer`: the cached path through
    /// candidate `cand` of local chip pair `pair`, its edges plus `shift`.
    Local { pair: u32, shift: u32, cand: u32 },
    /// A path of `n` edges (at most 4), each at share 1: a local or other path without a split
    /// beyond the source, inline (no lookup, no list).
    Hops { edges: [u32; 4], n: u32 },
    /// Any other topology's: (edge, share), the source's link first.
    Any(Vec<(u32, f64)>),
}

/// `path` as [`Route::Hops`] (each edge plus `shift`) if it is one.
fn hops(path: &[(u32, f64)], shift: u32) -> Option<Route> {
    if path.len() > 4 || path.iter().any(|&(_, s)| s != 1.0) {
        return None;
    }
    let mut edges = [0; 4];
    for (x, &(e, _)) in edges.iter_mut().zip(path) {
        *x = e + shift;
    }
    // At most 4.
    Some(Route::Hops { edges, n: path.len() as u32 })
}

/// Edges (or aggregates) with a message's share on each.
type Path = Vec<(u32, f64)>;

/// A path inside an UltraServer, cached: per candidate link at the source, the link's edge and
/// capacity and the path through it (the link at share 1, then the spread beyond it), and the
/// tail of messages of the last size asked.
pub(super) struct Local {
    cands: Vec<(u32, f64, Path)>,
    /// (message bytes, tail in ps) of the last size asked.
    tail: Option<(u64, f64)>,
}

/// The share of a message on each edge when it enters at `starts` (node, share): split over
/// each node's candidate next edges in proportion to their capacity. Appends to `out`
/// (merging repeated edges); `scratch` is reused.
fn spread(
    topo: &Topology,
    starts: &[(usize, f64)],
    dst: usize,
    cap: &[f64],
    out: &mut Vec<(u32, f64)>,
    scratch: &mut [Vec<(usize, f64)>; 2],
) {
    let [at, next] = scratch;
    at.clear();
    at.extend_from_slice(starts);
    let mut guard = 0;
    while !at.is_empty() {
        guard += 1;
        if guard > 64 {
            break; // routes are minimal: never this long
        }
        next.clear();
        for &(n, share) in at.iter() {
            if n == dst {
                continue;
            }
            let cands = topo.next_edges(n, dst);
            let total: f64 = cands.clone().map(|e| cap[e as usize]).sum();
            for e in cands {
                let s = share * cap[e as usize] / total;
                match out.iter_mut().find(|(x, _)| *x == e) {
                    Some(x) => x.1 += s,
                    None => out.push((e, s)),
                }
                let to = topo.edges[e as usize].to;
                match next.iter_mut().find(|(x, _)| *x == to) {
                    Some(x) => x.1 += s,
                    None => next.push((to, s)),
                }
            }
        }
        std::mem::swap(at, next);
    }
}

/// How a message of `bytes` splits over its source's candidate links `cands` (capacity in
/// bytes per ps, and the bytes already queued on each): the links that drain first take the
/// message until every link used drains at the same time, as the packet-level network puts
/// each packet on the link that frees first. Writes each candidate's share to `w`.
pub(super) fn place(cands: &[(f64, f64)], bytes: f64, w: &mut [f64]) {
    let n = cands.len();
    let mut order = [0usize; 64];
    let n = n.min(order.len());
    for (i, o) in order.iter_mut().enumerate().take(n) {
        *o = i;
    }
    let drain = |i: usize| if cands[i].0 > 0.0 { cands[i].1 / cands[i].0 } else { f64::INFINITY };
    // Earliest drain first (ties in candidate order: a stable insertion sort of a few).
    for i in 1..n {
        let mut j = i;
        while j > 0 && drain(order[j]) < drain(order[j - 1]) {
            order.swap(j, j - 1);
            j -= 1;
        }
    }
    // The level `t` all used links drain at: `(bytes + their queues) / their capacity`, taking
    // links in drain order while the next drains before the level.
    let (mut q, mut c, mut used) = (0.0, 0.0, 0);
    for &i in &order[..n] {
        if c > 0.0 && drain(i) >= (bytes + q) / c {
            break;
        }
        if cands[i].0 <= 0.0 {
            break;
        }
        (q, c, used) = (q + cands[i].1, c + cands[i].0, used + 1);
    }
    w.iter_mut().for_each(|x| *x = 0.0);
    if used == 0 {
        return;
    }
    let t = (bytes + q) / c;
    for &i in &order[..used] {
        w[i] = ((t - drain(i)) * cands[i].0 / bytes).max(0.0);
    }
}

/// The paths of messages with their shares per edge. On a cluster ([`ClusterRoutes`]) the
/// paths inside an UltraServer are its own fabric's (computed once per pair of local chips,
/// shared by every copy), and a path between UltraServers is the source NIC, the source leaf's
/// uplinks, the destination leaf's downlinks and the destination NIC, with each leaf's uplinks
/// (and the spines' downlinks to it) as one aggregate link of their summed capacity: every
/// flow crossing them is spread over all of them alike, so they always carry equal shares and
/// the aggregate is exact (bit for bit when the spine count is a power of two, as on every
/// preset). Elsewhere the spread is computed per message.
pub(super) struct Paths<'t> {
    topo: &'t Topology,
    cluster: Option<&'t ClusterRoutes>,
    /// Capacity per edge, then per aggregate (leaf `l`'s uplinks at `edges + l`, the
    /// downlinks to it at `edges + leaves + l`), in bytes per ps.
    pub(super) cap: Vec<f64>,
    /// Per edge, whether it is one of several candidates at some message's source (whose
    /// queue [`place`] reads): marked as messages are placed.
    pub(super) choice: Vec<bool>,
    /// Shares of a path between leaves: (uplink aggregate, downlink aggregate, NIC down).
    cross: Option<(f64, f64, f64)>,
    /// Inside an UltraServer, per local source x chips per UltraServer + local destination.
    local: Vec<Option<Box<Local>>>,
    /// The last (message bytes, tail) between UltraServers, on one leaf and across leaves.
    cross_tail: [Option<(u64, f64)>; 2],
    /// Scratch lists of [`spread`] and [`place`].
    scratch: [Vec<(usize, f64)>; 2],
    cands: Vec<(f64, f64)>,
    edges: Vec<u32>,
    w: Vec<f64>,
}

impl<'t> Paths<'t> {
    pub(super) fn new(topo: &'t Topology) -> Result<Paths<'t>, String> {
        let mut cap: Vec<f64> = topo.edges.iter().map(|e| e.bytes_per_s * f64::from(e.servers) / 1e12).collect();
        let cluster = topo.cluster_routes();
        let mut cross = None;
        if let Some(c) = cluster {
            let (leaves, spines) = c.leaves_and_spines();
            let e0 = cap.len();
            if e0.checked_add(2 * leaves).is_none_or(|n| u32::try_from(n).is_err()) {
                return Err(format!("{e0} link directions: too many for the flow-level network"));
            }
            let mut agg = vec![0.0; 2 * leaves];
            for l in 0..leaves {
                // Summed as the per-edge spread sums its candidates.
                agg[l] = c.leaf_spine_edges(l).map(|(up, _)| cap[up]).sum::<f64>();
                agg[leaves + l] = c.leaf_spine_edges(l).map(|(_, down)| cap[down]).sum::<f64>();
            }
            if spines > 0 {
                // Every uplink and downlink has the same capacity (checked by the shape): the
                // shares of one path between leaves are those of any.
                let (up, down) = c.leaf_spine_edges(0).next().map_or((1.0, 1.0), |(u, d)| (cap[u], cap[d]));
                let total = agg[0];
                let s_up = 1.0 * up / total;
                let s_down = s_up * down / down;
                let mut s_nic = s_down;
                for _ in 1..spines {
                    s_nic += s_down;
                }
                let (_, nic_down) = c.nic_edges(0);
                let s_nic = s_nic * cap[nic_down] / cap[nic_down];
                let n = spines as f64;
                cross = Some((n * s_up, n * s_down, s_nic));
            }
            cap.extend(agg);
        }
        let local = match cluster {
            Some(c) => {
                let k = c.chips_per_ultraserver();
                let n =
                    k.checked_mul(k).filter(|&n| u32::try_from(n).is_ok()).ok_or("too many chips per UltraServer")?;
                std::iter::repeat_with(|| None).take(n).collect()
            }
            None => Vec::new(),
        };
        let (cands, edges, w) = (Vec::new(), Vec::new(), Vec::new());
        let scratch = Default::default();
        let choice = vec![false; cap.len()];
        Ok(Paths { topo, cluster, cap, choice, cross, local, cross_tail: [None; 2], scratch, cands, edges, w })
    }

    /// Inside an UltraServer, the cached candidates (and last tail) of local chips `js` to
    /// `jd`, computed on its own fabric (the same edges in the same order).
    fn local(&mut self, c: &ClusterRoutes, js: usize, jd: usize) -> &mut Local {
        let k = c.chips_per_ultraserver();
        let su = c.scale_up();
        let scratch = &mut self.scratch;
        self.local[js * k + jd].get_or_insert_with(|| {
            let su_cap: Vec<f64> = su.edges.iter().map(|e| e.bytes_per_s * f64::from(e.servers) / 1e12).collect();
            let cands: Vec<(u32, f64, Path)> = su
                .next_edges(js, jd)
                .map(|e| {
                    let mut path = vec![(e, 1.0)];
                    spread(su, &[(su.edges[e as usize].to, 1.0)], jd, &su_cap, &mut path, scratch);
                    (e, su_cap[e as usize], path)
                })
                .collect();
            Box::new(Local { cands, tail: None })
        })
    }

    /// [`tail`] of a message from `src` to `dst` (inside an UltraServer, cached).
    pub(super) fn tail(&mut self, src: usize, dst: usize, bytes: u64) -> f64 {
        match self.cluster {
            Some(c) if src / c.chips_per_ultraserver() == dst / c.chips_per_ultraserver() => {
                let k = c.chips_per_ultraserver();
                let l = self.local(c, src % k, dst % k);
                match l.tail {
                    Some((b, t)) if b == bytes => t,
                    _ => {
                        let t = tail(c.scale_up(), src % k, dst % k, bytes);
                        l.tail = Some((bytes, t));
                        t
                    }
                }
            }
            Some(c) => {
                // Between UltraServers every NIC, uplink and downlink is alike (the cluster
                // builder makes them so): the tail depends only on whether the chips share a
                // leaf, and on the size.
                let i = usize::from(c.leaf_of(src) != c.leaf_of(dst));
                match self.cross_tail[i] {
                    Some((b, t)) if b == bytes => t,
                    _ => {
                        let t = tail(self.topo, src, dst, bytes);
                        self.cross_tail[i] = Some((bytes, t));
                        t
                    }
                }
            }
            None => tail(self.topo, src, dst, bytes),
        }
    }

    /// The parts of a message of `bytes` from `src` to `dst`, appended to `out` as (route,
    /// bytes): one per candidate link at the source that takes some of it ([`place`], by what
    /// `links` hold queued at `tick`), each a path of edges (and aggregates) with the part's
    /// share on each. `spent` holds lists to reuse (on a topology other than a cluster).
    pub(super) fn parts(
        &mut self,
        (src, dst, bytes): (usize, usize, f64),
        links: &[Link],
        tick: u64,
        spent: &mut Vec<Vec<(u32, f64)>>,
        out: &mut Vec<(Route, f64)>,
    ) {
        let topo = self.topo;
        let mut cands = std::mem::take(&mut self.cands);
        let mut w = std::mem::take(&mut self.w);
        cands.clear();
        let Some(c) = self.cluster else {
            self.edges.clear();
            self.edges.extend(topo.next_edges(src, dst));
            if self.edges.len() > 1 {
                self.edges.iter().for_each(|&e| self.choice[e as usize] = true);
            }
            cands.extend(self.edges.iter().map(|&e| (self.cap[e as usize], links[e as usize].queued_at(tick))));
            w.resize(cands.len(), 0.0);
            place(&cands, bytes, &mut w);
            for (&e, &wi) in self.edges.iter().zip(&w) {
                if wi > 0.0 {
                    let mut path = spent.pop().unwrap_or_default();
                    path.clear();
                    path.push((e, 1.0));
                    let to = topo.edges[e as usize].to;
                    spread(topo, &[(to, 1.0)], dst, &self.cap, &mut path, &mut self.scratch);
                    let route = match hops(&path, 0) {
                        Some(r) => {
                            spent.push(path);
                            r
                        }
                        None => Route::Any(path),
                    };
                    out.push((route, bytes * wi));
                }
            }
            (self.cands, self.w) = (cands, w);
            return;
        };
        let k = c.chips_per_ultraserver();
        if src / k == dst / k {
            let shift = c.edges_per_ultraserver() * (src / k) as u32;
            let mut choice = std::mem::take(&mut self.choice);
            let l = self.local(c, src % k, dst % k);
            if l.cands.len() > 1 {
                for &(e, _, _) in &l.cands {
                    choice[(e + shift) as usize] = true;
                }
            }
            cands.extend(l.cands.iter().map(|&(e, cap, _)| (cap, links[(e + shift) as usize].queued_at(tick))));
            w.resize(cands.len(), 0.0);
            place(&cands, bytes, &mut w);
            // Below `k * k`, which `new` checked fits in a u32; candidates of one node too.
            let pair = (src % k * k + dst % k) as u32;
            for (i, &wi) in w.iter().enumerate() {
                if wi > 0.0 {
                    let route = hops(&l.cands[i].2, shift).unwrap_or(Route::Local { pair, shift, cand: i as u32 });
                    out.push((route, bytes * wi));
                }
            }
            (self.cands, self.w, self.choice) = (cands, w, choice);
            return;
        }
        (self.cands, self.w) = (cands, w);
        let (up, down) = (c.nic_edges(src).0 as u32, c.nic_edges(dst).1 as u32);
        let (ls, ld) = (c.leaf_of(src), c.leaf_of(dst));
        let route = match self.cross {
            Some(_) if ls != ld => {
                let (e0, leaves) = (topo.edges.len(), c.leaves_and_spines().0);
                let edges = [up, (e0 + ls) as u32, (e0 + leaves + ld) as u32, down];
                Route::Cross { edges, across: true }
            }
            _ => Route::Cross { edges: [up, down, 0, 0], across: false },
        };
        out.push((route, bytes));
    }

    /// The path of a local route.
    fn local_path(&self, pair: u32, cand: u32) -> &[(u32, f64)] {
        self.local[pair as usize].as_deref().and_then(|l| l.cands.get(cand as usize)).map_or(&[], |c| &c.2)
    }

    /// Calls `f(edge, share)` for each edge (or aggregate) of `r`.
    #[inline(always)]
    pub(super) fn each(&self, r: &Route, mut f: impl FnMut(u32, f64)) {
        match r {
            Route::Cross { edges, across: true } => {
                let (s_up, s_down, s_nic) = self.cross.unwrap_or((1.0, 1.0, 1.0));
                f(edges[0], 1.0);
                f(edges[1], s_up);
                f(edges[2], s_down);
                f(edges[3], s_nic);
            }
            Route::Cross { edges, across: false } => {
                f(edges[0], 1.0);
                f(edges[1], 1.0);
            }
            Route::Hops { edges, n } => {
                for &e in &edges[..*n as usize] {
                    f(e, 1.0);
                }
            }
            Route::Local { pair, shift, cand } => {
                for &(e, s) in self.local_path(*pair, *cand) {
                    f(e + shift, s);
                }
            }
            Route::Any(p) => {
                for &(e, s) in p {
                    f(e, s);
                }
            }
        }
    }

    /// The source's link of `r` (whose queue [`place`] reads), if any.
    #[inline(always)]
    pub(super) fn first(&self, r: &Route) -> Option<u32> {
        match r {
            Route::Cross { edges, .. } => Some(edges[0]),
            Route::Hops { edges, n } => (*n > 0).then_some(edges[0]),
            Route::Local { pair, shift, cand } => self.local_path(*pair, *cand).first().map(|&(e, _)| e + shift),
            Route::Any(p) => p.first().map(|&(e, _)| e),
        }
    }
}

/// The tail of a message of `bytes` on the first-candidate path: every hop's latency, plus one
/// packet's serialization on every hop but the slowest, in ps.
fn tail(topo: &Topology, src: usize, dst: usize, bytes: u64) -> f64 {
    let pkt = bytes.min(u64::from(topo.packet_bytes)) as f64;
    let (mut n, mut lat, mut ser, mut worst) = (src, 0.0, 0.0, 0.0f64);
    while n != dst {
        let Some(e) = topo.next_edges(n, dst).first() else { break };
        let edge = &topo.edges[e as usize];
        lat += edge.latency_ps as f64;
        let s = pkt * 1e12 / edge.bytes_per_s;
        ser += s;
        worst = worst.max(s);
        n = edge.to;
    }
    lat + ser - worst
}
