//! Lane encodings as data: signalling rate, line code, link-layer framing and transaction
//! overheads of PCIe Gen5, PCIe Gen6 (flit mode) and UALink 200G, plus lane bonding.
//!
//! Sources (keys of docs/sources.md §0 and §8): Gen5 rate and 128b/130b from spec §8
//! (R); the Gen6 256-byte flit (236 B TLP + 6 B DLLP + 8 B CRC + 6 B FEC) from spec §8, R7;
//! UALink 200G lanes, 640-byte DL flits carrying 64-byte TL flits, request sizes 64..256 B and
//! the ~93 % efficiency claim from spec §8, R5/R6. Everything else is marked (E) and listed in
//! each preset's `estimated`.
//!
//! What it leaves out: link training, lane-to-lane skew, SKP ordered sets and idle flits, and
//! the ACK/UpdateFC DLLPs of the reverse direction that share a Gen5 (non-flit) link.

use crate::link::params::LinkError;

/// How the link layer frames transaction-layer bytes on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Non-flit mode (PCIe up to Gen5): every packet (TLP) is framed on its own with
    /// `framing_bytes` of start token, sequence number and LCRC. The replay unit is one packet.
    Packet {
        /// Bytes added to every packet, in bytes.
        framing_bytes: u32,
    },
    /// Flit mode (PCIe Gen6, UALink): fixed-size flits whose payload area carries packet bytes
    /// back to back (a packet may straddle flits, a flit may carry several packets; a flit with
    /// nothing more to carry is padded and sent). The replay unit is one flit.
    Flit {
        /// Bytes of one flit on the wire, in bytes.
        flit_bytes: u32,
        /// Bytes of one flit that carry packet bytes, in bytes.
        payload_bytes: u32,
    },
}

/// One lane encoding and its link layer, as data. Rates are exact integers so serialization
/// times are exact rationals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoding {
    /// Name used in configurations ("pcie-gen6").
    pub name: &'static str,
    /// One line: what it is.
    pub description: &'static str,
    /// Where the numbers come from.
    pub source: &'static str,
    /// Values that are estimates, with the reasoning.
    pub estimated: &'static [&'static str],
    /// Signalling rate of one lane, in Mb/s (= GT/s x 1000; for PAM4 PCIe, GT/s counts bits).
    pub lane_mbit_per_s: u64,
    /// Line code: `code_num` data bits per `code_den` bits on the lane (128/130 for Gen5).
    pub code_num: u64,
    /// See `code_num`.
    pub code_den: u64,
    /// Link-layer framing.
    pub framing: Framing,
    /// Transaction header added to every packet, in bytes (PCIe TLP header; UALink request
    /// field).
    pub header_bytes: u32,
    /// Packet payloads occupy a whole number of these, in bytes (PCIe DW = 4; UALink data
    /// half-flit = 32).
    pub granule_bytes: u32,
    /// Bytes one link-layer data credit covers, in bytes (PCIe 16; UALink 64).
    pub data_credit_bytes: u32,
    /// Largest payload of one packet, in bytes (PCIe Max_Payload_Size up to 4096; UALink
    /// requests up to 256). The link does not split packets; sources keep within it.
    pub max_payload_bytes: u32,
    /// Lane counts a link of this encoding may bond.
    pub widths: &'static [u32],
}

impl Encoding {
    /// Bytes a packet with `payload_bytes` of payload adds to the link layer's byte stream:
    /// header plus payload rounded up to the granule, in bytes (without per-packet framing).
    pub fn stream_bytes(&self, payload_bytes: u32) -> u32 {
        self.header_bytes + payload_bytes.div_ceil(self.granule_bytes) * self.granule_bytes
    }

    /// Data credits a packet with `payload_bytes` of payload consumes.
    pub fn data_credits(&self, payload_bytes: u32) -> u32 {
        payload_bytes.div_ceil(self.data_credit_bytes)
    }
}

/// PCIe Gen5: 32 GT/s NRZ, 128b/130b, non-flit framing.
pub const PCIE_GEN5: Encoding = Encoding {
    name: "pcie-gen5",
    description: "PCIe 5.0: 32 GT/s NRZ lanes, 128b/130b, TLPs framed one by one (x8 = 31.5 GB/s per direction)",
    source: "spec §8 (R): 32 GT/s, 128b/130b, x8 = 31.5 GB/s; framing per PCIe Base 5.0 §4.2.2 (R)",
    estimated: &[
        "framing_bytes = 8: 4-byte STP token (length, 12-bit sequence number) + 4-byte LCRC (R, not verified here)",
        "header_bytes = 16: 4-DW memory-write header (64-bit address), no ECRC, no TLP prefix",
        "left out: DLLPs of the reverse direction and SKP ordered sets on the lanes (~0.3 %)",
    ],
    lane_mbit_per_s: 32_000,
    code_num: 128,
    code_den: 130,
    framing: Framing::Packet { framing_bytes: 8 },
    header_bytes: 16,
    granule_bytes: 4,
    data_credit_bytes: 16,
    max_payload_bytes: 4096,
    widths: &[1, 2, 4, 8, 16],
};

/// PCIe Gen6: 64 GT/s PAM4, flit mode (256-byte flits carrying 236 bytes of TLP).
pub const PCIE_GEN6: Encoding = Encoding {
    name: "pcie-gen6",
    description:
        "PCIe 6.0 flit mode: 64 GT/s PAM4 lanes, 1b/1b, 256 B flits = 236 B TLP + 6 B DLLP + 8 B CRC + 6 B FEC",
    source: "spec §8: R7 (flit layout, 1b/1b, x8 = 64 GB/s raw per direction)",
    estimated: &[
        "header_bytes = 16: flit-mode 4-DW memory-write header (64-bit address), no OHC (spec §8 says ~16 B, E)",
        "ber is taken after FEC: the FEC's corrections are not modelled, only the CRC failures left",
    ],
    lane_mbit_per_s: 64_000,
    code_num: 1,
    code_den: 1,
    framing: Framing::Flit { flit_bytes: 256, payload_bytes: 236 },
    header_bytes: 16,
    granule_bytes: 4,
    data_credit_bytes: 16,
    max_payload_bytes: 4096,
    widths: &[1, 2, 4, 8, 16],
};

/// UALink 200G: 212.5 GT/s lanes delivering 200 Gb/s, 640-byte data-link flits.
pub const UALINK_200G: Encoding = Encoding {
    name: "ualink-200g",
    description: "UALink 200G 1.0: 212.5 GT/s lanes carrying 200 Gb/s, 640 B DL flits packing 64 B TL flits",
    source: "spec §8: R5/R6 (200G lanes, x1/x2/x4, 640 B DL flit of 64 B TL flits, 64..256 B requests, ~93 % claimed)",
    estimated: &[
        "line code 16/17 = RS(544,514) FEC x 256b/257b of the 200G/lane Ethernet PHY: 212.5 x 16/17 = 200 Gb/s (E)",
        "DL flit payload 628 of 640 B: 3 B flit header + 5 x 1 B segment headers + 4 B CRC (E: third-party \
         transcription of UALink 200 1.0 tables 6-2/6-14, rosslwheeler/ualink_private include/ualink/dl_flit.h)",
        "header_bytes = 16: one uncompressed 4-sector request field per transaction, two sharing a 32 B control \
         half-flit (E; compressed requests take 8 B; Write byte enables add a 32 B half-flit, WriteFull none)",
        "granule 32 B (TL data half-flit) and 64 B data credits (E, same source)",
    ],
    lane_mbit_per_s: 212_500,
    code_num: 16,
    code_den: 17,
    framing: Framing::Flit { flit_bytes: 640, payload_bytes: 628 },
    header_bytes: 16,
    granule_bytes: 32,
    data_credit_bytes: 64,
    max_payload_bytes: 256,
    widths: &[1, 2, 4],
};

/// Every encoding, in the order `trnsim describe` lists them.
pub const ALL: &[Encoding] = &[PCIE_GEN5, PCIE_GEN6, UALINK_200G];

/// Looks an encoding up by name.
pub fn find(name: &str) -> Option<&'static Encoding> {
    ALL.iter().find(|e| e.name == name)
}

/// The names of all encodings, comma-separated (for error messages).
pub fn names() -> String {
    ALL.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
}

/// Lanes of one encoding bonded into a link (one direction). Rates are per direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BondedLink {
    /// The lane encoding and link layer.
    pub encoding: Encoding,
    /// Lanes bonded (x4, x8, x16, ...).
    pub lanes: u32,
}

impl BondedLink {
    /// `lanes` lanes of `encoding`; the error names `lanes` when the encoding has no such width.
    pub fn new(encoding: &Encoding, lanes: u32) -> Result<BondedLink, LinkError> {
        if !encoding.widths.contains(&lanes) {
            let allowed = format!("{:?} for {}", encoding.widths, encoding.name);
            return Err(LinkError::BadParam { field: "lanes", value: lanes.to_string(), allowed });
        }
        Ok(BondedLink { encoding: *encoding, lanes })
    }

    /// Signalling rate of all lanes, in bits per second.
    pub fn raw_bits_per_s(&self) -> f64 {
        self.encoding.lane_mbit_per_s as f64 * 1e6 * f64::from(self.lanes)
    }

    /// Rate after the line code (before flit, framing and header overheads), in bytes per second.
    pub fn data_bytes_per_s(&self) -> f64 {
        let e = &self.encoding;
        self.raw_bits_per_s() / 8.0 * e.code_num as f64 / e.code_den as f64
    }

    /// Bytes one wire unit (flit, or framed packet) of a packet with `payload_bytes` takes, in
    /// bytes: the flit size in flit mode, the framed packet in packet mode.
    pub fn unit_bytes(&self, payload_bytes: u32) -> u32 {
        match self.encoding.framing {
            Framing::Packet { framing_bytes } => self.encoding.stream_bytes(payload_bytes) + framing_bytes,
            Framing::Flit { flit_bytes, .. } => flit_bytes,
        }
    }

    /// Time to serialize `bytes` on the bonded lanes, in picoseconds (exact, as a float).
    pub fn serialization_ps(&self, bytes: u32) -> f64 {
        let e = &self.encoding;
        let den = u128::from(self.lanes) * u128::from(e.lane_mbit_per_s) * u128::from(e.code_num);
        (u128::from(bytes) * 8 * u128::from(e.code_den) * 1_000_000) as f64 / den as f64
    }
}

/// Payload bytes per second a saturated link delivers when every packet carries
/// `payload_bytes` of payload, with no bit errors, derived analytically:
///
/// - packet mode: `data_rate x payload / (header + payload' + framing)`
/// - flit mode: `data_rate x (flit_payload / flit) x payload / (header + payload')`
///
/// where `data_rate` is lanes x lane rate x line code / 8 and `payload'` is the payload rounded
/// up to the granule. For Gen6 x8 with 256 B packets: 64e9 x 236/256 x 256/272 = 55.5 GB/s.
pub fn effective_payload_bytes_per_s(link: &BondedLink, payload_bytes: u32) -> f64 {
    let e = &link.encoding;
    let stream = f64::from(e.stream_bytes(payload_bytes));
    let share = f64::from(payload_bytes) / stream;
    match e.framing {
        Framing::Packet { framing_bytes } => {
            link.data_bytes_per_s() * f64::from(payload_bytes) / (stream + f64::from(framing_bytes))
        }
        Framing::Flit { flit_bytes, payload_bytes: carried } => {
            link.data_bytes_per_s() * f64::from(carried) / f64::from(flit_bytes) * share
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn raw_rates_match_the_spec_sheet() {
        let g5 = BondedLink::new(&PCIE_GEN5, 8).unwrap();
        assert!(close(g5.data_bytes_per_s(), 31.5e9, 0.001), "{}", g5.data_bytes_per_s());
        let g6 = BondedLink::new(&PCIE_GEN6, 8).unwrap();
        assert_eq!(g6.data_bytes_per_s(), 64e9);
        let ua = BondedLink::new(&UALINK_200G, 4).unwrap();
        assert!(close(ua.data_bytes_per_s(), 100e9, 1e-12), "{}", ua.data_bytes_per_s());
        assert_eq!(g6.serialization_ps(256), 4000.0);
        assert!(close(ua.serialization_ps(640), 6400.0, 1e-12));
    }

    #[test]
    fn effective_rates_follow_the_overheads() {
        let g6 = BondedLink::new(&PCIE_GEN6, 8).unwrap();
        let want = 64e9 * 236.0 / 256.0 * 256.0 / 272.0;
        assert!(close(effective_payload_bytes_per_s(&g6, 256), want, 1e-12));
        assert!(close(want, 55.5e9, 0.001), "{want}");
        let ua = BondedLink::new(&UALINK_200G, 4).unwrap();
        let ua_eff = effective_payload_bytes_per_s(&ua, 256) / ua.data_bytes_per_s();
        assert!((0.92..0.94).contains(&ua_eff), "UALink near the ~93 % claim: {ua_eff}");
        let g5 = BondedLink::new(&PCIE_GEN5, 16).unwrap();
        let want5 = 32e9 * 16.0 / 8.0 * 128.0 / 130.0 * 256.0 / 280.0;
        assert!(close(effective_payload_bytes_per_s(&g5, 256), want5, 1e-12));
    }

    #[test]
    fn widths_and_lookup() {
        assert!(BondedLink::new(&UALINK_200G, 8).is_err());
        assert!(BondedLink::new(&PCIE_GEN6, 16).is_ok());
        assert_eq!(find("pcie-gen6"), Some(&PCIE_GEN6));
        assert!(find("pcie-gen7").is_none());
        assert_eq!(PCIE_GEN6.stream_bytes(61), 16 + 64);
        assert_eq!(UALINK_200G.stream_bytes(64), 16 + 64);
        assert_eq!(UALINK_200G.data_credits(256), 4);
    }
}
