//! Energy of a cycle-level run (a benchmark on a system) from the statistics its models already
//! keep, priced by the chip's energy table after the run: the tensor engines' flops (2 per
//! MAC), the vector, scalar and GpSimd engines' element operations, SBUF/PSUM bytes, DMA bytes,
//! each HBM stack's commands and data bits (as `trnsim hbm` prices them), the bytes sent on
//! every NeuronLink (chip and switch ends) and the flits leaving switches; plus every chip's and
//! switch port's static power over the simulated time.
//!
//! Left out: the format of a matmul (the engines count flops, not formats: every MAC is priced
//! at the table's BF16 figure), PSUM's own price (the core's memory unit counts SBUF and PSUM
//! bytes together, priced as SBUF), the HBM's active-standby power above its precharged
//! background, and power over time (a cycle-level run reports its mean power only).

use crate::chip::Chip;
use crate::energy::EnergyTable;
use trnsim_fabric::topo::{NodeKind, Topology};
use trnsim_kernel::StatsReport;

/// Components of a cycle-level run's energy, in order.
pub const PARTS: [&str; 10] =
    ["tensor", "vector", "scalar", "gpsimd", "sbuf", "dma", "hbm", "neuronlink", "switch", "static"];

/// A cycle-level run's energy.
#[derive(Clone, Debug, PartialEq)]
pub struct StatsEnergy {
    /// Energy by component ([`PARTS`]), J.
    pub parts_j: [f64; 10],
    /// The total, J.
    pub total_j: f64,
    /// Simulated time, s.
    pub sim_s: f64,
    /// Chips in the system.
    pub chips: usize,
    /// Tensor-engine flops.
    pub flops: f64,
}

/// Wired links out of each of `chips` chips, and out of all switches together, on `topo`.
pub fn wired_ports(topo: Option<&Topology>, chips: usize) -> (Vec<u32>, u32) {
    let mut per_chip = vec![0u32; chips];
    let mut switch = 0u32;
    if let Some(t) = topo {
        for e in &t.edges {
            match t.nodes[e.from].kind {
                NodeKind::Chip if e.from < chips => per_chip[e.from] += e.servers,
                NodeKind::Switch => switch += e.servers,
                NodeKind::Chip => {}
            }
        }
    }
    (per_chip, switch)
}

fn int(m: &std::collections::BTreeMap<String, trnsim_kernel::StatValue>, k: &str) -> f64 {
    m.get(k).map_or(0.0, |v| v.as_f64())
}

/// The energy of the run whose statistics are `s`, on `chips` chips of `chip` joined by
/// `topo`, priced by `t`.
pub fn price(s: &StatsReport, t: &EnergyTable, chip: &Chip, topo: Option<&Topology>) -> StatsEnergy {
    let chips = topo.map_or(1, |x| x.chips);
    let mut pj = [0.0f64; 10];
    let mut flops = 0.0;
    let hbm = t.hbm_energy.as_ref().map(|h| {
        let (org, timing) = (&chip.hbm.org, &chip.hbm.timing);
        (trnsim_mem::hbm::energy::PerAction::new(h, timing, org), f64::from(org.access_bytes()))
    });
    for (owner, m) in &s.owners {
        if let Some(link) = owner.strip_prefix("link:") {
            let from = link.split(" -> ").next().unwrap_or("");
            if from.contains(".tx.") {
                let bytes = int(m, "bytes");
                pj[7] += bytes * 8.0 * t.neuronlink_serdes.pj_per_bit;
                if from.starts_with("sw") {
                    pj[8] += (bytes / f64::from(t.fabric_switch.flit_bytes)).ceil() * t.fabric_switch.pj_per_flit;
                }
            }
            continue;
        }
        let last = owner.rsplit('.').next().unwrap_or(owner);
        match last {
            "tensor" => {
                flops += int(m, "flops");
                pj[0] += int(m, "flops") / 2.0 * t.tensor_pj_per_mac.bf16;
            }
            "vector" => pj[1] += int(m, "flops") * t.vector_pj_per_op,
            "scalar" => pj[2] += int(m, "flops") * t.scalar_pj_per_op,
            "gpsimd" => pj[3] += int(m, "flops") * t.gpsimd_pj_per_op,
            "sbuf" => pj[4] += int(m, "bytes") * t.sbuf_access.pj_per_access / f64::from(t.sbuf_access.access_bytes),
            "dma" => pj[5] += int(m, "bytes") * t.dma_pj_per_byte,
            _ if last.starts_with("hbm") && m.contains_key("cmd_ACT") => {
                if let Some((p, burst)) = &hbm {
                    let c = |k: &str| int(m, k);
                    pj[6] += c("cmd_ACT") * p.act
                        + (c("cmd_PRE") + c("cmd_PREA") + c("cmd_RDA") + c("cmd_WRA")) * p.pre
                        + (c("cmd_RD") + c("cmd_RDA")) * p.rd
                        + (c("cmd_WR") + c("cmd_WRA")) * p.wr
                        + c("cmd_REF") * p.refab
                        + c("cmd_REFPB") * p.refpb
                        + (c("reads") + c("writes")) * burst * 8.0 * p.io_pj_per_bit;
                }
            }
            _ => {}
        }
    }
    let sim_s = s.int("kernel", "sim_time_ps").unwrap_or(0) as f64 * 1e-12;
    let (ports, switch_ports) = wired_ports(topo, chips);
    let chip_w: f64 = ports.iter().map(|&p| crate::energy::chip_static_w(t, chip, p).iter().sum::<f64>()).sum();
    let static_j = (chip_w + f64::from(switch_ports) * t.fabric_switch.static_w_per_port) * sim_s;
    let mut parts_j = pj.map(|x| x * 1e-12);
    parts_j[9] = static_j;
    StatsEnergy { total_j: parts_j.iter().sum(), parts_j, sim_s, chips, flops }
}

impl StatsEnergy {
    /// Headline figures: energy by component and in total (mJ: cycle-level runs are short),
    /// mean power per chip, GFLOPS/W.
    pub fn headline(&self) -> Vec<(String, f64)> {
        let mut h = vec![("energy_mJ".to_string(), self.total_j * 1e3)];
        h.extend(PARTS.iter().zip(self.parts_j).map(|(n, j)| (format!("energy_{n}_mJ"), j * 1e3)));
        let w = if self.sim_s > 0.0 { self.total_j / self.sim_s / self.chips as f64 } else { 0.0 };
        h.push(("chip_avg_power_W".into(), w));
        h.push(("GFLOPS_per_W".into(), if self.total_j > 0.0 { self.flops / self.total_j / 1e9 } else { 0.0 }));
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::SystemDoc;
    use trnsim_kernel::StatValue;

    #[test]
    fn a_runs_energy_is_its_counters_times_their_prices_plus_static_power() {
        let doc = SystemDoc::open("trn3-chip").unwrap();
        let (sys, t) = (doc.resolve().unwrap(), doc.energy().unwrap().unwrap());
        let chip = sys.chip().unwrap();
        let mut s = StatsReport::default();
        let mut put = |owner: &str, k: &str, v: u64| {
            s.owners.entry(owner.into()).or_default().insert(k.into(), StatValue::Int(v));
        };
        put("kernel", "sim_time_ps", 2_000_000);
        put("nc0.tensor", "flops", 1_000_000);
        put("nc1.tensor", "flops", 3_000_000);
        put("nc0.scalar", "flops", 500);
        put("nc0.sbuf", "bytes", 4096);
        put("nc0.dma", "bytes", 8192);
        put("hbm0", "cmd_ACT", 10);
        put("hbm0", "cmd_RD", 100);
        put("hbm0", "reads", 100);
        let e = price(&s, &t, chip, None);
        let pj = |x: f64| x * 1e-12;
        assert_eq!(e.parts_j[0], pj(4e6 / 2.0 * t.tensor_pj_per_mac.bf16));
        assert_eq!(e.parts_j[2], pj(500.0 * t.scalar_pj_per_op));
        assert_eq!(e.parts_j[4], pj(4096.0 * t.sbuf_access.pj_per_access / 64.0));
        assert_eq!(e.parts_j[5], pj(8192.0 * t.dma_pj_per_byte));
        let (org, timing) = (&chip.hbm.org, &chip.hbm.timing);
        let p = trnsim_mem::hbm::energy::PerAction::new(t.hbm_energy.as_ref().unwrap(), timing, org);
        let io = 100.0 * f64::from(org.access_bytes()) * 8.0 * p.io_pj_per_bit;
        assert_eq!(e.parts_j[6], pj(10.0 * p.act + 100.0 * p.rd + io));
        let static_w: f64 = crate::energy::chip_static_w(&t, chip, 0).iter().sum();
        assert_eq!(e.parts_j[9], static_w * 2e-6);
        assert_eq!(e.total_j, e.parts_j.iter().sum::<f64>());
        // An idle chip: static power exactly.
        let mut idle = StatsReport::default();
        idle.owners.entry("kernel".into()).or_default().insert("sim_time_ps".into(), StatValue::Int(1_000_000));
        let e = price(&idle, &t, chip, None);
        assert_eq!(e.total_j, static_w * 1e-6);
        let w = e.headline().iter().find(|(k, _)| k == "chip_avg_power_W").unwrap().1;
        assert!((w - static_w).abs() < 1e-9 * static_w, "{w} vs {static_w}");
    }
}
