//! One switch as a kernel component: packets arriving on any port are routed (minimal-hop
//! candidates, the link that frees first) onto per-link output queues and sent store-and-
//! forward. The port-to-port latency is on the kernel links leaving the switch (so a
//! partitioner sees it as lookahead), not in the component.
//!
//! Leaves out: input buffering and crossbar arbitration (the flit-level `switch::Switch`
//! models those), credits and back-pressure, cut-through.

use super::ports::Ports;
use trnsim_kernel::{Activity, Component, Ctx, StatsWriter};

/// The switch component (see the module doc).
pub struct SwitchNode {
    pub(crate) ports: Ports,
    /// Packets routed through this switch.
    routed: u64,
    /// Ticks taken (how often the kernel woke this node).
    ticks: u64,
}

impl SwitchNode {
    pub(crate) fn new(ports: Ports) -> SwitchNode {
        SwitchNode { ports, routed: 0, ticks: 0 }
    }
}

impl Component for SwitchNode {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let cycle = cx.cycle().0;
        self.ticks += 1;
        let pending = self.ports.pending(cx);
        for i in 0..self.ports.inputs.len() {
            if !pending.may_hold(i) {
                continue; // nothing in flight or arrived on it
            }
            let inp = self.ports.inputs[i];
            while let Some(p) = cx.recv(inp) {
                self.routed += 1;
                self.ports.enqueue(cycle, p);
            }
        }
        self.ports.transmit(cx, cycle);
        // Busy output links wake this component when they free (kernel contract for Idle).
        Activity::Idle
    }

    fn has_outstanding_work(&self) -> bool {
        self.ports.has_queued()
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("packets_routed", self.routed);
        out.count("ticks", self.ticks);
        self.ports.report(out);
    }
}
