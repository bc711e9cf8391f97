//! Lane encodings as data: signalling rate, line code, link-layer framing and transaction
//! overheads of PCIe Gen5, PCIe Gen6 (flit mode) and UALink 200G, plus lane bonding. The
//! encodings are the files of models/configs/fabric/link (compiled in, read once, each field
//! checked: [`EncodingFile`]).
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
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// How the link layer frames transaction-layer bytes on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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

/// An encoding as a file holds it (models/configs/fabric/link/NAME.ron, `Encoding(...)`):
/// every field written, unknown ones refused, checked by [`EncodingFile::validate`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename = "Encoding")]
pub struct EncodingFile {
    /// See [`Encoding::name`].
    pub name: String,
    /// See [`Encoding::description`].
    pub description: String,
    /// See [`Encoding::source`].
    pub source: String,
    /// See [`Encoding::estimated`].
    pub estimated: Vec<String>,
    /// See [`Encoding::lane_mbit_per_s`].
    pub lane_mbit_per_s: u64,
    /// See [`Encoding::code_num`].
    pub code_num: u64,
    /// See [`Encoding::code_den`].
    pub code_den: u64,
    /// See [`Encoding::framing`].
    pub framing: Framing,
    /// See [`Encoding::header_bytes`].
    pub header_bytes: u32,
    /// See [`Encoding::granule_bytes`].
    pub granule_bytes: u32,
    /// See [`Encoding::data_credit_bytes`].
    pub data_credit_bytes: u32,
    /// See [`Encoding::max_payload_bytes`].
    pub max_payload_bytes: u32,
    /// See [`Encoding::widths`].
    pub widths: Vec<u32>,
}

/// The fastest lane an encoding file may give (10 Tb/s) and the most lanes of one link.
pub const MAX_LANE_MBIT_PER_S: u64 = 10_000_000;
/// See [`MAX_LANE_MBIT_PER_S`].
pub const MAX_LANES: u32 = 64;
/// The largest flit, packet header, granule, credit or payload an encoding file may give.
pub const MAX_UNIT_BYTES: u32 = 1 << 16;

impl EncodingFile {
    /// Checks every field; the error is (field, message with the allowed range).
    pub fn validate(&self) -> Result<(), (String, String)> {
        let out = |f: &str, v: u64, allowed: String| {
            Err((f.to_string(), format!("{v} is out of range (allowed: {allowed})")))
        };
        if !(1..=MAX_LANE_MBIT_PER_S).contains(&self.lane_mbit_per_s) {
            return out("lane_mbit_per_s", self.lane_mbit_per_s, format!("1..={MAX_LANE_MBIT_PER_S} Mb/s"));
        }
        if !(1..=1 << 20).contains(&self.code_den) {
            return out("code_den", self.code_den, "1..=1048576".into());
        }
        if !(1..=self.code_den).contains(&self.code_num) {
            return out("code_num", self.code_num, format!("1..=code_den = {}", self.code_den));
        }
        let unit = |f: &str, v: u32, lo: u32| {
            if (lo..=MAX_UNIT_BYTES).contains(&v) {
                Ok(())
            } else {
                out(f, u64::from(v), format!("{lo}..={MAX_UNIT_BYTES} bytes"))
            }
        };
        match self.framing {
            Framing::Packet { framing_bytes } => unit("framing.framing_bytes", framing_bytes, 0)?,
            Framing::Flit { flit_bytes, payload_bytes } => {
                unit("framing.flit_bytes", flit_bytes, 1)?;
                if !(1..=flit_bytes).contains(&payload_bytes) {
                    return out(
                        "framing.payload_bytes",
                        u64::from(payload_bytes),
                        format!("1..=flit_bytes = {flit_bytes}"),
                    );
                }
            }
        }
        unit("header_bytes", self.header_bytes, 0)?;
        unit("granule_bytes", self.granule_bytes, 1)?;
        unit("data_credit_bytes", self.data_credit_bytes, 1)?;
        unit("max_payload_bytes", self.max_payload_bytes, 1)?;
        if self.widths.is_empty() {
            return Err(("widths".into(), "empty (allowed: lane counts in 1..=64)".into()));
        }
        for &w in &self.widths {
            if !(1..=MAX_LANES).contains(&w) {
                return out("widths", u64::from(w), format!("lane counts in 1..={MAX_LANES}"));
            }
        }
        Ok(())
    }

    /// Parses and checks RON text (no location: loaders that locate errors live in
    /// `trnsim-system`).
    pub fn from_ron(text: &str) -> Result<EncodingFile, (String, String)> {
        let f: EncodingFile = ron::from_str(text).map_err(|e| (String::new(), e.to_string()))?;
        f.validate()?;
        Ok(f)
    }

    /// The encoding with `'static` text, for a description that lives as long as the program
    /// (the built-in files, read once): its strings and widths are leaked, once.
    fn into_static(self) -> Encoding {
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let estimated: Vec<&'static str> = self.estimated.into_iter().map(leak).collect();
        Encoding {
            name: leak(self.name),
            description: leak(self.description),
            source: leak(self.source),
            estimated: Box::leak(estimated.into_boxed_slice()),
            lane_mbit_per_s: self.lane_mbit_per_s,
            code_num: self.code_num,
            code_den: self.code_den,
            framing: self.framing,
            header_bytes: self.header_bytes,
            granule_bytes: self.granule_bytes,
            data_credit_bytes: self.data_credit_bytes,
            max_payload_bytes: self.max_payload_bytes,
            widths: Box::leak(self.widths.into_boxed_slice()),
        }
    }
}

/// The built-in encodings: (name, RON text of models/configs/fabric/link/NAME.ron), in the
/// order `trnsim describe link` lists them.
pub const BUILTIN: &[(&str, &str)] = &[
    ("pcie-gen5", include_str!("../../../configs/fabric/link/pcie-gen5.ron")),
    ("pcie-gen6", include_str!("../../../configs/fabric/link/pcie-gen6.ron")),
    ("ualink-200g", include_str!("../../../configs/fabric/link/ualink-200g.ron")),
];

/// Every built-in encoding, parsed once, in [`BUILTIN`]'s order.
pub static ALL: LazyLock<Vec<Encoding>> = LazyLock::new(|| {
    BUILTIN
        .iter()
        .map(|(n, text)| {
            // The built-in files are part of the program: `built_in_files_are_valid` holds them.
            let f = EncodingFile::from_ron(text).unwrap_or_else(|e| panic!("built-in encoding {n}: {}: {}", e.0, e.1));
            assert_eq!(f.name, *n, "built-in encoding file {n} names itself {}", f.name);
            f.into_static()
        })
        .collect()
});

fn builtin(name: &str) -> Encoding {
    *find(name).unwrap_or_else(|| panic!("{name} is built in"))
}

/// PCIe Gen5: 32 GT/s NRZ, 128b/130b, non-flit framing (models/configs/fabric/link/pcie-gen5.ron).
pub static PCIE_GEN5: LazyLock<Encoding> = LazyLock::new(|| builtin("pcie-gen5"));
/// PCIe Gen6: 64 GT/s PAM4, flit mode (256-byte flits carrying 236 bytes of TLP).
pub static PCIE_GEN6: LazyLock<Encoding> = LazyLock::new(|| builtin("pcie-gen6"));
/// UALink 200G: 212.5 GT/s lanes delivering 200 Gb/s, 640-byte data-link flits.
pub static UALINK_200G: LazyLock<Encoding> = LazyLock::new(|| builtin("ualink-200g"));

/// Looks an encoding up by name.
pub fn find(name: &str) -> Option<&'static Encoding> {
    ALL.iter().find(|e| e.name == name)
}

/// The names of all encodings, comma-separated (for error messages).
pub fn names() -> String {
    BUILTIN.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
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
    fn built_in_files_are_valid_and_hold_the_documented_figures() {
        assert_eq!(ALL.len(), BUILTIN.len());
        let g6 = &*PCIE_GEN6;
        assert_eq!((g6.lane_mbit_per_s, g6.code_num, g6.code_den), (64_000, 1, 1));
        assert_eq!(g6.framing, Framing::Flit { flit_bytes: 256, payload_bytes: 236 });
        assert_eq!(PCIE_GEN5.framing, Framing::Packet { framing_bytes: 8 });
        assert_eq!((UALINK_200G.lane_mbit_per_s, UALINK_200G.widths), (212_500, &[1, 2, 4][..]));
        assert!(UALINK_200G.estimated[1].contains("third-party transcription"));
    }

    #[test]
    fn a_bad_or_missing_field_is_named() {
        let text = BUILTIN[1].1;
        let bad = |from: &str, to: &str| EncodingFile::from_ron(&text.replacen(from, to, 1)).unwrap_err();
        assert_eq!(bad("lane_mbit_per_s: 64000", "lane_mbit_per_s: 0").0, "lane_mbit_per_s");
        assert_eq!(bad("code_num: 1,", "code_num: 2,").0, "code_num");
        assert_eq!(bad("payload_bytes: 236", "payload_bytes: 300").0, "framing.payload_bytes");
        assert_eq!(bad("granule_bytes: 4", "granule_bytes: 0").0, "granule_bytes");
        assert_eq!(bad("widths: [1, 2, 4, 8, 16]", "widths: []").0, "widths");
        assert_eq!(bad("widths: [1, 2, 4, 8, 16]", "widths: [1, 65]").0, "widths");
        assert!(bad("    header_bytes: 16,\n", "").1.contains("header_bytes"));
        assert!(bad("header_bytes: 16,", "header_bytes: 16, headr: 1,").1.contains("headr"));
    }

    #[test]
    fn widths_and_lookup() {
        assert!(BondedLink::new(&UALINK_200G, 8).is_err());
        assert!(BondedLink::new(&PCIE_GEN6, 16).is_ok());
        assert_eq!(find("pcie-gen6"), Some(&*PCIE_GEN6));
        assert!(find("pcie-gen7").is_none());
        assert_eq!(PCIE_GEN6.stream_bytes(61), 16 + 64);
        assert_eq!(UALINK_200G.stream_bytes(64), 16 + 64);
        assert_eq!(UALINK_200G.data_credits(256), 4);
    }
}
