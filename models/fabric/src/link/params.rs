//! Link parameters, declared once with units, defaults and sources, and the link's assembly
//! error.

use crate::link::encoding::{self, BondedLink};
use serde::{Deserialize, Serialize};
use std::fmt;
use trnsim_kernel::{BuildError, Dur};

/// Everything that defines one direction of a link: the lanes, the fixed latencies, the error
/// rate and the link layer's buffers. Defaults are a Trn3 NeuronLink-v4 port (spec §6: PCIe
/// Gen6 x8) with the hop estimates of spec §10; values marked (E) are estimates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkParams {
    /// Lane encoding, one of [`encoding::ALL`] ("pcie-gen5", "pcie-gen6", "ualink-200g").
    pub encoding: String,
    /// Lanes bonded into the link (PCIe x1..x16, UALink x1/x2/x4). Default 8 (spec §6).
    pub lanes: u32,
    /// SerDes and PHY latency of both ends together (spec §10: 2 x 20 ns, E).
    pub phy: Dur,
    /// Propagation on the channel (E: 5 ns, about 1 m of cable or board trace).
    pub wire: Dur,
    /// Data-link pipeline of both ends together: CRC, sequence and replay-buffer bookkeeping,
    /// credit checks (E: 10 ns).
    pub link_layer: Dur,
    /// Bit error rate seen by the flit (or LCRC) check, i.e. after any FEC; each bit of a wire
    /// unit fails independently. Default 0.
    pub ber: f64,
    /// Wire units (flits; packets in non-flit mode) the transmitter keeps until they are
    /// acknowledged; when full it stops sending new ones (E: 256; UALink's 9-bit sequence
    /// allows 256 outstanding).
    pub replay_buffer_flits: u32,
    /// The receiver acknowledges after this many accepted units (E: 4)...
    pub ack_every: u32,
    /// ...or this long after the oldest unacknowledged one, whichever is first (E: 20 ns).
    pub ack_delay: Dur,
    /// The transmitter replays everything unacknowledged when neither an ACK nor a NAK has
    /// arrived for this long (PCIe REPLAY_TIMER; E: 2 us, many round trips).
    pub replay_timeout: Dur,
    /// Receive buffer in packets = the link layer's header credits (E: 128).
    pub rx_buffer_packets: u32,
    /// Receive buffer in payload bytes, granted as data credits of the encoding's credit size
    /// (E: 32 KiB, above the ~5 KB a Gen6 x8 credit round trip needs).
    pub rx_buffer_bytes: u32,
    /// Depth in packets of the kernel links into the transmitter and out of the receiver.
    pub port_depth: u32,
}

impl Default for LinkParams {
    fn default() -> Self {
        LinkParams {
            encoding: encoding::PCIE_GEN6.name.to_string(),
            lanes: 8,
            phy: Dur::from_ns(40),
            wire: Dur::from_ns(5),
            link_layer: Dur::from_ns(10),
            ber: 0.0,
            replay_buffer_flits: 256,
            ack_every: 4,
            ack_delay: Dur::from_ns(20),
            replay_timeout: Dur::from_us(2),
            rx_buffer_packets: 128,
            rx_buffer_bytes: 32 * 1024,
            port_depth: 16,
        }
    }
}

impl LinkParams {
    /// Defaults with `encoding` over `lanes` lanes.
    pub fn with(encoding: &str, lanes: u32) -> LinkParams {
        LinkParams { encoding: encoding.to_string(), lanes, ..LinkParams::default() }
    }

    /// One-way latency without serialization: PHY + wire + link layer.
    pub fn fixed_latency(&self) -> Dur {
        self.phy + self.wire + self.link_layer
    }

    /// Checks every field and resolves the lanes; the error names the field.
    pub fn validate(&self) -> Result<BondedLink, LinkError> {
        let enc =
            encoding::find(&self.encoding).ok_or_else(|| LinkError::UnknownEncoding { name: self.encoding.clone() })?;
        let link = BondedLink::new(enc, self.lanes)?;
        let bad = |field, value: String, allowed: String| Err(LinkError::BadParam { field, value, allowed });
        if self.fixed_latency() == Dur::ZERO {
            return bad("phy", "0".into(), "phy + wire + link_layer > 0".into());
        }
        if !(0.0..=1e-3).contains(&self.ber) {
            return bad("ber", self.ber.to_string(), "0 to 1e-3".into());
        }
        if !(1..=1 << 20).contains(&self.replay_buffer_flits) {
            return bad("replay_buffer_flits", self.replay_buffer_flits.to_string(), "1 to 2^20".into());
        }
        if self.ack_every == 0 || self.ack_every > self.replay_buffer_flits {
            return bad("ack_every", self.ack_every.to_string(), "1 to replay_buffer_flits".into());
        }
        if self.replay_timeout == Dur::ZERO {
            return bad("replay_timeout", "0".into(), "> 0".into());
        }
        if self.rx_buffer_packets == 0 {
            return bad("rx_buffer_packets", "0".into(), ">= 1".into());
        }
        if self.rx_buffer_bytes < enc.max_payload_bytes {
            let allowed = format!(">= the largest payload of {} ({} B)", enc.name, enc.max_payload_bytes);
            return bad("rx_buffer_bytes", self.rx_buffer_bytes.to_string(), allowed);
        }
        if self.port_depth == 0 {
            return bad("port_depth", "0".into(), ">= 1".into());
        }
        Ok(link)
    }
}

/// Why a link could not be assembled. Always fatal for that simulation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LinkError {
    /// A parameter is out of range.
    BadParam {
        /// The field of [`LinkParams`].
        field: &'static str,
        /// What was given.
        value: String,
        /// What is allowed.
        allowed: String,
    },
    /// `encoding` names no known encoding.
    UnknownEncoding {
        /// What was given.
        name: String,
    },
    /// The kernel refused the wiring.
    Build(BuildError),
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::BadParam { field, value, allowed } => {
                write!(f, "link parameter {field} = {value} is invalid (allowed: {allowed})")
            }
            LinkError::UnknownEncoding { name } => {
                write!(f, "link parameter encoding = {name:?} is unknown (known: {})", encoding::names())
            }
            LinkError::Build(e) => write!(f, "link assembly: {e}"),
        }
    }
}

impl std::error::Error for LinkError {}

impl From<BuildError> for LinkError {
    fn from(e: BuildError) -> Self {
        LinkError::Build(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_errors_name_the_field() {
        assert!(LinkParams::default().validate().is_ok());
        let cases: [(LinkParams, &str); 5] = [
            (LinkParams::with("pcie-gen7", 8), "encoding"),
            (LinkParams::with("ualink-200g", 16), "lanes"),
            (LinkParams { ber: 0.5, ..LinkParams::default() }, "ber"),
            (LinkParams { ack_every: 0, ..LinkParams::default() }, "ack_every"),
            (LinkParams { rx_buffer_bytes: 100, ..LinkParams::default() }, "rx_buffer_bytes"),
        ];
        for (p, field) in cases {
            let e = p.validate().unwrap_err().to_string();
            assert!(e.contains(field), "{e}");
        }
    }

    #[test]
    fn parses_from_json_and_rejects_unknown_keys() {
        let p: LinkParams = serde_json::from_str(r#"{"encoding": "ualink-200g", "lanes": 4}"#).unwrap();
        assert_eq!(p.lanes, 4);
        assert!(p.validate().is_ok());
        assert!(serde_json::from_str::<LinkParams>(r#"{"lane": 4}"#).is_err());
    }
}
