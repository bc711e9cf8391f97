//! The topology as a graph: nodes are chips (first, indices `0..chips`) and switches; directed
//! edges are link directions, each a bundle of `servers` parallel links with one bandwidth and
//! latency. Routes give, for every (node, destination chip), the candidate next edges: a table
//! per (node, destination) for the scale-up shapes, and for clusters an answer computed from
//! the cluster's structure ([`crate::topo::cluster`]: one shared table for the UltraServer's own
//! fabric and arithmetic for the scale-out network), so memory grows with chips and links, not
//! with their square.

use crate::link::effective_payload_bytes_per_s;
use crate::topo::spec::{Checked, Kind, Scope};
use std::collections::VecDeque;

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A chip: sources and sinks traffic, and forwards it (torus).
    Chip,
    /// A switch: forwards only.
    Switch,
}

/// One node.
#[derive(Clone, Debug)]
pub struct Node {
    /// "chip3", "intra.s0.1", "inter.2".
    pub name: String,
    /// Chip or switch.
    pub kind: NodeKind,
}

/// One direction of a bundle of parallel links.
#[derive(Clone, Debug)]
pub struct Edge {
    /// Source node.
    pub from: usize,
    /// Destination node.
    pub to: usize,
    /// Parallel links (each a FIFO server); a packet takes the one that frees first.
    pub servers: u32,
    /// Payload bandwidth of one link, in bytes per second (the link layer's analytic
    /// `effective_payload_bytes_per_s` for the topology's transaction payload).
    pub bytes_per_s: f64,
    /// Fixed latency after serialization, in picoseconds: PHY + wire + link layer, plus the
    /// switch's port-to-port latency when `from` is a switch.
    pub latency_ps: u64,
}

impl Edge {
    /// Time one link takes to serialize `bytes` of payload, in picoseconds (rounded up).
    pub fn serialization_ps(&self, bytes: u32) -> u64 {
        (f64::from(bytes) * 1e12 / self.bytes_per_s).ceil() as u64
    }
}

/// How next hops are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoutingKind {
    /// One path: dimensions in order, shortest way round each ring (+ on ties).
    DimensionOrder,
    /// All minimal-hop next edges are candidates (paths chip, switches..., chip: chips do not
    /// forward); the network picks the one that frees first.
    MinimalAdaptive,
    /// Fat tree: one path, up to the lowest common ancestor then down; the up-port at level
    /// `l` is the destination's base-k digit `l` (destination-mod-k).
    UpDown,
    /// A cluster ([`crate::topo::cluster`]): each UltraServer's own routes inside it, the
    /// scale-out leaf/spine network (adaptive over uplinks) between UltraServers.
    Cluster,
}

/// A built topology.
#[derive(Clone, Debug)]
pub struct Topology {
    /// The spec's name.
    pub name: String,
    /// Chips first, then switches.
    pub nodes: Vec<Node>,
    /// All directed edges.
    pub edges: Vec<Edge>,
    /// Number of chips (nodes `0..chips`).
    pub chips: usize,
    /// Messages are split into packets of this many payload bytes.
    pub packet_bytes: u32,
    /// The routing discipline.
    pub routing: RoutingKind,
    /// A ring over all chips whose neighbours are one hop apart where the shape allows
    /// (boustrophedon order on a torus with even dimensions; index order otherwise).
    pub ring: Vec<usize>,
    /// Out edges of each node, in creation order.
    pub out: Vec<Vec<usize>>,
    /// Chips per server (chips `s x k .. (s + 1) x k` share server `s`): a switched fabric's
    /// `chips_per_server`; on a torus of three or more dimensions the first two dimensions'
    /// plane (Trn2: 4 x 4 per server), else every chip. The hierarchical collectives work
    /// inside servers first.
    pub chips_per_server: usize,
    /// Candidate next edges from `node` towards chip `dst` (sorted): a compressed table (entry
    /// `dst x nodes + node`) or, for clusters, computed from the structure.
    pub(crate) next: RouteStore,
}

/// Where a topology's routes come from.
#[derive(Clone, Debug)]
pub(crate) enum RouteStore {
    /// One row per (destination, node).
    Table(Routes),
    /// Computed from a cluster's structure ([`crate::topo::cluster::ClusterRoutes`]).
    Cluster(Box<crate::topo::cluster::ClusterRoutes>),
}

/// Candidate next edges of a node towards a destination (see [`Topology::next_edges`]): a
/// stored list of edges, each plus a fixed offset (a copy's edges are its UltraServer's shifted
/// by the copy's first edge). Iterates in the routing's order (lowest edge first).
#[derive(Clone, Debug)]
pub struct NextEdges<'a> {
    edges: std::slice::Iter<'a, u32>,
    add: u32,
}

/// The one-element list a single computed edge is an offset of.
static ZERO: [u32; 1] = [0];

impl<'a> NextEdges<'a> {
    /// `edges`, each plus `add`.
    pub(crate) fn shifted(edges: &'a [u32], add: u32) -> NextEdges<'a> {
        NextEdges { edges: edges.iter(), add }
    }

    /// The one edge `e`.
    pub(crate) fn one(e: u32) -> NextEdges<'static> {
        NextEdges { edges: ZERO.iter(), add: e }
    }

    /// No candidates (at the destination, or unreachable).
    pub(crate) fn none() -> NextEdges<'static> {
        NextEdges { edges: [].iter(), add: 0 }
    }

    /// The first candidate (the one a single-path walk takes).
    pub fn first(&self) -> Option<u32> {
        self.edges.clone().next().map(|&e| e + self.add)
    }

    /// Whether there are no candidates.
    pub fn is_empty(&self) -> bool {
        self.edges.len() == 0
    }

    /// The stored list (each candidate is an entry plus [`NextEdges::add_of`]).
    pub(crate) fn as_slice(&self) -> &'a [u32] {
        self.edges.as_slice()
    }

    /// The offset added to every stored entry.
    pub(crate) fn add_of(&self) -> u32 {
        self.add
    }
}

impl Iterator for NextEdges<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        self.edges.next().map(|&e| e + self.add)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.edges.size_hint()
    }
}

impl ExactSizeIterator for NextEdges<'_> {}

/// A routing table in compressed rows (4 bytes per (destination, node) pair plus the edges):
/// a 1,152-chip cluster's table is ~25 MB where nested vectors took ~100 MB.
#[derive(Clone, Debug, Default)]
pub(crate) struct Routes {
    off: Vec<u32>,
    data: Vec<u32>,
}

impl Routes {
    /// Appends the next edges of every node towards the next destination.
    pub(crate) fn push_dst(
        &mut self,
        rows: impl IntoIterator<Item = impl IntoIterator<Item = u32>>,
    ) -> Result<(), String> {
        if self.off.is_empty() {
            self.off.push(0);
        }
        for row in rows {
            self.data.extend(row);
            let end = u32::try_from(self.data.len()).map_err(|_| "routing table over 4 G entries".to_string())?;
            self.off.push(end);
        }
        Ok(())
    }

    fn get(&self, i: usize) -> &[u32] {
        match (self.off.get(i), self.off.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.data[a as usize..b as usize],
            _ => &[],
        }
    }
}

struct Builder {
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    bw: f64,
    lat: u64,
}

impl Builder {
    fn node(&mut self, name: String, kind: NodeKind) -> usize {
        self.nodes.push(Node { name, kind });
        self.nodes.len() - 1
    }
    /// Both directions between `a` and `b`; `extra_a`/`extra_b` = switch latency leaving each.
    fn pair(&mut self, a: usize, b: usize, servers: u32, extra_a: u64, extra_b: u64) {
        let (bw, lat) = (self.bw, self.lat);
        self.edges.push(Edge { from: a, to: b, servers, bytes_per_s: bw, latency_ps: lat + extra_a });
        self.edges.push(Edge { from: b, to: a, servers, bytes_per_s: bw, latency_ps: lat + extra_b });
    }
}

/// Coordinates of chip `i` in mixed radix `dims` (dimension 0 fastest).
pub fn coords(dims: &[u32], mut i: usize) -> Vec<u32> {
    dims.iter()
        .map(|&d| {
            let c = (i % d as usize) as u32;
            i /= d as usize;
            c
        })
        .collect()
}

/// Chip index of coordinates `c` in mixed radix `dims`.
pub fn index(dims: &[u32], c: &[u32]) -> usize {
    dims.iter().zip(c).rev().fold(0, |acc, (&d, &x)| acc * d as usize + x as usize)
}

/// Boustrophedon (reflected mixed-radix) order: consecutive chips differ by one step in one
/// dimension; with even dimensions the last chip is one wrap-around hop from the first.
pub fn snake_order(dims: &[u32]) -> Vec<usize> {
    let n: usize = dims.iter().map(|&d| d as usize).product();
    (0..n)
        .map(|k| {
            let digits = coords(dims, k);
            let mut c = vec![0; dims.len()];
            // A digit is reflected when the block number formed by the higher digits is odd
            // (the lower dimensions are walked backwards in every other block).
            let mut block = 0usize;
            for d in (0..dims.len()).rev() {
                c[d] = if block % 2 == 1 { dims[d] - 1 - digits[d] } else { digits[d] };
                block = block * dims[d] as usize + digits[d] as usize;
            }
            index(dims, &c)
        })
        .collect()
}

impl Topology {
    /// Builds the graph and routing tables of a validated spec; the error names two chips
    /// that cannot reach each other (e.g. server-scoped tiers only).
    pub fn build(c: &Checked) -> Result<Topology, String> {
        let payload = c.spec.packet_bytes.min(c.link.encoding.max_payload_bytes);
        let bw = effective_payload_bytes_per_s(&c.link, payload);
        let mut b = Builder { nodes: vec![], edges: vec![], bw, lat: c.link_latency_ps };
        let (chips, routing, ring) = match &c.spec.kind {
            Kind::Torus { dims, links_per_neighbor, .. } => torus(&mut b, dims, links_per_neighbor),
            Kind::FullMesh { chips, links_per_pair, .. } => {
                let n = *chips as usize;
                chip_nodes(&mut b, n);
                for i in 0..n {
                    for j in i + 1..n {
                        b.pair(i, j, *links_per_pair, 0, 0);
                    }
                }
                (n, RoutingKind::MinimalAdaptive, (0..n).collect())
            }
            Kind::Switched { chips, chips_per_server, tiers, direct_links, .. } => {
                let n = *chips as usize;
                chip_nodes(&mut b, n);
                let per = *chips_per_server as usize;
                for (t, tier) in tiers.iter().enumerate() {
                    let sw_lat = c.tier_latency_ps[t];
                    let groups: Vec<(String, Vec<usize>)> = match tier.scope {
                        Scope::Server => {
                            (0..n / per).map(|s| (format!(".s{s}"), (s * per..(s + 1) * per).collect())).collect()
                        }
                        Scope::All => vec![(String::new(), (0..n).collect())],
                    };
                    for (suffix, members) in groups {
                        for k in 0..tier.switches {
                            let sw = b.node(format!("{}{suffix}.{k}", tier.name), NodeKind::Switch);
                            for &m in &members {
                                b.pair(m, sw, tier.links_per_chip_per_switch, 0, sw_lat);
                            }
                        }
                    }
                }
                if *direct_links > 0 {
                    for i in 0..n / 2 {
                        b.pair(i, i + n / 2, *direct_links, 0, 0);
                    }
                }
                (n, RoutingKind::MinimalAdaptive, (0..n).collect())
            }
            Kind::FatTree { radix, levels, .. } => fat_tree(&mut b, *radix, *levels, c.tier_latency_ps[0]),
        };
        let chips_per_server = match &c.spec.kind {
            Kind::Switched { chips_per_server, .. } => *chips_per_server as usize,
            Kind::Torus { dims, .. } if dims.len() >= 3 => dims[..2].iter().map(|&d| d as usize).product(),
            _ => chips,
        };
        let mut out = vec![Vec::new(); b.nodes.len()];
        for (e, edge) in b.edges.iter().enumerate() {
            out[edge.from].push(e);
        }
        let mut t = Topology {
            name: c.spec.name.clone(),
            nodes: b.nodes,
            edges: b.edges,
            chips,
            packet_bytes: c.spec.packet_bytes,
            routing,
            ring,
            out,
            chips_per_server,
            next: RouteStore::Table(Routes::default()),
        };
        let mut next = Routes::default();
        for d in 0..chips {
            let rows = match (&c.spec.kind, routing) {
                (Kind::Torus { dims, .. }, RoutingKind::DimensionOrder) => t.dor_table(dims, d),
                (Kind::FatTree { radix, levels, .. }, _) => t.up_down_table(&FatTree::new(*radix, *levels), d),
                _ => t.minimal_table(d),
            };
            next.push_dst(rows)?;
        }
        t.next = RouteStore::Table(next);
        t.check_reachable()?;
        Ok(t)
    }

    /// Every chip reaches every other chip, or the error names a pair that does not. A
    /// cluster's routes reach by construction when its UltraServer's do (checked when that was
    /// built): there only chip 0's routes to and from every chip are checked, in `O(chips)`.
    pub(crate) fn check_reachable(&self) -> Result<(), String> {
        if matches!(self.next, RouteStore::Cluster(_)) {
            let unreached = |s: usize, d: usize| s != d && self.next_edges(s, d).is_empty();
            if let Some(c) = (1..self.chips).find(|&c| unreached(0, c) || unreached(c, 0)) {
                return Err(format!("topology {:?}: chip0 and chip{c} cannot reach each other", self.name));
            }
            return Ok(());
        }
        for d in 0..self.chips {
            if let Some(s) = (0..self.chips).find(|&s| s != d && self.next_edges(s, d).is_empty()) {
                return Err(format!("topology {:?}: chip{s} cannot reach chip{d}", self.name));
            }
        }
        Ok(())
    }

    /// Candidate next edges from `node` towards chip `dst` (empty at `dst`).
    pub fn next_edges(&self, node: usize, dst: usize) -> NextEdges<'_> {
        match &self.next {
            RouteStore::Table(t) => NextEdges::shifted(t.get(dst * self.nodes.len() + node), 0),
            RouteStore::Cluster(c) => c.next_edges(node, dst),
        }
    }

    /// The cluster structure the routes are computed from, if this is a cluster.
    pub fn cluster_routes(&self) -> Option<&crate::topo::cluster::ClusterRoutes> {
        match &self.next {
            RouteStore::Cluster(c) => Some(c),
            RouteStore::Table(_) => None,
        }
    }

    /// The edge from `a` to `b`, if any.
    pub fn edge_between(&self, a: usize, b: usize) -> Option<usize> {
        self.out[a].iter().copied().find(|&e| self.edges[e].to == b)
    }

    /// Hops from `src` to chip `dst` following the first candidate at each node.
    pub fn hops(&self, src: usize, dst: usize) -> usize {
        let (mut n, mut h) = (src, 0);
        while n != dst {
            let e = self.next_edges(n, dst).first().expect("every chip reaches every chip");
            n = self.edges[e as usize].to;
            h += 1;
        }
        h
    }

    /// Total payload bandwidth a chip can inject (all its out links), in bytes per second.
    pub fn injection_bytes_per_s(&self, chip: usize) -> f64 {
        self.out[chip].iter().map(|&e| self.edges[e].bytes_per_s * f64::from(self.edges[e].servers)).sum()
    }

    fn dor_table(&self, dims: &[u32], dst: usize) -> Vec<Vec<u32>> {
        let dc = coords(dims, dst);
        (0..self.nodes.len())
            .map(|n| {
                let mut c = coords(dims, n);
                let Some(d) = (0..dims.len()).find(|&d| c[d] != dc[d]) else { return vec![] };
                let k = dims[d];
                let delta = (dc[d] + k - c[d]) % k;
                c[d] = if delta <= k / 2 { (c[d] + 1) % k } else { (c[d] + k - 1) % k };
                let e = self.edge_between(n, index(dims, &c)).expect("torus neighbours are linked");
                vec![e as u32]
            })
            .collect()
    }

    fn up_down_table(&self, ft: &FatTree, dst: usize) -> Vec<Vec<u32>> {
        (0..self.nodes.len())
            .map(|n| {
                let Some(to) = ft.next_node(n, dst) else { return vec![] };
                vec![self.edge_between(n, to).expect("fat-tree neighbours are linked") as u32]
            })
            .collect()
    }

    fn minimal_table(&self, dst: usize) -> Vec<Vec<u32>> {
        let mut dist = vec![usize::MAX; self.nodes.len()];
        let mut into = vec![Vec::new(); self.nodes.len()];
        for (e, edge) in self.edges.iter().enumerate() {
            into[edge.to].push(e);
        }
        dist[dst] = 0;
        let mut q = VecDeque::from([dst]);
        while let Some(v) = q.pop_front() {
            // Off a torus only switches forward: a path is chip, switches..., chip.
            if v != dst && self.nodes[v].kind == NodeKind::Chip {
                continue;
            }
            for &e in &into[v] {
                let u = self.edges[e].from;
                if dist[u] == usize::MAX {
                    dist[u] = dist[v] + 1;
                    q.push_back(u);
                }
            }
        }
        (0..self.nodes.len())
            .map(|n| {
                if n == dst || dist[n] == usize::MAX {
                    return vec![];
                }
                self.out[n]
                    .iter()
                    .filter(|&&e| dist[self.edges[e].to].checked_add(1) == Some(dist[n]))
                    .map(|&e| e as u32)
                    .collect()
            })
            .collect()
    }
}

fn chip_nodes(b: &mut Builder, n: usize) {
    for i in 0..n {
        b.node(format!("chip{i}"), NodeKind::Chip);
    }
}

fn torus(b: &mut Builder, dims: &[u32], links: &[u32]) -> (usize, RoutingKind, Vec<usize>) {
    let n: usize = dims.iter().map(|&d| d as usize).product();
    chip_nodes(b, n);
    for i in 0..n {
        for (d, &k) in dims.iter().enumerate() {
            if k < 2 {
                continue;
            }
            let mut c = coords(dims, i);
            // Link i -> i+1 in this dimension (and back); a ring of 2 has one neighbour.
            c[d] = (c[d] + 1) % k;
            let j = index(dims, &c);
            if k == 2 && c[d] == 0 {
                continue;
            }
            b.pair(i, j, links[d], 0, 0);
        }
    }
    (n, RoutingKind::DimensionOrder, snake_order(dims))
}

/// Index arithmetic of a k-ary n-tree: chips `0..k^n`, then level-`l` switches `<w, l>` at
/// node `chips + l x k^(n-1) + w`, where the word `w` has n-1 base-k digits `a_0..a_(n-2)`.
/// At level `l`, `a_l..a_(n-2)` name the subtree (the chips whose digits `d_(l+1)..` equal
/// them) and `a_0..a_(l-1)` pick one of its k^l switches. `<w, l>` links up to the k
/// switches `<w', l+1>` with `w'` = `w` but any digit `l`.
struct FatTree {
    k: usize,
    levels: usize,
    chips: usize,
    per_level: usize,
}

impl FatTree {
    fn new(radix: u32, levels: u32) -> FatTree {
        let (chips, per_level) = Kind::fat_tree_sizes(radix, levels).expect("validated");
        FatTree { k: radix as usize / 2, levels: levels as usize, chips, per_level }
    }

    fn switch(&self, level: usize, w: usize) -> usize {
        self.chips + level * self.per_level + w
    }

    /// `w` with base-k digit `i` set to `v`.
    fn with_digit(&self, w: usize, i: usize, v: usize) -> usize {
        let p = self.k.pow(i as u32);
        w - (w / p % self.k) * p + v * p
    }

    /// Base-k digit `i` of `x`.
    fn digit(&self, x: usize, i: usize) -> usize {
        x / self.k.pow(i as u32) % self.k
    }

    /// The next node from `node` towards chip `dst` (None at `dst`).
    fn next_node(&self, node: usize, dst: usize) -> Option<usize> {
        if node == dst {
            return None;
        }
        if node < self.chips {
            return Some(self.switch(0, node / self.k));
        }
        let (l, w) = ((node - self.chips) / self.per_level, (node - self.chips) % self.per_level);
        let below = w / self.k.pow(l as u32) == dst / self.k.pow(l as u32 + 1);
        Some(match (below, l) {
            (true, 0) => dst,
            (true, _) => self.switch(l - 1, self.with_digit(w, l - 1, self.digit(dst, l))),
            (false, _) => self.switch(l + 1, self.with_digit(w, l, self.digit(dst, l))),
        })
    }
}

fn fat_tree(b: &mut Builder, radix: u32, levels: u32, sw_lat: u64) -> (usize, RoutingKind, Vec<usize>) {
    let ft = FatTree::new(radix, levels);
    chip_nodes(b, ft.chips);
    for l in 0..ft.levels {
        for w in 0..ft.per_level {
            b.node(format!("ft.l{l}.{w}"), NodeKind::Switch);
        }
    }
    for c in 0..ft.chips {
        b.pair(c, ft.switch(0, c / ft.k), 1, 0, sw_lat);
    }
    for l in 0..ft.levels - 1 {
        for w in 0..ft.per_level {
            for u in 0..ft.k {
                b.pair(ft.switch(l, w), ft.switch(l + 1, ft.with_digit(w, l, u)), 1, sw_lat, sw_lat);
            }
        }
    }
    (ft.chips, RoutingKind::UpDown, (0..ft.chips).collect())
}
