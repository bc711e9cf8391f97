//! The all-to-all case at both fidelities: `chips` chips on one switch, each sending `bytes`
//! to every other chip, cut into packets of at most `packet_bytes` payload. Chip `i` sends its
//! messages in the order `i+1, i+2, ...` (mod `chips`), each whole before the next, so at
//! every moment the chips send a permutation and no output is oversubscribed in steady state.
//!
//! Flit level ([`AllToAll::run_flit`]): chips and link components on a 1 GHz clock
//! ([`AllToAll::link_clock`]); every chip-to-switch and switch-to-chip direction a
//! [`crate::link::attach`] link of `link` parameters (Gen6 x8, credits, ACKs, BER 0); the
//! [`Switch`] on its cell clock with `switch` parameters, routing by address
//! ([`AddressRouting`], one server level: chip `c` on port `c`); [`Ingress`] and [`Egress`]
//! adapters on the cell clock between link and switch, joined to the switch by
//! [`SwitchConfig::port_link`] links (1 cycle, `port_depth` packets of credit).
//!
//! Packet level ([`AllToAll::run_packet`]): a `switched` topology of one switch tier with one
//! switch serving all chips, the same link encoding and fixed latencies and the switch's
//! port-to-port latency, run by [`Network`] (store-and-forward, no credits).

use super::adapter::{Egress, Ingress};
use super::endpoint::Chip;
use crate::link::{self, LinkParams};
use crate::switch::routing::{AddressFields, AddressRouting, Level};
use crate::switch::{Switch, SwitchConfig};
use crate::topo::{self, Network};
use trnsim_kernel::{Dur, Frequency, SimBuilder, SimOptions, Stop};

/// The case's parameters.
#[derive(Clone, Debug)]
pub struct AllToAll {
    /// Chips (each on one switch port), 2..=ports.
    pub chips: u32,
    /// Payload bytes each chip sends to each other chip.
    pub bytes: u64,
    /// Largest payload per packet, bytes (the topology's packet size; PCIe MPS 4096).
    pub packet_bytes: u32,
    /// One link direction (both fidelities use its encoding, lanes and fixed latencies).
    pub link: LinkParams,
    /// The switch (the packet level uses its `port_to_port_ps`).
    pub switch: SwitchConfig,
    /// Credits (packets) of the port links between the adapters and the switch.
    pub port_depth: u32,
    /// Clock of chips and link components.
    pub link_clock: Frequency,
}

impl AllToAll {
    /// `chips` chips, `bytes` per pair, 4 KiB packets, Gen6 x8 links with default latencies,
    /// the `pcie6-160l-20p` switch preset, 4-packet port links, 1 GHz link clock.
    pub fn new(chips: u32, bytes: u64) -> AllToAll {
        AllToAll {
            chips,
            bytes,
            packet_bytes: 4096,
            link: LinkParams::default(),
            switch: crate::switch::presets::PCIE6_160L_20P.config.clone(),
            port_depth: 4,
            link_clock: Frequency::from_mhz(1000),
        }
    }

    /// Chip `i`'s packets in send order: (destination, payload bytes).
    pub fn packets_of(&self, i: u32) -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        for k in 1..self.chips {
            let dst = (i + k) % self.chips;
            let mut left = self.bytes;
            while left > 0 {
                let b = left.min(u64::from(self.packet_bytes));
                v.push((dst, b as u32));
                left -= b;
            }
        }
        v
    }

    /// Payload bytes each chip sends in all.
    pub fn bytes_per_chip(&self) -> u64 {
        self.bytes * u64::from(self.chips - 1)
    }

    /// Runs the flit-level build to completion.
    pub fn run_flit(&self) -> Result<Outcome, String> {
        let err = |e: &dyn std::fmt::Display| e.to_string();
        let n = self.chips;
        if n < 2 || n > u32::from(self.switch.ports) {
            return Err(format!("chips = {n}: expected 2..={}", self.switch.ports));
        }
        let enc = self.link.validate().map_err(|e| err(&e))?.encoding;
        let fields = AddressFields::dense(0, 0, (32 - (n - 1).leading_zeros()) as u8);
        let down = (0..n as u16).map(Some).collect();
        let routing =
            AddressRouting::new(fields, Level::Server { rack: 0, server: 0 }, down, vec![], self.switch.ports)
                .map_err(|e| err(&e))?;
        let mut sw = Switch::new(&self.switch, Box::new(routing)).map_err(|e| err(&e))?;
        let mut b = SimBuilder::with_options(SimOptions { seed: 1, ..SimOptions::default() });
        let lclk = b.clock("link", self.link_clock).map_err(|e| err(&e))?;
        let cclk = b.clock("cell", self.switch.cell_clock()).map_err(|e| err(&e))?;
        let sw_id = b.reserve("sw", cclk).map_err(|e| err(&e))?;
        let spec = self.switch.port_link(1, self.port_depth);
        let mut chips = Vec::new();
        for i in 0..n {
            let chip = b.reserve(&format!("chip{i}"), lclk).map_err(|e| err(&e))?;
            let ing = b.reserve(&format!("ing{i}"), cclk).map_err(|e| err(&e))?;
            let eg = b.reserve(&format!("eg{i}"), cclk).map_err(|e| err(&e))?;
            let up = link::attach(&mut b, &format!("up{i}"), lclk, &self.link, 1, (chip, "out"), (ing, "in"))
                .map_err(|e| err(&e))?;
            let down = link::attach(&mut b, &format!("down{i}"), lclk, &self.link, 1, (eg, "out"), (chip, "in"))
                .map_err(|e| err(&e))?;
            let (to_sw, sw_in) = b.link(ing, "out", sw_id, format!("in{i}"), spec).map_err(|e| err(&e))?;
            let (sw_out, from_sw) = b.link(sw_id, format!("out{i}"), eg, "in", spec).map_err(|e| err(&e))?;
            sw.connect(i as u16, sw_in, sw_out).map_err(|e| err(&e))?;
            b.install(ing, Ingress::new(&enc, up.output, to_sw)).map_err(|e| err(&e))?;
            b.install(eg, Egress::new(&enc, from_sw, down.input)).map_err(|e| err(&e))?;
            b.install(chip, Chip::new(i, n, self.packets_of(i), up.input, down.output)).map_err(|e| err(&e))?;
            chips.push(chip);
        }
        b.install(sw_id, sw).map_err(|e| err(&e))?;
        let mut sim = b.build().map_err(|e| err(&e))?;
        let stop = sim.run_until_idle(Dur::from_us(1_000_000)).map_err(|e| err(&e))?;
        if stop != Stop::Idle {
            return Err(format!("flit level did not drain: {stop:?}"));
        }
        let mut o = Outcome::default();
        for &c in &chips {
            let chip = sim.component::<Chip>(c).ok_or("chip component")?;
            o.received_bytes += chip.received_bytes;
            o.done_ps = o.done_ps.max(chip.last_arrival.as_ps());
        }
        o.finish(self);
        Ok(o)
    }

    /// The packet-level topology: one switch serving all chips.
    pub fn topology(&self) -> Result<topo::Topology, String> {
        let l = &self.link;
        let ns = |d: Dur| format!("{}ps", d.as_ps());
        let text = format!(
            "TopologySpec(name: \"fidelity-a2a-{n}\", kind: switched(chips: {n}, chips_per_server: {n}, \
             link: (encoding: \"{enc}\", lanes: {lanes}), tiers: [(name: \"sw\", scope: all, switches: 1, \
             links_per_chip_per_switch: 1, switch_latency: \"{sw}ps\")]), phy: \"{phy}\", wire: \"{wire}\", \
             link_layer: \"{ll}\", packet_bytes: {pkt})",
            n = self.chips,
            enc = l.encoding,
            lanes = l.lanes,
            sw = self.switch.port_to_port_ps,
            phy = ns(l.phy),
            wire = ns(l.wire),
            ll = ns(l.link_layer),
            pkt = self.packet_bytes,
        );
        topo::parse("fidelity", &text)
    }

    /// Runs the packet-level build to completion.
    pub fn run_packet(&self) -> Result<Outcome, String> {
        let mut net = Network::new(self.topology()?);
        for i in 0..self.chips {
            for k in 1..self.chips {
                net.send(0, i as usize, ((i + k) % self.chips) as usize, self.bytes, k);
            }
        }
        while net.step().is_some() || net.next_time().is_some() {}
        let mut o = Outcome::default();
        for m in &net.msgs {
            o.received_bytes += m.delivered_bytes;
            o.done_ps = o.done_ps.max(m.done_ps.ok_or("a message was not delivered")?);
        }
        o.finish(self);
        Ok(o)
    }
}

/// What one run gave.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Payload bytes delivered, all chips.
    pub received_bytes: u64,
    /// When the last packet arrived, picoseconds from the start.
    pub done_ps: u64,
    /// Payload each chip sent / completion time, GB/s (1e9 bytes per second).
    pub per_chip_gb_s: f64,
}

impl Outcome {
    fn finish(&mut self, c: &AllToAll) {
        self.per_chip_gb_s = c.bytes_per_chip() as f64 / self.done_ps.max(1) as f64 * 1e3;
    }
}

/// One size's outcomes: (bytes per pair, flit level, packet level).
pub type Row = (u64, Outcome, Outcome);

/// The comparison table (markdown) for the sizes `sizes` (bytes per pair): per size, both
/// fidelities' completion time and per-chip throughput, and the relative difference.
pub fn table(chips: u32, sizes: &[u64]) -> Result<(String, Vec<Row>), String> {
    let mut s = String::from(
        "| bytes per pair | flit level: time | GB/s per chip | packet level: time | GB/s per chip | (flit - packet) / packet |\n\
         |---|---|---|---|---|---|\n",
    );
    let mut rows = Vec::new();
    for &bytes in sizes {
        let c = AllToAll::new(chips, bytes);
        let (f, p) = (c.run_flit()?, c.run_packet()?);
        let d = (f.done_ps as f64 - p.done_ps as f64) / p.done_ps as f64;
        s += &format!(
            "| {} KiB | {:.3} us | {:.2} | {:.3} us | {:.2} | {:+.2} % |\n",
            bytes / 1024,
            f.done_ps as f64 / 1e6,
            f.per_chip_gb_s,
            p.done_ps as f64 / 1e6,
            p.per_chip_gb_s,
            d * 100.0
        );
        rows.push((bytes, f, p));
    }
    Ok((s, rows))
}
