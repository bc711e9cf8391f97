//! Link statistics: what the transmitter and receiver count, and how they report it (units in
//! the names).

use trnsim_kernel::{Histogram, StatsWriter, Time, TimeWeighted};

/// Accumulated time during which a condition held (e.g. "stalled on a full replay buffer").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StallTime {
    since: Option<Time>,
    total_ps: u64,
}

impl StallTime {
    /// The condition holds (`on`) or not from `now` on.
    pub fn set(&mut self, now: Time, on: bool) {
        match (self.since, on) {
            (None, true) => self.since = Some(now),
            (Some(s), false) => {
                self.total_ps += now.since(s).as_ps();
                self.since = None;
            }
            _ => {}
        }
    }
    /// Total time the condition held up to `now`, in picoseconds.
    pub fn total_ps(&self, now: Time) -> u64 {
        self.total_ps + self.since.map_or(0, |s| now.since(s).as_ps())
    }
}

/// What a transmitter counts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TxStats {
    /// Packets taken from the input.
    pub packets: u64,
    /// Payload bytes of those packets.
    pub payload_bytes: u64,
    /// Units (flits) sent for the first time.
    pub flits_new: u64,
    /// Units sent again by a replay.
    pub flits_replayed: u64,
    /// Bytes put on the wire, replays included.
    pub wire_bytes: u64,
    /// Units whose bits were corrupted on the wire (CRC errors injected).
    pub flits_corrupted: u64,
    /// ACK DLLPs received.
    pub acks: u64,
    /// NAK DLLPs received.
    pub naks: u64,
    /// Replays started (by a NAK or by the replay timer).
    pub replays: u64,
    /// Replays started by the replay timer.
    pub replay_timeouts: u64,
    /// Units in the replay buffer over time.
    pub replay_occupancy: TimeWeighted,
    /// Most units the replay buffer ever held, momentary levels included.
    pub replay_peak: u64,
    /// Time with new data waiting but the replay buffer full.
    pub replay_full: StallTime,
    /// Time with a packet waiting but too few link-layer credits.
    pub credit_stall: StallTime,
    /// Sends the kernel link refused (its depth is sized so this stays 0).
    pub refused_sends: u64,
}

impl TxStats {
    /// Writes the statistics.
    pub fn report(&self, out: &mut StatsWriter<'_>) {
        let end = out.end_time();
        out.count("packets", self.packets);
        out.count("payload_bytes", self.payload_bytes);
        out.count("flits_new", self.flits_new);
        out.count("flits_replayed", self.flits_replayed);
        out.count("wire_bytes", self.wire_bytes);
        out.count("flits_corrupted", self.flits_corrupted);
        out.count("acks_received", self.acks);
        out.count("naks_received", self.naks);
        out.count("replays", self.replays);
        out.count("replay_timeouts", self.replay_timeouts);
        out.level("replay_buffer", "flits", &self.replay_occupancy);
        out.count("replay_buffer_peak_flits", self.replay_peak);
        out.value("replay_full_stall_ns", self.replay_full.total_ps(end) as f64 * 1e-3);
        out.value("credit_stall_ns", self.credit_stall.total_ps(end) as f64 * 1e-3);
        out.count("refused_sends", self.refused_sends);
    }
}

/// What a receiver counts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RxStats {
    /// Units that arrived.
    pub flits_received: u64,
    /// Units accepted (good CRC, expected sequence number).
    pub flits_accepted: u64,
    /// Units dropped for a failed CRC.
    pub crc_errors: u64,
    /// Good units dropped because an earlier one is missing (go-back-N).
    pub out_of_sequence: u64,
    /// Good units dropped because they were accepted before (replayed twice).
    pub duplicates: u64,
    /// ACK DLLPs sent.
    pub acks: u64,
    /// NAK DLLPs sent.
    pub naks: u64,
    /// Credit-update DLLPs sent.
    pub fc_updates: u64,
    /// Packets delivered on the output.
    pub packets: u64,
    /// Payload bytes delivered.
    pub payload_bytes: u64,
    /// Earliest acceptance time (at the transmitter) among delivered packets.
    pub first_accepted: Option<Time>,
    /// Time of the last delivery.
    pub last_delivery: Time,
    /// Link latency per packet, transmitter acceptance to receiver delivery, in picoseconds.
    pub latency_ps: Histogram,
    /// Packets in the receive buffer over time.
    pub buffer_occupancy: TimeWeighted,
}

impl RxStats {
    /// Delivered payload per second from the first acceptance to the last delivery, in GB/s
    /// (1e9 B/s); 0 before anything is delivered.
    pub fn goodput_gbytes_per_s(&self) -> f64 {
        match self.first_accepted {
            Some(f) if self.last_delivery > f => {
                self.payload_bytes as f64 / self.last_delivery.since(f).as_ps() as f64 * 1e3
            }
            _ => 0.0,
        }
    }

    /// Writes the statistics.
    pub fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("flits_received", self.flits_received);
        out.count("flits_accepted", self.flits_accepted);
        out.count("crc_errors", self.crc_errors);
        out.count("out_of_sequence", self.out_of_sequence);
        out.count("duplicates", self.duplicates);
        out.count("acks_sent", self.acks);
        out.count("naks_sent", self.naks);
        out.count("fc_updates_sent", self.fc_updates);
        out.count("packets", self.packets);
        out.count("payload_bytes", self.payload_bytes);
        out.value("goodput_gbytes_per_s", self.goodput_gbytes_per_s());
        out.histogram("latency", "ns", &self.latency_ps, 1e-3);
        out.level("rx_buffer", "packets", &self.buffer_occupancy);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stall_time_accumulates_intervals() {
        let mut s = StallTime::default();
        s.set(Time::from_ps(10), true);
        s.set(Time::from_ps(15), true);
        s.set(Time::from_ps(30), false);
        s.set(Time::from_ps(40), true);
        assert_eq!(s.total_ps(Time::from_ps(45)), 25);
    }

    #[test]
    fn goodput_in_gbytes_per_s() {
        let r = RxStats {
            payload_bytes: 64_000,
            first_accepted: Some(Time::ZERO),
            last_delivery: Time::from_ps(1_000_000),
            ..RxStats::default()
        };
        assert!((r.goodput_gbytes_per_s() - 64.0).abs() < 1e-9);
    }
}
