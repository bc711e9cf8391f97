//! Energy and power of a workload run: the actions each node instance performs
//! ([`actions`]) times the chip's energy table (`trnsim_system::energy`), plus every part's
//! static power over the step, and the power each chip and server draws over time.
//!
//! Energy = sum over node instances and components of (count x energy per action) + sum of
//! static power x the step. Each instance's dynamic energy is spread evenly over its span, so
//! a chip's power is its static power plus the sum of its running spans' powers; the peak is
//! the largest such sum (a span of no duration adds energy, not power). A server draws its
//! chips' power and its share of the switches' static power. Every figure is computed after
//! the schedule, once per node and once per span: nothing per simulated cycle.
//!
//! Left out: energy of work inside a span at a varying rate (a span draws its mean power),
//! the HBM's active-standby power (every stack is counted at its precharged background; a
//! read or write pays its burst, I/O and its share of a row's activation), and what
//! [`actions`] leaves out.

pub mod actions;
mod timeline;

use crate::exec::Report;
use crate::format::Checked;
use actions::Actions;
pub use timeline::{PowerStep, Timeline};
use trnsim_fabric::topo::{NodeKind, Topology};
use trnsim_system::chip::Chip;
use trnsim_system::energy::EnergyTable;

/// Components, in the order of every breakdown: dynamic parts first, then static ones.
pub const PARTS: [&str; 18] = [
    "tensor",
    "vector",
    "scalar",
    "gpsimd",
    "sbuf",
    "psum",
    "dma",
    "hbm",
    "neuronlink",
    "switch",
    "efa",
    "static_cores",
    "static_uncore",
    "static_hbm",
    "static_neuronlink",
    "static_efa",
    "static_host",
    "static_switch",
];
/// The dynamic parts: `PARTS[..DYNAMIC]`.
pub const DYNAMIC: usize = 11;
/// The index of the switch's dynamic part (drawn by a server, not by a chip).
pub const SWITCH: usize = 9;

/// Energy per action of one chip, in pJ.
#[derive(Clone, Debug, PartialEq)]
pub struct Prices {
    macs: [f64; 6],
    vector: f64,
    scalar: f64,
    gpsimd: f64,
    sbuf_per_byte: f64,
    psum_per_byte: f64,
    dma_per_byte: f64,
    hbm_read_per_byte: f64,
    hbm_write_per_byte: f64,
    link_per_bit: f64,
    switch_per_flit: f64,
    efa_per_byte: f64,
}

impl Prices {
    /// The prices of `t` on `chip` (HBM per byte from the stack preset's timing: the burst's
    /// energy and I/O, and one activation and precharge per row of bytes streamed).
    pub fn new(t: &EnergyTable, chip: &Chip) -> Prices {
        let m = &t.tensor_pj_per_mac;
        let (rd, wr) = match &t.hbm_energy {
            Some(h) => {
                let (org, timing) = (&chip.hbm.org, &chip.hbm.timing);
                let p = trnsim_mem::hbm::energy::PerAction::new(h, timing, org);
                let burst = f64::from(org.access_bytes());
                let row = burst * f64::from(org.bursts_per_row());
                let per_row = (p.act + p.pre) / row;
                (p.rd / burst + 8.0 * p.io_pj_per_bit + per_row, p.wr / burst + 8.0 * p.io_pj_per_bit + per_row)
            }
            None => (0.0, 0.0),
        };
        Prices {
            macs: [m.bf16, m.fp16, m.fp8, m.mxfp8, m.mxfp4, m.fp32],
            vector: t.vector_pj_per_op,
            scalar: t.scalar_pj_per_op,
            gpsimd: t.gpsimd_pj_per_op,
            sbuf_per_byte: t.sbuf_access.pj_per_access / f64::from(t.sbuf_access.access_bytes),
            psum_per_byte: t.psum_access.pj_per_access / f64::from(t.psum_access.access_bytes),
            dma_per_byte: t.dma_pj_per_byte,
            hbm_read_per_byte: rd,
            hbm_write_per_byte: wr,
            link_per_bit: t.neuronlink_serdes.pj_per_bit,
            switch_per_flit: t.fabric_switch.pj_per_flit,
            efa_per_byte: t.efa_nic.pj_per_byte,
        }
    }

    /// The dynamic energy of `a` by part ([`PARTS`]`[..DYNAMIC]`), in pJ.
    pub fn energy(&self, a: &Actions) -> [f64; DYNAMIC] {
        let tensor: f64 = a.macs.iter().zip(&self.macs).map(|(n, p)| n * p).sum();
        [
            tensor,
            a.vector_ops * self.vector,
            a.scalar_ops * self.scalar,
            a.gpsimd_ops * self.gpsimd,
            a.sbuf_bytes * self.sbuf_per_byte,
            a.psum_bytes * self.psum_per_byte,
            a.dma_bytes * self.dma_per_byte,
            a.hbm_read_bytes * self.hbm_read_per_byte + a.hbm_write_bytes * self.hbm_write_per_byte,
            a.link_bits * self.link_per_bit,
            a.switch_flits * self.switch_per_flit,
            a.efa_bytes * self.efa_per_byte,
        ]
    }
}

pub use trnsim_system::energy::chip_static_w;
use trnsim_system::energy_stats::wired_ports;

/// The energy report of one run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct EnergyReport {
    /// The energy table's name.
    pub table: String,
    /// Energy by component over the whole system ([`PARTS`]), in J.
    pub parts_j: Vec<(String, f64)>,
    /// Total energy of the step, in J (the sum of `parts_j`).
    pub total_j: f64,
    /// The step, in s.
    pub step_s: f64,
    /// Chips and servers in the system.
    pub chips: usize,
    /// Servers in the system.
    pub servers: usize,
    /// Each chip's static power, W.
    pub chip_static_w: Vec<f64>,
    /// Each chip's mean power over the step, W.
    pub chip_avg_w: Vec<f64>,
    /// Each chip's peak power, W.
    pub chip_peak_w: Vec<f64>,
    /// Each server's mean power, W.
    pub server_avg_w: Vec<f64>,
    /// Each server's peak power, W.
    pub server_peak_w: Vec<f64>,
    /// Floating-point operations of the step (2 per MAC).
    pub flops: f64,
    /// The system's capital cost (chips, servers, NICs, switches, cables), USD.
    pub capex_usd: f64,
    /// The capital cost of one step (straight-line amortization over the step), USD.
    pub capex_per_step_usd: f64,
    /// The energy bill of one step (the step's energy x PUE at the electricity price), USD.
    pub energy_cost_per_step_usd: f64,
    /// The cost of owning the system for one step, USD.
    pub cost_per_step_usd: f64,
    /// The facility's PUE (for power at the wall).
    pub pue: f64,
    /// Each rank's power over time, by dynamic part (for traces).
    #[serde(skip)]
    pub timelines: Vec<Timeline>,
}

/// The energy of `rep` (a run of `c` on `chip`, `topo`) with table `t`.
pub fn account(c: &Checked, rep: &Report, chip: &Chip, topo: Option<&Topology>, t: &EnergyTable) -> EnergyReport {
    let prices = Prices::new(t, chip);
    let chips = topo.map_or(1, |x| x.chips);
    let per_server = topo.map_or(1, |x| x.chips_per_server.max(1)).min(chips);
    let servers = chips.div_ceil(per_server);
    // One price per node: every instance of a node does the same work.
    let rows = chip.core.tensor.rows;
    let node_pj: Vec<[f64; DYNAMIC]> = (0..c.w.nodes.len())
        .map(|i| {
            let a = actions::of_local(&c.w.nodes[i].op, rows)
                .or_else(|| actions::of_comm(c, i, topo, t.fabric_switch.flit_bytes))
                .unwrap_or_default();
            prices.energy(&a)
        })
        .collect();
    let flops: f64 = rep
        .spans
        .iter()
        .map(|s| 2.0 * actions::of_local(&c.w.nodes[s.node].op, rows).map_or(0.0, |a| a.macs.iter().sum()))
        .sum();
    let step_s = rep.step_ns / 1e9;
    let (ports, switch_ports) = wired_ports(topo, chips);
    let statics: Vec<[f64; 6]> = ports.iter().map(|&p| chip_static_w(t, chip, p)).collect();
    let switch_static_w = f64::from(switch_ports) * t.fabric_switch.static_w_per_port;
    let timelines = timeline::build(rep, &node_pj);
    let mut parts = [0.0f64; PARTS.len()];
    let mut chip_dyn_j = vec![0.0f64; chips];
    for tl in &timelines {
        for (k, j) in tl.energy_j.iter().enumerate() {
            parts[k] += j;
            if k != SWITCH {
                chip_dyn_j[tl.rank as usize] += j;
            }
        }
    }
    for s in &statics {
        for (k, w) in s.iter().enumerate() {
            parts[DYNAMIC + k] += w * step_s;
        }
    }
    parts[PARTS.len() - 1] = switch_static_w * step_s;
    let chip_static_w: Vec<f64> = statics.iter().map(|s| s.iter().sum()).collect();
    let avg = |k: usize, dyn_j: f64| if step_s > 0.0 { chip_static_w[k] + dyn_j / step_s } else { chip_static_w[k] };
    let chip_avg_w: Vec<f64> = (0..chips).map(|k| avg(k, chip_dyn_j[k])).collect();
    let mut chip_peak_w = chip_static_w.clone();
    for tl in &timelines {
        chip_peak_w[tl.rank as usize] += tl.peak_chip_w;
    }
    let share = switch_static_w / servers as f64;
    let mut server_avg_w = vec![share; servers];
    let mut server_peak_w = vec![share; servers];
    for k in 0..chips {
        server_avg_w[k / per_server] += chip_avg_w[k];
    }
    for (s, peak) in timeline::server_peaks(&timelines, per_server, servers).into_iter().enumerate() {
        let statics: f64 = (s * per_server..((s + 1) * per_server).min(chips)).map(|k| chip_static_w[k]).sum();
        server_peak_w[s] += statics + peak;
    }
    for tl in &timelines {
        let switch_j = tl.energy_j[SWITCH];
        if step_s > 0.0 {
            server_avg_w[tl.rank as usize / per_server] += switch_j / step_s;
        }
    }
    let total_j: f64 = parts.iter().sum();
    let tco = &t.tco;
    let switches = topo.map_or(0, |x| x.nodes.iter().filter(|n| n.kind == NodeKind::Switch).count());
    let cable_ends = f64::from(ports.iter().sum::<u32>() + switch_ports);
    let capex_usd = chips as f64 * (tco.chip_usd + tco.server_usd_per_chip + tco.nic_usd)
        + switches as f64 * tco.switch_usd
        + cable_ends * tco.cable_usd_per_port;
    let capex_per_step_usd = capex_usd * step_s / (tco.amortization_years * 365.25 * 86_400.0);
    // J -> kWh: / 3.6e6.
    let energy_cost_per_step_usd = total_j * tco.pue / 3.6e6 * tco.usd_per_kwh;
    EnergyReport {
        table: t.name.clone(),
        parts_j: PARTS.iter().zip(parts).map(|(n, j)| (n.to_string(), j)).collect(),
        total_j,
        step_s,
        chips,
        servers,
        chip_static_w,
        chip_avg_w,
        chip_peak_w,
        server_avg_w,
        server_peak_w,
        flops,
        capex_usd,
        capex_per_step_usd,
        energy_cost_per_step_usd,
        cost_per_step_usd: capex_per_step_usd + energy_cost_per_step_usd,
        pue: tco.pue,
        timelines,
    }
}

/// The largest of `v` (0 when empty).
pub fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, f64::max)
}

impl EnergyReport {
    /// Headline figures (units in the names): total energy, mean and peak power per chip (the
    /// busiest) and per server, and performance per watt; with `tokens` (a step's), tokens
    /// per joule. The energy by component is in the report itself (`parts_j`).
    pub fn headline(&self, tokens: Option<u64>) -> Vec<(String, f64)> {
        let mut h = vec![("energy_J".to_string(), self.total_j)];
        let mean = |v: &[f64]| if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
        h.push(("chip_avg_power_W".into(), mean(&self.chip_avg_w)));
        h.push(("chip_peak_power_W".into(), max(&self.chip_peak_w)));
        h.push(("server_avg_power_W".into(), mean(&self.server_avg_w)));
        h.push(("server_peak_power_W".into(), max(&self.server_peak_w)));
        h.push(("GFLOPS_per_W".into(), if self.total_j > 0.0 { self.flops / self.total_j / 1e9 } else { 0.0 }));
        h.push(("cost_per_step_uUSD".into(), self.cost_per_step_usd * 1e6));
        if let Some(t) = tokens.filter(|&t| t > 0) {
            let t = t as f64;
            h.push(("tokens_per_J".into(), if self.total_j > 0.0 { t / self.total_j } else { 0.0 }));
            h.push(("USD_per_Mtoken".into(), self.cost_per_step_usd / t * 1e6));
            // Tokens per second per kW of IT power = tokens per kJ.
            h.push(("tokens_per_s_per_kW".into(), if self.total_j > 0.0 { t / self.total_j * 1e3 } else { 0.0 }));
        }
        h
    }
}

#[cfg(test)]
mod tests;
