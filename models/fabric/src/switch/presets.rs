//! Named switch configurations, each citing its source.
//!
//! Source keys are those of docs/sources.md §0: R1 = SemiAnalysis Trainium3 deep
//! dive (switch roadmap: a 160-lane 20-port PCIe switch, then 320-lane PCIe, then UALink);
//! R5 = UALink Consortium 200G 1.0 webinar Q&A (switch port-to-port latency); R7 = PCIe 6.2
//! flit mode (64 GT/s, 256 B flits, x8 = 64 GB/s raw per direction); R8 = Broadcom PEX88000
//! (105 ns cut-through, Gen4); R9 = Microchip Switchtec Gen6 (up to 160 lanes). Values marked
//! (E) are estimates, listed in [`Preset::estimated`].

use super::config::{Forwarding, Queueing, SwitchConfig};

/// A named switch configuration.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// Name used in configs and on the command line.
    pub name: &'static str,
    /// One line: what it is.
    pub description: &'static str,
    /// Where the numbers come from.
    pub source: &'static str,
    /// Parameters that are estimates, with the reasoning.
    pub estimated: &'static [&'static str],
    /// The configuration.
    pub config: fn() -> SwitchConfig,
}

/// Every preset.
pub const ALL: &[Preset] = &[PCIE6_160L_20P, PCIE6_320L_40P, UALINK_400G_64P];

/// Looks a preset up by name.
pub fn find(name: &str) -> Option<&'static Preset> {
    ALL.iter().find(|p| p.name == name)
}

/// Estimates shared by the PCIe presets.
const PCIE_ESTIMATES: &[&str] = &[
    "port_to_port = 120 ns: Gen4 PEX88000 is 105 ns cut-through x16-x16 (R8); spec §8 assumes \
     100-150 ns for Gen6 and §10 proposes 120 ns",
    "cell = one 256 B flit, switched whole (R7 flit size; flit-granular switching is E)",
    "VOQ + iSLIP with 4 iterations (~log2 ports), speedup 1: commercial switch internals are not public",
    "input buffer 96 cells (24 KiB per port: 30 in the 120 ns pipeline + 66 queued); output queue 4 cells",
];

fn pcie6(ports: u16) -> SwitchConfig {
    SwitchConfig {
        ports,
        cell_bytes: 256,
        port_bytes_per_s: 64_000_000_000,
        port_to_port_ps: 120_000,
        forwarding: Forwarding::CutThrough,
        queueing: Queueing::Voq,
        arbiter: "islip".into(),
        iterations: 4,
        speedup: 1,
        input_buffer_cells: 96,
        output_buffer_cells: 4,
    }
}

/// The first Trn3 NeuronSwitch generation: a 160-lane PCIe Gen6 switch of 20 x8 ports.
pub const PCIE6_160L_20P: Preset = Preset {
    name: "pcie6-160l-20p",
    description: "PCIe Gen6, 160 lanes as 20 x8 ports, 64 GB/s raw per port and direction, 256 B flits (250 MHz cells)",
    source: "R1 (160-lane 20-port PCIe switch first), R9 (Switchtec Gen6 up to 160 lanes), R7 (Gen6 x8 rate, flit)",
    estimated: PCIE_ESTIMATES,
    config: || pcie6(20),
};

/// The second generation: a 320-lane PCIe Gen6 switch of 40 x8 ports.
pub const PCIE6_320L_40P: Preset = Preset {
    name: "pcie6-320l-40p",
    description: "PCIe Gen6, 320 lanes as 40 x8 ports, 64 GB/s raw per port and direction, 256 B flits",
    source: "R1 (then 320-lane PCIe switches), R7 (Gen6 x8 rate, flit); 40 x8 ports = 320 lanes (E)",
    estimated: PCIE_ESTIMATES,
    config: || pcie6(40),
};

/// A UALink 1.0 switch of 64 400 Gb/s ports (25.6 Tb/s).
pub const UALINK_400G_64P: Preset = Preset {
    name: "ualink-400g-64p",
    description: "UALink 1.0, 64 x2 ports of 200G lanes (400 Gb/s = 50 GB/s per direction), 64 B TL flits",
    source: "R5 (400G ports, <= 150 ns port-to-port at 25.6T), spec §8 (200G lanes, 64 B TL flits in 640 B DL flits)",
    estimated: &[
        "64 ports = 25.6 Tb/s / 400 Gb/s (R5 gives the switch size, not the port count)",
        "cell = one 64 B TL flit (781.25 MHz, 1.28 ns): switching on TL flits is E",
        "port_to_port = 150 ns, R5's upper bound (118 cells = 151.04 ns after rounding up)",
        "VOQ + iSLIP with 6 iterations (log2 64), speedup 1",
        "input buffer 512 cells (32 KiB: 118 in the pipeline + 394 queued); output queue 8 cells",
    ],
    config: || SwitchConfig {
        ports: 64,
        cell_bytes: 64,
        port_bytes_per_s: 50_000_000_000,
        port_to_port_ps: 150_000,
        forwarding: Forwarding::CutThrough,
        queueing: Queueing::Voq,
        arbiter: "islip".into(),
        iterations: 6,
        speedup: 1,
        input_buffer_cells: 512,
        output_buffer_cells: 8,
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_valid_and_match_their_sources() {
        for p in ALL {
            (p.config)().validate().unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(find(p.name).map(|q| q.name), Some(p.name));
        }
        let a = (PCIE6_160L_20P.config)();
        assert_eq!(u32::from(a.ports) * 8, 160);
        assert_eq!(a.cell_clock().as_hz(), 250_000_000);
        let b = (PCIE6_320L_40P.config)();
        assert_eq!(u32::from(b.ports) * 8, 320);
        let u = (UALINK_400G_64P.config)();
        assert_eq!(u.cell_clock().as_hz(), 781_250_000);
        assert_eq!(u.latency_cycles(), 118);
        assert_eq!(u64::from(u.ports) * u.port_bytes_per_s * 8, 25_600_000_000_000);
    }
}
