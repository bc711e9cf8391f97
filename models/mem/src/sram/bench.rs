//! Bandwidth microbenchmark: engine interfaces streaming through one SRAM at once, measured in
//! bytes per cycle (and GB/s at a clock). The harness's `sbuf-bandwidth` runs [`scenarios`].

use crate::sram::error::SramError;
use crate::sram::geometry::SramGeometry;
use crate::sram::pattern::{AccessPattern, Dim};
use crate::sram::timing::{ClientId, Sram};
use trnsim_kernel::{Cycles, Frequency};

/// One engine interface of a benchmark: a single 1-D access of `elements_per_partition`
/// elements, `stride` elements apart, over the given partitions, started at cycle 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientSpec {
    /// Interface name (e.g. "act", "dma0").
    pub name: String,
    /// Writes (true) or reads (false).
    pub write: bool,
    /// First partition.
    pub partition_start: u32,
    /// Partitions (one element each per cycle).
    pub partitions: u32,
    /// Byte offset of the first element in each partition.
    pub offset: u32,
    /// Element size in bytes.
    pub elem_bytes: u32,
    /// Innermost stride in elements.
    pub stride: i16,
}

impl ClientSpec {
    /// A reader over all `geom` partitions.
    pub fn reader(geom: &SramGeometry, name: &str, offset: u32, elem_bytes: u32, stride: i16) -> ClientSpec {
        let partitions = geom.partitions;
        ClientSpec { name: name.to_string(), write: false, partition_start: 0, partitions, offset, elem_bytes, stride }
    }
}

/// What one interface achieved. Rates are over the benchmark's window (see
/// [`BandwidthResult::window_cycles`]), so shared bandwidth splits exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientBandwidth {
    /// Interface name.
    pub name: String,
    /// Bytes moved over all partitions.
    pub bytes: u64,
    /// Elements moved over all partitions.
    pub elements: u64,
    /// Cycles the interface was streaming (granted or stalled).
    pub stream_cycles: u64,
    /// Cycles it lost a bank port.
    pub stall_cycles: u64,
    /// Cycle its data was usable (start 0 + overhead + streaming + latency).
    pub finish: Cycles,
    /// `bytes / window_cycles`.
    pub bytes_per_cycle: f64,
    /// `elements / window_cycles` (128 = one element per partition per cycle on 128 partitions).
    pub elements_per_cycle: f64,
}

impl ClientBandwidth {
    /// This interface's bandwidth in GB/s (1e9 B/s) at memory clock `clock`.
    pub fn gbytes_per_s(&self, clock: Frequency) -> f64 {
        gbytes_per_s(self.bytes_per_cycle, clock)
    }
}

/// The outcome of [`bandwidth_bench`].
#[derive(Clone, Debug, PartialEq)]
pub struct BandwidthResult {
    /// Per interface, in the order given.
    pub clients: Vec<ClientBandwidth>,
    /// Cycles from the first element moving (cycle `static_overhead_cycles`) to the last.
    pub window_cycles: u64,
    /// Bytes moved by all interfaces.
    pub total_bytes: u64,
    /// Cycles the model had to step one by one (simulation cost, not hardware).
    pub stepped_cycles: u64,
}

impl BandwidthResult {
    /// Aggregate bytes per cycle over the window.
    pub fn bytes_per_cycle(&self) -> f64 {
        self.total_bytes as f64 / self.window_cycles.max(1) as f64
    }
    /// Aggregate GB/s at memory clock `clock`.
    pub fn gbytes_per_s(&self, clock: Frequency) -> f64 {
        gbytes_per_s(self.bytes_per_cycle(), clock)
    }
}

/// Bytes per cycle at `clock`, in GB/s (1e9 bytes per second).
pub fn gbytes_per_s(bytes_per_cycle: f64, clock: Frequency) -> f64 {
    bytes_per_cycle * clock.as_hz() as f64 / 1e9
}

/// Starts every client's access at cycle 0 on a fresh memory of geometry `geom`, runs to the
/// end, and reports what each interface achieved. Errors name the bad client's field.
pub fn bandwidth_bench(
    geom: &SramGeometry,
    clients: &[ClientSpec],
    elements_per_partition: u16,
) -> Result<BandwidthResult, SramError> {
    let names: Vec<&str> = clients.iter().map(|c| c.name.as_str()).collect();
    let mut sram = Sram::new("bench", *geom, &names)?;
    for (k, c) in clients.iter().enumerate() {
        let dims = [Dim::new(elements_per_partition, c.stride)];
        let p = AccessPattern::new(c.partition_start, c.partitions, c.offset, c.elem_bytes, &dims)
            .map_err(|error| SramError::Pattern { memory: "bench".into(), client: c.name.clone(), error })?;
        sram.start(ClientId(k as u32), &p, c.write, Cycles(0))?;
    }
    let mut finish = vec![Cycles(0); clients.len()];
    while let Some(t) = sram.next_event() {
        sram.advance(t);
        while let Some(done) = sram.pop_completed() {
            finish[done.client.0 as usize] = done.finish;
        }
    }
    let last = finish.iter().map(|f| f.0).max().unwrap_or(0);
    let window = last.saturating_sub(u64::from(geom.access_latency_cycles + geom.static_overhead_cycles)).max(1);
    let stats = sram.stats();
    let per_client = clients.iter().zip(&stats.clients).zip(&finish).map(|((c, s), &finish)| {
        let bytes = s.read_bytes + s.write_bytes;
        let elements = bytes / u64::from(c.elem_bytes);
        let (bytes_per_cycle, elements_per_cycle) = (bytes as f64 / window as f64, elements as f64 / window as f64);
        let (stream_cycles, stall_cycles) = (s.stream_cycles, s.stall_cycles);
        ClientBandwidth {
            name: c.name.clone(),
            bytes,
            elements,
            stream_cycles,
            stall_cycles,
            finish,
            bytes_per_cycle,
            elements_per_cycle,
        }
    });
    let clients: Vec<ClientBandwidth> = per_client.collect();
    let total_bytes = stats.total_bytes();
    Ok(BandwidthResult { clients, window_cycles: window, total_bytes, stepped_cycles: stats.stepped_cycles })
}

/// A named benchmark setup with the rate each interface should reach.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Short name ("alone-contiguous", "alone-strided", "disjoint-banks", "same-bank").
    pub name: &'static str,
    /// What it shows.
    pub description: String,
    /// The interfaces.
    pub clients: Vec<ClientSpec>,
    /// Elements per partition each interface moves.
    pub elements_per_partition: u16,
    /// Expected elements per cycle of each interface (over all partitions).
    pub expected_elements_per_cycle: f64,
}

/// The four standard setups for `geom` with `elem_bytes` elements: one reader alone with a
/// stride within 16 B (full rate), one alone with a larger stride (half rate), `read_ports + 1`
/// readers (at least two) each on its own bank (no loss), and `read_ports + 1` readers on one
/// bank (sharing `read_ports` ports). Each access fits in one bank-interleave granule.
pub fn scenarios(geom: &SramGeometry, elem_bytes: u32) -> Vec<Scenario> {
    let p = f64::from(geom.partitions);
    let e = (geom.bank_interleave_bytes / elem_bytes.max(1)).clamp(1, 4096) as u16;
    let wide = (geom.full_rate_max_stride_bytes / elem_bytes.max(1) + 1) as i16;
    let e_wide = (geom.partition_bytes / (elem_bytes.max(1) * wide as u32)).clamp(1, u32::from(e)) as u16;
    let n = (geom.read_ports + 1).max(2).min(geom.banks);
    let shared = (geom.read_ports + 1) as usize;
    let reader = |k: usize, bank: u32| {
        ClientSpec::reader(geom, &format!("rd{k}"), bank * geom.bank_interleave_bytes, elem_bytes, 1)
    };
    vec![
        Scenario {
            name: "alone-contiguous",
            description: format!("one reader, stride {elem_bytes} B (<= {} B)", geom.full_rate_max_stride_bytes),
            clients: vec![reader(0, 0)],
            elements_per_partition: e,
            expected_elements_per_cycle: p,
        },
        Scenario {
            name: "alone-strided",
            description: format!(
                "one reader, stride {} B (> {} B)",
                wide as u32 * elem_bytes,
                geom.full_rate_max_stride_bytes
            ),
            clients: vec![ClientSpec { stride: wide, ..reader(0, 0) }],
            elements_per_partition: e_wide,
            expected_elements_per_cycle: p / f64::from(geom.strided_port_cycles),
        },
        Scenario {
            name: "disjoint-banks",
            description: format!("{n} readers, each on its own bank"),
            clients: (0..n as usize).map(|k| reader(k, k as u32)).collect(),
            elements_per_partition: e,
            expected_elements_per_cycle: p,
        },
        Scenario {
            name: "same-bank",
            description: format!("{shared} readers on bank 0, which has {} read ports", geom.read_ports),
            clients: (0..shared).map(|k| reader(k, 0)).collect(),
            elements_per_partition: e,
            expected_elements_per_cycle: p * f64::from(geom.read_ports) / shared as f64,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sram::geometry::{PSUM, SBUF_NC_V2, SBUF_NC_V4};

    #[test]
    fn the_four_bandwidth_expectations_hold_exactly() {
        for (geom, elem) in [(SBUF_NC_V4.geometry, 4), (SBUF_NC_V2.geometry, 2), (PSUM.geometry, 4)] {
            for s in scenarios(&geom, elem) {
                let r = bandwidth_bench(&geom, &s.clients, s.elements_per_partition).expect("valid scenario");
                for c in &r.clients {
                    assert_eq!(c.elements_per_cycle, s.expected_elements_per_cycle, "{} {}", s.name, c.name);
                    assert_eq!(c.elements, u64::from(s.elements_per_partition) * u64::from(geom.partitions));
                }
                let total = s.expected_elements_per_cycle * s.clients.len() as f64 * f64::from(elem);
                assert!((r.bytes_per_cycle() - total).abs() < 1e-9, "{}: {}", s.name, r.bytes_per_cycle());
            }
        }
    }

    #[test]
    fn explicit_expectations_for_sbuf_v4_fp32() {
        let g = SBUF_NC_V4.geometry;
        let rate = |clients: &[ClientSpec], e| {
            let r = bandwidth_bench(&g, clients, e).expect("valid");
            r.clients.iter().map(|c| c.elements_per_cycle).collect::<Vec<_>>()
        };
        let rd = |name: &str, bank: u32, stride| ClientSpec::reader(&g, name, bank * 16384, 4, stride);
        assert_eq!(rate(&[rd("act", 0, 4)], 1024), [128.0]); // 16 B stride: full rate
        assert_eq!(rate(&[rd("act", 0, 5)], 1024), [64.0]); // 20 B stride: half
        assert_eq!(rate(&[rd("act", 0, 1), rd("dve", 1, 1)], 4096), [128.0, 128.0]);
        assert_eq!(rate(&[rd("a", 3, 1), rd("b", 3, 1), rd("c", 3, 1)], 4096), [256.0 / 3.0; 3]);
        let w = ClientSpec { write: true, ..rd("pool", 3, 1) };
        assert_eq!(rate(&[rd("a", 3, 1), rd("b", 3, 1), w], 4096), [128.0; 3]); // writes use other ports
        assert_eq!(gbytes_per_s(512.0, Frequency::from_mhz(1400)), 716.8); // spec §3's v2 example
    }

    #[test]
    fn bad_client_specs_are_errors() {
        let g = PSUM.geometry;
        let bad = ClientSpec { partition_start: 16, ..ClientSpec::reader(&g, "act", 0, 4, 1) };
        let e = bandwidth_bench(&g, &[bad], 16).expect_err("start 16 with 128 partitions");
        assert!(
            matches!(e, SramError::Pattern { client, error, .. } if client == "act" && error.field == "partition_start")
        );
    }
}
