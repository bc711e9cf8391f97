//! Statistics of the DMA block: plain fields, written out once at report time.

use trnsim_kernel::{Histogram, StatsWriter, Time, TimeWeighted};

/// Counters of one DMA engine.
#[derive(Clone, Debug, Default)]
pub(crate) struct EngineStats {
    /// Bytes of completed packets.
    pub bytes: u64,
    /// Completed packets.
    pub packets: u64,
    /// HBM read bursts issued.
    pub hbm_reads: u64,
    /// HBM write bursts issued.
    pub hbm_writes: u64,
    /// SBUF/PSUM reads issued.
    pub sbuf_reads: u64,
    /// SBUF/PSUM writes issued.
    pub sbuf_writes: u64,
    /// Bytes read from and written to SBUF.
    pub sbuf_bytes: u64,
    /// Bytes read from and written to PSUM.
    pub psum_bytes: u64,
}

/// Counters of the whole block.
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockStats {
    /// Commands received.
    pub cmds: u64,
    /// Commands completed.
    pub cmds_done: u64,
    /// Commands that could not be executed (they complete without moving data).
    pub malformed: u64,
    /// Semaphore increments sent.
    pub sem_incs: u64,
    /// Arrival to the last participating engine's completion, in ps.
    pub latency_ps: Histogram,
    /// Parts waiting in queues (not yet fully started), over all engines.
    pub queued: TimeWeighted,
    /// Commands in flight now.
    pub in_flight: u64,
    /// Start of the current busy interval (a command in flight).
    pub busy_since: Time,
    /// Total time with at least one command in flight, in ps (closed intervals only).
    pub busy_ps: u64,
}

impl BlockStats {
    /// A command arrived at `now`.
    pub fn arrived(&mut self, now: Time) {
        self.cmds += 1;
        if self.in_flight == 0 {
            self.busy_since = now;
        }
        self.in_flight += 1;
    }

    /// A command that arrived at `arrived` completed at `now`.
    pub fn completed(&mut self, arrived: Time, now: Time) {
        self.cmds_done += 1;
        self.latency_ps.record(now.since(arrived).as_ps());
        self.in_flight -= 1;
        if self.in_flight == 0 {
            self.busy_ps += now.since(self.busy_since).as_ps();
        }
    }

    /// Busy time up to `end`, including an interval still open.
    pub fn busy_ps_at(&self, end: Time) -> u64 {
        self.busy_ps + if self.in_flight > 0 { end.since(self.busy_since).as_ps() } else { 0 }
    }
}

/// Writes every statistic (units in the names).
pub(crate) fn write(out: &mut StatsWriter<'_>, block: &BlockStats, engines: &[EngineStats]) {
    let mut total = EngineStats::default();
    for (e, s) in engines.iter().enumerate() {
        out.count(&format!("engine{e}.bytes"), s.bytes);
        out.count(&format!("engine{e}.packets"), s.packets);
        total.bytes += s.bytes;
        total.packets += s.packets;
        total.hbm_reads += s.hbm_reads;
        total.hbm_writes += s.hbm_writes;
        total.sbuf_reads += s.sbuf_reads;
        total.sbuf_writes += s.sbuf_writes;
        total.sbuf_bytes += s.sbuf_bytes;
        total.psum_bytes += s.psum_bytes;
    }
    out.count("bytes", total.bytes);
    out.count("packets", total.packets);
    out.count("commands", block.cmds);
    out.count("commands_done", block.cmds_done);
    out.count("malformed_commands", block.malformed);
    out.count("sem_increments", block.sem_incs);
    out.count("hbm_read_bursts", total.hbm_reads);
    out.count("hbm_write_bursts", total.hbm_writes);
    out.count("sbuf_reads", total.sbuf_reads);
    out.count("sbuf_writes", total.sbuf_writes);
    out.count("sbuf_bytes", total.sbuf_bytes);
    out.count("psum_bytes", total.psum_bytes);
    let busy = block.busy_ps_at(out.end_time());
    out.count("busy_ps", busy);
    let gbps = if busy > 0 { total.bytes as f64 * 1000.0 / busy as f64 } else { 0.0 };
    out.value("bandwidth_busy_GBps", gbps);
    out.histogram("latency", "ns", &block.latency_ps, 1e-3);
    out.level("queued", "parts", &block.queued);
}
