//! The workload format, generator and schedule, with a cost model whose times are known.

use crate::exec::{self, Costs};
use crate::format::{self, Op};
use crate::llm::{Llm, Mode};

/// Every compute node 10 ns, memory 20 ns, collectives 5 ns x group size, send/recv 7 ns.
struct Fixed;

impl Costs for Fixed {
    fn compute_ns(&mut self, _: &Op) -> Result<f64, String> {
        Ok(10.0)
    }
    fn memory_ns(&mut self, _: &Op) -> Result<f64, String> {
        Ok(20.0)
    }
    fn comm_ns(&mut self, _: &Op, groups: &[Vec<usize>]) -> Result<Vec<f64>, String> {
        Ok(groups.iter().map(|g| 5.0 * g.len() as f64).collect())
    }
    fn send_recv_ns(&mut self, _: u64, pairs: &[(usize, usize)]) -> Result<Vec<f64>, String> {
        Ok(vec![7.0; pairs.len()])
    }
}

const SMALL: &str = r#"Workload(
    name: "small",
    ranks: 4,
    groups: { "pairs": [[0, 1], [2, 3]] },
    repeat: 2,
    nodes: [
        (id: 0, name: "a", op: Gemm(m: 128, k: 128, n: 128)),
        (id: 1, name: "ar", op: AllReduce((bytes: 1024, group: "pairs")), data_deps: [0]),
        (id: 2, name: "b", op: Gemm(m: 128, k: 128, n: 128)),
        (id: 3, name: "ld", op: Load(bytes: 4096), data_deps: [1]),
    ],
)"#;

#[test]
fn the_schedule_overlaps_queues_and_synchronizes_groups() {
    let c = format::parse("small.ron", SMALL).unwrap();
    let r = exec::run(&c, 4, &mut Fixed).unwrap();
    // Iteration 0: a 0-10, ar 10-20 (2 ranks x 5), b 10-20, ld 20-40; iteration 1: a 20-30,
    // ar 30-40, b 30-40, ld 40-60.
    assert_eq!(r.step_ns, 60.0);
    let b = &r.critical;
    assert_eq!((b.compute_ns, b.comm_ns, b.memory_ns), (40.0, 20.0, 40.0));
    assert_eq!(b.exposed_comm_ns, 0.0, "b runs while ar does");
    assert_eq!(b.memory_bound_ns, 20.0, "the last load runs alone");
    assert_eq!(b.idle_ns, 0.0);
    assert_eq!(r.collectives[0].group_size, 2);
}

#[test]
fn a_workload_round_trips_through_ron_and_json() {
    let w = Llm { mode: Mode::Train, dp: 2, pp: 2, ..Llm::default() }.generate("test").unwrap();
    let text = format::to_ron(&w).unwrap();
    let back = format::parse("w.ron", &text).unwrap();
    assert_eq!(back.w, w);
    let json = serde_json::to_string_pretty(&w).unwrap();
    assert_eq!(format::parse("w.json", &json).unwrap().w, w);
    let a = exec::run(&back, 16, &mut Fixed).unwrap();
    let b = exec::run(&format::parse("w.ron", &text).unwrap(), 16, &mut Fixed).unwrap();
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
}

#[test]
fn bad_workloads_are_located_one_line_errors() {
    let cases: &[(&str, &str, &str)] = &[
        ("ranks: 4,", "ranks: 0,", "ranks: 0 is out of range"),
        ("data_deps: [0]),", "data_deps: [7]),", "nodes[1].data_deps: 7 is not an earlier node's id"),
        ("group: \"pairs\"", "group: \"tp\"", "unknown group set \"tp\""),
        ("[[0, 1], [2, 3]]", "[[0, 1], [1, 3]]", "rank 1 is in two groups"),
        ("[[0, 1], [2, 3]]", "[[0, 1], [2, 9]]", "rank 9 is not in 0..4"),
        (
            "Gemm(m: 128, k: 128, n: 128)),\n        (id: 1",
            "Gemm(m: 0, k: 128, n: 128)),\n        (id: 1",
            "nodes[0].op.m: 0 is out of range",
        ),
        ("(id: 2,", "(id: 1,", "out of order"),
        ("Load(bytes: 4096)", "Load(bytes: 4096, extra: 1)", "extra"),
    ];
    for (from, to, want) in cases {
        let text = SMALL.replacen(from, to, 1);
        assert_ne!(text, SMALL, "{from}");
        let e = format::parse("w.ron", &text).unwrap_err().to_string();
        assert!(e.starts_with("w.ron:") && e.contains(want) && !e.contains('\n'), "{to}: {e}");
    }
    let e = format::parse("w.json", "{\"name\": 3}").unwrap_err().to_string();
    assert!(e.starts_with("w.json:1:"), "{e}");
}

#[test]
fn the_generator_names_the_rule_a_shape_breaks() {
    let e = Llm { heads: 30, tp: 4, ..Llm::default() }.check().unwrap_err();
    assert!(e.contains("--heads 30 must divide by --tp 4"), "{e}");
    let e = Llm { arch: "moe".into(), experts: 6, ep: 4, tp: 4, ..Llm::default() }.check().unwrap_err();
    assert!(e.contains("--experts 6 must divide by --ep 4"), "{e}");
    let e = Llm { layers: 3, pp: 2, ..Llm::default() }.check().unwrap_err();
    assert!(e.contains("--layers 3 must divide by --pp 2"), "{e}");
}

#[test]
fn pipeline_stages_pass_activations_forward_and_gradients_back() {
    let w = Llm { mode: Mode::Train, pp: 2, tp: 2, layers: 2, ..Llm::default() }.generate("t").unwrap();
    let c = format::parse("w.ron", &format::to_ron(&w).unwrap()).unwrap();
    let r = exec::run(&c, 4, &mut Fixed).unwrap();
    let hops: Vec<&str> = r.collectives.iter().filter(|s| s.op == "send_recv").map(|s| s.name.as_str()).collect();
    assert_eq!(hops, ["stage0->stage1", "stage1->stage0 grad"]);
    // Each hop is sent by one stage only; the other takes part as its receiver.
    let hop = |name: &str| c.w.nodes.iter().position(|n| n.name == name).unwrap();
    assert_eq!(c.w.nodes[hop("stage0->stage1")].ranks, Some(vec![0, 1]));
    assert_eq!(c.w.nodes[hop("stage1->stage0 grad")].ranks, Some(vec![2, 3]));
    assert_eq!(c.node_ranks[hop("stage0->stage1")], vec![0, 1, 2, 3]);
    // Stage 1's first node waits for stage 0's forward pass: its ranks are idle meanwhile.
    assert!(r.ranks[2].idle_ns > 0.0 && r.ranks[0].idle_ns > 0.0);
}

#[test]
fn an_all_to_allv_runs_on_its_groups_and_bad_matrices_are_located() {
    let good = r#"Workload(
    name: "v",
    ranks: 4,
    groups: { "pairs": [[0, 1], [2, 3]] },
    nodes: [
        (id: 0, name: "dispatch", op: AllToAllV((sizes: [[0, 4096], [1024, 0]], group: "pairs"))),
    ],
)"#;
    let c = format::parse("v.ron", good).unwrap();
    let r = exec::run(&c, 4, &mut Fixed).unwrap();
    assert_eq!(r.step_ns, 10.0, "two groups of two at once");
    assert_eq!(r.collectives[0].bytes, 4096, "the largest send buffer");
    let bad = |sizes: &str| {
        let t = good.replace("[[0, 4096], [1024, 0]]", sizes);
        format::parse("v.ron", &t).unwrap_err().to_string()
    };
    let e = bad("[[0, 1, 2], [1, 0, 2], [1, 2, 0]]");
    assert!(e.starts_with("v.ron:6:") && e.contains("3 rows for a group of 2"), "{e}");
    let e = bad("[[0, 1], [1]]");
    assert!(e.contains("sizes[1]") && e.contains("square"), "{e}");
    let e = bad("[[1, 1125899906842624], [1, 1]]");
    assert!(e.contains("more than"), "{e}");
    let e = bad("[[5, 0], [0, 5]]");
    assert!(e.contains("0 bytes"), "{e}");
}

/// Rank `r`'s trace as chakra_jsonizer writes it: the metadata, then one object per node.
fn chakra_rank(r: u32, ar_bytes: u64) -> String {
    format!(
        r#"{{
  "version": "0.0.4"
}}{{
  "id": "1",
  "name": "gemm",
  "type": "COMP_NODE",
  "attr": [{{"name": "num_ops", "int64Val": "2000000"}}, {{"name": "tensor_size", "uint64Val": "4096"}}]
}}{{
  "id": "2",
  "name": "load",
  "type": "MEM_LOAD_NODE",
  "dataDeps": ["1"],
  "attr": [{{"name": "tensor_size", "int64Val": "65536"}}]
}}{{
  "id": "3",
  "name": "grad.ar",
  "type": "COMM_COLL_NODE",
  "dataDeps": ["1"],
  "attr": [{{"name": "comm_type", "int64Val": "0"}}, {{"name": "comm_size", "int64Val": "{ar_bytes}"}}]
}}{{
  "id": "4",
  "name": "rank{r}.tail",
  "type": "COMP_NODE",
  "ctrlDeps": ["3"],
  "durationMicros": "{}"
}}"#,
        r + 1
    )
}

#[test]
fn chakra_traces_merge_into_one_graph_and_run() {
    let files: Vec<(String, String)> = (0..2).map(|r| (format!("et.{r}.json"), chakra_rank(r, 1024))).collect();
    let imported = crate::chakra::read("et", &files).unwrap();
    let c = imported.workload;
    assert_eq!(c.w.ranks, 2);
    let kinds: Vec<&str> = c.w.nodes.iter().map(|n| n.op.kind()).collect();
    assert_eq!(kinds, ["kernel", "load", "all_reduce", "kernel", "kernel"], "the tails differ: one node per rank");
    assert_eq!(c.w.nodes[1].data_deps, [0]);
    assert_eq!((c.w.nodes[3].ranks.clone(), c.w.nodes[4].ranks.clone()), (Some(vec![0]), Some(vec![1])));
    assert_eq!(c.w.nodes[3].ctrl_deps, [2]);
    let Op::Kernel { flops, bytes, .. } = c.w.nodes[0].op else { panic!() };
    assert_eq!((flops, bytes), (2_000_000, 4096));
    let r = exec::run(&c, 2, &mut Fixed).unwrap();
    assert_eq!(r.step_ns, 10.0 + 10.0 + 10.0, "gemm, all-reduce (5 ns x 2 ranks), tail");
    // The JSON feeder's form reads too.
    let feeder = r#"{"workload_graph": [
      {"Id": 7, "Name": "a", "NodeType": 4, "data_deps": [], "runtime": 3},
      {"Id": 8, "Name": "b", "NodeType": 7, "data_deps": [7], "comm_type": 2, "comm_size": 4096}
    ]}"#;
    let w = crate::chakra::read("f", &[("f.0.json".into(), feeder.into()), ("f.1.json".into(), feeder.into())]);
    let w = w.unwrap().workload.w;
    assert!(matches!(w.nodes[0].op, Op::Kernel { duration_ns: 3000, .. }));
    assert!(matches!(&w.nodes[1].op, Op::AllGather(c) if c.bytes == 4096));
}

#[test]
fn bad_chakra_traces_are_located_errors() {
    let read = |texts: &[String]| {
        let files: Vec<(String, String)> =
            texts.iter().enumerate().map(|(r, t)| (format!("et.{r}.json"), t.clone())).collect();
        crate::chakra::read("et", &files).err().map(|e| e.to_string()).unwrap_or_default()
    };
    let e = read(&[chakra_rank(0, 1024), chakra_rank(1, 2048)]);
    assert!(e.starts_with("et.1.json:") && e.contains("differs on rank 1"), "{e}");
    let send = chakra_rank(0, 8).replace("MEM_LOAD_NODE", "COMM_SEND_NODE");
    let e = read(&[send.clone(), send]);
    assert!(e.starts_with("et.0.json:8:") && e.contains("COMM_SEND_NODE is not read"), "{e}");
    let cyc = chakra_rank(0, 8).replace(r#""name": "gemm","#, r#""name": "gemm", "dataDeps": ["4"],"#);
    let e = read(&[cyc.clone(), cyc]);
    assert!(e.contains("dependency cycle"), "{e}");
    let e = read(&[chakra_rank(0, 8)]);
    assert!(e.contains("on rank 0 only"), "{e}");
    let e = read(&["{\"id\": \"x\", \"type\": \"COMP_NODE\"}".to_string()]);
    assert!(e.starts_with("et.0.json:1:1: nodes[0].id:"), "{e}");
    let e = read(&["{\"id\": 1, \"type\": \"COMP_NODE\"".to_string()]);
    assert!(e.starts_with("et.0.json:1:") && e.contains("(json)"), "{e}");
}

#[test]
fn gemm_formats_run_at_the_cores_own_rates() {
    use crate::costs::tensor_rate;
    use trnsim_core::spec::preset;
    let (v3, v4, v5) = (preset("nc-v3").unwrap(), preset("nc-v4").unwrap(), preset("nc-v5").unwrap());
    // NC-v4: MXFP8 and MXFP4 at 4 MACs per PE, plain FP8 at the BF16 rate, FP32 at a quarter.
    assert_eq!(tensor_rate(&v4, "bf16"), Some(1.0));
    assert_eq!(tensor_rate(&v4, "mxfp8"), Some(4.0));
    assert_eq!(tensor_rate(&v4, "mxfp4"), Some(4.0));
    assert_eq!(tensor_rate(&v4, "fp8"), Some(1.0));
    assert_eq!(tensor_rate(&v4, "fp32"), Some(0.25));
    // NC-v5 doubles MXFP4 over MXFP8; NC-v3 has no MX formats.
    assert_eq!(tensor_rate(&v5, "mxfp4"), Some(8.0));
    assert_eq!(tensor_rate(&v3, "fp8"), Some(2.0));
    assert_eq!(tensor_rate(&v3, "mxfp8"), None);
    assert_eq!(tensor_rate(&v3, "mxfp4"), None);
    // MX sizes carry the shared scale: one byte per 32 elements.
    assert_eq!(format::dtype_size("mxfp4"), Some(17.0 / 32.0));
    assert_eq!(format::dtype_size("mxfp8"), Some(33.0 / 32.0));
    assert_eq!(format::dtype_size("int4"), None);
}

/// Compute nodes of 10 ns with a 4 ns head and a 3 ns tail (the [`Fixed`] model otherwise).
struct Edged;

impl Costs for Edged {
    fn compute_ns(&mut self, _: &Op) -> Result<f64, String> {
        Ok(10.0)
    }
    fn compute_timing(&mut self, _: &Op) -> Result<(f64, f64, f64), String> {
        Ok((10.0, 4.0, 3.0))
    }
    fn memory_ns(&mut self, op: &Op) -> Result<f64, String> {
        Fixed.memory_ns(op)
    }
    fn comm_ns(&mut self, op: &Op, groups: &[Vec<usize>]) -> Result<Vec<f64>, String> {
        Fixed.comm_ns(op, groups)
    }
    fn send_recv_ns(&mut self, bytes: u64, pairs: &[(usize, usize)]) -> Result<Vec<f64>, String> {
        Fixed.send_recv_ns(bytes, pairs)
    }
}

#[test]
fn back_to_back_compute_nodes_overlap_their_edges_and_a_node_that_waited_does_not() {
    assert_eq!(exec::edge_overlap_ns(10.0, 3.0, 10.0, 4.0), 7.0, "the head behind 7 ns, the tail behind 6");
    assert_eq!(exec::edge_overlap_ns(2.0, 1.0, 10.0, 4.0), 1.0 + 1.0, "only 1 ns of the previous node computes");
    assert_eq!(exec::edge_overlap_ns(10.0, 3.0, 1.0, 4.0), 4.0, "the next node has no compute to hide a tail behind");
    let chain = r#"Workload(name: "chain", ranks: 1, nodes: [
        (id: 0, name: "a", op: Gemm(m: 128, k: 128, n: 128)),
        (id: 1, name: "b", op: Elementwise(elements: 1024), data_deps: [0]),
        (id: 2, name: "c", op: Gemm(m: 128, k: 128, n: 128), data_deps: [1]),
    ])"#;
    let c = format::parse("chain.ron", chain).unwrap();
    // a 0-10; b from 10, 7 ns of its 10 overlapped: to 13; c from 13, its head behind b's 3
    // ns of compute (10 - 7 - its tail 3 = 0: min(4, 3 - 3) = 0) and b's tail behind c: to 20.
    let r = exec::run(&c, 1, &mut Edged).unwrap();
    assert_eq!(r.step_ns, 20.0);
    assert_eq!(exec::run(&c, 1, &mut Fixed).unwrap().step_ns, 30.0, "no edges, no overlap");
    // A compute node that waits for a load does not start as the previous one ends.
    let waits = r#"Workload(name: "waits", ranks: 1, nodes: [
        (id: 0, name: "a", op: Gemm(m: 128, k: 128, n: 128)),
        (id: 1, name: "ld", op: Load(bytes: 4096)),
        (id: 2, name: "c", op: Gemm(m: 128, k: 128, n: 128), data_deps: [0, 1]),
    ])"#;
    let c = format::parse("waits.ron", waits).unwrap();
    assert_eq!(exec::run(&c, 1, &mut Edged).unwrap().step_ns, 30.0, "c starts at 20 after the load, alone");
}
