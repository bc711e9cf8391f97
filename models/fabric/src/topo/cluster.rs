//! Clusters: copies of one scale-up topology (an UltraServer's NeuronLink fabric) joined by a
//! scale-out network (EFA NICs on every chip, a two-tier leaf/spine Clos of Ethernet-class
//! switches) into one [`Topology`] that the packet-level network, the collectives and the
//! per-node kernel build run unchanged.
//!
//! ```text
//!            spine0 ... spine(S-1)                         scale-out (EFA): leaf/spine Clos
//!           /    \        /    \
//!       leaf0    leaf1 ... leaf(L-1)       chip c's NIC ports -> its leaf (contiguous or rail)
//!       |  |  |   |  |  |
//!   [ us0: chips 0..k, NeuronLink fabric ] [ us1: chips k..2k ] ...      scale-up (per copy)
//! ```
//!
//! Nodes: chips first (`chip{c}`, `c = u x k + j` for chip `j` of UltraServer `u`), then each
//! copy's switches (`us{u}.<name>`), then the leaves (`efa.leaf{l}`) and spines
//! (`efa.spine{s}`). Edges: each copy's scale-up edges, then per chip its NIC bundle to and
//! from its leaf, then the leaf-spine bundles.
//!
//! **Routing.** Traffic between chips of one UltraServer stays on its scale-up fabric (that
//! copy's own routes); traffic between UltraServers leaves by the source chip's NIC, goes up
//! to a spine unless both chips share a leaf, and down to the destination: at a leaf every
//! uplink is a candidate and the packet takes the one that frees first (adaptive, as on the
//! switched presets, where real EFA sprays SRD packets over paths). Chips never forward.
//!
//! **Placement.** `Contiguous`: leaf `c / chips_per_leaf`. `Rail`: the chips with the same
//! local index `j` in every UltraServer share a leaf (leaf `j / (chips_per_leaf / U)`), so
//! the cross-UltraServer phase of a hierarchical collective, which pairs equal local
//! indices, crosses one switch.
//!
//! Leaves out: the NIC's message rate and host software beyond its fixed latency, ECMP
//! hashing (packets are sprayed adaptively), switch buffers and congestion control (queues are
//! unbounded, as everywhere in the packet-level network), three-tier Clos, and multi-plane
//! NICs (a chip's ports go to one leaf as parallel links).

use crate::topo::graph::{Edge, NextEdges, Node, NodeKind, RouteStore, RoutingKind, Topology};

/// Where chips' NICs attach to leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Leaf `c / chips_per_leaf` over the global chip index.
    Contiguous,
    /// The same local index of every UltraServer on one leaf.
    Rail,
}

/// The scale-out network of a cluster, in model units (checked by the caller's schema).
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleOut {
    /// UltraServers (copies of the scale-up topology), >= 1.
    pub ultraservers: usize,
    /// NIC ports per chip (parallel links to its leaf), >= 1.
    pub nic_ports: u32,
    /// Payload bandwidth of one NIC port and one switch port, bytes per second (> 0).
    pub port_bytes_per_s: f64,
    /// Fixed latency of the NICs of both ends together (doorbell to data in the far HBM,
    /// less the network), picoseconds; half on the edge into the network, half out.
    pub nic_latency_ps: u64,
    /// PHY + cable + link layer of one scale-out link, picoseconds.
    pub link_latency_ps: u64,
    /// Port-to-port latency of one switch, picoseconds (added on edges leaving a switch).
    pub switch_latency_ps: u64,
    /// Ports of one switch.
    pub radix: u32,
    /// Chips whose NICs attach to one leaf.
    pub chips_per_leaf: u32,
    /// Spine switches (0 only with a single leaf).
    pub spines: u32,
    /// Where chips attach.
    pub placement: Placement,
}

/// The leaves a scale-out network needs and the parallel links between each leaf and each
/// spine ([`ScaleOut::shape`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Leaf switches.
    pub leaves: usize,
    /// Parallel links between a leaf and each spine.
    pub links_per_spine: u32,
}

impl ScaleOut {
    /// Leaves and leaf-spine links for `chips` chips in UltraServers of `per_us`; the error
    /// names the field (`chips_per_leaf`, `spines`, `radix`) and the rule it breaks.
    pub fn shape(&self, per_us: usize) -> Result<Shape, (&'static str, String)> {
        let u = self.ultraservers;
        let chips = per_us.checked_mul(u).ok_or(("ultraservers", "too many chips".to_string()))?;
        let cpl = self.chips_per_leaf as usize;
        if cpl == 0 {
            return Err(("chips_per_leaf", "0 is out of range (allowed: >= 1)".into()));
        }
        let down = u64::from(self.chips_per_leaf) * u64::from(self.nic_ports);
        if down > u64::from(self.radix) {
            return Err((
                "radix",
                format!(
                    "a leaf needs {down} ports for {} chips x {} NIC ports, but the switch has {}",
                    self.chips_per_leaf, self.nic_ports, self.radix
                ),
            ));
        }
        let leaves = match self.placement {
            Placement::Contiguous => chips.div_ceil(cpl),
            Placement::Rail => {
                if !cpl.is_multiple_of(u) {
                    return Err((
                        "chips_per_leaf",
                        format!(
                            "rail placement puts one local index of each of the {u} UltraServers on a leaf, so chips_per_leaf ({cpl}) must be a multiple of {u}"
                        ),
                    ));
                }
                per_us.div_ceil(cpl / u)
            }
        };
        if leaves == 1 {
            if self.spines > 0 {
                return Err(("spines", format!("{} spines, but one leaf serves every chip (allowed: 0)", self.spines)));
            }
            return Ok(Shape { leaves, links_per_spine: 0 });
        }
        if self.spines == 0 {
            return Err(("spines", format!("{leaves} leaves need at least one spine")));
        }
        let up = u64::from(self.radix) - down;
        let links_per_spine = up / u64::from(self.spines);
        if links_per_spine == 0 {
            return Err((
                "spines",
                format!(
                    "a leaf has {up} ports left after its {down} chip ports, fewer than the {} spines it must reach",
                    self.spines
                ),
            ));
        }
        let spine_ports = (leaves as u64).saturating_mul(links_per_spine);
        if spine_ports > u64::from(self.radix) {
            return Err((
                "spines",
                format!(
                    "each spine needs {leaves} leaves x {links_per_spine} links = {spine_ports} ports but the switch has {} (more spines take fewer links each)",
                    self.radix
                ),
            ));
        }
        Ok(Shape { leaves, links_per_spine: links_per_spine as u32 })
    }
}

/// A cluster's routes computed from its structure instead of a table per (node, destination):
/// the UltraServer's own routes (one table for its shape, shared by every copy, indexed by local
/// node and chip) inside a copy, arithmetic on the placement between copies. Memory: the
/// scale-up topology and one list of each leaf's uplinks, `O(chips + links)` in all.
#[derive(Clone, Debug)]
pub struct ClusterRoutes {
    /// The UltraServer's topology (its routes answer inside every copy).
    scale_up: Box<Topology>,
    /// Chips per UltraServer.
    k: usize,
    /// UltraServers.
    ultraservers: usize,
    /// Chips in all.
    chips: usize,
    /// Switches per UltraServer.
    us_switches: usize,
    /// Link directions per UltraServer.
    us_edges: u32,
    /// First leaf node, first spine node.
    leaf0: usize,
    spine0: usize,
    /// First NIC edge (chip `c` up: `nic0 + 2c`, down: `nic0 + 2c + 1`), first leaf-spine edge
    /// (leaf `l` to spine `s`: `up0 + 2(l S + s)`, back: `+ 1`).
    nic0: usize,
    up0: usize,
    /// Leaves and spines (0 spines with one leaf).
    leaves: usize,
    spines: usize,
    /// Chips per leaf and placement.
    chips_per_leaf: usize,
    placement: Placement,
    /// Leaf `l`'s uplinks, one per spine: `uplinks[l S .. (l + 1) S]`.
    uplinks: Vec<u32>,
}

impl ClusterRoutes {
    /// The leaf chip `c`'s NICs attach to.
    pub fn leaf_of(&self, c: usize) -> usize {
        match self.placement {
            Placement::Contiguous => c / self.chips_per_leaf,
            Placement::Rail => (c % self.k) / (self.chips_per_leaf / self.ultraservers),
        }
    }

    /// Chips per UltraServer.
    pub fn chips_per_ultraserver(&self) -> usize {
        self.k
    }

    /// The UltraServer's own topology.
    pub fn scale_up(&self) -> &Topology {
        &self.scale_up
    }

    /// Link directions per UltraServer: copy `u`'s edges are its UltraServer's plus `u` times
    /// this.
    pub fn edges_per_ultraserver(&self) -> u32 {
        self.us_edges
    }

    /// Leaves, and spines (0 with one leaf).
    pub fn leaves_and_spines(&self) -> (usize, usize) {
        (self.leaves, self.spines)
    }

    /// Chip `c`'s NIC edge to its leaf, and its leaf's back to it.
    pub fn nic_edges(&self, c: usize) -> (usize, usize) {
        (self.nic0 + 2 * c, self.nic0 + 2 * c + 1)
    }

    /// Leaf `l`'s uplinks (one per spine) and the spines' downlinks to it, as edge lists.
    pub fn leaf_spine_edges(&self, l: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.spines).map(move |s| (self.up0 + 2 * (l * self.spines + s), self.up0 + 2 * (l * self.spines + s) + 1))
    }

    /// Candidate next edges from `node` towards chip `dst`, in the order the table of every
    /// (node, destination) would hold them (see the module doc).
    pub(crate) fn next_edges(&self, node: usize, dst: usize) -> NextEdges<'_> {
        let (k, chips) = (self.k, self.chips);
        if dst >= chips {
            return NextEdges::none();
        }
        let (ud, jd) = (dst / k, dst % k);
        let shift = |u: usize| self.us_edges * u as u32;
        if node < chips {
            if node == dst {
                NextEdges::none()
            } else if node / k == ud {
                let l = self.scale_up.next_edges(node % k, jd);
                NextEdges::shifted(l.as_slice(), l.add_of() + shift(ud))
            } else {
                NextEdges::one((self.nic0 + 2 * node) as u32)
            }
        } else if node < self.leaf0 {
            let (c, local) = ((node - chips) / self.us_switches, k + (node - chips) % self.us_switches);
            if c == ud {
                let l = self.scale_up.next_edges(local, jd);
                NextEdges::shifted(l.as_slice(), l.add_of() + shift(ud))
            } else {
                NextEdges::none()
            }
        } else if node < self.spine0 {
            let l = node - self.leaf0;
            if l == self.leaf_of(dst) {
                NextEdges::one((self.nic0 + 2 * dst + 1) as u32)
            } else {
                NextEdges::shifted(&self.uplinks[l * self.spines..(l + 1) * self.spines], 0)
            }
        } else if node < self.spine0 + self.spines {
            let s = node - self.spine0;
            NextEdges::one((self.up0 + 2 * (self.leaf_of(dst) * self.spines + s) + 1) as u32)
        } else {
            NextEdges::none()
        }
    }
}

/// `ultraservers` copies of `scale_up` joined by `net` (see the module doc); `name` names the
/// result. The error is a sentence (the caller locates it).
pub fn build(name: &str, scale_up: &Topology, net: &ScaleOut) -> Result<Topology, String> {
    let k = scale_up.chips;
    let u = net.ultraservers;
    let shape = net.shape(k).map_err(|(f, m)| format!("{f}: {m}"))?;
    let chips = k.checked_mul(u).ok_or("too many chips")?;
    let us_nodes = scale_up.nodes.len();
    let us_switches = us_nodes - k;
    let us_edges = scale_up.edges.len();
    let leaf0 = chips + u * us_switches;
    let spine0 = leaf0 + shape.leaves;
    let spines = if shape.leaves > 1 { net.spines as usize } else { 0 };
    // Global node of local node `n` of copy `c`.
    let node_of = |c: usize, n: usize| if n < k { c * k + n } else { chips + c * us_switches + (n - k) };
    let leaf_of = |chip: usize| match net.placement {
        Placement::Contiguous => chip / net.chips_per_leaf as usize,
        Placement::Rail => (chip % k) / (net.chips_per_leaf as usize / u),
    };

    let mut nodes: Vec<Node> = (0..chips).map(|c| Node { name: format!("chip{c}"), kind: NodeKind::Chip }).collect();
    for c in 0..u {
        for n in &scale_up.nodes[k..] {
            nodes.push(Node { name: format!("us{c}.{}", n.name), kind: NodeKind::Switch });
        }
    }
    nodes.extend((0..shape.leaves).map(|l| Node { name: format!("efa.leaf{l}"), kind: NodeKind::Switch }));
    nodes.extend((0..spines).map(|s| Node { name: format!("efa.spine{s}"), kind: NodeKind::Switch }));

    let mut edges: Vec<Edge> = Vec::with_capacity(u * us_edges + 2 * chips + 2 * shape.leaves * spines);
    for c in 0..u {
        edges.extend(scale_up.edges.iter().map(|e| Edge {
            from: node_of(c, e.from),
            to: node_of(c, e.to),
            ..e.clone()
        }));
    }
    let half_nic = net.nic_latency_ps / 2;
    let bw = net.port_bytes_per_s;
    let nic0 = edges.len();
    for chip in 0..chips {
        let leaf = leaf0 + leaf_of(chip);
        let lat = net.link_latency_ps;
        edges.push(Edge { from: chip, to: leaf, servers: net.nic_ports, bytes_per_s: bw, latency_ps: lat + half_nic });
        let back = lat + net.switch_latency_ps + (net.nic_latency_ps - half_nic);
        edges.push(Edge { from: leaf, to: chip, servers: net.nic_ports, bytes_per_s: bw, latency_ps: back });
    }
    let up0 = edges.len();
    for l in 0..shape.leaves {
        for s in 0..spines {
            let lat = net.link_latency_ps + net.switch_latency_ps;
            let servers = shape.links_per_spine;
            edges.push(Edge { from: leaf0 + l, to: spine0 + s, servers, bytes_per_s: bw, latency_ps: lat });
            edges.push(Edge { from: spine0 + s, to: leaf0 + l, servers, bytes_per_s: bw, latency_ps: lat });
        }
    }
    let mut out = vec![Vec::new(); nodes.len()];
    for (e, edge) in edges.iter().enumerate() {
        out[edge.from].push(e);
    }
    let ring: Vec<usize> = (0..u).flat_map(|c| scale_up.ring.iter().map(move |&j| c * k + j)).collect();

    let to_u32 = |x: usize, what: &str| u32::try_from(x).map_err(|_| format!("{what} over 4 G: {x}"));
    to_u32(edges.len(), "link directions")?;
    to_u32(nodes.len(), "nodes")?;
    let uplinks: Vec<u32> =
        (0..shape.leaves).flat_map(|l| (0..spines).map(move |s| (up0 + 2 * (l * spines + s)) as u32)).collect();
    let routes = ClusterRoutes {
        scale_up: Box::new(scale_up.clone()),
        k,
        ultraservers: u,
        chips,
        us_switches,
        us_edges: to_u32(us_edges, "link directions")?,
        leaf0,
        spine0,
        nic0,
        up0,
        leaves: shape.leaves,
        spines,
        chips_per_leaf: net.chips_per_leaf as usize,
        placement: net.placement,
        uplinks,
    };
    let t = Topology {
        name: name.to_string(),
        nodes,
        edges,
        chips,
        packet_bytes: scale_up.packet_bytes,
        routing: RoutingKind::Cluster,
        ring,
        out,
        chips_per_server: k,
        next: RouteStore::Cluster(Box::new(routes)),
    };
    t.check_reachable()?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::{self, Collective, Params};
    use crate::topo::{self, Network};

    fn scale_up() -> Topology {
        let text = "TopologySpec(name: \"us\", kind: switched(chips: 8, chips_per_server: 4, \
                    link: (encoding: \"pcie-gen6\", lanes: 8), tiers: [(name: \"intra\", scope: server, switches: 1, \
                    links_per_chip_per_switch: 2, switch_latency: \"120ns\"), (name: \"inter\", scope: all, \
                    switches: 1, links_per_chip_per_switch: 1, switch_latency: \"240ns\")]))";
        topo::parse("us.ron", text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn net(u: usize, cpl: u32, spines: u32, placement: Placement) -> ScaleOut {
        ScaleOut {
            ultraservers: u,
            nic_ports: 1,
            port_bytes_per_s: 23.0e9,
            nic_latency_ps: 10_000_000,
            link_latency_ps: 50_000,
            switch_latency_ps: 600_000,
            radix: 16,
            chips_per_leaf: cpl,
            spines,
            placement,
        }
    }

    #[test]
    fn inside_an_ultraserver_routes_stay_on_its_fabric_and_across_go_through_the_nics() {
        let su = scale_up();
        let t = build("c", &su, &net(4, 8, 2, Placement::Contiguous)).unwrap();
        assert_eq!(t.chips, 32);
        assert_eq!(t.chips_per_server, 8);
        // Same UltraServer: the scale-up fabric's hops, on each copy.
        for u in 0..4 {
            for s in 0..8 {
                for d in 0..8 {
                    assert_eq!(t.hops(u * 8 + s, u * 8 + d), su.hops(s, d), "us{u}: {s} -> {d}");
                }
            }
        }
        // Contiguous, 8 chips per leaf: each UltraServer on its own leaf; across = up and down.
        assert_eq!(t.hops(0, 8), 4);
        let e = t.next_edges(0, 8);
        assert_eq!(e.len(), 1);
        let e0 = e.first().unwrap() as usize;
        assert_eq!(t.nodes[t.edges[e0].to].name, "efa.leaf0");
        let leaf = t.edges[e0].to;
        assert_eq!(t.next_edges(leaf, 8).len(), 2, "every spine is a candidate");
        assert!(t.nodes.iter().any(|n| n.name == "us3.intra.s1.0"));
    }

    /// The routing table the cluster stored before its routes were computed: every (node,
    /// destination) row, built by walking the layout (the reference the computed routes match).
    fn table_routes(scale_up: &Topology, net: &ScaleOut, t: &Topology) -> Vec<Vec<Vec<u32>>> {
        let k = scale_up.chips;
        let u = net.ultraservers;
        let shape = net.shape(k).unwrap();
        let chips = k * u;
        let us_switches = scale_up.nodes.len() - k;
        let us_edges = scale_up.edges.len();
        let leaf0 = chips + u * us_switches;
        let spine0 = leaf0 + shape.leaves;
        let spines = if shape.leaves > 1 { net.spines as usize } else { 0 };
        let leaf_of = |chip: usize| match net.placement {
            Placement::Contiguous => chip / net.chips_per_leaf as usize,
            Placement::Rail => (chip % k) / (net.chips_per_leaf as usize / u),
        };
        let nic0 = u * us_edges;
        let up0 = nic0 + 2 * chips;
        let mut table = Vec::new();
        for d in 0..chips {
            let (ud, jd) = (d / k, d % k);
            let leaf_d = leaf_of(d);
            let mut rows = vec![Vec::new(); t.nodes.len()];
            for (n, row) in rows.iter_mut().enumerate() {
                if n < chips {
                    if n == d {
                    } else if n / k == ud {
                        row.extend(scale_up.next_edges(n % k, jd).map(|e| (ud * us_edges) as u32 + e));
                    } else {
                        row.push((nic0 + 2 * n) as u32);
                    }
                } else if n < leaf0 {
                    let (c, local) = ((n - chips) / us_switches, k + (n - chips) % us_switches);
                    if c == ud {
                        row.extend(scale_up.next_edges(local, jd).map(|e| (ud * us_edges) as u32 + e));
                    }
                } else if n < spine0 {
                    let l = n - leaf0;
                    if l == leaf_d {
                        row.push((nic0 + 2 * d + 1) as u32);
                    } else {
                        row.extend((0..spines).map(|s| (up0 + 2 * (l * spines + s)) as u32));
                    }
                } else {
                    let s = n - spine0;
                    row.push((up0 + 2 * (leaf_d * spines + s) + 1) as u32);
                }
            }
            table.push(rows);
        }
        table
    }

    #[test]
    fn computed_routes_equal_the_stored_table_on_every_node_and_destination() {
        let su = scale_up();
        for (u, cpl, spines, placement) in [
            (4, 8, 2, Placement::Contiguous),
            (4, 8, 2, Placement::Rail),
            (3, 6, 3, Placement::Contiguous),
            (1, 8, 0, Placement::Rail),
        ] {
            let n = net(u, cpl, spines, placement);
            let t = build("c", &su, &n).unwrap();
            let table = table_routes(&su, &n, &t);
            let mut across = 0;
            for (d, rows) in table.iter().enumerate() {
                for (node, row) in rows.iter().enumerate() {
                    let got: Vec<u32> = t.next_edges(node, d).collect();
                    assert_eq!(&got, row, "{placement:?} {u} x 8, {cpl} per leaf: node {node} -> chip{d}");
                    across += usize::from(row.len() > 1 && node >= t.chips);
                }
            }
            // Every layout edge is where the table says (the walk above did not drift).
            for (d, rows) in table.iter().enumerate() {
                for (node, row) in rows.iter().enumerate() {
                    assert!(row.iter().all(|&e| t.edges[e as usize].from == node), "edge of node {node} -> {d}");
                }
            }
            assert!(u == 1 || across > 0, "{placement:?}: some switch has several candidates");
        }
    }

    #[test]
    fn rail_placement_puts_equal_local_indices_on_one_leaf() {
        let t = build("c", &scale_up(), &net(4, 8, 2, Placement::Rail)).unwrap();
        // 2 local indices per leaf: chips j and j + 8 u share a leaf.
        for j in 0..8 {
            for u in 1..4 {
                assert_eq!(t.hops(j, u * 8 + j), 2, "chip{j} -> chip{}", u * 8 + j);
            }
        }
        assert_eq!(t.hops(0, 8 + 2), 4, "other rail: through a spine");
    }

    #[test]
    fn switches_too_small_for_their_tier_are_refused_naming_the_field() {
        let su = scale_up();
        let mut n = net(4, 8, 2, Placement::Contiguous);
        n.chips_per_leaf = 17;
        assert_eq!(n.shape(8).unwrap_err().0, "radix");
        n.chips_per_leaf = 15;
        n.spines = 2;
        assert_eq!(n.shape(8).unwrap_err().0, "spines", "1 port left for 2 spines");
        let mut n = net(4, 6, 2, Placement::Rail);
        assert_eq!(n.shape(8).unwrap_err().0, "chips_per_leaf");
        n.placement = Placement::Contiguous;
        n.spines = 0;
        assert_eq!(n.shape(8).unwrap_err().0, "spines");
        // 40 leaves of one chip cannot all reach a 16-port spine.
        let n = net(5, 1, 1, Placement::Contiguous);
        assert!(build("c", &su, &n).unwrap_err().starts_with("spines: each spine needs 40 leaves"));
        let n = net(1, 8, 1, Placement::Contiguous);
        assert_eq!(n.shape(8).unwrap_err().0, "spines", "one leaf, no spines");
    }

    #[test]
    fn packets_conserve_bytes_and_cross_the_nic_at_its_rate() {
        let t = build("c", &scale_up(), &net(2, 8, 2, Placement::Contiguous)).unwrap();
        let mut network = Network::new(t.clone());
        network.send(0, 3, 11, 1 << 20, 0);
        while network.next_time().is_some() {
            network.step();
        }
        let m = &network.msgs[0];
        assert_eq!(m.delivered_bytes, 1 << 20);
        let (nic, pkt) = (&t.edges[t.next_edges(3, 11).first().unwrap() as usize], t.packet_bytes);
        let floor = 256 * nic.serialization_ps(pkt) + 10_000_000;
        let done = m.done_ps.unwrap();
        assert!(done >= floor && done < floor + 5_000_000, "{done} vs {floor}");
    }

    #[test]
    fn hierarchical_all_reduce_beats_the_flat_ring_across_ultraservers() {
        let t = build("c", &scale_up(), &net(4, 8, 2, Placement::Rail)).unwrap();
        let p = Params::default();
        let size = 16 << 20;
        let hier = collective::run(&t, "all_reduce:hierarchical".parse::<Collective>().unwrap(), size, &p).unwrap();
        let ring = collective::run(&t, "all_reduce:ring".parse::<Collective>().unwrap(), size, &p).unwrap();
        assert!(hier.row.time_us < ring.row.time_us, "{:?} vs {:?}", hier.row, ring.row);
        // Bytes on the NIC edges: the hierarchical algorithm sends size / k per chip 2(m-1)
        // times across; the ring crosses UltraServers at 4 of 32 hops.
        let nic_bytes = |r: &collective::RunResult| -> u64 {
            t.edges
                .iter()
                .enumerate()
                .filter(|(_, e)| e.from < t.chips && t.nodes[e.to].name.starts_with("efa."))
                .map(|(i, _)| r.edge_stats[i].bytes)
                .sum()
        };
        let want = 32 * 2 * 3 * (size / 8).div_ceil(4);
        assert_eq!(nic_bytes(&hier), want);
        assert!(nic_bytes(&ring) > 0);
    }

    #[test]
    fn the_flow_level_network_keeps_all_reduces_within_five_percent_of_the_packet_level_one() {
        let t = build("c", &scale_up(), &net(4, 8, 2, Placement::Rail)).unwrap();
        let p = Params::default();
        for algo in ["all_reduce:ring", "all_reduce:hierarchical", "all_reduce:pipelined", "all_to_all"] {
            for size in [1u64 << 20, 16 << 20] {
                let c = algo.parse::<Collective>().unwrap();
                let packet = collective::run(&t, c, size, &p).unwrap().row.time_us;
                let flow = collective::run_flow(&t, c, size, &p).unwrap().time_us;
                let d = flow / packet - 1.0;
                // All-reduces within 5 %; the all-to-all's known gap (the packet-level sources
                // queue every message at once in destination order: collective::flow) held
                // at its measured -17 to -22 % so that drift shows.
                let ok = if algo == "all_to_all" { (-0.25..0.0).contains(&d) } else { d.abs() < 0.05 };
                assert!(ok, "{algo} {size}: flow {flow:.1} us, packet {packet:.1} us ({:+.1} %)", d * 100.0);
            }
        }
    }

    #[test]
    fn halving_doubling_across_ultraservers_keeps_the_packet_networks_time_by_flows() {
        let p = Params::default();
        let c = "all_reduce:hierarchical_rhd".parse::<Collective>().unwrap();
        // 4 UltraServers (a power of two) and 6 (two pairs fold before and unfold after).
        for (u, spines, placement) in [(4, 2, Placement::Rail), (6, 4, Placement::Contiguous)] {
            let t = build("c", &scale_up(), &net(u, 8, spines, placement)).unwrap();
            for size in [1u64 << 20, 16 << 20] {
                let packet = collective::run(&t, c, size, &p).unwrap();
                assert_eq!(packet.algo, collective::Algo::HierarchicalRhd);
                let flow = collective::run_flow(&t, c, size, &p).unwrap();
                let d = flow.time_us / packet.row.time_us - 1.0;
                // Within 5 %, but for folded pairs at 16 MiB: the others' first halving
                // messages reach an odd server of a pair while its partner's whole piece is
                // still arriving; flows serve the older step first, packets interleave. The
                // gap (-17.0 %) is held so that drift shows (docs/validation.md).
                let ok = if u == 6 && size > 1 << 20 { (-0.20..-0.14).contains(&d) } else { d.abs() < 0.05 };
                assert!(ok, "{u} x {size}: flow {flow:?}, packet {:?} ({:+.1} %)", packet.row, d * 100.0);
                assert_eq!(collective::run_flow(&t, c, size, &p).unwrap(), flow, "flow runs repeat exactly");
            }
        }
    }

    #[test]
    fn halving_doubling_across_beats_the_ring_across_many_ultraservers() {
        // 16 UltraServers: 30 steps across by the ring, 8 by halving-doubling, each paying
        // the NICs' 10 us.
        let t = build("c", &scale_up(), &net(16, 8, 8, Placement::Contiguous)).unwrap();
        let p = Params::default();
        let run = |a: &str| collective::run_flow(&t, a.parse::<Collective>().unwrap(), 1 << 20, &p).unwrap();
        let (ring, rhd) = (run("all_reduce:hierarchical"), run("all_reduce:hierarchical_rhd"));
        assert!(2.0 * rhd.time_us < ring.time_us, "{rhd:?} against {ring:?}");
    }
}
