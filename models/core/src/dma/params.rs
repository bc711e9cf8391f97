//! Parameters of a core's DMA block, declared once with units and sources (spec §1, §4, §10).

use serde::{Deserialize, Serialize};
use trnsim_kernel::{Dur, Frequency};

/// Most queues a DMA engine has (`queues`).
pub const MAX_QUEUES: u32 = 32;
/// Most packets a DMA engine keeps in flight (`packets_in_flight`; a slot's index is a byte).
pub const MAX_SLOTS: u32 = 256;

/// How a DMA engine picks the queue it serves next, at packet boundaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheduling {
    /// Round robin over the queues whose head is ready (NC-v2/v3; spec §4, A6).
    RoundRobin,
    /// Four priority classes (NC-v4 QoS; spec §4, A3/A6): queue `q` is in class `q % 4`,
    /// class 0 highest. A ready queue of a higher class always wins; queues of one class take
    /// turns (round robin). The queue-to-class mapping is not published; `q % 4` is our choice.
    Qos4,
}

/// Everything that defines a core's DMA block. Per-engine figures: a NeuronCore has
/// `engines` of them, each serving `partitions_per_engine` SBUF partitions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DmaParams {
    /// Preset name, for reports.
    pub name: String,
    /// DMA engines per NeuronCore (spec §4: 16, D A1/A6).
    pub engines: u32,
    /// Queues per engine, FIFO within a queue (spec §4: 16, D A6). At most 32.
    pub queues: u32,
    /// SBUF partitions each engine serves: engine `e` serves partitions
    /// `[e * partitions_per_engine, (e + 1) * partitions_per_engine)` (spec §4: 8).
    pub partitions_per_engine: u32,
    /// Peak bytes per nanosecond (= GB/s) of one engine (spec §4: 27.2 on v2/v3, 38.4 on v4;
    /// D A6). The documented *achievable* figures (17/23/33 B/ns) come out of the model, not in.
    pub peak_bytes_per_ns: f64,
    /// Queue arbitration (spec §4: round robin on v2/v3, QoS with 4 classes on v4).
    pub scheduling: Scheduling,
    /// Bytes an engine moves from one queue before it may switch queues (spec §4: rings are
    /// served round robin at packet boundaries, default packet 4 KiB, D A10).
    pub packet_bytes: u32,
    /// From a command's arrival until its data starts to move (spec §4: descriptor + sync +
    /// semaphore-to-start ≈ 1300 ns cross-engine; ≈ 600 ns for a HW-DGE instruction; D A6).
    /// Commands overlap their start latencies (pipelined).
    #[serde(with = "trnsim_kernel::time::text_dur")]
    pub start_latency: Dur,
    /// HBM bursts one engine keeps in flight (reads awaiting data plus writes awaiting their
    /// acknowledgement). Not published (E): 64 x 32 B = 2 KiB covers ~50 ns of HBM latency at
    /// 38.4 GB/s.
    pub outstanding: u32,
    /// Bytes of one HBM access (the stack's burst: 32 B for HBM2E/3/3E pseudo-channels).
    pub access_bytes: u32,
    /// Fast fidelity: one HBM request per partition row of a packet (as many bursts as the
    /// outstanding limit leaves room for), charged and counted as its bursts, instead of one
    /// request per burst. Only a fast-fidelity HBM stack serves such requests.
    pub bulk: bool,
    /// Packets one engine holds at once (one issuing, the rest waiting for data or for the
    /// write to complete; SBUF-sourced packets are read ahead into these). Not published (E).
    pub packets_in_flight: u32,
    /// Clock the harness should give the block. Not published (E: 1.4 GHz, the v2 engine
    /// clock). Bandwidth does not depend on it: the byte budget accrues with time, not cycles;
    /// the clock only quantizes when bursts issue (at 1.4 GHz one cycle is worth 27.4 B at
    /// 38.4 GB/s, under one 32 B burst, so the budget, not the clock, limits the rate).
    #[serde(with = "trnsim_kernel::time::text_freq")]
    pub clock: Frequency,
}

impl DmaParams {
    fn base(name: &str, peak: f64, scheduling: Scheduling) -> DmaParams {
        DmaParams {
            name: name.to_string(),
            engines: 16,
            queues: 16,
            partitions_per_engine: 8,
            peak_bytes_per_ns: peak,
            scheduling,
            packet_bytes: 4096,
            start_latency: Dur::from_ns(1300),
            outstanding: 64,
            access_bytes: 32,
            bulk: false,
            packets_in_flight: 4,
            clock: Frequency::from_mhz(1400),
        }
    }

    /// NC-v2 (Trn1): 16 engines x 27.2 GB/s, round robin (spec §4).
    pub fn v2() -> DmaParams {
        DmaParams::base("nc-v2", 27.2, Scheduling::RoundRobin)
    }

    /// NC-v3 (Trn2): 16 engines x 27.2 GB/s, round robin (spec §4).
    pub fn v3() -> DmaParams {
        DmaParams::base("nc-v3", 27.2, Scheduling::RoundRobin)
    }

    /// NC-v4 (Trn3): 16 engines x 38.4 GB/s, QoS with 4 classes (spec §4).
    pub fn v4() -> DmaParams {
        DmaParams::base("nc-v4", 38.4, Scheduling::Qos4)
    }

    /// Checks every field; the error names it.
    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("engines", self.engines),
            ("partitions_per_engine", self.partitions_per_engine),
            ("outstanding", self.outstanding),
            ("access_bytes", self.access_bytes),
            ("packets_in_flight", self.packets_in_flight),
        ];
        if let Some((name, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(format!("{name}: must be at least 1"));
        }
        if self.queues == 0 || self.queues > MAX_QUEUES {
            return Err(format!("queues: {} is outside 1..={MAX_QUEUES}", self.queues));
        }
        if self.engines.checked_mul(self.partitions_per_engine).is_none_or(|p| p > u32::from(u16::MAX)) {
            return Err("engines x partitions_per_engine: too many partitions".into());
        }
        if self.packets_in_flight > MAX_SLOTS {
            return Err(format!("packets_in_flight: {} is above {MAX_SLOTS}", self.packets_in_flight));
        }
        if !(self.peak_bytes_per_ns > 0.0 && self.peak_bytes_per_ns < 1e6) {
            return Err(format!("peak_bytes_per_ns: {} is not a positive rate", self.peak_bytes_per_ns));
        }
        if self.packet_bytes < 64 {
            return Err(format!("packet_bytes: {} is below 64", self.packet_bytes));
        }
        if self.clock.as_hz() == 0 {
            return Err("clock: must be non-zero".into());
        }
        Ok(())
    }

    /// The peak rate in micro-bytes per picosecond (the budget's integer unit; 38.4 B/ns =
    /// 38400 µB/ps).
    pub(crate) fn rate_ub_per_ps(&self) -> i64 {
        (self.peak_bytes_per_ns * 1000.0).round().max(1.0) as i64
    }

    /// Scheduling class of queue `q` (0 = highest).
    pub(crate) fn class_of(&self, q: usize) -> usize {
        match self.scheduling {
            Scheduling::RoundRobin => 0,
            Scheduling::Qos4 => q % 4,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_validate_and_rates_are_exact() {
        for p in [DmaParams::v2(), DmaParams::v3(), DmaParams::v4()] {
            p.validate().unwrap();
        }
        assert_eq!(DmaParams::v4().rate_ub_per_ps(), 38_400);
        assert_eq!(DmaParams::v3().rate_ub_per_ps(), 27_200);
        let mut p = DmaParams::v4();
        p.queues = 33;
        assert!(p.validate().unwrap_err().starts_with("queues"));
    }

    #[test]
    fn params_round_trip_through_json_and_reject_unknown_keys() {
        let p = DmaParams::v4();
        let s = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<DmaParams>(&s).unwrap(), p);
        let bad = s.replacen('{', "{\"typo\":1,", 1);
        assert!(serde_json::from_str::<DmaParams>(&bad).is_err());
    }
}
