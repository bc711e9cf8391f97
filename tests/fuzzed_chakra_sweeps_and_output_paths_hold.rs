//! Properties of the newer surfaces under seeded hostile inputs (`make fuzz` raises the count):
//! every Chakra trace the reader accepts is a checked workload within the caps, every one it
//! refuses gets one line located in a trace file (never in text trnsim generated); every
//! sweep list is refused in one line or expands to the product of its value counts with no
//! path swept twice; and output paths are refused exactly when one names the same file as an
//! input or another output (by another spelling, a hard link or a symlink).

use crate::common::{fuzz_bytes, hostile_number, is_located, mutate, scratch, FuzzBudget};
use arbitrary::Unstructured;
use std::path::{Path, PathBuf};
use trnsim_benchmarks::outputs::{self, named};
use trnsim_harness::whatif::{self, Sweep, MAX_POINTS};
use trnsim_workloads::chakra;
use trnsim_workloads::format::{MAX_NODES, MAX_RANKS};

/// Rank files in the jsonizer's form: metadata, compute, memory and collective nodes, with
/// dependencies (one through a metadata node).
fn chakra_rank(r: u64) -> String {
    format!(
        r#"{{"version": "0.0.4"}}
{{"id": "1", "name": "mm", "type": "COMP_NODE", "attr": [{{"name": "num_ops", "int64Val": "4000000000"}}, {{"name": "tensor_size", "int64Val": "1048576"}}]}}
{{"id": "2", "name": "meta", "type": "METADATA_NODE", "dataDeps": ["1"]}}
{{"id": "3", "name": "ar", "type": "COMM_COLL_NODE", "dataDeps": ["2"],
  "attr": [{{"name": "comm_type", "int64Val": "0"}}, {{"name": "comm_size", "int64Val": "1048576"}}]}}
{{"id": "4", "name": "ld", "type": "MEM_LOAD_NODE", "ctrlDeps": ["1"], "attr": [{{"name": "tensor_size", "int64Val": "65536"}}]}}
{{"id": "5", "name": "tail{r}", "type": "COMP_NODE", "dataDeps": ["3", "4", "3"], "durationMicros": "{}"}}
"#,
        r + 2
    )
}

#[test]
fn fuzz_chakra_traces_are_read_or_refused_in_the_trace() {
    let budget = FuzzBudget::from_env(200);
    for seed in budget.seeds() {
        let bytes = fuzz_bytes(seed, 2048);
        let mut u = Unstructured::new(&bytes);
        let ranks = 1 + u.int_in_range(0..=3u64).unwrap_or(0);
        let files: Vec<(String, String)> = (0..ranks)
            .map(|r| {
                let base = chakra_rank(r);
                let text = if u.ratio(1u8, 2u8).unwrap_or(true) { mutate(&base, &mut u) } else { base };
                (format!("et.{r}.json"), text)
            })
            .collect();
        let replicate = match u.int_in_range(0..=3u8).unwrap_or(0) {
            0 => (hostile_number(&mut u) % (u64::from(MAX_RANKS) * 2)) as u32,
            _ => 1 + u.int_in_range(0..=3u32).unwrap_or(0),
        };
        let r =
            std::panic::catch_unwind(|| chakra::read_replicated("et", &files, replicate).map_err(|e| e.to_string()));
        match r {
            Err(_) => panic!("the Chakra reader panicked (replicate {replicate}) on\n{files:?}"),
            Ok(Ok(imp)) => {
                let w = &imp.workload.w;
                assert_eq!(u64::from(w.ranks), ranks * u64::from(replicate), "{files:?}");
                assert!(w.nodes.len() <= MAX_NODES && !w.nodes.is_empty());
                for n in &w.nodes {
                    let mut d = n.data_deps.clone();
                    d.sort_unstable();
                    d.dedup();
                    assert_eq!(d.len(), n.data_deps.len(), "a dependency kept twice: {n:?}");
                }
            }
            Ok(Err(e)) => {
                assert!(is_located(&e), "unlocated: {e}\n{files:?}");
                assert!(e.starts_with("et."), "not located in a trace file: {e}");
                assert!(!e.contains("read from Chakra"), "located in generated text: {e}");
            }
        }
    }
}

#[test]
fn fuzz_sweeps_expand_to_their_product_or_are_refused() {
    const PATHS: [&str; 6] =
        ["chip.hbm.stacks", "fabric.switch.latency", "chip.hbm.stacks", "workload.repeat", "a+b", "chip.dma.queues"];
    let budget = FuzzBudget::from_env(500);
    for seed in budget.seeds() {
        let bytes = fuzz_bytes(seed, 512);
        let mut u = Unstructured::new(&bytes);
        let n = u.int_in_range(0..=3usize).unwrap_or(0);
        let mut texts = Vec::new();
        for _ in 0..n {
            let path = PATHS[u.choose_index(PATHS.len()).unwrap_or(0)];
            let k = match u.int_in_range(0..=4u8).unwrap_or(0) {
                0 => (hostile_number(&mut u) % 200) as usize,
                _ => u.int_in_range(0..=5usize).unwrap_or(0),
            };
            let width = path.split('+').count();
            let vals: Vec<String> = (0..k)
                .map(|i| {
                    let v: Vec<String> = (0..width).map(|j| format!("{}", i * 7 + j)).collect();
                    let mut v = v.join("+");
                    if u.ratio(1u8, 16u8).unwrap_or(false) {
                        v.clear(); // an empty value
                    }
                    v
                })
                .collect();
            texts.push(format!("{path}={}", vals.join(",")));
        }
        let parsed: Result<Vec<Sweep>, String> = texts.iter().map(|t| t.parse::<Sweep>()).collect();
        let r = std::panic::catch_unwind(|| parsed.clone().and_then(|s| whatif::points(&s).map(|p| (s, p))));
        match r {
            Err(_) => panic!("sweeps panicked on {texts:?}"),
            Ok(Ok((sweeps, points))) => {
                let product: usize = sweeps.iter().map(|s| s.values.len()).product();
                assert_eq!(points.len(), product, "{texts:?}");
                assert!(points.len() <= MAX_POINTS);
                let mut paths: Vec<&String> = sweeps.iter().flat_map(|s| &s.paths).collect();
                let all = paths.len();
                paths.sort();
                paths.dedup();
                assert_eq!(paths.len(), all, "a path swept twice was accepted: {texts:?}");
                for p in &points {
                    assert_eq!(p.len(), all, "{texts:?}");
                }
            }
            Ok(Err(e)) => assert!(e.starts_with("--sweep") || e.contains("points"), "{e} from {texts:?}"),
        }
    }
}

#[test]
fn fuzz_output_paths_are_refused_exactly_when_they_name_an_input_or_each_other() {
    let d = scratch("fuzz_output_paths");
    std::fs::create_dir_all(d.join("sub")).unwrap();
    let input = d.join("in.ron");
    std::fs::write(&input, "x").unwrap();
    std::fs::hard_link(&input, d.join("hard.ron")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&input, d.join("soft.ron")).unwrap();
    // Names for the input (each the same file) and fresh names (each a new file).
    let same: Vec<PathBuf> = vec![
        input.clone(),
        d.join(".").join("in.ron"),
        d.join("sub").join("..").join("in.ron"),
        d.join("hard.ron"),
        #[cfg(unix)]
        d.join("soft.ron"),
    ];
    let fresh: Vec<PathBuf> = (0..6).map(|i| d.join(format!("out{i}.json"))).collect();
    let spelled = |p: &Path, k: u8| -> PathBuf {
        match k {
            0 => p.to_path_buf(),
            _ => p.parent().map_or(p.to_path_buf(), |dir| dir.join(".").join(p.file_name().unwrap_or_default())),
        }
    };
    let budget = FuzzBudget::from_env(2000);
    for seed in budget.seeds() {
        let bytes = fuzz_bytes(seed, 256);
        let mut u = Unstructured::new(&bytes);
        let n = 1 + u.int_in_range(0..=3usize).unwrap_or(0);
        let mut outs: Vec<(PathBuf, usize)> = Vec::new(); // (path, identity class)
        for _ in 0..n {
            if u.ratio(1u8, 4u8).unwrap_or(false) {
                let p = &same[u.choose_index(same.len()).unwrap_or(0)];
                outs.push((p.clone(), 0));
            } else {
                let i = u.choose_index(fresh.len()).unwrap_or(0);
                outs.push((spelled(&fresh[i], u.int_in_range(0..=1u8).unwrap_or(0)), 1 + i));
            }
        }
        let ins = [named("--workload", &input)];
        let out_named: Vec<_> = outs.iter().map(|(p, _)| named("--json", p)).collect();
        let got = std::panic::catch_unwind(|| outputs::check(&ins, &out_named));
        let Ok(got) = got else { panic!("outputs::check panicked on {outs:?}") };
        let mut classes: Vec<usize> = outs.iter().map(|o| o.1).collect();
        let clash = classes.contains(&0) || {
            classes.sort_unstable();
            classes.windows(2).any(|w| w[0] == w[1])
        };
        match got {
            Ok(()) => assert!(!clash, "accepted a clash: {outs:?}"),
            Err(e) => {
                assert!(clash, "refused distinct outputs: {e} for {outs:?}");
                assert!(!e.contains('\n') && e.contains("--json"), "{e}");
            }
        }
    }
    assert_eq!(std::fs::read_to_string(&input).unwrap(), "x", "the input is untouched");
}
