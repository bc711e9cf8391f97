//! Named HBM speed grades: organization plus timing, each citing its source.
//!
//! Sources (keys of docs/sources.md §0): M1 = Ramulator 2 `python/ramulator/dram/
//! {hbm2,hbm3,hbm4}.py` @c5b1c3a; M2 = DRAMsim3 `configs/HBM2_8Gb_x128.ini` @2981759; JESD238 Table 4
//! for HBM3 organizations. Values marked (E) are estimates, listed in [`Preset::estimated`].

use crate::hbm::org::Organization;
use crate::hbm::timing::TimingParams;

/// A named stack configuration.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// Name used on the command line and in configs (e.g. "hbm3-6400").
    pub name: &'static str,
    /// One line: what it is.
    pub description: &'static str,
    /// Where the numbers come from.
    pub source: &'static str,
    /// Parameters that are estimates, with the reasoning.
    pub estimated: &'static [&'static str],
    /// The stack's organization.
    pub org: fn() -> Organization,
    /// The speed grade's timing.
    pub timing: fn() -> TimingParams,
}

impl Preset {
    /// Peak data bandwidth of one pseudo-channel in bytes per second.
    pub fn pc_peak_bytes_per_s(&self) -> f64 {
        let (o, t) = ((self.org)(), (self.timing)());
        o.access_bytes() as f64 / t.bl as f64 * t.ck_mhz as f64 * 1e6
    }
    /// Peak data bandwidth of the whole stack in bytes per second.
    pub fn stack_peak_bytes_per_s(&self) -> f64 {
        self.pc_peak_bytes_per_s() * (self.org)().pcs() as f64
    }
}

/// Every preset, in the order `trnsim hbm --help` lists them.
pub const ALL: &[Preset] = &[HBM2_2000, HBM3_5700, HBM3_6400, HBM3E_9600, HBM4_8000, HBM4_9600];

/// Looks a preset up by name.
pub fn find(name: &str) -> Option<&'static Preset> {
    ALL.iter().find(|p| p.name == name)
}

/// The names of all presets, comma-separated (for error messages).
pub fn names() -> String {
    ALL.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}

/// HBM2 at 2.0 Gb/s in pseudo-channel mode: 8 channels x 2 PCs x 64 bit, 4 GiB (4-high 8 Gb).
pub const HBM2_2000: Preset = Preset {
    name: "hbm2-2000",
    description: "HBM2 2.0 Gb/s, 4-high 8 Gb dies, 16 pseudo-channels x 64 bit, 256 GB/s per stack",
    source: "timing M1 hbm2.py HBM2_2000Mbps; rrd/faw/rfc/refi M2 HBM2_8Gb_x128.ini; org M2 in pseudo-channel mode",
    estimated: &[
        "rtw = cl + bl + 2 - cwl (bus turnaround, Ramulator's formula)",
        "rfc_pb = 160 ns (JESD235 tRFCSB for 8 Gb; M2 gives none)",
        "refi_pb = refi / 16 banks (M2's tREFIb = 128 is for legacy mode)",
        "rrefd = 8 ns, as HBM3",
        "ppd = 0 (HBM2 has no tPPD), ccd_r = 0 (one SID)",
    ],
    org: || Organization {
        channels: 8,
        pseudo_channels: 2,
        sids: 1,
        bank_groups: 4,
        banks_per_group: 4,
        rows: 16384,
        columns: 128,
        burst_length: 4,
        dq_bits: 64,
    },
    timing: || TimingParams {
        ck_mhz: 1000,
        bl: 2,
        cl: 14,
        cwl: 5,
        rcd_rd: 14,
        rcd_wr: 12,
        rp: 14,
        ras: 34,
        rc: 48,
        wr: 16,
        rtp: 5,
        ccd_s: 2,
        ccd_l: 4,
        ccd_r: 0,
        rrd_s: 4,
        rrd_l: 6,
        faw: 30,
        wtr_s: 6,
        wtr_l: 8,
        rtw: 13,
        ppd: 0,
        rfc: 260,
        rfc_pb: 160,
        rrefd: 8,
        refi: 3900,
        refi_pb: 243,
    },
};

/// HBM3 at 5.7 Gb/s as on Trn2: 12-high 16 Gb dies (3 SIDs), 24 GiB, 729.6 GB/s per stack.
pub const HBM3_5700: Preset = Preset {
    name: "hbm3-5700",
    description: "HBM3 5.7 Gb/s, 12-high 16 Gb dies (3 SIDs), 24 GiB, 32 pseudo-channels x 32 bit, 729.6 GB/s per stack (Trn2)",
    source: "spec §1 (D A4): Trn2 96 GiB and 2.9 TB/s over 4 stacks; R10: ~5.7 Gb/s per pin; timing: HBM3-6400's ns values (M1 hbm3.py HBM3_6400Mbps) at tCK = 701.8 ps; org JESD238 Table 4 with 3 SIDs",
    estimated: &[
        "pin rate 5.7 Gb/s (R10's figure; 4 stacks give 2918.4 GB/s, 0.6 % above the documented 2.9 TB/s)",
        "every timing value: HBM3-6400 ns values re-quantized to 1.425 GHz CK (rounded up; tREFI rounded down)",
        "rows = 16384 (24 GiB / 32 PCs / 48 banks / 1 KiB rows)",
        "rfc = 642 (450 ns for 12 Gb channels: between JESD238's 350 ns for 8 Gb and 550 ns above 16 Gb)",
        "refi_pb = refi / 48 banks (JESD238 rule, rounded down)",
    ],
    org: || Organization {
        channels: 16,
        pseudo_channels: 2,
        sids: 3,
        bank_groups: 4,
        banks_per_group: 4,
        rows: 16384,
        columns: 256,
        burst_length: 8,
        dq_bits: 32,
    },
    timing: || TimingParams {
        ck_mhz: 1425,
        bl: 2,
        cl: 18,
        cwl: 9,
        rcd_rd: 28,
        rcd_wr: 14,
        rp: 24,
        ras: 41,
        rc: 65,
        wr: 30,
        rtp: 9,
        ccd_s: 2,
        ccd_l: 4,
        ccd_r: 3,
        rrd_s: 4,
        rrd_l: 5,
        faw: 22,
        wtr_s: 7,
        wtr_l: 9,
        rtw: 18,
        ppd: 2,
        rfc: 642,
        rfc_pb: 285,
        rrefd: 8,
        refi: 5557,
        refi_pb: 115,
    },
};

/// HBM3 at 6.4 Gb/s: 16 channels x 2 PCs x 32 bit, 8-high 16 Gb dies (16 GiB), 819.2 GB/s.
pub const HBM3_6400: Preset = Preset {
    name: "hbm3-6400",
    description: "HBM3 6.4 Gb/s, 8-high 16 Gb dies (2 SIDs), 32 pseudo-channels x 32 bit, 819.2 GB/s per stack",
    source: "timing M1 hbm3.py HBM3_6400Mbps (spec §9 table); org JESD238 Table 4 HBM3_16Gb_8hi; tRFCab 350 ns for 8 Gb channels",
    estimated: &["refi_pb = refi / 32 banks (JESD238 rule, rounded down)"],
    org: || Organization {
        channels: 16,
        pseudo_channels: 2,
        sids: 2,
        bank_groups: 4,
        banks_per_group: 4,
        rows: 16384,
        columns: 256,
        burst_length: 8,
        dq_bits: 32,
    },
    timing: || TimingParams {
        ck_mhz: 1600,
        bl: 2,
        cl: 20,
        cwl: 10,
        rcd_rd: 31,
        rcd_wr: 15,
        rp: 26,
        ras: 45,
        rc: 72,
        wr: 33,
        rtp: 9,
        ccd_s: 2,
        ccd_l: 4,
        ccd_r: 3,
        rrd_s: 4,
        rrd_l: 5,
        faw: 24,
        wtr_s: 7,
        wtr_l: 10,
        rtw: 20,
        ppd: 2,
        rfc: 560,
        rfc_pb: 320,
        rrefd: 8,
        refi: 6240,
        refi_pb: 195,
    },
};

/// HBM3E at 9.6 Gb/s as on Trn3: 12-high (3 SIDs), 36 GiB, 1.2288 TB/s per stack (E).
pub const HBM3E_9600: Preset = Preset {
    name: "hbm3e-9600",
    description: "HBM3E 9.6 Gb/s, 12-high 24 Gb dies (3 SIDs), 36 GiB, 32 pseudo-channels x 32 bit, 1228.8 GB/s per stack (Trn3)",
    source: "spec §9 'Proposed HBM3E-9.6 Gb/s for Trn3': HBM3_6400's ns values at tCK = 416.7 ps; spec §1 (4 x 36 GiB, 4.9 TB/s)",
    estimated: &[
        "every timing value: HBM3-6400 ns values re-quantized to 2.4 GHz CK (spec §9, E)",
        "ccd_l = 4 (spec gives 4-6)",
        "ccd_r = 5, ppd = 3, rrefd = 12: HBM3-6400 ns values re-quantized",
        "rows = 24576 (36 GiB / 32 PCs / 48 banks / 1 KiB rows)",
        "rfc = 1320 (550 ns for 18 Gb channels)",
    ],
    org: || Organization {
        channels: 16,
        pseudo_channels: 2,
        sids: 3,
        bank_groups: 4,
        banks_per_group: 4,
        rows: 24576,
        columns: 256,
        burst_length: 8,
        dq_bits: 32,
    },
    timing: || TimingParams {
        ck_mhz: 2400,
        bl: 2,
        cl: 30,
        cwl: 15,
        rcd_rd: 47,
        rcd_wr: 23,
        rp: 39,
        ras: 68,
        rc: 108,
        wr: 50,
        rtp: 14,
        ccd_s: 2,
        ccd_l: 4,
        ccd_r: 5,
        rrd_s: 6,
        rrd_l: 8,
        faw: 36,
        wtr_s: 11,
        wtr_l: 15,
        rtw: 30,
        ppd: 3,
        rfc: 1320,
        rfc_pb: 480,
        rrefd: 12,
        refi: 9360,
        refi_pb: 195,
    },
};

/// HBM4 at 8.0 Gb/s: 32 channels x 2 PCs x 32 bit (a 2,048-bit stack), 8-high 32 Gb dies
/// (32 GiB), 2.048 TB/s per stack.
pub const HBM4_8000: Preset = Preset {
    name: "hbm4-8000",
    description: "HBM4 8.0 Gb/s, 8-high 32 Gb dies (2 SIDs), 64 pseudo-channels x 32 bit, 2048 GB/s per stack",
    source: "timing M1 hbm4.py HBM4_8000Mbps; org M1 hbm4.py HBM4_32Gb_8Hi; tRFCab 450 ns for 8 Gb channels, tREFI 3.9 us, tRREFD max(3 tCK, 8 ns) (M1's secondary-timing rules)",
    estimated: &["refi_pb = refi / 32 banks (M1's rule, rounded up)"],
    org: || Organization {
        channels: 32,
        pseudo_channels: 2,
        sids: 2,
        bank_groups: 2,
        banks_per_group: 8,
        rows: 16384,
        columns: 256,
        burst_length: 8,
        dq_bits: 32,
    },
    timing: || TimingParams {
        ck_mhz: 2000,
        bl: 2,
        cl: 20,
        cwl: 10,
        rcd_rd: 39,
        rcd_wr: 19,
        rp: 33,
        ras: 57,
        rc: 90,
        wr: 42,
        rtp: 12,
        ccd_s: 2,
        ccd_l: 4,
        ccd_r: 2,
        rrd_s: 5,
        rrd_l: 7,
        faw: 30,
        wtr_s: 9,
        wtr_l: 13,
        rtw: 25,
        ppd: 2,
        rfc: 900,
        rfc_pb: 560,
        rrefd: 16,
        refi: 7800,
        refi_pb: 244,
    },
};

/// HBM4 at 9.6 Gb/s (a what-if grade for Trn4): HBM4-8000's organization and nanosecond
/// timings at a 2.4 GHz CK, 2.4576 TB/s per stack (E).
pub const HBM4_9600: Preset = Preset {
    name: "hbm4-9600",
    description: "HBM4 9.6 Gb/s (what-if), 8-high 32 Gb dies (2 SIDs), 64 pseudo-channels x 32 bit, 2457.6 GB/s per stack (Trn4 estimate)",
    source: "M1 hbm4.py HBM4_8000Mbps and HBM4_32Gb_8Hi, re-quantized to tCK = 416.7 ps as hbm3e-9600 is from hbm3-6400; spec §1 (R3): Trn4 4x Trn3's memory bandwidth",
    estimated: &[
        "every timing value: HBM4-8000's ns values re-quantized to a 2.4 GHz CK, rounded up (E)",
        "ccd_s = 2, ccd_l = 4 kept in CK (burst-bound); ccd_r = 3, ppd = 3 re-quantized",
        "9.6 Gb/s: the pin rate at which 8 stacks give 4 x Trn3's 4.9 TB/s (spec §1, R3; E)",
    ],
    org: || Organization {
        channels: 32,
        pseudo_channels: 2,
        sids: 2,
        bank_groups: 2,
        banks_per_group: 8,
        rows: 16384,
        columns: 256,
        burst_length: 8,
        dq_bits: 32,
    },
    timing: || TimingParams {
        ck_mhz: 2400,
        bl: 2,
        cl: 24,
        cwl: 12,
        rcd_rd: 47,
        rcd_wr: 23,
        rp: 40,
        ras: 69,
        rc: 108,
        wr: 51,
        rtp: 15,
        ccd_s: 2,
        ccd_l: 4,
        ccd_r: 3,
        rrd_s: 6,
        rrd_l: 9,
        faw: 36,
        wtr_s: 11,
        wtr_l: 16,
        rtw: 30,
        ppd: 3,
        rfc: 1080,
        rfc_pb: 672,
        rrefd: 20,
        refi: 9360,
        refi_pb: 293,
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacities_and_peaks_match_the_spec() {
        let gib = 1u64 << 30;
        assert_eq!((HBM2_2000.org)().stack_bytes(), 4 * gib);
        assert_eq!((HBM3_6400.org)().stack_bytes(), 16 * gib);
        // Trn2: 4 stacks of 24 GiB = 96 GiB at 5.7 Gb/s = 2918.4 GB/s (documented 2.9 TB/s).
        assert_eq!((HBM3_5700.org)().stack_bytes(), 24 * gib);
        assert_eq!(HBM3_5700.stack_peak_bytes_per_s(), 729.6e9);
        assert_eq!((HBM3E_9600.org)().stack_bytes(), 36 * gib);
        assert_eq!(HBM2_2000.stack_peak_bytes_per_s(), 256e9);
        assert_eq!(HBM3_6400.stack_peak_bytes_per_s(), 819.2e9);
        // Trn3: 4 stacks = 4.915 TB/s (spec §1: 4.9 TB/s).
        assert!((4.0 * HBM3E_9600.stack_peak_bytes_per_s() - 4.9152e12).abs() < 1e6);
        // HBM4: 2,048 data bits per stack; Trn4's 8 stacks at 9.6 Gb/s = 4 x Trn3 (spec §1, R3).
        assert_eq!((HBM4_8000.org)().stack_bytes(), 32 * gib);
        assert_eq!(HBM4_8000.stack_peak_bytes_per_s(), 2048e9);
        assert!(
            (8.0 * HBM4_9600.stack_peak_bytes_per_s() / (4.0 * HBM3E_9600.stack_peak_bytes_per_s()) - 4.0).abs() < 1e-9
        );
        for p in ALL {
            (p.org)().validate().unwrap();
        }
    }

    #[test]
    fn refresh_cycle_time_follows_channel_density() {
        // JESD238: 350 ns for channels of <= 8 Gb, 550 ns above 16 Gb.
        assert_eq!((HBM3_6400.org)().channel_bits(), 8 << 30);
        assert_eq!((HBM3_6400.timing)().rfc, 350 * 1600 / 1000);
        assert!((HBM3E_9600.org)().channel_bits() > 16 << 30);
        assert_eq!((HBM3E_9600.timing)().rfc, 550 * 2400 / 1000);
    }
}
