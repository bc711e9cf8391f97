//! Topology building, routing, located RON errors, and the packet network's conservation and
//! unloaded latency.

use crate::link::{effective_payload_bytes_per_s, encoding, BondedLink};
use crate::topo::{self, spec, NodeKind, Topology};

fn preset(name: &str) -> Topology {
    let path = topo::presets_dir().join(format!("{name}.ron"));
    topo::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn torus(dims: &str, links: &str) -> Topology {
    let text = format!(
        "TopologySpec(name: \"t\", kind: torus(dims: {dims}, link: (encoding: \"pcie-gen6\", lanes: 8), \
         links_per_neighbor: {links}))"
    );
    topo::parse("t.ron", &text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn presets_load_with_documented_chip_counts() {
    let want =
        [("trn2-server-4x4", 16), ("trn2-ultraserver-4x4x4", 64), ("trn3-gen1-nl32x2", 64), ("trn3-gen2-nl72x2", 144)];
    for (name, chips) in want {
        let t = preset(name);
        assert_eq!(t.chips, chips, "{name}");
        assert_eq!(t.name, name);
    }
    // Trn2 server: 16 chips x 4 neighbours directed edges, 4 links each.
    let t = preset("trn2-server-4x4");
    assert_eq!(t.edges.len(), 64);
    assert!(t.edges.iter().all(|e| e.servers == 4));
}

#[test]
fn link_bandwidth_is_the_link_layers_analytic_rate_and_latency_adds_phy_wire_link_layer() {
    let t = preset("trn3-gen1-nl32x2");
    let g6 = BondedLink::new(&encoding::PCIE_GEN6, 8).unwrap();
    let want = effective_payload_bytes_per_s(&g6, 4096);
    for e in &t.edges {
        assert_eq!(e.bytes_per_s, want);
        let from_switch = t.nodes[e.from].kind == NodeKind::Switch;
        let lat = 55_000
            + if from_switch {
                if t.nodes[e.from].name.starts_with("intra") {
                    120_000
                } else {
                    240_000
                }
            } else {
                0
            };
        assert_eq!(e.latency_ps, lat, "{} -> {}", t.nodes[e.from].name, t.nodes[e.to].name);
    }
    // Gen6 x8 with 4 KiB TLPs: 64 GB/s x 236/256 x 4096/4112 = 58.8 GB/s per direction.
    assert!((want / 1e9 - 58.77).abs() < 0.01, "{want}");
}

#[test]
fn torus_4x4_hops_max_4_and_mean_matches_formula() {
    let t = preset("trn2-server-4x4");
    let (mut max, mut sum) = (0, 0);
    for s in 0..16 {
        for d in 0..16 {
            let h = t.hops(s, d);
            max = max.max(h);
            sum += h;
        }
    }
    assert_eq!(max, 4);
    // Per dimension a 4-ring's distances from a node sum to 0+1+2+1 = 4, over 4 positions of
    // the other coordinate: 2 dims x 4 x 4 = 32 per source, over 15 destinations.
    let mean = sum as f64 / (16.0 * 15.0);
    assert!((mean - 32.0 / 15.0).abs() < 1e-12, "{mean}");
    let t3 = preset("trn2-ultraserver-4x4x4");
    let max3 = (0..64).flat_map(|s| (0..64).map(move |d| (s, d))).map(|(s, d)| t3.hops(s, d)).max();
    assert_eq!(max3, Some(6));
}

#[test]
fn dimension_order_routes_x_before_y_and_takes_the_plus_way_on_ties() {
    let t = torus("[4, 4]", "[1, 1]");
    // chip 0 = (0,0) to chip 10 = (2,2): +x, +x, +y, +y.
    let mut path = vec![0];
    let mut n = 0;
    while n != 10 {
        n = t.edges[t.next_edges(n, 10).first().unwrap() as usize].to;
        path.push(n);
    }
    assert_eq!(path, vec![0, 1, 2, 6, 10]);
    assert_eq!(t.next_edges(3, 0).len(), 1);
    assert_eq!(t.edges[t.next_edges(3, 0).first().unwrap() as usize].to, 0, "(3,0) -> (0,0) wraps round");
}

#[test]
fn snake_ring_neighbours_are_one_hop_apart() {
    for name in ["trn2-server-4x4", "trn2-ultraserver-4x4x4"] {
        let t = preset(name);
        let r = &t.ring;
        let mut seen = r.clone();
        seen.sort();
        assert_eq!(seen, (0..t.chips).collect::<Vec<_>>(), "{name}: a permutation");
        for p in 0..r.len() {
            assert_eq!(t.hops(r[p], r[(p + 1) % r.len()]), 1, "{name}: ring position {p}");
        }
    }
}

#[test]
fn switched_routes_are_chip_switch_chip_or_direct_to_the_peer() {
    for name in ["trn3-gen1-nl32x2", "trn3-gen2-nl72x2"] {
        let t = preset(name);
        let n = t.chips;
        for s in 0..n {
            for d in (0..n).filter(|&d| d != s) {
                let want = if d == (s + n / 2) % n { 1 } else { 2 };
                assert_eq!(t.hops(s, d), want, "{name}: chip{s} -> chip{d}");
                for e in t.next_edges(s, d) {
                    let mid = t.edges[e as usize].to;
                    assert!(mid == d || t.nodes[mid].kind == NodeKind::Switch);
                }
            }
        }
    }
    // Gen1, chips 0 and 1 share a server: 4 intra switches + 5 inter planes are candidates.
    assert_eq!(preset("trn3-gen1-nl32x2").next_edges(0, 1).len(), 9);
    // Chips 0 and 16 do not: only the 5 inter planes.
    assert_eq!(preset("trn3-gen1-nl32x2").next_edges(0, 16).len(), 5);
}

fn located(text: &str) -> spec::TopoError {
    spec::parse("x.ron", text).expect_err("must fail")
}

#[test]
fn ron_errors_name_file_line_column_and_field() {
    let base = "TopologySpec(\n  name: \"t\",\n  kind: torus(\n    dims: [4, 4],\n    link: (encoding: \"pcie-gen6\", lanes: 8),\n    links_per_neighbor: [1, 1],\n  ),\n)";
    assert!(spec::parse("x.ron", base).is_ok());
    // Unknown key (serde, located by ron).
    let e = located(&base.replace("    dims: [4, 4],", "    dims: [4, 4],\n    dimz: 3,"));
    assert_eq!((e.file.as_str(), e.line), ("x.ron", 5), "{e}");
    assert!(e.message.contains("dimz"), "{e}");
    // Unknown encoding (validation, located at its key).
    let e = located(&base.replace("pcie-gen6", "pcie-gen9"));
    assert_eq!((e.line, e.col, e.field.as_str()), (5, 12, "kind.link.encoding"), "{e}");
    assert!(e.message.contains("pcie-gen5, pcie-gen6, ualink-200g"), "{e}");
    // Width the encoding lacks.
    let e = located(&base.replace("lanes: 8", "lanes: 3"));
    assert_eq!((e.line, e.field.as_str()), (5, "kind.link.lanes"), "{e}");
    // Mismatched per-dimension list.
    let e = located(&base.replace("[1, 1]", "[1]"));
    assert_eq!((e.line, e.col, e.field.as_str()), (6, 5, "kind.links_per_neighbor"), "{e}");
    // A bad duration.
    let e = located(&base.replace("  name: \"t\",", "  name: \"t\",\n  phy: \"40 parsecs\","));
    assert_eq!((e.line, e.field.as_str()), (3, "phy"), "{e}");
    assert!(e.to_string().starts_with("x.ron:3:3: phy: "), "{e}");
    // Syntax error: the field is the nearest key before it.
    let e = located(&base.replace("dims: [4, 4]", "dims: [4, 4"));
    assert_eq!(e.field, "dims", "{e}");
}

#[test]
fn switched_tiers_that_do_not_connect_servers_are_rejected() {
    let text = "TopologySpec(name: \"s\", kind: switched(chips: 8, chips_per_server: 4, \
                link: (encoding: \"pcie-gen6\", lanes: 8), tiers: [(name: \"intra\", scope: server, switches: 1, \
                links_per_chip_per_switch: 1, switch_latency: \"120ns\")]))";
    let e = topo::parse("s.ron", text).expect_err("servers are islands");
    assert!(e.contains("cannot reach"), "{e}");
}

#[test]
fn unloaded_packet_takes_serialization_plus_latency_per_hop() {
    let t = torus("[4, 4]", "[1, 1]");
    let e0 = t.edges[0].clone();
    let mut net = topo::Network::new(t);
    net.send(0, 0, 2, 4096, 0);
    while net.next_time().is_some() {
        net.step();
    }
    let done = net.msgs[0].done_ps.unwrap();
    // Two hops, store-and-forward.
    assert_eq!(done, 2 * (e0.serialization_ps(4096) + e0.latency_ps));
}

#[test]
fn network_delivers_every_byte_once_and_links_carry_bytes_times_hops() {
    let t = torus("[4, 4]", "[2, 2]");
    let mut net = topo::Network::new(t.clone());
    let mut want_link_bytes = 0;
    for s in 0..16 {
        for k in 1..5 {
            let d = (s * 7 + k * 3) % 16;
            let bytes = 1000 + 4096 * (k as u64) + s as u64;
            net.send(s as u64 * 10, s, d, bytes, 0);
            want_link_bytes += bytes * t.hops(s, d) as u64;
        }
    }
    while net.next_time().is_some() {
        net.step();
    }
    for m in &net.msgs {
        assert_eq!(m.delivered_bytes, m.bytes);
        assert_eq!(m.left, 0);
        assert!(m.done_ps.is_some());
    }
    assert_eq!(net.edge_stats.iter().map(|s| s.bytes).sum::<u64>(), want_link_bytes);
}

fn fat_tree(radix: u32, levels: u32) -> Topology {
    let text = format!(
        "TopologySpec(name: \"ft\", kind: fat_tree(radix: {radix}, levels: {levels}, \
         link: (encoding: \"pcie-gen6\", lanes: 8)))"
    );
    topo::parse("ft.ron", &text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn fat_tree_has_k_pow_n_chips_and_hops_twice_the_common_ancestor_level() {
    for (radix, levels) in [(4, 1), (4, 3), (8, 2), (6, 3)] {
        let t = fat_tree(radix, levels);
        let k = (radix / 2) as usize;
        let n = levels as usize;
        assert_eq!(t.chips, k.pow(levels));
        assert_eq!(t.nodes.len() - t.chips, n * k.pow(levels - 1), "switches");
        // Every switch uses k down ports and (below the top) k up ports: radix ports at most.
        for s in t.chips..t.nodes.len() {
            assert!(t.out[s].len() <= radix as usize, "{}", t.nodes[s].name);
        }
        let mut max = 0;
        for s in 0..t.chips {
            for d in (0..t.chips).filter(|&d| d != s) {
                // The common ancestor is at the level of the highest base-k digit that differs.
                let top = (0..n).rev().find(|&i| s / k.pow(i as u32) % k != d / k.pow(i as u32) % k).unwrap();
                assert_eq!(t.hops(s, d), 2 * (top + 1), "radix {radix} levels {levels}: {s} -> {d}");
                assert_eq!(t.next_edges(s, d).len(), 1, "deterministic");
                max = max.max(t.hops(s, d));
            }
        }
        assert_eq!(max, 2 * n);
    }
}

#[test]
fn fat_tree_up_port_is_the_destinations_digit() {
    // radix 8 (k = 4), 2 levels: 16 chips, leaves ft.l0.0..3, tops ft.l1.0..3.
    let t = fat_tree(8, 2);
    for d in [8, 9, 14] {
        let leaf = t.edges[t.next_edges(1, d).first().unwrap() as usize].to;
        let top = t.edges[t.next_edges(leaf, d).first().unwrap() as usize].to;
        assert_eq!(t.nodes[top].name, format!("ft.l1.{}", d % 4), "chip1 -> chip{d}");
    }
}

#[test]
fn fat_tree_shift_permutation_across_pods_reaches_line_rate() {
    for (radix, levels) in [(8, 2), (4, 3)] {
        let t = fat_tree(radix, levels);
        let n = t.chips;
        let bw = t.edges[0].bytes_per_s;
        let lat = t.edges.iter().map(|e| e.latency_ps).max().unwrap();
        let mut net = topo::Network::new(t.clone());
        let bytes = 4 << 20;
        // Partner in the other half: a different top-level subtree (pod).
        for c in 0..n {
            net.send(0, c, (c + n / 2) % n, bytes, 0);
        }
        while net.next_time().is_some() {
            net.step();
        }
        let done = net.msgs.iter().map(|m| m.done_ps.unwrap()).max().unwrap();
        let line = bytes as f64 / bw * 1e12;
        // Store-and-forward adds one packet serialization plus latency per extra hop.
        let hops = 2.0 * f64::from(levels);
        let ideal = line + (hops - 1.0) * (4096.0 / bw * 1e12) + hops * lat as f64;
        assert!(done as f64 <= ideal * 1.001, "radix {radix} levels {levels}: {done} vs {ideal}");
        assert!(line / done as f64 > 0.97, "{}", line / done as f64);
        // Each chip's up link carried its message; no link carried two (contention-free).
        let busiest = net.edge_stats.iter().map(|s| s.bytes).max().unwrap();
        assert_eq!(busiest, bytes);
    }
}

#[test]
fn fat_tree_radix_must_be_even_and_at_least_4() {
    let text =
        "TopologySpec(name: \"ft\",\n kind: fat_tree(radix: 5, levels: 2, link: (encoding: \"pcie-gen6\", lanes: 8)))";
    let e = located(text);
    assert_eq!((e.line, e.field.as_str()), (2, "kind.radix"), "{e}");
    let e = located(&text.replace("radix: 5, levels: 2", "radix: 64, levels: 4"));
    assert_eq!(e.field, "kind.levels", "{e}");
}

#[test]
fn fat_tree_preset_has_100_chips_on_20_switches() {
    let t = preset("fat-tree-pcie6-r20-l2");
    assert_eq!((t.chips, t.nodes.len() - t.chips), (100, 20));
    assert_eq!(t.hops(0, 99), 4);
    assert_eq!(t.hops(0, 9), 2);
}
