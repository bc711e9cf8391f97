//! Reading a per-node run back into the old model's [`RunResult`], and the one-call run.

use super::chip::ChipNode;
use super::switch::SwitchNode;
use super::{build_collective, CollectiveHandles};
use crate::collective::{Collective, Params, Row, RunResult};
use crate::topo::{EdgeStats, Message, Topology};
use trnsim_kernel::{Cycles, Histogram, SimBuilder, Simulation};

/// The result of a finished run built by [`build_collective`]: the row, per-edge counters
/// (busy time = serialization cycles in picoseconds), every message (in (source, step, send)
/// order, not send-time order; `sent_ps` = its step's issue time), message latency and the
/// kernel's statistics report. Errors if a chip has not finished.
pub fn result(sim: &Simulation, h: &CollectiveHandles) -> Result<RunResult, String> {
    let chip = |c: usize| sim.component::<ChipNode>(h.nodes[c]).ok_or_else(|| format!("chip {c} is missing"));
    let mut finish = 0;
    for c in 0..h.chips {
        let done = chip(c)?.done_ps.ok_or_else(|| format!("{} did not finish (chip {c})", h.coll.op.name()))?;
        finish = finish.max(done);
    }
    let clock = sim.clock(h.clock_id);
    let mut edge_stats = vec![EdgeStats::default(); h.edge_count];
    for (e, &(node, first, k)) in h.edge_links.iter().enumerate() {
        let outs = if node < h.chips {
            chip(node)?.ports.outs()
        } else {
            sim.component::<SwitchNode>(h.nodes[node]).ok_or("a switch is missing")?.ports.outs()
        };
        for o in &outs[first..first + k] {
            let s = &mut edge_stats[e];
            s.bytes += o.bytes;
            s.packets += o.packets;
            s.busy_ps += clock.cycles_to_dur(Cycles(o.busy_cycles)).as_ps();
        }
    }
    let mut latency = Histogram::new();
    let mut msgs = Vec::with_capacity(h.msgs.len());
    for m in &h.msgs {
        let sent_ps = chip(m.src)?.issued_ps[m.tag as usize].unwrap_or(0);
        let rx = chip(m.dst)?.inbound[m.rx_slot as usize];
        if let Some(d) = rx.done_ps {
            latency.record(d - sent_ps);
        }
        msgs.push(Message {
            src: m.src,
            dst: m.dst,
            bytes: m.bytes,
            tag: m.tag,
            sent_ps,
            left: u64::from(rx.left),
            delivered_bytes: rx.got,
            done_ps: rx.done_ps,
        });
    }
    let time_s = finish as f64 * 1e-12;
    let algbw = if finish == 0 { 0.0 } else { h.size as f64 / time_s / 1e9 };
    let busbw = algbw * h.coll.op.busbw_factor(h.chips);
    let row = Row { size_bytes: h.size, time_us: time_s * 1e6, algbw_gbps: algbw, busbw_gbps: busbw };
    Ok(RunResult { row, algo: h.coll.algo, edge_stats, msgs, latency, finish_ps: finish, report: sim.report() })
}

/// Builds `coll` on `topo` per node into a fresh simulation, runs it until idle (at most
/// `p.limit`) and returns the result: the per-node counterpart of [`crate::collective::run`].
pub fn run_kernel(topo: &Topology, coll: Collective, size: u64, p: &Params) -> Result<RunResult, String> {
    run_kernel_with(SimBuilder::new(), topo, coll, size, p)
}

/// [`run_kernel`] on a caller's builder (e.g. one made with `SimBuilder::with_options`).
pub fn run_kernel_with(
    mut b: SimBuilder,
    topo: &Topology,
    coll: Collective,
    size: u64,
    p: &Params,
) -> Result<RunResult, String> {
    let h = build_collective(&mut b, topo, coll, size, p)?;
    let mut sim = b.build().map_err(|e| e.to_string())?;
    sim.run_until_idle(p.limit).map_err(|e| e.to_string())?;
    result(&sim, &h)
}
