//! Power over simulated time: each span draws its node's dynamic energy evenly over its
//! length; a rank's power is the sum of its running spans'.

use super::{DYNAMIC, SWITCH};
use crate::exec::Report;

/// From `t_ns` on, a rank draws `w` (W by dynamic part) until the next step.
#[derive(Clone, Debug, PartialEq)]
pub struct PowerStep {
    /// Start, in ns.
    pub t_ns: f64,
    /// Power by dynamic part, W.
    pub w: [f64; DYNAMIC],
}

/// One rank's dynamic energy and power over the step.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// The rank (its chip).
    pub rank: u32,
    /// Dynamic energy by part, J.
    pub energy_j: [f64; DYNAMIC],
    /// Power steps in time order (the first at the first span's start; 0 W before it).
    pub steps: Vec<PowerStep>,
    /// The largest dynamic power of the chip (every part but the switches'), W.
    pub peak_chip_w: f64,
}

/// One rank's timeline from its spans (node index, start, end) and the nodes' energies (pJ).
fn rank_timeline(rank: u32, spans: &[(usize, f64, f64)], node_pj: &[[f64; DYNAMIC]]) -> Timeline {
    let mut energy_j = [0.0; DYNAMIC];
    // (time, 0 = end before 1 = start, order, power delta in W).
    let mut events: Vec<(f64, u8, usize, [f64; DYNAMIC])> = Vec::with_capacity(2 * spans.len());
    for (k, &(node, s, e)) in spans.iter().enumerate() {
        let pj = &node_pj[node];
        for (acc, p) in energy_j.iter_mut().zip(pj) {
            *acc += p * 1e-12;
        }
        if e > s {
            // pJ / ns = mW.
            let w = pj.map(|p| p / (e - s) * 1e-3);
            events.push((s, 1, k, w));
            events.push((e, 0, k, w.map(|x| -x)));
        }
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut now = [0.0f64; DYNAMIC];
    let mut running = 0usize;
    let mut steps: Vec<PowerStep> = Vec::new();
    let mut peak = 0.0f64;
    for (t, kind, _, d) in &events {
        if *kind == 1 {
            running += 1;
            now.iter_mut().zip(d).for_each(|(n, x)| *n += x);
        } else {
            running -= 1;
            now.iter_mut().zip(d).for_each(|(n, x)| *n += x);
            if running == 0 {
                // No drift of rounding while nothing runs.
                now = [0.0; DYNAMIC];
            }
        }
        let w = now.map(|x| x.max(0.0));
        match steps.last_mut() {
            Some(last) if last.t_ns == *t => last.w = w,
            _ => steps.push(PowerStep { t_ns: *t, w }),
        }
    }
    // The peak over the settled steps (every event at a time applied).
    for s in &steps {
        let chip: f64 = s.w.iter().enumerate().filter(|(k, _)| *k != SWITCH).map(|(_, x)| x).sum();
        peak = peak.max(chip);
    }
    Timeline { rank, energy_j, steps, peak_chip_w: peak }
}

/// Every rank's timeline, in rank order (ranks without spans have none).
pub fn build(rep: &Report, node_pj: &[[f64; DYNAMIC]]) -> Vec<Timeline> {
    let mut per_rank: Vec<Vec<(usize, f64, f64)>> = vec![Vec::new(); rep.ranks.len()];
    for s in &rep.spans {
        per_rank[s.rank as usize].push((s.node, s.start_ns, s.end_ns));
    }
    per_rank
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.is_empty())
        .map(|(r, s)| rank_timeline(r as u32, s, node_pj))
        .collect()
}

/// The largest dynamic power (every part) of each server's ranks together: chips
/// `s x per_server ..` share server `s`.
pub fn server_peaks(timelines: &[Timeline], per_server: usize, servers: usize) -> Vec<f64> {
    let mut out = vec![0.0f64; servers];
    for (s, peak) in out.iter_mut().enumerate() {
        let members: Vec<&Timeline> = timelines.iter().filter(|t| t.rank as usize / per_server == s).collect();
        let mut events: Vec<(f64, usize, f64)> = Vec::new();
        for (m, t) in members.iter().enumerate() {
            events.extend(t.steps.iter().map(|st| (st.t_ns, m, st.w.iter().sum::<f64>())));
        }
        events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut now = vec![0.0f64; members.len()];
        let mut i = 0;
        while i < events.len() {
            let t = events[i].0;
            while i < events.len() && events[i].0 == t {
                now[events[i].1] = events[i].2;
                i += 1;
            }
            *peak = peak.max(now.iter().sum());
        }
    }
    out
}
