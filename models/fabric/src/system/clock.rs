//! The fabric clock and the kernel-link parameters of each topology edge: where the exact
//! picoseconds of [`crate::topo::Network`] become cycles.
//!
//! **Clock.** `f = bw / B` with `bw` the fastest edge's per-link payload rate and `B` the
//! largest power of two with `f >= 1 GHz` (so `f` is in [1, 2) GHz: Gen6 x8 58.77 GB/s ->
//! B = 32 B/cycle, f = 1.837 GHz; Gen5 x8 31.3 GB/s -> B = 16, f = 1.957 GHz). A full 4 KiB
//! packet then serializes in exactly `4096 / B` cycles, the old model's time to the
//! picosecond's rounding; a shorter packet takes `ceil(bytes / B)` cycles (< 1 cycle over).
//! Edges slower than the fastest get `round(bw_e / f)` bytes per cycle (all presets have one
//! link type, so this never rounds there).
//!
//! **Latency.** The fixed latency of an edge (PHY + wire + link layer, + switch port-to-port
//! when it leaves a switch) is `round(latency x f)` cycles (error <= half a cycle, ~0.27 ns).
//! The kernel delivers a message of `c` serialization cycles sent on edge `k` with latency
//! `L` at edge `k + L + c - 1`; the old model at `start + ser + latency`, so the kernel link's
//! latency is `round(latency x f) + 1` cycles. That latency is what a partitioner sees as
//! lookahead (55 ns + 1 cycle on a chip's links, 175-295 ns on links leaving a switch).
//!
//! **Credits.** A credit returns over the reverse direction of the physical link: its PHY,
//! wire and link-layer latency (the topology's smallest edge latency, 55 ns in the presets),
//! rounded to cycles, without a switch's port-to-port latency. A partitioner's lookahead is the smallest
//! latency or credit latency of a cut link, so this keeps it at the link latency.
//!
//! **Depth.** Credits must never bind (the old model's queues are unbounded, and a packet waits
//! in its sender's per-link queue, not in the link). A credit is out from the send on edge `k`
//! until the receiver takes the packet on its arrival edge `k + L + c - 1` plus the credit
//! latency `C`, and sends on one link are at least `c_min` cycles apart (bandwidth), so
//! `depth = (L + c_max + C) / c_min + 2` credits always suffice (`c_max`: a full packet,
//! `c_min`: the smallest packet of the run).

use crate::topo::{Edge, Topology};
use trnsim_kernel::{Bandwidth, Cycles, Frequency, LinkSpec};

/// The fabric clock of one topology (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FabricClock {
    /// The frequency every chip and switch component ticks at.
    pub freq: Frequency,
}

impl FabricClock {
    /// The clock for `topo`: its fastest link carries a power of two bytes per cycle, at 1-2 GHz.
    pub fn for_topology(topo: &Topology) -> FabricClock {
        let bw = topo.edges.iter().map(|e| e.bytes_per_s).fold(0.0, f64::max);
        let mut b = 1.0;
        while bw / (2.0 * b) >= 1e9 {
            b *= 2.0;
        }
        let hz = (bw / b).round().max(1.0) as u64;
        FabricClock { freq: Frequency::from_hz(hz) }
    }

    /// Payload bytes one link of `e` carries per cycle (>= 1).
    pub fn bytes_per_cycle(&self, e: &Edge) -> u32 {
        (e.bytes_per_s / self.freq.as_hz() as f64).round().max(1.0) as u32
    }

    /// `ps` rounded to the nearest whole cycle.
    pub fn cycles(&self, ps: u64) -> u64 {
        let num = u128::from(ps) * u128::from(self.freq.as_hz());
        ((num + 500_000_000_000) / 1_000_000_000_000) as u64
    }

    /// Serialization of a packet of `bytes` on one link of `e`, in cycles (>= 1).
    pub fn serialization_cycles(&self, e: &Edge, bytes: u32) -> u64 {
        u64::from(bytes.div_ceil(self.bytes_per_cycle(e)).max(1))
    }

    /// The kernel link for one link of `e` (see the module doc): latency `round(latency) + 1`
    /// cycles, credit return `round(credit_ps)` cycles (>= 1), credits that never bind for
    /// packets of `min_packet..=max_packet` bytes, the link's payload bytes per cycle.
    pub fn link_spec(&self, e: &Edge, min_packet: u32, max_packet: u32, credit_ps: u64) -> LinkSpec {
        let latency = self.cycles(e.latency_ps) + 1;
        let credit = self.cycles(credit_ps).max(1);
        let (c_min, c_max) = (self.serialization_cycles(e, min_packet), self.serialization_cycles(e, max_packet));
        let depth = (latency + c_max + credit).div_ceil(c_min) + 2;
        LinkSpec {
            latency: Cycles(latency),
            depth: u32::try_from(depth).unwrap_or(u32::MAX),
            credit_latency: Cycles(credit),
            bandwidth: Bandwidth::BytesPerCycle(self.bytes_per_cycle(e)),
        }
    }
}
