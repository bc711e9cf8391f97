//! Statistics of the SRAM timing model: plain counters, written out once at report time.

use trnsim_kernel::{Histogram, StatsWriter};

/// What one engine interface (client) did. Bytes count over all partitions, credited as each
/// element leaves the arbiter.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientStats {
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written (accumulate-writes included).
    pub write_bytes: u64,
    /// Accesses completed.
    pub accesses: u64,
    /// Cycles in which the client had an access streaming (granted or stalled).
    pub stream_cycles: u64,
    /// Cycles in which the client's streaming access lost a bank port to another client.
    pub stall_cycles: u64,
    /// Access latency from start to finish, in cycles (overhead and latency included).
    pub latency: Histogram,
}

impl ClientStats {
    /// Bytes moved per streaming cycle (0 when it never streamed).
    pub fn bytes_per_stream_cycle(&self) -> f64 {
        ratio(self.read_bytes + self.write_bytes, self.stream_cycles)
    }
}

/// What the whole memory did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SramStats {
    /// Cycles in which at least one element moved.
    pub busy_cycles: u64,
    /// Cycles with streaming clients that were simulated one at a time (contended, or a run of
    /// one); the rest were skipped arithmetically. A measure of simulation cost, not hardware.
    pub stepped_cycles: u64,
    /// Per bank index: refused requests for that bank (one per stalled client per cycle,
    /// whichever partitions it needed).
    pub bank_stall_cycles: Vec<u64>,
    /// Per client, in registration order.
    pub clients: Vec<ClientStats>,
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl SramStats {
    /// Bytes read and written by all clients.
    pub fn total_bytes(&self) -> u64 {
        self.clients.iter().map(|c| c.read_bytes + c.write_bytes).sum()
    }

    /// Writes every statistic: per client `{name}_{read_bytes,write_bytes,accesses,stream_cycles,
    /// stall_cycles,bytes_per_stream_cycle}` and `{name}_latency_cycles_*`, per bank
    /// `bank{k}_stall_cycles`, and `cycles`, `busy_cycles`, `stepped_cycles`, `read_bytes`,
    /// `write_bytes`, `bytes_per_cycle` (over `cycles`), `bytes_per_busy_cycle`.
    pub fn report(&self, names: &[String], cycles: u64, out: &mut StatsWriter<'_>) {
        self.report_prefixed("", names, cycles, out);
    }

    /// [`SramStats::report`] with every name prefixed (e.g. "psum." when one component reports
    /// several memories).
    pub fn report_prefixed(&self, prefix: &str, names: &[String], cycles: u64, out: &mut StatsWriter<'_>) {
        for (c, name) in self.clients.iter().zip(names) {
            let name = [prefix, name.as_str()].concat();
            let name = name.as_str();
            out.count(&[name, "_read_bytes"].concat(), c.read_bytes);
            out.count(&[name, "_write_bytes"].concat(), c.write_bytes);
            out.count(&[name, "_accesses"].concat(), c.accesses);
            out.count(&[name, "_stream_cycles"].concat(), c.stream_cycles);
            out.count(&[name, "_stall_cycles"].concat(), c.stall_cycles);
            out.value(&[name, "_bytes_per_stream_cycle"].concat(), c.bytes_per_stream_cycle());
            out.histogram(&[name, "_latency"].concat(), "cycles", &c.latency, 1.0);
        }
        for (k, &n) in self.bank_stall_cycles.iter().enumerate() {
            out.count(&format!("{prefix}bank{k}_stall_cycles"), n);
        }
        let read: u64 = self.clients.iter().map(|c| c.read_bytes).sum();
        out.count(&[prefix, "cycles"].concat(), cycles);
        out.count(&[prefix, "busy_cycles"].concat(), self.busy_cycles);
        out.count(&[prefix, "stepped_cycles"].concat(), self.stepped_cycles);
        out.count(&[prefix, "read_bytes"].concat(), read);
        out.count(&[prefix, "write_bytes"].concat(), self.total_bytes() - read);
        out.value(&[prefix, "bytes_per_cycle"].concat(), ratio(self.total_bytes(), cycles));
        out.value(&[prefix, "bytes_per_busy_cycle"].concat(), ratio(self.total_bytes(), self.busy_cycles));
    }
}
