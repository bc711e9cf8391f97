//! The shape and port budget of one on-chip SRAM (SBUF or PSUM), as data, with named presets.
//!
//! Sources are keys of docs/sources.md: §3 (on-chip memory, documented by AWS in A1-A3)
//! and §10 (estimates). Parameters marked (E) are estimates, listed in [`SramPreset::estimated`].

use crate::sram::error::FieldError;
use serde::{Deserialize, Serialize};

/// The geometry, port budget and fixed costs of one partitioned, banked SRAM.
///
/// The memory is `partitions` independent SRAMs (one per lane of the engines), each of
/// `partition_bytes`, split into `banks` banks. A byte offset within a partition selects its bank
/// by address bits: `bank = (offset / bank_interleave_bytes) % banks`; with
/// `bank_interleave_bytes = partition_bytes / banks` the banks are contiguous regions (high
/// address bits), with a smaller value they interleave. Every bank of every partition serves at
/// most `read_ports` element reads and `write_ports` element writes per cycle of the memory's
/// clock, each port moving one element of up to `port_bytes` bytes.
///
/// Leaves out: ECC, power, the NC-v2 rules that forbid Vector and GpSimd on SBUF (and Vector and
/// Scalar on PSUM) at the same time, which engine may reach which memory (an engine-level rule),
/// and the v4 SBUF DMA read-add-write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SramGeometry {
    /// Partitions (lanes), each an independent SRAM. 128 for SBUF and PSUM (D §3). Must be a
    /// multiple of 4: the partition-start rules work in quarters (32 partitions).
    pub partitions: u32,
    /// Bytes per partition: SBUF 192/224/256 KiB on NC-v2/v3/v4, PSUM 16 KiB (D §3).
    pub partition_bytes: u32,
    /// Banks per partition (PSUM 8, D §3; SBUF 16, E). At most 64.
    pub banks: u32,
    /// Bytes of consecutive addresses that map to one bank before the next bank starts.
    pub bank_interleave_bytes: u32,
    /// Element reads one bank serves per cycle (SBUF 2 (E §10); PSUM 1 (E)).
    pub read_ports: u32,
    /// Element writes one bank serves per cycle (SBUF 2 (E §10); PSUM 1 (E)).
    pub write_ports: u32,
    /// Widest element one port moves per cycle, in bytes (4: FP32, E). Wider dtypes are rejected.
    pub port_bytes: u32,
    /// Cycles from an access's last element leaving the arbiter to its data being usable (E).
    pub access_latency_cycles: u32,
    /// Fixed cycles before a tensor access starts streaming ("~60-cycle static overhead per
    /// tensor access", D §3).
    pub static_overhead_cycles: u32,
    /// Largest innermost stride, in bytes, that still streams at one element per partition per
    /// cycle (16, D §3).
    pub full_rate_max_stride_bytes: u32,
    /// Port cycles one element costs when the innermost stride exceeds
    /// `full_rate_max_stride_bytes` (2: "larger strides halve it", D §3; that the halving comes
    /// from holding the bank port twice as long is E).
    pub strided_port_cycles: u32,
}

/// At most this many banks per partition (bank sets are 64-bit masks).
pub const MAX_BANKS: u32 = 64;

impl SramGeometry {
    /// Bytes of one bank of one partition.
    pub fn bank_bytes(&self) -> u32 {
        self.partition_bytes / self.banks.max(1)
    }
    /// Capacity of the whole memory in bytes.
    pub fn total_bytes(&self) -> u64 {
        u64::from(self.partitions) * u64::from(self.partition_bytes)
    }
    /// Partitions per quarter: the unit of the partition-start rules (32 of 128).
    pub fn quarter(&self) -> u32 {
        self.partitions / 4
    }
    /// Partitions per arbiter group (a sixteenth of the partitions, at least 1): the
    /// granularity the arbiter counts ports in (a DMA engine serves 8 of 128 partitions).
    pub fn group(&self) -> u32 {
        (self.partitions / 16).max(1)
    }
    /// The bank holding byte `offset` of a partition.
    #[inline]
    pub fn bank_of(&self, offset: u64) -> u32 {
        ((offset / u64::from(self.bank_interleave_bytes)) % u64::from(self.banks)) as u32
    }
    /// Peak bytes per cycle of one engine interface streaming `elem_bytes` elements at full rate
    /// over all partitions.
    pub fn interface_peak_bytes_per_cycle(&self, elem_bytes: u32) -> u64 {
        u64::from(self.partitions) * u64::from(elem_bytes)
    }

    /// Checks every rule; the error names the first bad field.
    pub fn validate(&self) -> Result<(), FieldError> {
        let nonzero = [
            ("partitions", self.partitions),
            ("partition_bytes", self.partition_bytes),
            ("banks", self.banks),
            ("bank_interleave_bytes", self.bank_interleave_bytes),
            ("read_ports", self.read_ports),
            ("write_ports", self.write_ports),
            ("port_bytes", self.port_bytes),
            ("strided_port_cycles", self.strided_port_cycles),
        ];
        for (field, v) in nonzero {
            if v == 0 {
                return Err(FieldError::new(field, "must be at least 1"));
            }
        }
        if !multiple_of(self.partitions, 4) {
            return Err(FieldError::new("partitions", format!("{} is not a multiple of 4", self.partitions)));
        }
        if self.banks > MAX_BANKS {
            return Err(FieldError::new("banks", format!("{} banks (at most {MAX_BANKS} supported)", self.banks)));
        }
        for (field, v) in [("read_ports", self.read_ports), ("write_ports", self.write_ports)] {
            if v > 255 {
                return Err(FieldError::new(field, format!("{v} ports per bank (at most 255 supported)")));
            }
        }
        if !self.port_bytes.is_power_of_two() {
            return Err(FieldError::new("port_bytes", format!("{} is not a power of two", self.port_bytes)));
        }
        self.validate_layout()
    }

    fn validate_layout(&self) -> Result<(), FieldError> {
        if !multiple_of(self.partition_bytes, self.banks) {
            let d = format!("{} bytes do not split into {} equal banks", self.partition_bytes, self.banks);
            return Err(FieldError::new("partition_bytes", d));
        }
        if !multiple_of(self.bank_interleave_bytes, self.port_bytes) {
            let d = format!("{} is not a multiple of port_bytes {}", self.bank_interleave_bytes, self.port_bytes);
            return Err(FieldError::new("bank_interleave_bytes", d));
        }
        if self.bank_interleave_bytes > self.bank_bytes() {
            let d = format!("{} exceeds the bank size {}", self.bank_interleave_bytes, self.bank_bytes());
            return Err(FieldError::new("bank_interleave_bytes", d));
        }
        Ok(())
    }
}

/// True when `d` divides `x` (false for `d == 0`). `u32::is_multiple_of` needs Rust 1.87; the
/// workspace supports 1.80.
pub(crate) fn multiple_of(x: u32, d: u32) -> bool {
    x.checked_rem(d) == Some(0)
}

/// A named geometry with its sources.
#[derive(Clone, Copy, Debug)]
pub struct SramPreset {
    /// Name used in configs and on the command line (e.g. "sbuf-nc-v4").
    pub name: &'static str,
    /// One line: what it is.
    pub description: &'static str,
    /// Where the documented numbers come from.
    pub source: &'static str,
    /// Parameters that are estimates, with the reasoning.
    pub estimated: &'static [&'static str],
    /// The geometry.
    pub geometry: SramGeometry,
}

/// Estimates shared by the SBUF presets.
const SBUF_ESTIMATES: &[&str] = &[
    "banks = 16 per partition (not published): 12/14/16 KiB banks on v2/v3/v4, a usual compiled-SRAM \
     macro size; enough banks that engines working on different tiles rarely meet",
    "bank_interleave_bytes = bank size (contiguous banks, chosen by the high address bits), like PSUM's \
     documented 2 KiB banks: tiles in different regions never conflict",
    "read_ports = write_ports = 2 per bank: spec §10's per-partition 2R+2W, 1 element/cycle each, \
     applied per bank so that engines on different banks run concurrently at full rate",
    "port_bytes = 4: one FP32 element per port per cycle (128 elem/cycle of any dtype up to FP32)",
    "access_latency_cycles = 4: array read plus routing across the partition (no published figure)",
    "strided_port_cycles = 2: the documented half rate, modeled as the bank port held two cycles per element",
];

const fn sbuf(partition_kib: u32) -> SramGeometry {
    SramGeometry {
        partitions: 128,
        partition_bytes: partition_kib * 1024,
        banks: 16,
        bank_interleave_bytes: partition_kib * 1024 / 16,
        read_ports: 2,
        write_ports: 2,
        port_bytes: 4,
        access_latency_cycles: 4,
        static_overhead_cycles: 60,
        full_rate_max_stride_bytes: 16,
        strided_port_cycles: 2,
    }
}

/// NC-v2 (Trn1) SBUF: 24 MiB = 128 partitions x 192 KiB.
pub const SBUF_NC_V2: SramPreset = SramPreset {
    name: "sbuf-nc-v2",
    description: "NC-v2 (Trn1) state buffer: 128 partitions x 192 KiB = 24 MiB",
    source: "spec §3 (D A1): size, 128 elem/cycle per interface, 16 B stride rule, ~60-cycle overhead",
    estimated: SBUF_ESTIMATES,
    geometry: sbuf(192),
};

/// NC-v3 (Trn2) SBUF: 28 MiB = 128 partitions x 224 KiB.
pub const SBUF_NC_V3: SramPreset = SramPreset {
    name: "sbuf-nc-v3",
    description: "NC-v3 (Trn2) state buffer: 128 partitions x 224 KiB = 28 MiB",
    source: "spec §3 (D A2): size, 128 elem/cycle per interface, 16 B stride rule, ~60-cycle overhead",
    estimated: SBUF_ESTIMATES,
    geometry: sbuf(224),
};

/// NC-v4 (Trn3) SBUF: 32 MiB = 128 partitions x 256 KiB.
pub const SBUF_NC_V4: SramPreset = SramPreset {
    name: "sbuf-nc-v4",
    description: "NC-v4 (Trn3) state buffer: 128 partitions x 256 KiB = 32 MiB",
    source: "spec §3 (D A3): size, 128 elem/cycle per interface, 16 B stride rule, ~60-cycle overhead",
    estimated: SBUF_ESTIMATES,
    geometry: sbuf(256),
};

/// PSUM (all NC versions): 2 MiB = 128 partitions x 8 banks x 2 KiB.
pub const PSUM: SramPreset = SramPreset {
    name: "psum",
    description: "partial-sum buffer: 128 partitions x 8 banks x 2 KiB (512 FP32) = 2 MiB, NC-v2/v3/v4",
    source: "spec §3 (D A1-A3): size and banks; NC-v3 'full bandwidth each if different banks'",
    estimated: &[
        "read_ports = write_ports = 1 per bank: two engines reach full bandwidth only on different \
         banks (spec §3, NC-v3); a tensor-engine accumulate counts as one write",
        "access_latency_cycles = 2: a small 2 KiB array next to the tensor engine",
        "port_bytes = 4 (FP32 accumulation); strided_port_cycles = 2 as for SBUF",
    ],
    geometry: SramGeometry {
        partitions: 128,
        partition_bytes: 16 * 1024,
        banks: 8,
        bank_interleave_bytes: 2048,
        read_ports: 1,
        write_ports: 1,
        port_bytes: 4,
        access_latency_cycles: 2,
        static_overhead_cycles: 60,
        full_rate_max_stride_bytes: 16,
        strided_port_cycles: 2,
    },
};

/// Every preset, in the order help texts list them.
pub const PRESETS: &[SramPreset] = &[SBUF_NC_V2, SBUF_NC_V3, SBUF_NC_V4, PSUM];

/// Looks a preset up by name.
pub fn find_preset(name: &str) -> Option<&'static SramPreset> {
    PRESETS.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_valid_and_sized_as_spec_section_3() {
        let mib = |p: &SramPreset| p.geometry.total_bytes() / (1024 * 1024);
        assert_eq!([24, 28, 32, 2], [mib(&SBUF_NC_V2), mib(&SBUF_NC_V3), mib(&SBUF_NC_V4), mib(&PSUM)]);
        for p in PRESETS {
            assert_eq!(p.geometry.validate(), Ok(()), "{}", p.name);
            assert!(find_preset(p.name).is_some());
        }
        assert_eq!(PSUM.geometry.bank_bytes(), 2048);
        assert_eq!(PSUM.geometry.bank_of(2047), 0);
        assert_eq!(PSUM.geometry.bank_of(2048 * 7), 7);
    }

    #[test]
    fn geometry_is_data_and_rejects_unknown_keys() {
        let json = serde_json::to_string(&PSUM.geometry).expect("serializes");
        assert_eq!(serde_json::from_str::<SramGeometry>(&json).ok(), Some(PSUM.geometry));
        let extra = json.replace("{", "{\"bank_count\":8,");
        assert!(serde_json::from_str::<SramGeometry>(&extra).is_err());
    }

    #[test]
    fn geometry_errors_name_the_field() {
        let g = SBUF_NC_V4.geometry;
        let cases: [(SramGeometry, &str); 7] = [
            (SramGeometry { partitions: 0, ..g }, "partitions"),
            (SramGeometry { partitions: 126, ..g }, "partitions"),
            (SramGeometry { banks: 128, ..g }, "banks"),
            (SramGeometry { banks: 7, ..g }, "partition_bytes"),
            (SramGeometry { port_bytes: 3, ..g }, "port_bytes"),
            (SramGeometry { bank_interleave_bytes: 6, ..g }, "bank_interleave_bytes"),
            (SramGeometry { write_ports: 0, ..g }, "write_ports"),
        ];
        for (geom, field) in cases {
            assert_eq!(geom.validate().map_err(|e| e.field), Err(field));
        }
    }
}
