//! Overrides of a workload (`--set workload.PATH=VALUE`, `--sweep`) applied as a tree of values
//! (`trnsim_system::doc::set_in`, the rules of a system's `--set`), made only of what the paths
//! can reach: a path into one node (`nodes[3].op.Gemm.m`, or a mistyped one) turns that node
//! into values, and the first nodes, those a mistyped path's nearest paths are gathered from
//! (`suggest::MAX_ELEMENTS`), so that its hints are the same; every other node stands as a null, so an override on a million-node workload costs what a few
//! nodes do, not a tree of every node (gigabytes). A path that may reach every node
//! (`nodes[*].m`, `nodes`) turns the whole workload into values.
//!
//! What this leaves out: the tree's nulls still cost one value per node (32 B), and the
//! workload is copied once for the result, as any override's result is.

use crate::format::{Serving, Workload};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The workload's fields but its nodes, serialized as [`Workload`] serializes them (a unit
/// test keeps the two alike).
#[derive(Serialize)]
struct Head<'a> {
    name: &'a String,
    source: &'a String,
    ranks: u32,
    groups: &'a BTreeMap<String, Vec<Vec<u32>>>,
    repeat: u32,
    hbm_bytes_per_rank: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tokens_per_step: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    serving: &'a Option<Serving>,
}

/// The node a path names first (`nodes[3].op` names 3); None for a path that is not into one
/// node.
fn node_index(path: &str) -> Option<usize> {
    let (i, _) = path.strip_prefix("nodes[")?.split_once(']')?;
    i.parse().ok()
}

/// Which nodes `paths` can reach, with the first ones hints are gathered from: Some(indices,
/// sorted), or None when a path may reach every node.
fn reached(paths: &[&str], nodes: usize) -> Option<Vec<usize>> {
    let mut out: Vec<usize> = (0..nodes.min(trnsim_system::doc::suggest::MAX_ELEMENTS)).collect();
    for p in paths {
        let path = p.split_once('=').map_or(*p, |(p, _)| p).trim();
        match node_index(path) {
            Some(i) if i < nodes => out.push(i),
            Some(_) => {}
            None if path.starts_with("nodes") => return None,
            None => {}
        }
    }
    out.sort_unstable();
    out.dedup();
    out.retain(|&i| i < nodes);
    Some(out)
}

/// `w` with `assignments` (`PATH=VALUE`, with or without a leading `workload.`) applied;
/// `flag` names the option in errors ("--set", "--sweep"). The result is not checked: the
/// caller checks it as a file is.
pub fn apply(w: &Workload, flag: &str, assignments: &[String]) -> Result<Workload, String> {
    let inner: Vec<&str> = assignments.iter().map(|a| a.strip_prefix("workload.").unwrap_or(a)).collect();
    let Some(keep) = reached(&inner, w.nodes.len()) else {
        return apply_whole(w, flag, assignments);
    };
    let mut tree = head_tree(w, &keep)?;
    set_all(&mut tree, flag, assignments, &inner)?;
    let read_err = |e: serde_json::Error| read_error(flag, assignments, e);
    let Value::Object(mut top) = tree else { return Err(format!("{flag}: the workload is not a map")) };
    let mut nodes = match top.insert("nodes".into(), Value::Array(Vec::new())) {
        Some(Value::Array(n)) if n.len() == w.nodes.len() => n,
        _ => return apply_whole(w, flag, assignments),
    };
    let mut out: Workload = serde_json::from_value(Value::Object(top)).map_err(read_err)?;
    out.nodes = w.nodes.clone();
    for i in keep {
        out.nodes[i] = serde_json::from_value(nodes[i].take()).map_err(read_err)?;
    }
    Ok(out)
}

/// The tree of `w` with the nodes of `keep` as values and every other node a null.
fn head_tree(w: &Workload, keep: &[usize]) -> Result<Value, String> {
    let head = Head {
        name: &w.name,
        source: &w.source,
        ranks: w.ranks,
        groups: &w.groups,
        repeat: w.repeat,
        hbm_bytes_per_rank: w.hbm_bytes_per_rank,
        tokens_per_step: w.tokens_per_step,
        serving: &w.serving,
    };
    let mut tree = serde_json::to_value(&head).map_err(|e| e.to_string())?;
    let mut nodes = vec![Value::Null; w.nodes.len()];
    for &i in keep {
        nodes[i] = serde_json::to_value(&w.nodes[i]).map_err(|e| e.to_string())?;
    }
    if let Value::Object(m) = &mut tree {
        m.insert("nodes".into(), Value::Array(nodes));
    }
    Ok(tree)
}

/// Applies each assignment to `tree`, its errors naming the assignment as given.
fn set_all(tree: &mut Value, flag: &str, assignments: &[String], inner: &[&str]) -> Result<(), String> {
    for (a, p) in assignments.iter().zip(inner) {
        trnsim_system::doc::set_in(tree, flag, p)
            .map_err(|e| e.replacen(&format!("{flag} {p}"), &format!("{flag} {a}"), 1))?;
    }
    Ok(())
}

fn read_error(flag: &str, assignments: &[String], e: serde_json::Error) -> String {
    format!("{flag} {}: {}", assignments.join(" "), e.to_string().replace(" at line 0 column 0", ""))
}

/// [`apply`] on the tree of the whole workload.
pub fn apply_whole(w: &Workload, flag: &str, assignments: &[String]) -> Result<Workload, String> {
    let inner: Vec<&str> = assignments.iter().map(|a| a.strip_prefix("workload.").unwrap_or(a)).collect();
    let mut tree = serde_json::to_value(w).map_err(|e| e.to_string())?;
    set_all(&mut tree, flag, assignments, &inner)?;
    serde_json::from_value(tree).map_err(|e| read_error(flag, assignments, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload() -> Workload {
        let text = r#"Workload(name: "w", ranks: 4, groups: {"pairs": [[0, 1], [2, 3]]}, repeat: 2,
            tokens_per_step: Some(64), hbm_bytes_per_rank: Some(1000000), nodes: [
            (id: 0, name: "a", op: Gemm(m: 128, k: 128, n: 128)),
            (id: 1, name: "b", op: Load(bytes: 4096), data_deps: [0]),
            (id: 2, name: "c", op: Gemm(m: 256, k: 128, n: 128, count: 2), data_deps: [1], ranks: Some([0, 1])),
        ])"#;
        crate::format::parse("w.ron", text).expect("parses").w
    }

    #[test]
    fn the_head_tree_with_every_node_is_the_workloads_tree() {
        let w = workload();
        let all: Vec<usize> = (0..w.nodes.len()).collect();
        assert_eq!(head_tree(&w, &all).unwrap(), serde_json::to_value(&w).unwrap());
    }

    #[test]
    fn overrides_and_their_errors_are_those_of_the_whole_tree() {
        let w = workload();
        for a in [
            "workload.nodes[2].op.Gemm.m=512",
            "nodes[2].m=384",
            "nodes[1].op.Load.bytes=8192",
            "workload.repeat=3",
            "nodes[*].m=1024",
            "nodes[2].op.Gemm.mm=5",
            "nodes[1].op.Gemm.m=5",
            "nodes[9].m=5",
            "nodez[1].m=5",
            "repeet=2",
            "nodes[2].m=x",
            "nodes[2].ranks=Some([0])",
        ] {
            let a = vec![a.to_string()];
            assert_eq!(apply(&w, "--set", &a), apply_whole(&w, "--set", &a), "{a:?}");
        }
        let two = vec!["nodes[1].op.Load.bytes=1".to_string(), "nodes[2].m=640".to_string()];
        let got = apply(&w, "--sweep", &two).unwrap();
        assert_eq!(got, apply_whole(&w, "--sweep", &two).unwrap());
        assert_eq!(got.nodes[0], w.nodes[0]);
    }
}
