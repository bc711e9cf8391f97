//! `--profile FILE` writes a Chrome JSON profile of the simulator's own wall-clock time whose
//! spans name the phases of a command: the command, each benchmark or what-if point, a
//! system's build and simulation, and the simulation alone, nested in that order.

use crate::common::{scratch, trnsim};

/// (name, args, begin us, end us) of every span, in the order they began.
fn spans(path: &std::path::Path) -> Vec<(String, String, f64, f64)> {
    let text = std::fs::read_to_string(path).expect("the profile");
    let events: Vec<serde_json::Value> = serde_json::from_str(&text).expect("a JSON array of trace events");
    let mut open: Vec<(String, String, f64)> = Vec::new();
    let mut done = Vec::new();
    for e in &events {
        let name = e["name"].as_str().unwrap_or_default().to_string();
        let args = e.get("args").map(|a| a.to_string()).unwrap_or_default();
        match e["ph"].as_str() {
            Some("B") => open.push((name, args, e["ts"].as_f64().expect("ts"))),
            Some("E") => {
                let (n, a, b) = open.pop().expect("an end has its begin");
                assert_eq!(n, name, "spans nest");
                done.push((n, a, b, e["ts"].as_f64().expect("ts")));
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "every span ends: {open:?}");
    done.sort_by(|x, y| x.2.total_cmp(&y.2));
    done
}

/// The span named `name` (the first), checked to lie inside `outer`.
fn inside<'a>(
    all: &'a [(String, String, f64, f64)],
    name: &str,
    outer: &(String, String, f64, f64),
) -> &'a (String, String, f64, f64) {
    let s = all.iter().find(|s| s.0 == name).unwrap_or_else(|| panic!("no {name:?} span in {all:?}"));
    assert!(s.2 >= outer.2 && s.3 <= outer.3, "{name:?} lies inside {:?}: {all:?}", outer.0);
    s
}

#[test]
fn a_profile_names_the_command_its_points_the_build_and_the_simulation() {
    let d = scratch("profile-spans");
    let p = d.join("run.json");
    let out = trnsim()
        .args(["--profile", p.to_str().unwrap(), "run", "e2e-llm-layer", "--fidelity", "fast"])
        .output()
        .expect("run trnsim");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let all = spans(&p);
    let command = &all[0];
    assert_eq!((command.0.as_str(), command.1.as_str()), ("command", r#"{"name":"\"run\""}"#), "{all:?}");
    let point = inside(&all, "point", command);
    assert!(point.1.contains("e2e-llm-layer"), "the point's label: {point:?}");
    let system = inside(&all, "build and simulate", point);
    let sim = inside(&all, "simulate", system);
    assert!(sim.3 > sim.2, "the simulation takes time: {sim:?}");

    let p = d.join("hbm.json");
    let out = trnsim()
        .args(["--profile", p.to_str().unwrap(), "hbm", "--pattern", "random", "--requests", "2000"])
        .output()
        .expect("run trnsim");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let all = spans(&p);
    assert_eq!(all[0].1, r#"{"name":"\"hbm\""}"#, "{all:?}");
    inside(&all, "simulate", &all[0]);
}
