//! `trnsim workload frontier`: a sweep of layouts and batches whose marked points are exactly
//! those no other point beats on both tokens/s per user and per chip, with its SVG and JSON
//! written, the same bytes run after run; refused layouts say why.

use crate::common::{root, scratch, trnsim};
use serde_json::Value;

#[test]
fn the_frontier_marks_exactly_the_non_dominated_points() {
    let dir = scratch("serving_frontier");
    let run = |svg: &str, json: &str| {
        let out = trnsim()
            .args(["workload", "frontier", "--model", "gpt-oss-20b", "--system", "trn3-gen1-ultraserver"])
            .args(["--layers", "2", "--tp", "1,2,4", "--ep", "1,4,64", "--per-replica", "1,8", "--dtype", "mxfp8"])
            .args(["--compute", "roofline", "--gemm-efficiency", "0.6", "--svg", svg, "--json", json])
            .current_dir(root())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let f = |n: &str| dir.join(n).to_string_lossy().into_owned();
    let text = run(&f("a.svg"), &f("a.json"));
    assert!(text.contains("on trn3-gen1-ultraserver (64 chips)"), "{text}");
    // EP 64 does not divide 32 experts: refused with the rule.
    assert!(text.contains("refused: tp 1 ep 64 dp 64 batch 64: --experts 32 must divide by --ep 64"), "{text}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(f("a.json")).unwrap()).unwrap();
    let pts = v["points"].as_array().unwrap();
    assert_eq!(pts.len(), 3 * 2 * 2, "{text}");
    let xy = |p: &Value| (p["tokens_per_s_per_user"].as_f64().unwrap(), p["tokens_per_s_per_chip"].as_f64().unwrap());
    for p in pts {
        let (x, y) = xy(p);
        let dominated = pts.iter().any(|q| {
            let (qx, qy) = xy(q);
            (qx >= x && qy > y) || (qx > x && qy >= y)
        });
        assert_eq!(p["frontier"].as_bool().unwrap(), !dominated, "{p}");
    }
    let svg = std::fs::read_to_string(f("a.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("Pareto frontier") && svg.contains("TP 4"));
    run(&f("b.svg"), &f("b.json"));
    for (a, b) in [("a.svg", "b.svg"), ("a.json", "b.json")] {
        assert!(std::fs::read(f(a)).unwrap() == std::fs::read(f(b)).unwrap(), "{a} and {b} differ");
    }
}

#[test]
fn a_frontier_of_a_format_the_chip_lacks_is_refused_before_it_runs() {
    let out = trnsim()
        .args(["workload", "frontier", "--model", "gpt-oss-120b", "--system", "trn2-ultraserver"])
        .current_dir(root())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.lines().count() == 1 && err.contains("no mxfp4 matmul"), "{err}");
    assert!(out.stdout.is_empty());
}
