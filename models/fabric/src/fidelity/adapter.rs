//! Adapters between the link layer's packets and the switch's.
//!
//! ```text
//!  LinkRx ──link::Packet──► Ingress ──switch::Packet──► Switch in
//!  Switch out ──switch::Packet──► Egress ──link::Packet──► LinkTx
//! ```
//!
//! The switch sees TLP bytes: `bytes` = the encoding's transaction header + payload rounded
//! to its granule ([`crate::link::Encoding::stream_bytes`]), cut into the switch's cells; the
//! egress gives the payload back as `bytes - header` (exact for payloads that are a whole
//! number of granules, e.g. DW-aligned PCIe writes). Both forward as soon as the next hop has
//! a credit, one packet per send; holding a packet back (no credit) back-pressures the link or
//! the switch behind them.
//!
//! Leaves out: the adapters are a modelling seam, not hardware: the packet is handed over whole
//! (the link delivers it once its last flit is checked), so the port link behind the ingress
//! serializes it once more (store-and-forward of one packet at each adapter).

use crate::link::{self, Encoding};
use crate::switch;
use trnsim_kernel::{Activity, Component, Ctx, Forward, InPort, OutPort, StatsWriter};

/// Link packet -> switch packet.
pub struct Ingress {
    input: InPort<link::Packet>,
    output: OutPort<switch::Packet>,
    header: u32,
    granule: u32,
    /// Packets forwarded.
    pub packets: u64,
}

impl Ingress {
    /// An ingress for links of encoding `enc`.
    pub fn new(enc: &Encoding, input: InPort<link::Packet>, output: OutPort<switch::Packet>) -> Ingress {
        Ingress { input, output, header: enc.header_bytes, granule: enc.granule_bytes, packets: 0 }
    }

    /// The switch's view of `p`.
    pub fn convert(&self, p: &link::Packet) -> switch::Packet {
        switch::Packet {
            src: p.src as u16,
            dst: p.dst as u16,
            flow: p.flow,
            seq: p.seq,
            bytes: self.header + p.bytes.div_ceil(self.granule) * self.granule,
            created: p.born,
        }
    }
}

impl Component for Ingress {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let (input, output) = (self.input, self.output);
        while let Forward::Moved { more } = cx.forward(input, output, |p| self.convert(&p)) {
            self.packets += 1;
            if !more {
                break;
            }
        }
        Activity::Idle
    }
    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("packets", self.packets);
    }
}

/// Switch packet -> link packet.
pub struct Egress {
    input: InPort<switch::Packet>,
    output: OutPort<link::Packet>,
    header: u32,
    /// Packets forwarded.
    pub packets: u64,
}

impl Egress {
    /// An egress for links of encoding `enc`.
    pub fn new(enc: &Encoding, input: InPort<switch::Packet>, output: OutPort<link::Packet>) -> Egress {
        Egress { input, output, header: enc.header_bytes, packets: 0 }
    }

    /// The link's view of `p`.
    pub fn convert(&self, p: &switch::Packet) -> link::Packet {
        link::Packet {
            flow: p.flow,
            bytes: p.bytes.saturating_sub(self.header),
            seq: p.seq,
            src: u32::from(p.src),
            dst: u32::from(p.dst),
            born: p.created,
        }
    }
}

impl Component for Egress {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let (input, output) = (self.input, self.output);
        while let Forward::Moved { more } = cx.forward(input, output, |p| self.convert(&p)) {
            self.packets += 1;
            if !more {
                break;
            }
        }
        Activity::Idle
    }
    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("packets", self.packets);
    }
}
