//! Statistics of one pseudo-channel controller.

use trnsim_kernel::{Histogram, StatsWriter};

/// Counters and histograms of one pseudo-channel, in CK cycles (converted to ns on report).
#[derive(Clone, Debug, Default)]
pub struct PcStats {
    /// Reads completed.
    pub reads: u64,
    /// Writes completed.
    pub writes: u64,
    /// Column accesses to a row some earlier access already used (no ACT of their own).
    pub row_hits: u64,
    /// First accesses after an ACT to a closed bank.
    pub row_misses: u64,
    /// First accesses after a PRE of another row and an ACT (the row buffer conflicted).
    pub row_conflicts: u64,
    /// Commands issued, by kind (index = `Command as usize`).
    pub commands: [u64; crate::hbm::Command::COUNT],
    /// Read latency: arrival at the controller to last data beat. Kept per stack, in
    /// [`crate::hbm::HbmStack::totals`] only: a pseudo-channel's own statistics leave it empty
    /// (in both fidelities; recording per pseudo-channel cost a cache miss per request).
    pub read_latency: Histogram,
    /// Write latency: arrival to last data beat written (per stack, like `read_latency`).
    pub write_latency: Histogram,
    /// Sum over time of queued requests (both queues), for the mean depth.
    pub queue_area: u128,
    /// Bank-cycles spent refreshing (tRFC per REF times banks, tRFCpb per REFPB).
    pub refresh_bank_cycles: u64,
    /// Cycles spent draining writes (in write mode with writes queued).
    pub write_mode_cycles: u64,
    /// Banks closed: by PRE, by PREA (each open bank), by RDA and WRA (for the energy).
    pub bank_closes: u64,
    /// Cycles with a bank open or refreshing (filled in at report time from the controller).
    pub active_cycles: u64,
}

impl PcStats {
    /// Adds `o` into `self` (for per-stack totals).
    pub fn merge(&mut self, o: &PcStats) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.row_hits += o.row_hits;
        self.row_misses += o.row_misses;
        self.row_conflicts += o.row_conflicts;
        for (a, b) in self.commands.iter_mut().zip(o.commands) {
            *a += b;
        }
        self.read_latency.merge(&o.read_latency);
        self.write_latency.merge(&o.write_latency);
        self.queue_area += o.queue_area;
        self.refresh_bank_cycles += o.refresh_bank_cycles;
        self.write_mode_cycles += o.write_mode_cycles;
        self.bank_closes += o.bank_closes;
        self.active_cycles += o.active_cycles;
    }

    /// Writes the statistics with `prefix` (e.g. "" for totals, "ch3.pc1." per pseudo-channel).
    /// `ns_per_cycle` converts latencies; `cycles` is the elapsed time; `bytes` per access;
    /// `(banks, pcs)`: banks per pseudo-channel and the pseudo-channels summed into `self`.
    /// `queue_depth_mean` is the mean of the requests queued in all of them together;
    /// `refresh_time_frac` and `write_mode_frac` are means per bank and per pseudo-channel.
    pub fn write(
        &self,
        out: &mut StatsWriter<'_>,
        prefix: &str,
        ns_per_cycle: f64,
        cycles: u64,
        bytes: u32,
        (banks, pcs): (u32, u32),
    ) {
        let moved = (self.reads + self.writes) * bytes as u64;
        out.count(&[prefix, "reads"].concat(), self.reads);
        out.count(&[prefix, "writes"].concat(), self.writes);
        out.count(&[prefix, "bytes"].concat(), moved);
        let secs = cycles as f64 * ns_per_cycle * 1e-9;
        out.value(&[prefix, "bandwidth_GBps"].concat(), if secs > 0.0 { moved as f64 / secs / 1e9 } else { 0.0 });
        out.count(&[prefix, "row_hits"].concat(), self.row_hits);
        out.count(&[prefix, "row_misses"].concat(), self.row_misses);
        out.count(&[prefix, "row_conflicts"].concat(), self.row_conflicts);
        for c in crate::hbm::Command::ALL {
            let n = self.commands[c as usize];
            match prefix {
                "" => out.count(c.counter_name(), n),
                _ => out.count(&[prefix, c.counter_name()].concat(), n),
            }
        }
        out.histogram(&[prefix, "read_latency"].concat(), "ns", &self.read_latency, ns_per_cycle);
        out.histogram(&[prefix, "write_latency"].concat(), "ns", &self.write_latency, ns_per_cycle);
        let c = cycles.max(1) as f64;
        out.value(&[prefix, "queue_depth_mean"].concat(), self.queue_area as f64 / c);
        let pcs = f64::from(pcs.max(1));
        out.value(
            &[prefix, "refresh_time_frac"].concat(),
            self.refresh_bank_cycles as f64 / (c * f64::from(banks) * pcs),
        );
        out.value(&[prefix, "write_mode_frac"].concat(), self.write_mode_cycles as f64 / (c * pcs));
    }
}
