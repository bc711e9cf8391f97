//! `trnsim workload frontier`: an inference model's serving frontier on one system. Every
//! layout (TP, EP, DP over the system's chips) and batch of a grid is generated, run on the
//! system, and placed by tokens/s per user (x) and tokens/s per chip (y); the Pareto
//! frontier is the points no other beats on both, the way inference benchmarks publish it.
//!
//! One cost model serves every point (its memory runs and collective simulations are cached
//! across points) at one GEMM efficiency (measured on the system's cycle-level chip once, or
//! given). Points the layout rules or the chip's HBM refuse are listed with the reason, not
//! run. Left out: pipeline parallelism (serving runs one stage), and batching policies
//! (continuous batching, chunked prefill): each point is one step at one batch.

use trnsim_benchmarks::plot::{Plot, Series};
use trnsim_system::doc::Resolved;
use trnsim_workloads::costs::SystemCosts;
use trnsim_workloads::exec;
use trnsim_workloads::format;
use trnsim_workloads::llm::Llm;

/// One point of the grid that ran.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Point {
    /// Tensor-parallel degree.
    pub tp: u32,
    /// Expert-parallel degree.
    pub ep: u32,
    /// Data-parallel degree.
    pub dp: u32,
    /// Sequences over all replicas.
    pub batch: u64,
    /// The step's time (time per output token at decode, time to first token at prefill), ms.
    pub step_ms: f64,
    /// Tokens/s per chip.
    pub tokens_per_s_per_chip: f64,
    /// Tokens/s per user.
    pub tokens_per_s_per_user: f64,
    /// On the Pareto frontier.
    pub frontier: bool,
}

/// The grid: TP degrees, EP degrees, sequences per replica.
pub struct Grid {
    /// TP degrees (DP fills the chips: chips / tp).
    pub tps: Vec<u32>,
    /// EP degrees.
    pub eps: Vec<u32>,
    /// Sequences per data-parallel replica.
    pub per_replica: Vec<u64>,
    /// Chips used (at most the system's).
    pub chips: u32,
}

/// The points that ran (frontier marked), and the ones refused with their reasons.
/// With `cycle` (its threads and on-disk cache), compute nodes run as the kernel library's
/// programs on the cycle-level chip, each distinct program once for the whole sweep: every
/// point's nodes are gathered first and their programs simulated on the threads, then the
/// points run in grid order; else the roofline at `efficiency`.
pub fn sweep(
    base: &Llm,
    sys: &Resolved,
    grid: &Grid,
    efficiency: f64,
    cycle: Option<&trnsim_kernels::run::OpRuns>,
) -> Result<(Vec<Point>, Vec<String>), String> {
    let chip = sys.chip().ok_or("the frontier runs on a system with chips")?;
    let roofline = SystemCosts::new(chip, sys.fabric(), efficiency);
    let mut costs: Box<dyn trnsim_workloads::exec::Costs + '_> = match cycle {
        Some(ops) => Box::new(trnsim_kernels::cycle::CycleCosts::new(roofline).with_op_runs(ops.clone())),
        None => Box::new(roofline),
    };
    let (runs, refused) = points(base, chip, grid)?;
    let ops: Vec<&format::Op> = runs
        .iter()
        .flat_map(|(_, c)| c.w.nodes.iter().map(|n| &n.op))
        .filter(|op| op.queue() == format::Queue::Compute)
        .collect();
    costs.prepare(&ops);
    let mut points = Vec::with_capacity(runs.len());
    for (llm, c) in &runs {
        let r = exec::run(c, grid.chips as usize, costs.as_mut())?;
        let f = crate::workload::serving_figures(&c.w, r.step_ns);
        let get = |k: &str| f.iter().find(|x| x.0 == k).map_or(0.0, |x| x.1);
        points.push(Point {
            tp: llm.tp,
            ep: llm.ep,
            dp: llm.dp,
            batch: llm.batch,
            step_ms: r.step_ns / 1e6,
            tokens_per_s_per_chip: get("tokens_per_s_per_chip"),
            tokens_per_s_per_user: get("tokens_per_s_per_user"),
            frontier: false,
        });
    }
    mark_frontier(&mut points);
    Ok((points, refused))
}

/// The grid's points as checked workloads (in grid order), and the ones refused with their
/// reasons.
#[allow(clippy::type_complexity)]
fn points(
    base: &Llm,
    chip: &trnsim_system::chip::Chip,
    grid: &Grid,
) -> Result<(Vec<(Llm, format::Checked)>, Vec<String>), String> {
    let have = chip.hbm_capacity_bytes();
    let (mut runs, mut refused) = (Vec::new(), Vec::new());
    for &tp in &grid.tps {
        if tp == 0 || !grid.chips.is_multiple_of(tp) {
            refused.push(format!("tp {tp}: does not divide {} chips", grid.chips));
            continue;
        }
        let dp = grid.chips / tp;
        for &ep in &grid.eps {
            for &b in &grid.per_replica {
                let llm = Llm { tp, ep, dp, pp: 1, batch: b * u64::from(dp), ..base.clone() };
                let at = format!("tp {tp} ep {ep} dp {dp} batch {}", llm.batch);
                if let Err(e) = llm.check() {
                    refused.push(format!("{at}: {e}"));
                    break;
                }
                if llm.hbm_bytes_per_rank() > have {
                    let gib = |v: u64| v as f64 / (1u64 << 30) as f64;
                    refused.push(format!(
                        "{at}: needs {:.1} GiB of HBM per rank, the chip has {:.1} GiB",
                        gib(llm.hbm_bytes_per_rank()),
                        gib(have)
                    ));
                    break;
                }
                let w = llm.generate("trnsim workload frontier")?;
                let text = format::to_ron(&w)?;
                let c = format::parse("frontier.ron", &text).map_err(|e| e.to_string())?;
                trnsim_workloads::costs::check_formats(&c, chip)?;
                runs.push((llm, c));
            }
        }
    }
    Ok((runs, refused))
}

/// Marks the points no other point beats on both tokens/s per user and per chip.
pub fn mark_frontier(points: &mut [Point]) {
    let mut order: Vec<usize> = (0..points.len()).collect();
    // By tokens/s per user, highest first (ties: more per chip first, then grid order).
    order.sort_by(|&a, &b| {
        let (pa, pb) = (&points[a], &points[b]);
        pb.tokens_per_s_per_user
            .total_cmp(&pa.tokens_per_s_per_user)
            .then(pb.tokens_per_s_per_chip.total_cmp(&pa.tokens_per_s_per_chip))
            .then(a.cmp(&b))
    });
    let mut best = f64::NEG_INFINITY;
    for i in order {
        if points[i].tokens_per_s_per_chip > best {
            best = points[i].tokens_per_s_per_chip;
            points[i].frontier = true;
        }
    }
}

/// The points as a table, the frontier's rows marked `*`, by tokens/s per user.
pub fn table(points: &[Point], time: &str) -> String {
    let mut sorted: Vec<&Point> = points.iter().collect();
    sorted.sort_by(|a, b| b.tokens_per_s_per_user.total_cmp(&a.tokens_per_s_per_user));
    let mut s = format!(
        "{:>4} {:>4} {:>4} {:>6} {:>10} {:>16} {:>16}  frontier\n",
        "tp", "ep", "dp", "batch", time, "tok/s/chip", "tok/s/user"
    );
    for p in sorted {
        s += &format!(
            "{:>4} {:>4} {:>4} {:>6} {:>10.3} {:>16.1} {:>16.1}  {}\n",
            p.tp,
            p.ep,
            p.dp,
            p.batch,
            p.step_ms,
            p.tokens_per_s_per_chip,
            p.tokens_per_s_per_user,
            if p.frontier { "*" } else { "" }
        );
    }
    s.lines().map(str::trim_end).collect::<Vec<_>>().join("\n") + "\n"
}

/// An SVG of every point (a series per TP degree, by tokens/s per user) and the frontier.
pub fn svg(title: &str, points: &[Point]) -> String {
    let mut tps: Vec<u32> = points.iter().map(|p| p.tp).collect();
    tps.sort_unstable();
    tps.dedup();
    let curve = |name: String, mut v: Vec<(f64, f64)>| {
        v.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        Series { name, points: v }
    };
    let xy = |p: &Point| (p.tokens_per_s_per_user, p.tokens_per_s_per_chip);
    let mut series: Vec<Series> = tps
        .iter()
        .map(|&tp| curve(format!("TP {tp}"), points.iter().filter(|p| p.tp == tp).map(xy).collect()))
        .collect();
    series.push(curve("Pareto frontier".into(), points.iter().filter(|p| p.frontier).map(xy).collect()));
    Plot {
        title: title.into(),
        x_label: "tokens/s per user".into(),
        y_label: "tokens/s per chip".into(),
        series,
        log_y: true,
    }
    .to_svg()
}
