//! Reads MLCommons Chakra execution traces as dumped to JSON by Chakra's jsonizer
//! (`chakra_jsonizer`: one file per rank, the trace's `GlobalMetadata` then every `Node`, each
//! a JSON object as protobuf's JSON mapping writes it: camelCase fields, 64-bit integers as
//! strings, enums by name) into one [`Workload`].
//!
//! | Chakra node | becomes |
//! |---|---|
//! | `COMP_NODE` with `num_ops` / `tensor_size` attributes or `durationMicros` | `Kernel` (flops, bytes, duration) |
//! | `MEM_LOAD_NODE`, `MEM_STORE_NODE` (`tensor_size`) | `Load`, `Store` |
//! | `COMM_COLL_NODE` (`comm_type`, `comm_size`) | `AllReduce`, `AllGather`, `ReduceScatter`, `AllToAll`, `Broadcast` |
//! | `METADATA_NODE` | nothing (its dependents keep their other dependencies) |
//!
//! Nodes with the same id on several ranks and the same operation become one node run by
//! those ranks; a collective runs on the group of ranks that have it (a group set named after
//! the node when that is not every rank). Nodes are ordered by their dependencies (a cycle is
//! an error), data and control dependencies kept. Every error is `file:line:col: field:
//! message`, at the node it concerns.
//!
//! Left out: `COMM_SEND_NODE`/`COMM_RECV_NODE` (point-to-point pairs are refused, naming the
//! node), the collective types Chakra defines but trnsim has no algorithm for (reduce,
//! gather, scatter, reduce-scatter-block, barrier: refused), process groups given by
//! attributes (`pg_name`: the group is the ranks that have the node), CPU operations
//! (`is_cpu_op`: kept as kernels of their duration), tensor shapes in `inputs`/`outputs`.

use crate::format::{check, Checked, Comm, Node, Op, Workload, MAX_NODES, MAX_RANKS};
use serde_json::Value;
use std::collections::BTreeMap;
use trnsim_system::located::{line_col, ConfigError};

/// One node read from a rank's file.
struct Read {
    id: u64,
    name: String,
    op: Option<Op>,
    data_deps: Vec<u64>,
    ctrl_deps: Vec<u64>,
    /// Where it is: file and byte offset.
    file: usize,
    pos: usize,
}

/// What [`read`] gives back: the workload, and notes on what it took as it found it.
pub struct Imported {
    /// The workload.
    pub workload: Checked,
    /// One line per kind of node read with something missing (counts), for the user.
    pub notes: Vec<String>,
}

/// Reads rank files `files` (`(name, text)`, rank `r` the r-th) into a checked workload named
/// `name`.
pub fn read(name: &str, files: &[(String, String)]) -> Result<Imported, ConfigError> {
    read_replicated(name, files, 1)
}

/// [`read`], each file's nodes run by `replicate` ranks in a row (one file and `replicate`
/// ranks: a symmetric trace every rank runs). Each file is read once, whatever `replicate`.
pub fn read_replicated(name: &str, files: &[(String, String)], replicate: u32) -> Result<Imported, ConfigError> {
    let ranks = (files.len() as u64).saturating_mul(u64::from(replicate));
    if files.is_empty() || replicate == 0 || ranks > u64::from(MAX_RANKS) {
        return Err(ConfigError {
            file: files.first().map_or(name, |f| f.0.as_str()).into(),
            line: 1,
            col: 1,
            field: "ranks".into(),
            message: format!("{ranks} ranks (allowed: 1..={MAX_RANKS})"),
        });
    }
    let mut parsed: Vec<Vec<Read>> = Vec::with_capacity(files.len());
    let mut total = 0usize;
    for (fi, (file, text)) in files.iter().enumerate() {
        let nodes = parse_file(fi, file, text)?;
        total = total.saturating_add(nodes.len().saturating_mul(replicate as usize));
        if total > MAX_NODES {
            let m = format!("more than {MAX_NODES} nodes over all ranks ({} here x {replicate} ranks)", nodes.len());
            return Err(err(files, fi, 0, "nodes", m));
        }
        parsed.push(nodes);
    }
    // A replicated file's nodes are shared by its ranks, not copied.
    let per_rank: Vec<&[Read]> =
        parsed.iter().flat_map(|nodes| std::iter::repeat_n(nodes.as_slice(), replicate as usize)).collect();
    let count = |keep: &dyn Fn(&Op) -> bool| {
        per_rank.iter().flat_map(|n| n.iter()).filter(|n| n.op.as_ref().is_some_and(keep)).count()
    };
    let free = count(&|op| matches!(op, Op::Kernel { flops: 0, bytes: 0, duration_ns: 0, .. }));
    let measured = count(&|op| op.comm().is_some_and(|c| c.bytes == 0));
    let mut notes = Vec::new();
    if free > 0 {
        notes.push(format!(
            "{free} COMP nodes (over all rank files) carry no num_ops, tensor_size or runtime: they take no time"
        ));
    }
    if measured > 0 {
        notes.push(format!(
            "{measured} COMM_COLL nodes (over all rank files) carry a runtime but no comm_size: they take their recorded time, not a simulated one"
        ));
    }
    let workload = merge(name, files, per_rank, &mut notes)?;
    Ok(Imported { workload, notes })
}

fn err(files: &[(String, String)], fi: usize, pos: usize, field: &str, message: String) -> ConfigError {
    let (file, text) = &files[fi];
    err_in((file, text), pos, field, message)
}

/// An error at byte `pos` of `src` (`(file, text)`).
fn err_in(src: (&str, &str), pos: usize, field: &str, message: String) -> ConfigError {
    let (line, col) = line_col(src.1, pos.min(src.1.len()));
    ConfigError { file: src.0.into(), line, col, field: field.into(), message }
}

/// A protobuf-JSON unsigned integer: a number or a decimal string.
fn uint(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// The nodes of one rank's file, in file order.
fn parse_file(fi: usize, file: &str, text: &str) -> Result<Vec<Read>, ConfigError> {
    let at = |pos: usize, field: &str, m: String| err_in((file, text), pos, field, m);
    let mut out = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let mut first = true;
    loop {
        let pos =
            stream.byte_offset() + text[stream.byte_offset()..].len() - text[stream.byte_offset()..].trim_start().len();
        let v = match stream.next() {
            None => break,
            Some(Ok(v)) => v,
            Some(Err(e)) => {
                return Err(ConfigError {
                    file: file.into(),
                    line: e.line(),
                    col: e.column(),
                    field: "(json)".into(),
                    message: e.to_string().split(" at line ").next().unwrap_or("").to_string(),
                })
            }
        };
        let Value::Object(o) = &v else {
            return Err(at(pos, "(json)", "expected a JSON object (the metadata or a node)".into()));
        };
        if first && o.contains_key("version") && !o.contains_key("type") {
            first = false;
            continue; // GlobalMetadata
        }
        first = false;
        if let Some(graph) = o.get("workload_graph") {
            // The JSON feeder's form: every node in one list, fields named as the feeder reads
            // them. Each node is located at the list's start plus its own `"Id": N`.
            let Value::Array(list) = graph else {
                return Err(at(pos, "workload_graph", "is not a list of nodes".into()));
            };
            // Nodes are found in file order: each search starts where the last one matched.
            let mut cursor = pos;
            for n in list {
                let id = n.get("Id").cloned().unwrap_or(Value::Null);
                let npos = text[cursor..].find(&format!("\"Id\": {id}")).map_or(cursor, |p| cursor + p);
                cursor = npos;
                let node = feeder_node(n).ok_or_else(|| at(npos, "workload_graph", format!("{n} is not a node")))?;
                out.push(node_of(fi, (file, text), npos, out.len(), &node)?);
            }
            continue;
        }
        out.push(node_of(fi, (file, text), pos, out.len(), o)?);
    }
    Ok(out)
}

/// A JSON-feeder node in the jsonizer's form (`Id` -> `id`, `NodeType` -> `type`,
/// `data_deps` -> `dataDeps`, `runtime` (us) -> `durationMicros`, the other fields as
/// attributes).
fn feeder_node(n: &Value) -> Option<serde_json::Map<String, Value>> {
    let o = n.as_object()?;
    let mut m = serde_json::Map::new();
    let mut attr = Vec::new();
    for (k, v) in o {
        match k.as_str() {
            "Id" => m.insert("id".into(), v.clone()),
            "Name" => m.insert("name".into(), v.clone()),
            "NodeType" => m.insert("type".into(), v.clone()),
            "data_deps" | "dataDeps" => m.insert("dataDeps".into(), v.clone()),
            "ctrl_deps" | "ctrlDeps" => m.insert("ctrlDeps".into(), v.clone()),
            "runtime" => m.insert("durationMicros".into(), v.clone()),
            _ => {
                attr.push(serde_json::json!({ "name": k, "val": v }));
                None
            }
        };
    }
    m.insert("attr".into(), Value::Array(attr));
    Some(m)
}

/// One node object (the jsonizer's form) at byte `pos` of file `fi`, the `i`-th of it.
fn node_of(
    fi: usize,
    src: (&str, &str),
    pos: usize,
    i: usize,
    o: &serde_json::Map<String, Value>,
) -> Result<Read, ConfigError> {
    let at = |pos: usize, field: &str, m: String| err_in(src, pos, field, m);
    {
        let f = |k: &str| format!("nodes[{i}].{k}");
        let id = match o.get("id") {
            None => 0, // protobuf's JSON leaves out a zero
            Some(v) => uint(v).ok_or_else(|| at(pos, &f("id"), format!("{v} is not an unsigned integer")))?,
        };
        let name = o.get("name").and_then(Value::as_str).unwrap_or("").to_string();
        let deps = |k: &str| -> Result<Vec<u64>, ConfigError> {
            match o.get(k) {
                None => Ok(Vec::new()),
                Some(Value::Array(a)) => {
                    a.iter().map(|d| uint(d).ok_or_else(|| at(pos, &f(k), format!("{d} is not a node id")))).collect()
                }
                Some(other) => Err(at(pos, &f(k), format!("{other} is not a list of node ids"))),
            }
        };
        let (data_deps, ctrl_deps) = (deps("dataDeps")?, deps("ctrlDeps")?);
        let mut attrs: BTreeMap<String, Value> = BTreeMap::new();
        if let Some(list) = o.get("attr") {
            let Value::Array(list) = list else { return Err(at(pos, &f("attr"), "is not a list".into())) };
            for a in list {
                let Some(n) = a.get("name").and_then(Value::as_str) else {
                    return Err(at(pos, &f("attr"), format!("{a} has no name")));
                };
                let val = a
                    .as_object()
                    .and_then(|m| m.iter().find(|(k, _)| k.ends_with("Val") || *k == "val").map(|(_, v)| v.clone()))
                    .unwrap_or(Value::Null);
                attrs.insert(n.to_string(), val);
            }
        }
        let attr_u = |k: &str| -> Result<Option<u64>, ConfigError> {
            match attrs.get(k) {
                None => Ok(None),
                Some(v) => uint(v)
                    .map(Some)
                    .ok_or_else(|| at(pos, &f(&format!("attr.{k}")), format!("{v} is not an unsigned integer"))),
            }
        };
        let duration_us = match o.get("durationMicros") {
            None => 0,
            Some(v) => {
                uint(v).ok_or_else(|| at(pos, &f("durationMicros"), format!("{v} is not an unsigned integer")))?
            }
        };
        let kind = match o.get("type") {
            None => "INVALID_NODE".to_string(),
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(1) => "METADATA_NODE".into(),
                Some(2) => "MEM_LOAD_NODE".into(),
                Some(3) => "MEM_STORE_NODE".into(),
                Some(4) => "COMP_NODE".into(),
                Some(5) => "COMM_SEND_NODE".into(),
                Some(6) => "COMM_RECV_NODE".into(),
                Some(7) => "COMM_COLL_NODE".into(),
                _ => "INVALID_NODE".into(),
            },
            Some(other) => return Err(at(pos, &f("type"), format!("{other} is not a node type"))),
        };
        let op = match kind.as_str() {
            "METADATA_NODE" => None,
            "COMP_NODE" => {
                let flops = attr_u("num_ops")?.unwrap_or(0);
                let bytes = attr_u("tensor_size")?.unwrap_or(0);
                let duration_ns = duration_us.checked_mul(1000).ok_or_else(|| {
                    at(pos, &f("durationMicros"), format!("{duration_us} us does not fit in nanoseconds"))
                })?;
                Some(Op::Kernel { flops, bytes, duration_ns, dtype: "bf16".into() })
            }
            "MEM_LOAD_NODE" | "MEM_STORE_NODE" => {
                let bytes = attr_u("tensor_size")?
                    .ok_or_else(|| at(pos, &f("attr.tensor_size"), format!("a {kind} needs tensor_size")))?;
                Some(if kind == "MEM_LOAD_NODE" { Op::Load { bytes } } else { Op::Store { bytes } })
            }
            "COMM_COLL_NODE" => {
                let duration_ns = duration_us.checked_mul(1000).ok_or_else(|| {
                    at(pos, &f("durationMicros"), format!("{duration_us} us does not fit in nanoseconds"))
                })?;
                let (bytes, duration_ns) = match attr_u("comm_size")? {
                    Some(b) if b > 0 => (b, 0),
                    _ if duration_ns > 0 => (0, duration_ns),
                    _ => {
                        let m = "a COMM_COLL_NODE needs comm_size (or at least its runtime)".to_string();
                        return Err(at(pos, &f("attr.comm_size"), m));
                    }
                };
                let ty = match attrs.get("comm_type") {
                    Some(Value::String(s)) if s.parse::<u64>().is_err() => s.clone(),
                    Some(v) => match uint(v) {
                        Some(0) => "ALL_REDUCE".into(),
                        Some(2) => "ALL_GATHER".into(),
                        Some(5) => "BROADCAST".into(),
                        Some(6) => "ALL_TO_ALL".into(),
                        Some(7) => "REDUCE_SCATTER".into(),
                        Some(n) => format!("collective type {n}"),
                        None => format!("{v}"),
                    },
                    // A measured collective without a type (a host-side call): its runtime
                    // stands whatever it was; it is kept as an all-reduce of that time.
                    None if bytes == 0 => "ALL_REDUCE".into(),
                    None => return Err(at(pos, &f("attr.comm_type"), "a COMM_COLL_NODE needs comm_type".into())),
                };
                let c = Comm { bytes, group: "world".into(), algo: None, duration_ns };
                Some(match ty.as_str() {
                    "ALL_REDUCE" => Op::AllReduce(c),
                    "ALL_GATHER" => Op::AllGather(c),
                    "REDUCE_SCATTER" => Op::ReduceScatter(c),
                    "ALL_TO_ALL" => Op::AllToAll(c),
                    "BROADCAST" => Op::Broadcast(c),
                    other => {
                        let m = format!("{other} is not read (allowed: ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, BROADCAST)");
                        return Err(at(pos, &f("attr.comm_type"), m));
                    }
                })
            }
            other => {
                let m = format!(
                    "{other} is not read (allowed: COMP_NODE, MEM_LOAD_NODE, MEM_STORE_NODE, COMM_COLL_NODE, METADATA_NODE)"
                );
                return Err(at(pos, &f("type"), m));
            }
        };
        Ok(Read { id, name, op, data_deps, ctrl_deps, file: fi, pos })
    }
}

/// The most dependencies the merged graph may hold over all its nodes: a metadata node
/// passes its dependencies to its dependents, and a chain of them could otherwise multiply
/// them quadratically.
pub const MAX_EDGES: usize = 1 << 22;

/// Merges the ranks' nodes into one graph.
fn merge(
    name: &str,
    files: &[(String, String)],
    per_rank: Vec<&[Read]>,
    notes: &mut Vec<String>,
) -> Result<Checked, ConfigError> {
    let ranks = per_rank.len();
    // Chakra id -> the variants of it (distinct operations), each with its ranks.
    struct Variant<'a> {
        first: &'a Read,
        ranks: Vec<u32>,
    }
    let mut by_id: BTreeMap<u64, Vec<Variant<'_>>> = BTreeMap::new();
    let mut deps: BTreeMap<u64, (Vec<u64>, Vec<u64>)> = BTreeMap::new();
    // (id, operation) -> its variant's index: a lookup per node, however many variants.
    let mut variant: std::collections::HashMap<(u64, String), usize> = std::collections::HashMap::new();
    // Each node of the rank before: its variant's index.
    let mut last: Vec<usize> = Vec::new();
    for (r, nodes) in per_rank.iter().enumerate() {
        // A replicated file's ranks repeat the same nodes: their dependencies are known.
        let repeated = r > 0 && std::ptr::eq(per_rank[r - 1], *nodes);
        let mut seen = std::collections::BTreeSet::new();
        if repeated {
            // The same variants as the rank before.
            for (n, &i) in nodes.iter().zip(&last) {
                if let Some(v) = by_id.get_mut(&n.id).and_then(|vs| vs.get_mut(i)) {
                    v.ranks.push(r as u32);
                }
            }
            continue;
        }
        last.clear();
        for n in nodes.iter() {
            if !seen.insert(n.id) {
                return Err(err(files, n.file, n.pos, "id", format!("node id {} appears twice in this file", n.id)));
            }
            let e = deps.entry(n.id).or_default();
            e.0.extend(&n.data_deps);
            e.1.extend(&n.ctrl_deps);
            let vs = by_id.entry(n.id).or_default();
            let rank = r as u32;
            let key = (n.id, format!("{:?}", n.op));
            match variant.get(&key).copied().filter(|&i| i < vs.len()) {
                Some(i) => {
                    vs[i].ranks.push(rank);
                    last.push(i);
                }
                None => {
                    variant.insert(key, vs.len());
                    last.push(vs.len());
                    if let (Some(v), Some(op)) = (vs.first(), &n.op) {
                        if op.queue() == crate::format::Queue::Comm {
                            let m = format!(
                                "node {} is {} on rank {} but differs on rank {r}: a collective must be the same on every rank that runs it",
                                n.id,
                                v.first.op.as_ref().map_or("metadata", Op::kind),
                                v.ranks[0]
                            );
                            return Err(err(files, n.file, n.pos, "attr", m));
                        }
                    }
                    vs.push(Variant { first: n, ranks: vec![rank] });
                }
            }
        }
    }
    // Topological order over Chakra ids (smallest id first among the ready).
    // Dependencies on nodes no rank has (a trace cut from a longer one) are dropped; one named
    // twice (or by several ranks) is one.
    let mut dangling = 0usize;
    for (data, ctrl) in deps.values_mut() {
        for list in [data, ctrl] {
            list.sort_unstable();
            list.dedup();
            let before = list.len();
            list.retain(|d| by_id.contains_key(d));
            dangling += before - list.len();
        }
    }
    let mut indegree: BTreeMap<u64, usize> = by_id.keys().map(|&k| (k, 0)).collect();
    let mut children: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for (&id, (data, ctrl)) in &deps {
        for d in data.iter().chain(ctrl) {
            *indegree.entry(id).or_default() += 1;
            children.entry(*d).or_default().push(id);
        }
    }
    let mut ready: std::collections::BTreeSet<u64> =
        indegree.iter().filter(|(_, &n)| n == 0).map(|(&k, _)| k).collect();
    let mut order = Vec::with_capacity(by_id.len());
    while let Some(id) = ready.pop_first() {
        order.push(id);
        for c in children.get(&id).into_iter().flatten() {
            if let Some(n) = indegree.get_mut(c) {
                *n -= 1;
                if *n == 0 {
                    ready.insert(*c);
                }
            }
        }
    }
    if order.len() < by_id.len() {
        let (id, _) = indegree.iter().find(|(_, &n)| n > 0).unwrap_or((&0, &0));
        let n = by_id[id][0].first;
        return Err(err(files, n.file, n.pos, "dataDeps", format!("node {id} is on a dependency cycle")));
    }
    // New ids in that order; a metadata node's dependents take its dependencies instead.
    let mut new_ids: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    let mut nodes = Vec::new();
    let mut groups: BTreeMap<String, Vec<Vec<u32>>> = BTreeMap::new();
    // Where each new node was read (its first rank's file), for errors found in the merge.
    let mut origin: Vec<(usize, usize, u64)> = Vec::new();
    let mut edges = 0usize;
    for id in order {
        let (data, ctrl) = deps.get(&id).cloned().unwrap_or_default();
        let resolve = |ds: &[u64]| -> Vec<u32> {
            let mut v: Vec<u32> = ds.iter().flat_map(|d| new_ids.get(d).cloned().unwrap_or_default()).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let (data, ctrl) = (resolve(&data), resolve(&ctrl));
        let mut mine = Vec::new();
        for v in &by_id[&id] {
            let Some(op) = &v.first.op else {
                // Metadata: pass its dependencies through.
                mine.extend(data.iter().chain(&ctrl).copied());
                continue;
            };
            let mut op = op.clone();
            let everyone = v.ranks.len() == ranks;
            if op.queue() == crate::format::Queue::Comm && v.ranks.len() < 2 {
                let m =
                    format!("collective node {id} is on rank {} only (a collective needs 2 ranks or more)", v.ranks[0]);
                return Err(err(files, v.first.file, v.first.pos, "type", m));
            }
            if let (
                Op::AllReduce(c) | Op::AllGather(c) | Op::ReduceScatter(c) | Op::AllToAll(c) | Op::Broadcast(c),
                false,
            ) = (&mut op, everyone)
            {
                let g = format!("node{id}");
                groups.insert(g.clone(), vec![v.ranks.clone()]);
                c.group = g;
            }
            let new = u32::try_from(nodes.len()).map_err(|_| err(files, 0, 0, "nodes", "too many nodes".into()))?;
            edges = edges.saturating_add(data.len() + ctrl.len());
            if edges > MAX_EDGES {
                let m = format!(
                    "the merged graph would hold more than {MAX_EDGES} dependencies (metadata nodes pass theirs to their dependents)"
                );
                return Err(err(files, v.first.file, v.first.pos, "dataDeps", m));
            }
            origin.push((v.first.file, v.first.pos, id));
            nodes.push(Node {
                id: new,
                name: if v.first.name.is_empty() { format!("node{id}") } else { v.first.name.clone() },
                op,
                data_deps: data.clone(),
                ctrl_deps: ctrl.clone(),
                ranks: if everyone { None } else { Some(v.ranks.clone()) },
            });
            mine.push(new);
        }
        mine.sort_unstable();
        mine.dedup();
        if by_id[&id].iter().all(|v| v.first.op.is_none()) {
            edges = edges.saturating_add(mine.len());
            if edges > MAX_EDGES {
                let v = &by_id[&id][0];
                let m = format!(
                    "the merged graph would hold more than {MAX_EDGES} dependencies (metadata nodes pass theirs to their dependents)"
                );
                return Err(err(files, v.first.file, v.first.pos, "dataDeps", m));
            }
        }
        new_ids.insert(id, mine);
    }
    if dangling > 0 {
        notes.push(format!("{dangling} dependencies name nodes that no rank's file has (a cut trace): dropped"));
    }
    if nodes.is_empty() {
        return Err(err(files, 0, 0, "nodes", "no node to run (only metadata)".into()));
    }
    let w = Workload {
        name: name.into(),
        source: format!("Chakra execution trace, {} rank files ({} ...)", ranks, files[0].0),
        ranks: ranks as u32,
        groups,
        repeat: 1,
        hbm_bytes_per_rank: None,
        tokens_per_step: None,
        serving: None,
        nodes,
    };
    let text = crate::format::to_ron(&w).map_err(|e| err(files, 0, 0, "(workload)", e))?;
    check(&format!("{name} (read from Chakra)"), &text, w).map_err(|e| in_trace(files, &origin, e))
}

/// An error `check` found in the merged workload, moved to the trace: at the node it names,
/// in the rank file it was read from, with the trace's field names; an error of the whole
/// workload at the first file's start.
fn in_trace(files: &[(String, String)], origin: &[(usize, usize, u64)], e: ConfigError) -> ConfigError {
    let node = e.field.strip_prefix("nodes[").and_then(|r| r.split_once(']'));
    let Some((i, rest)) = node.and_then(|(i, rest)| Some((i.parse::<usize>().ok()?, rest))) else {
        return err(files, 0, 0, &e.field, e.message);
    };
    let Some(&(fi, pos, id)) = origin.get(i) else { return err(files, 0, 0, &e.field, e.message) };
    let last = rest.rsplit('.').next().unwrap_or("");
    let field = match last {
        "data_deps" => "dataDeps",
        "ctrl_deps" => "ctrlDeps",
        "duration_ns" => "durationMicros",
        "flops" => "attr.num_ops",
        "bytes" if rest.contains("Kernel") || rest.contains("Load") || rest.contains("Store") => "attr.tensor_size",
        "bytes" => "attr.comm_size",
        "group" | "ranks" => "(the ranks that have the node)",
        "" | "id" => "id",
        other => other,
    };
    err(files, fi, pos, &format!("node {id}: {field}"), e.message)
}
