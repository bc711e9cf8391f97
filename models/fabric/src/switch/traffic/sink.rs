//! The sink: takes every packet that reaches an output (or one per `service_cycles`, to
//! exercise back-pressure) and records its latency from creation.

use crate::switch::Packet;
use trnsim_kernel::{Activity, Component, Ctx, Histogram, InPort, StatsWriter};

/// What a sink saw during one measurement window (or all run).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Window {
    /// Packets received.
    pub packets: u64,
    /// Their cells.
    pub cells: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Creation to arrival of the tail at the sink, picoseconds.
    pub latency_ps: Histogram,
}

impl Window {
    /// Adds another window's counts.
    pub fn merge(&mut self, o: &Window) {
        self.packets += o.packets;
        self.cells += o.cells;
        self.bytes += o.bytes;
        self.latency_ps.merge(&o.latency_ps);
    }
}

/// Receives packets at one output and measures them.
pub struct Sink {
    port: u16,
    inp: InPort<Packet>,
    cell_bytes: u32,
    service_cycles: u64,
    next_take: u64,
    record_ids: bool,
    /// Since the start of the run.
    pub total: Window,
    /// Since the last [`Sink::take_window`].
    pub window: Window,
    /// Packets whose destination was not this sink's port.
    pub misdelivered: u64,
    /// (src, seq) of every packet received, when asked to record them.
    pub ids: Vec<(u16, u64)>,
}

impl Sink {
    /// A sink for output `port` receiving on `inp`; `service_cycles` = 0 takes everything that
    /// arrives, n > 0 takes at most one packet per n port cycles; `record_ids` keeps every
    /// packet's (src, seq) for conservation checks.
    pub fn new(port: u16, inp: InPort<Packet>, cell_bytes: u32, service_cycles: u32, record_ids: bool) -> Sink {
        Sink {
            port,
            inp,
            cell_bytes: cell_bytes.max(1),
            service_cycles: u64::from(service_cycles),
            next_take: 0,
            record_ids,
            total: Window::default(),
            window: Window::default(),
            misdelivered: 0,
            ids: Vec::new(),
        }
    }

    /// Returns the current window and starts a new one.
    pub fn take_window(&mut self) -> Window {
        std::mem::take(&mut self.window)
    }

    fn record(&mut self, pkt: &Packet, latency_ps: u64) {
        if pkt.dst != self.port {
            self.misdelivered += 1;
        }
        if self.record_ids {
            self.ids.push((pkt.src, pkt.seq));
        }
        let cells = u64::from(pkt.bytes.div_ceil(self.cell_bytes).max(1));
        for w in [&mut self.total, &mut self.window] {
            w.packets += 1;
            w.cells += cells;
            w.bytes += u64::from(pkt.bytes);
            w.latency_ps.record(latency_ps);
        }
    }
}

impl Component for Sink {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let now = cx.cycle().0;
        loop {
            if now < self.next_take {
                let t = cx.clock().edge(self.next_take);
                cx.wake_at(t);
                break;
            }
            let Some(pkt) = cx.recv(self.inp) else { break };
            let latency = cx.now().since(pkt.created).as_ps();
            self.record(&pkt, latency);
            if self.service_cycles > 0 {
                self.next_take = now + self.service_cycles;
            }
        }
        Activity::Idle
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("packets", self.total.packets);
        out.count("bytes", self.total.bytes);
        out.count("misdelivered_packets", self.misdelivered);
        out.histogram("latency", "ns", &self.total.latency_ps, 1e-3);
    }
}
