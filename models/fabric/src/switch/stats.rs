//! Per-port switch statistics, kept as plain fields and written once at report time.

use trnsim_kernel::{Histogram, StatsWriter, TimeWeighted};

/// Statistics of one port (its input side and its output side).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PortStats {
    /// Packets that arrived at this input.
    pub in_packets: u64,
    /// Their bytes.
    pub in_bytes: u64,
    /// Packets that left by this output.
    pub out_packets: u64,
    /// Their bytes.
    pub out_bytes: u64,
    /// Their cells (port cycles the output was busy).
    pub out_cells: u64,
    /// At this input: port cycles from when a packet could first have crossed the crossbar
    /// (header in plus the port-to-port latency) to when it did: the queueing delay.
    pub queueing_cycles: Histogram,
    /// Leaving by this output: port cycles from header in to header out (the port-to-port
    /// latency plus queueing; at zero load exactly the port-to-port latency in cut-through).
    pub latency_cycles: Histogram,
    /// Cells held by this input (all its virtual output queues, or its FIFO), over time.
    pub occupancy_cells: TimeWeighted,
    /// Most packets ever held by one virtual output queue (or the FIFO) of this input.
    pub max_queue_packets: u64,
}

/// Statistics of a whole switch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SwitchStats {
    /// Per port.
    pub ports: Vec<PortStats>,
    /// Packets dropped because routing gave no output, or an output that is not wired.
    pub unroutable_packets: u64,
    /// Crossbar cycles in which at least one pair was requested.
    pub arbitrations: u64,
    /// Cells moved across the crossbar.
    pub crossbar_cells: u64,
}

impl SwitchStats {
    /// Zeroed statistics for `ports` ports.
    pub fn new(ports: usize) -> SwitchStats {
        SwitchStats { ports: vec![PortStats::default(); ports], ..SwitchStats::default() }
    }

    /// Header-in to header-out latency over all outputs, in port cycles.
    pub fn latency_cycles(&self) -> Histogram {
        let mut h = Histogram::new();
        self.ports.iter().for_each(|p| h.merge(&p.latency_cycles));
        h
    }

    /// Queueing delay over all inputs, in port cycles.
    pub fn queueing_cycles(&self) -> Histogram {
        let mut h = Histogram::new();
        self.ports.iter().for_each(|p| h.merge(&p.queueing_cycles));
        h
    }

    /// Writes totals, then `p{k}.`-prefixed per-port values. `cycle_ps` is the port cycle
    /// (histograms are reported in ns); utilization is output cells per elapsed port cycle.
    pub fn report(&self, out: &mut StatsWriter<'_>, cycle_ps: f64) {
        let ns = cycle_ps * 1e-3;
        let cycles = out.end_time().as_ps() as f64 / cycle_ps;
        let sum = |f: fn(&PortStats) -> u64| self.ports.iter().map(f).sum::<u64>();
        out.count("packets", sum(|p| p.out_packets));
        out.count("bytes", sum(|p| p.out_bytes));
        out.count("unroutable_packets", self.unroutable_packets);
        out.count("arbitrations", self.arbitrations);
        out.count("crossbar_cells", self.crossbar_cells);
        out.histogram("latency", "ns", &self.latency_cycles(), ns);
        out.histogram("queueing_delay", "ns", &self.queueing_cycles(), ns);
        for (k, p) in self.ports.iter().enumerate() {
            let name = |s: &str| format!("p{k}.{s}");
            out.count(&name("in_packets"), p.in_packets);
            out.count(&name("in_bytes"), p.in_bytes);
            out.count(&name("out_packets"), p.out_packets);
            out.count(&name("out_bytes"), p.out_bytes);
            out.value(&name("out_utilization"), if cycles > 0.0 { p.out_cells as f64 / cycles } else { 0.0 });
            out.histogram(&name("queueing_delay"), "ns", &p.queueing_cycles, ns);
            out.level(&name("occupancy"), "cells", &p.occupancy_cells);
            out.count(&name("max_queue_packets"), p.max_queue_packets);
        }
    }
}
