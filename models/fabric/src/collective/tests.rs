//! Collectives against first principles: the ring all-reduce's analytic time and bus bandwidth,
//! injection-bound all-to-all, conservation, and determinism.

use crate::collective::{auto_algo, format_table, pipelined, run, run_table, Algo, Collective, Op, Params};
use crate::topo::{self, Topology};

fn preset(name: &str) -> Topology {
    topo::load(&topo::presets_dir().join(format!("{name}.ron"))).unwrap_or_else(|e| panic!("{e}"))
}

fn coll(s: &str) -> Collective {
    s.parse().unwrap()
}

const MIB: u64 = 1 << 20;

#[test]
fn ring_all_reduce_on_16_chips_matches_the_analytic_model_and_reaches_link_bandwidth() {
    let t = preset("trn2-server-4x4");
    let (n, b) = (16.0, 64 * MIB);
    let r = run(&t, coll("all_reduce:ring"), b, &Params::default()).unwrap();
    // Each ring hop uses one direction of a 4-link neighbour bundle.
    let e = &t.edges[0];
    let bw = e.bytes_per_s * f64::from(e.servers);
    let steps = 2.0 * (n - 1.0);
    let analytic = steps / n * b as f64 / bw + steps * 1.5e-6;
    let sim = r.finish_ps as f64 * 1e-12;
    // Uncontended: the model misses only one link latency (55 ns) per step (+0.16 %).
    assert!((sim / analytic - 1.0).abs() < 0.01, "sim {sim} vs analytic {analytic}");
    let per_step_extra = (sim - analytic) / steps;
    assert!((per_step_extra - 55e-9).abs() < 2e-9, "{per_step_extra}");
    // busbw within 10 % of the link: the 30 x 1.5 us of step overhead cost ~4.3 % at 64 MiB.
    assert!(r.row.busbw_gbps * 1e9 > 0.9 * bw && r.row.busbw_gbps * 1e9 < bw, "{:?} vs {bw}", r.row);
}

#[test]
fn every_collective_delivers_every_byte_once() {
    let t = preset("trn2-server-4x4");
    for c in [
        "all_reduce:ring",
        "all_gather",
        "reduce_scatter",
        "all_to_all",
        "all_reduce:halving_doubling",
        "all_reduce:direct",
    ] {
        let size = 3 * MIB + 1234;
        let r = run(&t, coll(c), size, &Params::default()).unwrap();
        let sent: u64 = r.msgs.iter().map(|m| m.bytes).sum();
        let got: u64 = r.msgs.iter().map(|m| m.delivered_bytes).sum();
        assert_eq!(sent, got, "{c}");
        assert!(r.msgs.iter().all(|m| m.left == 0 && m.done_ps.is_some()), "{c}");
        // Per chip, the algorithm sends what nccl's bus factor assumes (chunks rounded up).
        let per_chip = sent as f64 / 16.0 / size as f64;
        let op = coll(c).op;
        assert!((per_chip - op.busbw_factor(16)).abs() < 1e-3, "{c}: {per_chip}");
        // Links carry each message once per hop.
        let hop_bytes: u64 = r.msgs.iter().map(|m| m.bytes * t.hops(m.src, m.dst) as u64).sum();
        assert_eq!(r.edge_stats.iter().map(|s| s.bytes).sum::<u64>(), hop_bytes, "{c}");
    }
}

#[test]
fn all_to_all_on_a_full_mesh_runs_at_each_chips_injection_bandwidth() {
    let text = "TopologySpec(name: \"m\", kind: full_mesh(chips: 8, link: (encoding: \"pcie-gen6\", lanes: 8), \
                links_per_pair: 1))";
    let t = topo::parse("m.ron", text).unwrap();
    let r = run(&t, coll("all_to_all"), 64 * MIB, &Params::default()).unwrap();
    let inj = t.injection_bytes_per_s(0);
    // busbw = (n-1)/n x size / time = bytes each chip injects / time; loses 1.5 us + 55 ns.
    let bus = r.row.busbw_gbps * 1e9;
    assert!(bus < inj && bus > 0.98 * inj, "{bus} vs {inj}");
}

#[test]
fn all_to_all_on_nl32x2_is_bounded_by_injection_bandwidth() {
    let t = preset("trn3-gen1-nl32x2");
    let r = run(&t, coll("all_to_all"), 32 * MIB, &Params::default()).unwrap();
    let inj = t.injection_bytes_per_s(0); // 11 x8 links = 647 GB/s
    let bus = r.row.busbw_gbps * 1e9;
    // Traffic to the 48 chips of other servers can only use the 5 inter-server links; with
    // the 15 same-server chips on 4 intra + 5 inter links and the peer on 2 direct links,
    // the best split reaches 63 / (47 / 5 links) x 58.8 GB/s = 394 GB/s. The greedy
    // first-free-link choice is not that split (same-server packets also take inter-server
    // links) and 63 senders converge on each receiver's switch-to-chip links: ~292 GB/s.
    let bound = 63.0 / 47.0 * 5.0 * t.edges[0].bytes_per_s;
    assert!(bus < inj && bus <= bound * 1.001, "{bus} vs {inj} / {bound}");
    assert!(bus > 0.7 * bound, "{bus} vs {bound}");
}

#[test]
fn runs_are_deterministic() {
    let t = preset("trn3-gen1-nl32x2");
    let a = run(&t, coll("all_to_all"), 4 * MIB, &Params::default()).unwrap();
    let b = run(&t, coll("all_to_all"), 4 * MIB, &Params::default()).unwrap();
    assert_eq!(a.finish_ps, b.finish_ps);
    assert_eq!(a.edge_stats, b.edge_stats);
    let da: Vec<_> = a.msgs.iter().map(|m| m.done_ps).collect();
    let db: Vec<_> = b.msgs.iter().map(|m| m.done_ps).collect();
    assert_eq!(da, db);
    assert_eq!(a.report.to_table(), b.report.to_table());
}

#[test]
fn small_all_reduce_is_step_overhead_bound_and_busbw_grows_with_size() {
    let sizes = [64 * 1024, MIB, 16 * MIB];
    let rows = run_table("trn2-server-4x4", "all_reduce", &sizes, &Params::default()).unwrap();
    eprintln!("trn2-server-4x4 all_reduce ring\n{}", format_table(&rows));
    // 30 steps x (1.5 us + one 4 KiB packet on one x8 link, 131 ns, + 55 ns): a one-packet
    // chunk cannot spread over the 4 parallel links.
    let e = &crate::topo::load(&topo::presets_dir().join("trn2-server-4x4.ron")).unwrap().edges[0];
    let want = 30.0 * (1.5e-6 + (e.serialization_ps(4096) + e.latency_ps) as f64 * 1e-12) * 1e6;
    assert!((rows[0].time_us - want).abs() < 1e-6, "{:?} vs {want}", rows[0]);
    assert!(rows.windows(2).all(|w| w[1].busbw_gbps > w[0].busbw_gbps));
}

#[test]
fn tables_for_the_report() {
    let sizes = [MIB, 16 * MIB, 64 * MIB];
    for (topo, c) in [("trn3-gen1-nl32x2", "all_reduce:ring"), ("trn3-gen1-nl32x2", "all_reduce:halving_doubling")] {
        let rows = run_table(topo, c, &sizes, &Params::default()).unwrap();
        eprintln!("{topo} {c}\n{}", format_table(&rows));
        assert!(rows.iter().all(|r| r.busbw_gbps > 0.0));
    }
}

#[test]
fn unknown_collectives_and_algorithms_are_named() {
    assert!("all_sum".parse::<Collective>().unwrap_err().contains("all_reduce, all_gather"));
    assert!("all_reduce:butterfly".parse::<Collective>().unwrap_err().contains("ring, direct"));
    let t0 = preset("trn2-server-4x4");
    let e = run(&t0, coll("all_reduce:tree"), MIB, &Params::default()).err().unwrap();
    assert!(e.contains("does not implement all_reduce"), "{e}");
    let t = preset("trn2-server-4x4");
    let e = run(&t, coll("all_gather:halving_doubling"), MIB, &Params::default()).err().unwrap();
    assert!(e.contains("does not implement all_gather"), "{e}");
    assert_eq!(Op::AllReduce.busbw_factor(16), 30.0 / 16.0);
}

#[test]
fn broadcast_and_auto_tables_for_the_report() {
    let sizes = [64 * 1024, MIB, 16 * MIB];
    for c in [
        "broadcast:ring",
        "broadcast:tree",
        "broadcast:auto",
        "all_reduce:ring",
        "all_reduce:direct",
        "all_reduce:halving_doubling",
        "all_reduce:auto",
    ] {
        let rows = run_table("trn3-gen1-nl32x2", c, &sizes, &Params::default()).unwrap();
        eprintln!("trn3-gen1-nl32x2 {c}\n{}", format_table(&rows));
        assert!(rows.iter().all(|r| r.busbw_gbps > 0.0));
    }
}

#[test]
fn broadcast_delivers_every_byte_once_to_every_chip() {
    let mesh = "TopologySpec(name: \"m\", kind: full_mesh(chips: 6, link: (encoding: \"pcie-gen6\", lanes: 8), \
                links_per_pair: 1))";
    let topos = [preset("trn3-gen1-nl32x2"), preset("trn2-server-4x4"), topo::parse("m.ron", mesh).unwrap()];
    for t in &topos {
        for c in ["broadcast:ring", "broadcast:tree"] {
            let size = 3 * MIB + 1234;
            let r = run(t, coll(c), size, &Params::default()).unwrap();
            assert!(r.msgs.iter().all(|m| m.left == 0 && m.delivered_bytes == m.bytes), "{c}");
            let mut got = vec![0; t.chips];
            for m in &r.msgs {
                got[m.dst] += m.delivered_bytes;
            }
            let want: Vec<u64> = (0..t.chips).map(|c| if c == 0 { 0 } else { size }).collect();
            assert_eq!(got, want, "{} {c}", t.name);
            assert_eq!(r.row.busbw_gbps, r.row.algbw_gbps);
        }
    }
}

#[test]
fn chain_broadcast_is_one_pipeline_of_chunks_plus_chips() {
    let t = preset("trn2-server-4x4");
    let size = 16 * MIB;
    let r = run(&t, coll("broadcast:ring"), size, &Params::default()).unwrap();
    let chunks = crate::collective::schedule::chain_chunks(16, size);
    assert_eq!(chunks, 30, "round(sqrt(14 x 64))");
    // The first chunk crosses 15 hops, each the overhead + its serialization over the 4-link
    // bundle + latency; the other 29 follow at the slower of the overhead and serialization
    // (a chip's sends do not hold up its next step).
    let e = &t.edges[0];
    let x = size as f64 / chunks as f64 / (e.bytes_per_s * f64::from(e.servers));
    let want = 15.0 * (1.5e-6 + x + e.latency_ps as f64 * 1e-12) + (chunks - 1) as f64 * x.max(1.5e-6);
    let sim = r.finish_ps as f64 * 1e-12;
    assert!((sim / want - 1.0).abs() < 0.03, "{sim} vs {want}");
}

#[test]
fn auto_all_reduce_follows_the_spec_thresholds() {
    assert_eq!(auto_algo(Op::AllReduce, 64, 999_999), Algo::Direct);
    assert_eq!(auto_algo(Op::AllReduce, 64, 1_000_000), Algo::HalvingDoubling);
    assert_eq!(auto_algo(Op::AllReduce, 64, 56_000_000), Algo::HalvingDoubling);
    assert_eq!(auto_algo(Op::AllReduce, 64, 56_000_001), Algo::Ring);
    assert_eq!(auto_algo(Op::AllReduce, 48, 4_000_000), Algo::Ring, "RDH needs a power of two");
    assert_eq!(auto_algo(Op::Broadcast, 64, MIB), Algo::Tree);
    assert_eq!(auto_algo(Op::Broadcast, 64, 16 * MIB), Algo::Ring);
    let c = "all_gather:auto".parse::<Collective>().unwrap();
    assert_eq!(c.resolve(64, MIB).algo, Algo::Ring, "auto is the default algorithm where no policy is documented");
}

fn time_us(t: &Topology, c: &str, size: u64) -> (f64, Algo) {
    let r = run(t, coll(c), size, &Params::default()).unwrap();
    (r.row.time_us, r.algo)
}

#[test]
fn auto_all_reduce_on_nl32x2_picks_the_faster_algorithm_small_and_large() {
    let t = preset("trn3-gen1-nl32x2");
    // 64 KiB: direct (Mesh) in 2 steps beats 126 ring steps and 12 RDH steps.
    let (auto, algo) = time_us(&t, "all_reduce:auto", 64 * 1024);
    assert_eq!(algo, Algo::Direct);
    assert!(auto < time_us(&t, "all_reduce:halving_doubling", 64 * 1024).0 / 3.0);
    assert!(auto < time_us(&t, "all_reduce:ring", 64 * 1024).0 / 10.0);
    // 64 MiB over 4 servers: pipelined. Of the others, ring beats RDH, whose first exchange
    // (with chip c + 32) has only the 2 direct links, and direct is faster still on this
    // switched fabric (431 vs 501 us): the spec's thresholds are the Trn2 torus's.
    let (auto, algo) = time_us(&t, "all_reduce:auto", 64 * MIB);
    assert_eq!(algo, Algo::Pipelined);
    let ring = time_us(&t, "all_reduce:ring", 64 * MIB).0;
    assert!(ring < 0.8 * time_us(&t, "all_reduce:halving_doubling", 64 * MIB).0);
    assert!(auto < 0.6 * ring, "{auto} vs ring {ring}");
    assert!(auto < 0.6 * time_us(&t, "all_reduce:direct", 64 * MIB).0);
}

#[test]
fn auto_all_reduce_across_servers_is_pipelined_from_one_megabyte() {
    use crate::collective::auto_algo_in;
    // 144 chips, 36 servers of 4: direct below 1 MB, pipelined from there.
    assert_eq!(auto_algo_in(Op::AllReduce, 144, 999_999, Some(4)), Algo::Direct);
    assert_eq!(auto_algo_in(Op::AllReduce, 144, 1_000_000, Some(4)), Algo::Pipelined);
    assert_eq!(auto_algo_in(Op::AllReduce, 144, 1 << 30, Some(4)), Algo::Pipelined);
    // One server, or members not server by server: the spec's policy.
    assert_eq!(auto_algo_in(Op::AllReduce, 16, 4_000_000, Some(16)), Algo::HalvingDoubling);
    assert_eq!(auto_algo_in(Op::AllReduce, 144, 1 << 30, None), Algo::Ring);
    assert_eq!(auto_algo_in(Op::AllReduce, 6, 1 << 30, Some(4)), Algo::Ring, "6 chips do not fill servers of 4");
    // All-gather and reduce-scatter over servers: hierarchical at every size; inside one
    // server, or members not server by server, the ring.
    assert_eq!(auto_algo_in(Op::AllGather, 144, 1 << 30, Some(4)), Algo::Hierarchical);
    assert_eq!(auto_algo_in(Op::ReduceScatter, 144, 64, Some(4)), Algo::Hierarchical);
    assert_eq!(auto_algo_in(Op::AllGather, 16, 1 << 30, Some(16)), Algo::Ring);
    assert_eq!(auto_algo_in(Op::ReduceScatter, 144, 1 << 30, None), Algo::Ring);
    assert_eq!(auto_algo_in(Op::Broadcast, 64, MIB, Some(16)), Algo::Tree);
    // run and run_group pass the servers; a group inside one server keeps the spec's policy.
    let t = small_gen2(16);
    assert_eq!(run(&t, coll("all_reduce:auto"), MIB, &Params::default()).unwrap().algo, Algo::Pipelined);
    let one_server = crate::collective::run_group(&t, coll("all_reduce:auto"), MIB, &[0, 1, 2, 3], &Params::default());
    assert_eq!(one_server.unwrap().algo, Algo::HalvingDoubling);
    let scattered = crate::collective::run_group(&t, coll("all_reduce:auto"), MIB, &[0, 4, 1, 5], &Params::default());
    assert_eq!(scattered.unwrap().algo, Algo::HalvingDoubling);
}

#[test]
fn auto_broadcast_on_nl32x2_picks_the_faster_algorithm_small_and_large() {
    let t = preset("trn3-gen1-nl32x2");
    for (size, want) in [(64 * 1024, Algo::Tree), (16 * MIB, Algo::Ring)] {
        let (auto, algo) = time_us(&t, "broadcast:auto", size);
        assert_eq!(algo, want, "{size}");
        let other = if want == Algo::Tree { "broadcast:ring" } else { "broadcast:tree" };
        assert!(auto < time_us(&t, other, size).0, "{size}");
    }
}

/// A small Gen2-like switched fabric: `chips` chips, 4 to a server, 4 x8 to the server switch,
/// 5 planes, 2 direct x8 between chip c and c + chips / 2.
fn small_gen2(chips: u32) -> Topology {
    let text = format!(
        "TopologySpec(name: \"g\", kind: switched(chips: {chips}, chips_per_server: 4, \
         link: (encoding: \"pcie-gen6\", lanes: 8), tiers: [\
         (name: \"intra\", scope: server, switches: 1, links_per_chip_per_switch: 4, switch_latency: \"120ns\"), \
         (name: \"inter\", scope: all, switches: 5, links_per_chip_per_switch: 1, switch_latency: \"240ns\")], \
         direct_links: 2))"
    );
    topo::parse("g.ron", &text).unwrap()
}

/// Executes `plan` on symbolic data: per lane, chunk, rank and piece, the set of ranks whose
/// input it holds the sum of. A step's messages carry the sender's data as the previous step
/// left it; a reduce must not add a rank twice, a copy must carry a complete sum. Returns the
/// bytes each (step, source, destination) carries, for comparison with the programs.
fn execute_symbolically(plan: &pipelined::Plan) -> std::collections::BTreeMap<(usize, usize, usize), u64> {
    let n = plan.shape.n();
    let words = n.div_ceil(64);
    let idx = |lane: usize, chunk: usize, r: usize, p: usize| ((lane * plan.chunks + chunk) * n + r) * n + p;
    let mut data = vec![0u64; plan.lanes.len() * plan.chunks * n * n * words];
    for lane in 0..plan.lanes.len() {
        for chunk in 0..plan.chunks {
            for r in 0..n {
                for p in 0..n {
                    data[idx(lane, chunk, r, p) * words + r / 64] |= 1 << (r % 64);
                }
            }
        }
    }
    let full: Vec<u64> = (0..words).map(|w| if (w + 1) * 64 <= n { u64::MAX } else { (1 << (n % 64)) - 1 }).collect();
    let mut bytes = std::collections::BTreeMap::new();
    for t in 0..plan.steps() {
        let before = data.clone();
        for (lane, s, chunk) in plan.active(t) {
            let st = plan.stage(lane, s);
            for src in 0..n {
                let me = plan.shape.coords(src)[st.level];
                for x in (0..plan.shape.sizes[st.level]).filter(|&x| x != me) {
                    let dst = plan.shape.peer(src, st.level, x);
                    let pieces = plan.pieces(lane, s, src, dst);
                    assert_eq!(pieces.len(), st.pieces, "step {t} lane {lane} stage {s}");
                    *bytes.entry((t, src, dst)).or_insert(0) += st.pieces as u64 * plan.lanes[lane].piece_bytes;
                    for p in pieces {
                        let (from, to) = (idx(lane, chunk, src, p) * words, idx(lane, chunk, dst, p) * words);
                        for w in 0..words {
                            let v = before[from + w];
                            if st.reduce {
                                assert_eq!(
                                    data[to + w] & v,
                                    0,
                                    "step {t}: rank {src} adds a contribution twice to {dst}"
                                );
                                data[to + w] |= v;
                            } else {
                                assert_eq!(v, full[w], "step {t}: rank {src} copies an incomplete sum to {dst}");
                                data[to + w] = v;
                            }
                        }
                    }
                }
            }
        }
    }
    for (i, chunk) in data.chunks(words).enumerate() {
        assert_eq!(chunk, &full[..], "lane/chunk/rank/piece {i} is not the sum of every rank");
    }
    bytes
}

#[test]
fn pipelined_plan_leaves_every_rank_with_every_piece_summed_once() {
    // (ranks, per server): Gen2's 144 = 36 x 4 (both lanes, three levels), an odd number of
    // servers (no pair level), one server, one chip per server (no server level), two ranks.
    for (n, k) in [(144, 4), (16, 4), (12, 4), (8, 8), (6, 1), (2, 1)] {
        // 9 x CHUNK_BYTES: 3 chunks, so stages of different chunks share steps.
        let size = 9 * pipelined::CHUNK_BYTES + 5;
        let plan = pipelined::Plan::new(n, size, k).unwrap();
        assert_eq!(plan.chunks, 3);
        let want = execute_symbolically(&plan);
        let progs = plan.programs();
        let mut got = std::collections::BTreeMap::new();
        for (src, prog) in progs.iter().enumerate() {
            assert_eq!(prog.len(), plan.steps());
            for (t, step) in prog.iter().enumerate() {
                for &(dst, b) in &step.sends {
                    assert!(got.insert((t, src, dst), b).is_none(), "one message per peer and step");
                }
                let senders = want.keys().filter(|&&(t2, _, d)| t2 == t && d == src).count();
                assert_eq!(step.recvs as usize, senders, "{n}/{k} step {t} rank {src}");
            }
        }
        assert_eq!(got, want, "{n} ranks, {k} per server: the programs carry the plan's pieces");
        // Each rank sends 2 (n - 1) / n of the buffer (pieces rounded up).
        let sent: u64 = want.values().sum();
        let per_rank = sent as f64 / n as f64 / size as f64;
        assert!((per_rank / Op::AllReduce.busbw_factor(n) - 1.0).abs() < 1e-3, "{n}/{k}: {per_rank}");
    }
    let p = pipelined::Plan::new(144, 9 * pipelined::CHUNK_BYTES, 4).unwrap();
    assert_eq!(p.shape.sizes, [4, 2, 18]);
    assert_eq!(p.lanes.iter().map(|l| l.route.clone()).collect::<Vec<_>>(), [[0, 1, 2], [1, 0, 2]]);
    assert!(pipelined::Plan::new(10, MIB, 4).unwrap_err().contains("do not fill servers of 4"));
    assert_eq!(pipelined::chunks(1), 1);
    assert_eq!(pipelined::chunks(u64::MAX), pipelined::MAX_CHUNKS);
}

#[test]
fn pipelined_all_reduce_delivers_every_byte_once_and_uses_the_direct_links() {
    let t = small_gen2(16);
    let size = 3 * MIB + 1234;
    let r = run(&t, coll("all_reduce:pipelined"), size, &Params::default()).unwrap();
    assert_eq!(r.algo, Algo::Pipelined);
    assert!(r.msgs.iter().all(|m| m.left == 0 && m.delivered_bytes == m.bytes && m.done_ps.is_some()));
    let sent: u64 = r.msgs.iter().map(|m| m.bytes).sum();
    assert!((sent as f64 / 16.0 / size as f64 / Op::AllReduce.busbw_factor(16) - 1.0).abs() < 1e-3);
    let hop_bytes: u64 = r.msgs.iter().map(|m| m.bytes * t.hops(m.src, m.dst) as u64).sum();
    assert_eq!(r.edge_stats.iter().map(|s| s.bytes).sum::<u64>(), hop_bytes);
    // Every chip-to-chip (direct) edge carries traffic; hierarchical leaves them idle.
    let direct: Vec<usize> = (0..t.edges.len()).filter(|&e| t.edges[e].from < 16 && t.edges[e].to < 16).collect();
    assert_eq!(direct.len(), 16);
    assert!(direct.iter().all(|&e| r.edge_stats[e].bytes > 0));
    let h = run(&t, coll("all_reduce:hierarchical"), size, &Params::default()).unwrap();
    assert!(direct.iter().all(|&e| h.edge_stats[e].bytes == 0));
    // Deterministic.
    let again = run(&t, coll("all_reduce:pipelined"), size, &Params::default()).unwrap();
    assert_eq!((r.finish_ps, &r.edge_stats), (again.finish_ps, &again.edge_stats));
}

#[test]
fn pipelined_all_reduce_on_gen2_beats_hierarchical_and_runs_among_members() {
    let t = preset("trn3-gen2-nl72x2");
    let p = Params::default();
    let size = 16 * MIB;
    let pipe = run(&t, coll("all_reduce:pipelined"), size, &p).unwrap();
    let hier = run(&t, coll("all_reduce:hierarchical"), size, &p).unwrap();
    eprintln!("16 MiB on 144 chips: pipelined {:?}, hierarchical {:?}", pipe.row, hier.row);
    assert!(pipe.row.busbw_gbps > 2.0 * hier.row.busbw_gbps, "{:?} vs {:?}", pipe.row, hier.row);
    // A group of two paired servers (the direct links join chip c and c + 72).
    let members: Vec<usize> = (0..4).chain(72..76).collect();
    let g = crate::collective::run_group(&t, coll("all_reduce:pipelined"), size, &members, &p).unwrap();
    assert!(g.msgs.iter().any(|m| m.src == 0 && m.dst == 72));
    assert!(g.msgs.iter().all(|m| members.contains(&m.src) && members.contains(&m.dst)));
    let e = crate::collective::run_group(&t, coll("all_reduce:pipelined"), size, &[0, 1, 4], &p).err().unwrap();
    assert!(e.contains("pipelined needs the members listed server by server"), "{e}");
}

#[test]
fn hierarchical_phases_send_the_closed_form_bytes_between_the_right_ranks() {
    use crate::collective::schedule::{build_in, build_runs};
    use crate::collective::{Algo, Op};
    for op in [Op::AllReduce, Op::AllGather, Op::ReduceScatter] {
        for (n, k, size) in [(8, 4, 1u64 << 20), (12, 4, 1200), (6, 1, 4096), (4, 4, 77), (2, 2, 1), (144, 4, 1 << 30)]
        {
            let m = n / k;
            let ring: Vec<usize> = (0..n).collect();
            let progs = build_in(op, Algo::Hierarchical, n, size, &ring, k).unwrap();
            let runs = build_runs(op, Algo::Hierarchical, n, size, &ring, k).unwrap();
            let (piece, across) = (size.div_ceil(k as u64), size.div_ceil(k as u64).div_ceil(m as u64));
            // Steps inside a server and across servers, per rank, in the phases' order.
            let (inside, remote) = (k as u64 - 1, if op == Op::AllReduce { 2 * (m as u64 - 1) } else { m as u64 - 1 });
            for (r, p) in progs.iter().enumerate() {
                let (s, j) = (r / k, r % k);
                let kinds: Vec<bool> = p.iter().map(|st| st.sends[0].0 / k != s).collect();
                for st in p {
                    let (d, bytes) = st.sends[0];
                    if d / k == s {
                        assert_eq!((d, bytes), (s * k + (j + 1) % k, piece), "{op:?} {n}/{k} rank {r}: inside");
                    } else {
                        assert_eq!((d, bytes), (((s + 1) % m) * k + j, across), "{op:?} {n}/{k} rank {r}: across");
                    }
                    assert_eq!(st.recvs, 1);
                }
                let count = |x: bool| kinds.iter().filter(|&&c| c == x).count() as u64;
                assert_eq!(
                    (count(false), count(true)),
                    (if op == Op::AllReduce { 2 * inside } else { inside }, remote)
                );
                // Order: all-gather crosses first, reduce-scatter last, all-reduce in the middle.
                let first_across = kinds.iter().position(|&c| c);
                match (op, first_across) {
                    (Op::AllGather, Some(i)) => assert_eq!(i, 0),
                    (Op::ReduceScatter, Some(i)) => assert_eq!(i as u64, inside),
                    (Op::AllReduce, Some(i)) => assert_eq!(i as u64, inside),
                    _ => assert_eq!(m, 1),
                }
                let expand: Vec<_> =
                    runs[r].iter().flat_map(|(st, c)| std::iter::repeat_n(st.clone(), *c as usize)).collect();
                assert_eq!(&expand, p, "runs are the steps run-length coded");
                assert!(runs[r].len() <= 3);
            }
        }
    }
    // Operations the algorithm does not implement are refused, with or without runs.
    let e = build_runs(Op::AllToAll, Algo::Hierarchical, 8, 64, &(0..8).collect::<Vec<_>>(), 4).unwrap_err();
    assert!(e.contains("does not implement all_to_all"), "{e}");
}

#[test]
fn packet_runs_too_large_for_memory_are_refused_not_truncated() {
    // Each packet of a message keeps its first hop (32 bytes) until it leaves its source: a
    // 256 TiB message is 2^36 packets, 2 TiB of pending state. Its packet count once wrapped
    // to 0 in 32 bits, and the message was "delivered" at once.
    let t = preset("trn2-server-4x4");
    let step = |bytes: u64| crate::collective::schedule::Step { sends: vec![(1, bytes)], recvs: 0 };
    let mut progs = vec![Vec::new(); t.chips];
    progs[0] = vec![step(1 << 48)];
    progs[1] = vec![crate::collective::schedule::Step { sends: vec![], recvs: 1 }];
    let packets = (1u64 << 48) / u64::from(t.packet_bytes);
    assert_eq!(crate::collective::pending_bytes(&progs, t.packet_bytes), packets * 32);
    let err = crate::collective::run_concurrent(&t, progs.clone(), &Params::default()).unwrap_err();
    assert!(err.starts_with("the packet-level network") && err.contains("needs about"), "{err}");
    // Each chip's largest step counts, summed over the chips.
    progs[0] = vec![step(4096), step(8192 + 1)];
    progs[2] = vec![step(4096)];
    assert_eq!(crate::collective::pending_bytes(&progs, 4096), (3 + 1) * 32);
    // A message that fits runs, every packet delivered.
    progs[0] = vec![step(3 * 4096 + 1)];
    progs[2] = Vec::new();
    let done = crate::collective::run_concurrent(&t, progs, &Params::default()).unwrap();
    assert!(done[1] > 0 && done[0] > 0, "{done:?}");
}

#[test]
fn hierarchical_rhd_matches_every_receive_and_crosses_in_log_steps() {
    use crate::collective::schedule::{build_in, build_runs};
    use crate::collective::{Algo, Op};
    for (n, k, size) in [(8, 4, 1u64 << 20), (12, 4, 1200), (6, 1, 4096), (4, 4, 77), (7, 1, 1000), (40, 4, 1 << 20)] {
        let m = n / k;
        let ring: Vec<usize> = (0..n).collect();
        let progs = build_in(Op::AllReduce, Algo::HierarchicalRhd, n, size, &ring, k).unwrap();
        let runs = build_runs(Op::AllReduce, Algo::HierarchicalRhd, n, size, &ring, k).unwrap();
        let p = if m >= 1 { 1usize << (usize::BITS - 1 - m.leading_zeros()) } else { 1 };
        let across = if m >= 2 { 2 * p.trailing_zeros() as usize + if p < m { 2 } else { 0 } } else { 0 };
        let piece = size.div_ceil(k as u64);
        for (r, prog) in progs.iter().enumerate() {
            assert_eq!(prog.len(), 2 * (k - 1) + across, "{n}/{k} rank {r}: steps");
            let expand: Vec<_> =
                runs[r].iter().flat_map(|(st, c)| std::iter::repeat_n(st.clone(), *c as usize)).collect();
            assert_eq!(&expand, prog, "runs are the steps run-length coded");
            // Steps across servers send only to the same local index on another server.
            for st in &prog[k - 1..k - 1 + across] {
                for &(d, b) in &st.sends {
                    assert!(d % k == r % k && d / k != r / k && b >= 1 && b <= piece, "{n}/{k} rank {r}: {d} {b}");
                }
            }
        }
        // Every step's receives are exactly the messages sent to that rank in that step.
        for t in 0..progs[0].len() {
            let mut got = vec![0u32; n];
            for prog in &progs {
                for &(d, _) in &prog[t].sends {
                    got[d] += 1;
                }
            }
            for (r, prog) in progs.iter().enumerate() {
                assert_eq!(got[r], prog[t].recvs, "{n}/{k}: step {t} rank {r}");
            }
        }
        // The ranks of the halving-doubling send 2 (1 - 1/p) of the piece across (rounded up
        // per step); a folded pair's sends add a piece each way.
        let sent: Vec<u64> = progs
            .iter()
            .map(|prog| prog[k - 1..k - 1 + across].iter().flat_map(|s| s.sends.iter().map(|x| x.1)).sum())
            .collect();
        let ideal = 2 * (piece - piece / p as u64);
        assert!(
            sent.iter().all(|&b| b == 0 || b == piece || b >= ideal && b <= ideal + 2 * across as u64 + piece),
            "{sent:?}"
        );
    }
    // Ranks that do not fill their servers are refused.
    let e = build_runs(Op::AllReduce, Algo::HierarchicalRhd, 10, 64, &(0..10).collect::<Vec<_>>(), 4).unwrap_err();
    assert!(e.contains("do not fill servers of 4"), "{e}");
    let e = build_runs(Op::AllGather, Algo::HierarchicalRhd, 8, 64, &(0..8).collect::<Vec<_>>(), 4).unwrap_err();
    assert!(e.contains("does not implement all_gather"), "{e}");
}

#[test]
fn auto_takes_halving_doubling_across_from_128_servers() {
    use crate::collective::{auto_algo_in, Algo, Op, RHD_ACROSS_FROM_SERVERS};
    assert_eq!(RHD_ACROSS_FROM_SERVERS, 128);
    for size in [1u64 << 10, 1 << 20, 1 << 30] {
        assert_eq!(auto_algo_in(Op::AllReduce, 128 * 144, size, Some(144)), Algo::HierarchicalRhd);
        assert_eq!(auto_algo_in(Op::AllReduce, 6945 * 144, size, Some(144)), Algo::HierarchicalRhd);
    }
    assert_eq!(auto_algo_in(Op::AllReduce, 127 * 144, 1 << 20, Some(144)), Algo::Pipelined);
    assert_eq!(auto_algo_in(Op::AllGather, 128 * 144, 1 << 20, Some(144)), Algo::Hierarchical);
}
