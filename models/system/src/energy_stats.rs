//! Energy of a cycle-level run (a benchmark on a chip or an UltraServer) from the statistics its
//! models already keep, priced by the chip's energy table after the run: the tensor engines'
//! MACs by format, the vector, scalar and GpSimd engines' element operations, the bytes the
//! engines and DMA blocks move through SBUF and through PSUM, DMA bytes, each HBM stack's
//! commands and data bits (as `trnsim hbm` prices them), the bytes sent on every NeuronLink
//! (chip and switch ends), the flits leaving scale-up switches and the bytes through each
//! chip's EFA NIC (sent and received); plus every chip's and switch port's static power over
//! the simulated time.
//!
//! The counts ([`Counts`]) are gathered from a report once, after the run (a run that cuts its
//! report to its first chip keeps them under the owner [`COUNTS_OWNER`]), and priced apart
//! ([`price`]), so the same counts are priced by any table.
//!
//! Left out: the HBM's active-standby power above its precharged background, the
//! read-modify-write of an accumulating PSUM write (one access), the EFA leaf and spine
//! switches (Ethernet switches are not in the tables), and energy that depends on data values.

use crate::chip::Chip;
use crate::energy::EnergyTable;
use std::collections::BTreeMap;
use trnsim_fabric::topo::{NodeKind, Topology};
use trnsim_kernel::{StatValue, StatsReport};

/// Components of a cycle-level run's energy, in order.
pub const PARTS: [&str; 12] =
    ["tensor", "vector", "scalar", "gpsimd", "sbuf", "psum", "dma", "hbm", "neuronlink", "switch", "efa", "static"];

/// The owner under which a report cut to its first chip keeps the whole run's counts.
pub const COUNTS_OWNER: &str = "energy_counts";

/// The tensor engine's MAC formats, as its statistics `macs_<name>` name them.
pub const MAC_FORMATS: [&str; 5] = ["bf16", "fp16", "fp32", "fp8", "mxfp8"];

/// The tensor engine's statistics of MACs, in [`MAC_FORMATS`] order.
const MAC_COUNTS: [&str; 5] = ["macs_bf16", "macs_fp16", "macs_fp32", "macs_fp8", "macs_mxfp8"];

/// The action counts of a run, over every chip and switch: what energy is priced from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counts {
    /// Tensor-engine MACs by format ([`MAC_FORMATS`]).
    pub macs: [u64; 5],
    /// Vector, scalar and GpSimd element operations.
    pub ops: [u64; 3],
    /// Bytes read from and written to SBUF (engines and DMA).
    pub sbuf_bytes: u64,
    /// Bytes read from and written to PSUM (engines and DMA).
    pub psum_bytes: u64,
    /// Bytes the DMA blocks moved.
    pub dma_bytes: u64,
    /// HBM commands: ACT, banks closed (PRE, PREA, RDA, WRA), RD+RDA, WR+WRA, REF, REFPB.
    pub hbm_cmds: [u64; 6],
    /// HBM data bursts (reads and writes).
    pub hbm_bursts: u64,
    /// Bytes sent on NeuronLinks (chip and scale-up switch ends).
    pub link_bytes: u64,
    /// Bytes sent out of scale-up switches.
    pub switch_bytes: u64,
    /// Bytes through the chips' EFA NICs (sent and received).
    pub efa_bytes: u64,
    /// Simulated time, ps.
    pub sim_ps: u64,
}

const COUNT_NAMES: [&str; 22] = [
    "macs_bf16",
    "macs_fp16",
    "macs_fp32",
    "macs_fp8",
    "macs_mxfp8",
    "vector_ops",
    "scalar_ops",
    "gpsimd_ops",
    "sbuf_bytes",
    "psum_bytes",
    "dma_bytes",
    "hbm_act",
    "hbm_pre",
    "hbm_rd",
    "hbm_wr",
    "hbm_ref",
    "hbm_refpb",
    "hbm_bursts",
    "link_bytes",
    "switch_bytes",
    "efa_bytes",
    "sim_time_ps",
];

fn int(m: &BTreeMap<String, StatValue>, k: &str) -> u64 {
    m.get(k).map_or(0, |v| match v {
        StatValue::Int(n) => *n,
        other => other.as_f64() as u64,
    })
}

/// The owner a component called `name` is, as far as energy goes.
fn last_part(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// Whether fabric node `name` is a chip (`chip003`, `us1.chip0070`).
fn is_chip(name: &str) -> bool {
    let l = last_part(name);
    l.strip_prefix("chip").is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// What a counting component or link is to the energy accounting: which of its counts
/// ([`trnsim_kernel::Component::counters`], the same names in its report) are priced as what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A tensor engine: MACs by format, SBUF and PSUM bytes.
    Tensor,
    /// A vector (0), scalar (1) or GpSimd (2) engine: element operations (`flops`), SBUF and
    /// PSUM bytes.
    Engine(usize),
    /// A DMA block: bytes moved, SBUF and PSUM bytes.
    Dma,
    /// An HBM stack: commands and data bursts.
    Hbm,
    /// A NeuronLink out of a chip: its bytes are link bytes.
    Link,
    /// A NeuronLink out of a scale-up switch: link bytes and switch bytes.
    SwitchLink,
    /// A link between a chip and an EFA switch (either way): the chip's NIC's bytes.
    Efa,
}

impl Role {
    /// The role of report owner `owner` (`nc0.tensor`, `chip003.hbm1`, `link:A.tx.B.0 -> ..`;
    /// None: nothing it counts is priced, the kernel's owner included).
    pub fn of(owner: &str) -> Option<Role> {
        if let Some(link) = owner.strip_prefix("link:") {
            return Role::of_link(link);
        }
        match last_part(owner) {
            "tensor" => Some(Role::Tensor),
            "vector" => Some(Role::Engine(0)),
            "scalar" => Some(Role::Engine(1)),
            "gpsimd" => Some(Role::Engine(2)),
            "dma" => Some(Role::Dma),
            l if l.starts_with("hbm") => Some(Role::Hbm),
            _ => None,
        }
    }

    /// The role of the link called `name` (`FROM.PORT -> TO.PORT`, without `link:`).
    pub fn of_link(name: &str) -> Option<Role> {
        let from = name.split(" -> ").next().unwrap_or("");
        let (node, peer) = from.split_once(".tx.")?;
        match (is_chip(node), node.starts_with("efa."), peer.starts_with("efa.")) {
            (true, _, true) => Some(Role::Efa),
            (_, true, _) if is_chip(peer.rsplit_once('.').map_or(peer, |(p, _)| p)) => Some(Role::Efa),
            (_, true, _) => None,
            (true, _, false) => Some(Role::Link),
            (false, false, _) => Some(Role::SwitchLink),
        }
    }
}

impl Counts {
    /// Whether a report owner holds counts this accounting reads (a filter for gathering only
    /// those: engines, DMA blocks, HBM stacks, fabric links, the kernel).
    pub fn reads(owner: &str) -> bool {
        if let Some(link) = owner.strip_prefix("link:") {
            return link.contains(".tx.");
        }
        owner == "kernel" || Role::of(owner).is_some()
    }

    /// The counts of `s`: its [`COUNTS_OWNER`] if it has one (a report cut to its first chip),
    /// else gathered from its owners.
    pub fn of(s: &StatsReport) -> Counts {
        if let Some(m) = s.owners.get(COUNTS_OWNER) {
            return Counts::from_owner(m);
        }
        let mut c = Counts { sim_ps: s.int("kernel", "sim_time_ps").unwrap_or(0), ..Counts::default() };
        for (owner, m) in &s.owners {
            c.add(owner, m);
        }
        c
    }

    /// Adds the counts of one report owner.
    pub fn add(&mut self, owner: &str, m: &BTreeMap<String, StatValue>) {
        let Some(role) = Role::of(owner) else { return };
        if role == Role::Hbm && !m.contains_key("cmd_ACT") {
            return; // not a stack (a stack always counts its commands)
        }
        for (k, v) in m {
            if let StatValue::Int(n) = v {
                self.add_count(role, k, *n);
            }
        }
    }

    /// Adds count `name` = `n` of a component or link in `role` (names as its report writes
    /// them; a name the role does not price is left out).
    pub fn add_count(&mut self, role: Role, name: &str, n: u64) {
        match (role, name) {
            (Role::Tensor | Role::Engine(_) | Role::Dma, "sbuf_bytes") => self.sbuf_bytes += n,
            (Role::Tensor | Role::Engine(_) | Role::Dma, "psum_bytes") => self.psum_bytes += n,
            (Role::Tensor, _) => {
                if let Some(k) = MAC_COUNTS.iter().position(|m| *m == name) {
                    self.macs[k] += n;
                }
            }
            (Role::Engine(k), "flops") => self.ops[k.min(2)] += n,
            (Role::Dma, "bytes") => self.dma_bytes += n,
            (Role::Hbm, "reads" | "writes") => self.hbm_bursts += n,
            (Role::Hbm, _) => {
                let slots: &[usize] = match name {
                    "cmd_ACT" => &[0],
                    "cmd_PRE" | "cmd_PREA" => &[1],
                    "cmd_RDA" => &[1, 2],
                    "cmd_WRA" => &[1, 3],
                    "cmd_RD" => &[2],
                    "cmd_WR" => &[3],
                    "cmd_REF" => &[4],
                    "cmd_REFPB" => &[5],
                    _ => &[],
                };
                for &i in slots {
                    self.hbm_cmds[i] += n;
                }
            }
            (Role::Link, "bytes") => self.link_bytes += n,
            (Role::SwitchLink, "bytes") => {
                self.link_bytes += n;
                self.switch_bytes += n;
            }
            (Role::Efa, "bytes") => self.efa_bytes += n,
            _ => {}
        }
    }

    fn values(&self) -> Vec<u64> {
        let mut v = self.macs.to_vec();
        v.extend(self.ops);
        v.extend([self.sbuf_bytes, self.psum_bytes, self.dma_bytes]);
        v.extend(self.hbm_cmds);
        v.extend([self.hbm_bursts, self.link_bytes, self.switch_bytes, self.efa_bytes, self.sim_ps]);
        v
    }

    /// The counts as a report owner's statistics ([`COUNTS_OWNER`]).
    pub fn to_owner(&self) -> BTreeMap<String, StatValue> {
        COUNT_NAMES.iter().zip(self.values()).map(|(k, v)| (k.to_string(), StatValue::Int(v))).collect()
    }

    fn from_owner(m: &BTreeMap<String, StatValue>) -> Counts {
        let g = |k: usize| int(m, COUNT_NAMES[k]);
        Counts {
            macs: [g(0), g(1), g(2), g(3), g(4)],
            ops: [g(5), g(6), g(7)],
            sbuf_bytes: g(8),
            psum_bytes: g(9),
            dma_bytes: g(10),
            hbm_cmds: [g(11), g(12), g(13), g(14), g(15), g(16)],
            hbm_bursts: g(17),
            link_bytes: g(18),
            switch_bytes: g(19),
            efa_bytes: g(20),
            sim_ps: g(21),
        }
    }

    /// The counts of `self` and `other` together (two runs one after another: their times add).
    pub fn plus(&self, other: &Counts) -> Counts {
        let mut out = self.clone();
        for (a, b) in out.values_mut().into_iter().zip(other.values()) {
            *a = a.saturating_add(b);
        }
        out
    }

    fn values_mut(&mut self) -> Vec<&mut u64> {
        let mut v: Vec<&mut u64> = self.macs.iter_mut().collect();
        v.extend(self.ops.iter_mut());
        v.extend([&mut self.sbuf_bytes, &mut self.psum_bytes, &mut self.dma_bytes]);
        v.extend(self.hbm_cmds.iter_mut());
        v.extend([
            &mut self.hbm_bursts,
            &mut self.link_bytes,
            &mut self.switch_bytes,
            &mut self.efa_bytes,
            &mut self.sim_ps,
        ]);
        v
    }

    /// The counts since `earlier` (a snapshot of the same run).
    pub fn since(&self, earlier: &Counts) -> Counts {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        let arr = |a: &[u64], b: &[u64], out: &mut [u64]| {
            for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
                *o = d(*x, *y);
            }
        };
        let mut c = Counts {
            sbuf_bytes: d(self.sbuf_bytes, earlier.sbuf_bytes),
            psum_bytes: d(self.psum_bytes, earlier.psum_bytes),
            dma_bytes: d(self.dma_bytes, earlier.dma_bytes),
            hbm_bursts: d(self.hbm_bursts, earlier.hbm_bursts),
            link_bytes: d(self.link_bytes, earlier.link_bytes),
            switch_bytes: d(self.switch_bytes, earlier.switch_bytes),
            efa_bytes: d(self.efa_bytes, earlier.efa_bytes),
            sim_ps: d(self.sim_ps, earlier.sim_ps),
            ..Counts::default()
        };
        arr(&self.macs, &earlier.macs, &mut c.macs);
        arr(&self.ops, &earlier.ops, &mut c.ops);
        arr(&self.hbm_cmds, &earlier.hbm_cmds, &mut c.hbm_cmds);
        c
    }

    /// Tensor-engine flops (2 per MAC).
    pub fn flops(&self) -> f64 {
        2.0 * self.macs.iter().map(|&m| m as f64).sum::<f64>()
    }
}

/// A cycle-level run's energy.
#[derive(Clone, Debug, PartialEq)]
pub struct StatsEnergy {
    /// Energy by component ([`PARTS`]), J.
    pub parts_j: [f64; 12],
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

/// The energy of a run with counts `c`, on `chips` chips of `chip` joined by `topo` (one chip
/// without), priced by `t`.
pub fn price(c: &Counts, t: &EnergyTable, chip: &Chip, topo: Option<&Topology>) -> StatsEnergy {
    let chips = topo.map_or(1, |x| x.chips);
    let f = |n: u64| n as f64;
    let m = &t.tensor_pj_per_mac;
    let mac_pj = [m.bf16, m.fp16, m.fp32, m.fp8, m.mxfp8];
    let mut pj = [0.0f64; 12];
    pj[0] = c.macs.iter().zip(mac_pj).map(|(&n, p)| f(n) * p).sum();
    pj[1] = f(c.ops[0]) * t.vector_pj_per_op;
    pj[2] = f(c.ops[1]) * t.scalar_pj_per_op;
    pj[3] = f(c.ops[2]) * t.gpsimd_pj_per_op;
    pj[4] = f(c.sbuf_bytes) * t.sbuf_access.pj_per_access / f64::from(t.sbuf_access.access_bytes);
    pj[5] = f(c.psum_bytes) * t.psum_access.pj_per_access / f64::from(t.psum_access.access_bytes);
    pj[6] = f(c.dma_bytes) * t.dma_pj_per_byte;
    if let Some(h) = &t.hbm_energy {
        let (org, timing) = (&chip.hbm.org, &chip.hbm.timing);
        let p = trnsim_mem::hbm::energy::PerAction::new(h, timing, org);
        let per = [p.act, p.pre, p.rd, p.wr, p.refab, p.refpb];
        pj[7] = c.hbm_cmds.iter().zip(per).map(|(&n, e)| f(n) * e).sum::<f64>()
            + f(c.hbm_bursts) * f64::from(org.access_bytes()) * 8.0 * p.io_pj_per_bit;
    }
    pj[8] = f(c.link_bytes) * 8.0 * t.neuronlink_serdes.pj_per_bit;
    pj[9] = f(c.switch_bytes) / f64::from(t.fabric_switch.flit_bytes) * t.fabric_switch.pj_per_flit;
    pj[10] = f(c.efa_bytes) * t.efa_nic.pj_per_byte;
    let sim_s = c.sim_ps as f64 * 1e-12;
    let (ports, switch_ports) = wired_ports(topo, chips);
    let chip_w: f64 = ports.iter().map(|&p| crate::energy::chip_static_w(t, chip, p).iter().sum::<f64>()).sum();
    let mut parts_j = pj.map(|x| x * 1e-12);
    parts_j[11] = (chip_w + f64::from(switch_ports) * t.fabric_switch.static_w_per_port) * sim_s;
    StatsEnergy { total_j: parts_j.iter().sum(), parts_j, sim_s, chips, flops: c.flops() }
}

/// The counts of a packet-level fabric run on `topo` that took `sim_ps`: the payload bytes each
/// edge carried (`edge_bytes`, in edge order) as NeuronLink bytes and, on an edge out of a
/// switch, as switch bytes.
pub fn fabric_counts(topo: &Topology, edge_bytes: impl IntoIterator<Item = u64>, sim_ps: u64) -> Counts {
    let mut c = Counts { sim_ps, ..Counts::default() };
    for (e, bytes) in topo.edges.iter().zip(edge_bytes) {
        let role = match topo.nodes[e.from].kind {
            NodeKind::Chip => Role::Link,
            NodeKind::Switch => Role::SwitchLink,
        };
        c.add_count(role, "bytes", bytes);
    }
    c
}

/// The energy of a fabric alone (a collective on a fabric file, no chip) with counts `c`,
/// priced by `t`: NeuronLink bits and switch flits, plus the static power of every wired chip
/// port (its SerDes) and switch port over the simulated time. The chips' own power is not
/// counted (a fabric file has no chip); on an UltraServer [`price`] counts both.
pub fn price_fabric(c: &Counts, t: &EnergyTable, topo: &Topology) -> StatsEnergy {
    let f = |n: u64| n as f64;
    let mut parts_j = [0.0f64; 12];
    parts_j[8] = f(c.link_bytes) * 8.0 * t.neuronlink_serdes.pj_per_bit * 1e-12;
    parts_j[9] = f(c.switch_bytes) / f64::from(t.fabric_switch.flit_bytes) * t.fabric_switch.pj_per_flit * 1e-12;
    let sim_s = c.sim_ps as f64 * 1e-12;
    let (ports, switch_ports) = wired_ports(Some(topo), topo.chips);
    let chip_ports: f64 = ports.iter().map(|&p| f64::from(p)).sum();
    let static_w = chip_ports * t.neuronlink_serdes.static_w_per_port
        + f64::from(switch_ports) * t.fabric_switch.static_w_per_port;
    parts_j[11] = static_w * sim_s;
    StatsEnergy { total_j: parts_j.iter().sum(), parts_j, sim_s, chips: topo.chips, flops: 0.0 }
}

impl StatsEnergy {
    /// Headline figures of a fabric alone ([`price_fabric`]): energy in total, of the
    /// NeuronLinks, the switches and the ports' static power (mJ), and the fabric's mean power.
    pub fn fabric_headline(&self) -> Vec<(String, f64)> {
        let mut h = vec![("energy_mJ".to_string(), self.total_j * 1e3)];
        for (k, n) in [(8, "neuronlink"), (9, "switch"), (11, "static")] {
            h.push((format!("energy_{n}_mJ"), self.parts_j[k] * 1e3));
        }
        h.push(("power_W".into(), if self.sim_s > 0.0 { self.total_j / self.sim_s } else { 0.0 }));
        h
    }

    /// Headline figures: energy by component and in total (mJ: cycle-level runs are short),
    /// the system's mean power, mean power per chip, GFLOPS/W.
    pub fn headline(&self) -> Vec<(String, f64)> {
        let mut h = vec![("energy_mJ".to_string(), self.total_j * 1e3)];
        h.extend(PARTS.iter().zip(self.parts_j).map(|(n, j)| (format!("energy_{n}_mJ"), j * 1e3)));
        let w = if self.sim_s > 0.0 { self.total_j / self.sim_s } else { 0.0 };
        h.push(("power_W".into(), w));
        h.push(("chip_avg_power_W".into(), w / self.chips.max(1) as f64));
        h.push(("GFLOPS_per_W".into(), if self.total_j > 0.0 { self.flops / self.total_j / 1e9 } else { 0.0 }));
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::SystemDoc;

    fn put(s: &mut StatsReport, owner: &str, k: &str, v: u64) {
        s.owners.entry(owner.into()).or_default().insert(k.into(), StatValue::Int(v));
    }

    #[test]
    fn a_runs_energy_is_its_counters_times_their_prices_plus_static_power() {
        let doc = SystemDoc::open("trn3-chip").unwrap();
        let (sys, t) = (doc.resolve().unwrap(), doc.energy().unwrap().unwrap());
        let chip = sys.chip().unwrap();
        let mut s = StatsReport::default();
        put(&mut s, "kernel", "sim_time_ps", 2_000_000);
        put(&mut s, "nc0.tensor", "macs_bf16", 500_000);
        put(&mut s, "nc0.tensor", "macs_fp8", 700_000);
        put(&mut s, "nc1.tensor", "macs_mxfp8", 1_500_000);
        put(&mut s, "nc0.tensor", "sbuf_bytes", 1024);
        put(&mut s, "nc0.tensor", "psum_bytes", 2048);
        put(&mut s, "nc0.scalar", "flops", 500);
        put(&mut s, "nc0.scalar", "sbuf_bytes", 3072);
        put(&mut s, "nc0.dma", "bytes", 8192);
        put(&mut s, "nc0.dma", "sbuf_bytes", 8192);
        // The SBUF unit's own figures are not read: the engines' and DMA's are.
        put(&mut s, "nc0.sbuf", "bytes", 1 << 40);
        put(&mut s, "hbm0", "cmd_ACT", 10);
        put(&mut s, "hbm0", "cmd_RD", 100);
        put(&mut s, "hbm0", "reads", 100);
        let e = price(&Counts::of(&s), &t, chip, None);
        let pj = |x: f64| x * 1e-12;
        let m = &t.tensor_pj_per_mac;
        assert_eq!(e.parts_j[0], pj(500_000.0 * m.bf16 + 700_000.0 * m.fp8 + 1_500_000.0 * m.mxfp8));
        assert_eq!(e.parts_j[2], pj(500.0 * t.scalar_pj_per_op));
        assert_eq!(e.parts_j[4], pj((1024.0 + 3072.0 + 8192.0) * t.sbuf_access.pj_per_access / 64.0));
        assert_eq!(e.parts_j[5], pj(2048.0 * t.psum_access.pj_per_access / 64.0));
        assert_eq!(e.parts_j[6], pj(8192.0 * t.dma_pj_per_byte));
        assert_eq!(e.flops, 2.0 * 2_700_000.0);
        let (org, timing) = (&chip.hbm.org, &chip.hbm.timing);
        let p = trnsim_mem::hbm::energy::PerAction::new(t.hbm_energy.as_ref().unwrap(), timing, org);
        let io = 100.0 * f64::from(org.access_bytes()) * 8.0 * p.io_pj_per_bit;
        assert_eq!(e.parts_j[7], pj(10.0 * p.act + 100.0 * p.rd + io));
        let static_w: f64 = crate::energy::chip_static_w(&t, chip, 0).iter().sum();
        assert_eq!(e.parts_j[11], static_w * 2e-6);
        assert_eq!(e.total_j, e.parts_j.iter().sum::<f64>());
        // The counts kept under their owner price the same.
        let mut cut = StatsReport::default();
        cut.owners.insert(COUNTS_OWNER.into(), Counts::of(&s).to_owner());
        assert_eq!(Counts::of(&cut), Counts::of(&s));
        // An idle chip: static power exactly.
        let mut idle = StatsReport::default();
        put(&mut idle, "kernel", "sim_time_ps", 1_000_000);
        let e = price(&Counts::of(&idle), &t, chip, None);
        assert_eq!(e.total_j, static_w * 1e-6);
        let w = e.headline().iter().find(|(k, _)| k == "chip_avg_power_W").unwrap().1;
        assert!((w - static_w).abs() < 1e-9 * static_w, "{w} vs {static_w}");
    }

    #[test]
    fn fabric_links_are_priced_by_what_they_join() {
        let mut s = StatsReport::default();
        for (link, bytes) in [
            ("link:chip000.tx.sw000.0 -> sw000.rx.chip000.0", 100),
            ("link:sw000.tx.chip001.0 -> chip001.rx.sw000.0", 200),
            ("link:chip000.tx.chip032.1 -> chip032.rx.chip000.1", 400),
            ("link:us0.chip0000.tx.efa.leaf0.0 -> efa.leaf0.rx.us0.chip0000.0", 1000),
            ("link:efa.leaf0.tx.efa.spine1.0 -> efa.spine1.rx.efa.leaf0.0", 5000),
            ("link:efa.leaf0.tx.us1.chip0070.0 -> us1.chip0070.rx.efa.leaf0.0", 2000),
            ("link:us1.intra.s0.1.tx.us1.chip0070.0 -> us1.chip0070.rx.us1.intra.s0.1.0", 30),
            ("link:nc0.sbuf.tensor.done -> nc0.tensor.mem_done", 1 << 30),
        ] {
            put(&mut s, link, "bytes", bytes);
        }
        let c = Counts::of(&s);
        assert_eq!((c.link_bytes, c.switch_bytes, c.efa_bytes), (100 + 200 + 400 + 30, 200 + 30, 3000));
    }
}
