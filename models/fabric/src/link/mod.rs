//! SerDes lanes bonded into links, with a link layer: one direction of a PCIe Gen5, PCIe Gen6
//! (flit mode) or UALink 200G link as a pair of kernel components.
//!
//! ```text
//!                 LinkTx                                        LinkRx
//!  Packet  ┌─────────────────────────┐   Flit: PHY+wire+LL   ┌──────────────────────┐  Packet
//!  ──────► │ credits ► packer ►      │ ════════════════════► │ CRC ► seq ►          │ ──────►
//!   source │ replay buffer ► lanes   │                       │ rx buffer ► out      │  sink
//!          └─────────────────────────┘ ◄════════════════════ └──────────────────────┘
//!                                        Dllp: Ack / Nak / UpdateFc (same latency)
//! ```
//!
//! - **Bytes to flits to time.** A packet adds its transaction header (and, in non-flit mode,
//!   its framing) to the byte stream; flit mode packs that stream into fixed flits (a packet
//!   may straddle flits); each unit occupies the bonded lanes for `bytes x 8 / (lanes x lane
//!   rate x line code)`, kept exactly. The kernel link adds PHY + wire + link-layer latency
//!   (rounded up to whole cycles of the link's clock), so an unloaded packet arrives after
//!   `units x unit time + phy + wire + link_layer`.
//! - **Credits.** One shared pool of header credits (one per packet) and data credits (the
//!   encoding's credit size), granted from the receive buffer size and returned by UpdateFc
//!   when packets leave it: a simplification of PCIe's posted / non-posted / completion
//!   classes (flit mode's shared pool; UALink's pool credits).
//! - **Errors and replay.** Each unit's bits fail independently at `ber` (seeded
//!   [`trnsim_kernel::SimRng`], so runs repeat exactly); the receiver drops a unit that fails
//!   its CRC and NAKs; the transmitter keeps sent units in a bounded replay buffer until they
//!   are ACKed (ACKs coalesced) and goes back to the NAKed sequence number. A full replay
//!   buffer stops new units (back-pressure); a replay timer covers a lost replay.
//!
//! Modules: [`encoding`] (lanes and overheads as data, analytic rates), [`params`] (parameters
//! and errors), [`flit`] (payload types, packing, serialization), [`tx`], [`rx`], [`stats`],
//! [`traffic`] (a packet source and an order-checking sink for tests and benchmarks).
//!
//! Leaves out: the reverse direction's data (build a second link), link training and power
//! states, lane failures and width degradation, FEC (the BER is the post-FEC one), TLP ordering
//! rules across classes (one FIFO), and DLLP bandwidth.

pub mod encoding;
pub mod flit;
pub mod params;
pub mod rx;
pub mod stats;
pub mod traffic;
pub mod tx;

#[cfg(test)]
mod tests;

pub use encoding::{effective_payload_bytes_per_s, BondedLink, Encoding, Framing};
pub use flit::{Carried, Dllp, Flit, Packet};
pub use params::{LinkError, LinkParams};
pub use rx::{LinkFaults, LinkRx, RxPorts};
pub use stats::{RxStats, TxStats};
pub use tx::{LinkTx, ReplayBuffer, TxPorts};

use trnsim_kernel::{ClockId, ComponentId, InPort, LinkSpec, OutPort, SimBuilder};

/// What [`attach`] made: the two components and the packet ports at the link's ends.
#[derive(Clone, Copy, Debug)]
pub struct LinkHandles {
    /// The transmitter, named `{name}.tx`.
    pub tx: ComponentId,
    /// The receiver, named `{name}.rx`.
    pub rx: ComponentId,
    /// Where the upstream component sends packets.
    pub input: OutPort<Packet>,
    /// Where the downstream component receives them.
    pub output: InPort<Packet>,
}

/// Builds one link direction from `from` (a reserved component and its output port name) to
/// `to` (component and input port name), both ends on `clock`; bit errors draw from run seed
/// `seed`. Kernel links: `from -> tx` and `rx -> to` take one cycle and hold `port_depth`
/// packets; `tx -> rx` (flits) and `rx -> tx` (DLLPs) take `ceil((phy + wire + link_layer) /
/// period)` cycles and are deep enough never to refuse a send in practice (the components
/// retry if they do; `refused_sends` counts it).
pub fn attach(
    b: &mut SimBuilder,
    name: &str,
    clock: ClockId,
    p: &LinkParams,
    seed: u64,
    from: (ComponentId, &str),
    to: (ComponentId, &str),
) -> Result<LinkHandles, LinkError> {
    let link = p.validate()?;
    let tx = b.reserve(&format!("{name}.tx"), clock)?;
    let rx = b.reserve(&format!("{name}.rx"), clock)?;
    let hz = u128::from(b.clock_of(clock).frequency().as_hz());
    let lat = (u128::from(p.fixed_latency().as_ps()) * hz).div_ceil(u128::from(trnsim_kernel::PS_PER_S));
    let lat = u64::try_from(lat).unwrap_or(u64::MAX).max(1);
    let port = LinkSpec::default().depth(p.port_depth);
    let flit_spec = LinkSpec::default().latency(lat).depth(2 * p.replay_buffer_flits + 8);
    let dllp_spec = LinkSpec::default().latency(lat).depth((3 * (lat + 2)).min(4096) as u32);
    let (input, tx_in) = b.link::<Packet>(from.0, from.1, tx, "in", port)?;
    let (tx_flits, rx_flits) = b.link::<Flit>(tx, "flits", rx, "flits", flit_spec)?;
    let (rx_dllps, tx_dllps) = b.link::<Dllp>(rx, "dllps", tx, "dllps", dllp_spec)?;
    let (rx_out, output) = b.link::<Packet>(rx, "out", to.0, to.1, port)?;
    let tx_ports = TxPorts { input: tx_in, flits: tx_flits, dllps: tx_dllps };
    b.install(tx, LinkTx::new(p, &link, seed, tx.index() as u64, tx_ports))?;
    let rx_ports = RxPorts { flits: rx_flits, output: rx_out, dllps: rx_dllps };
    b.install(rx, LinkRx::new(p, &link, rx_ports))?;
    Ok(LinkHandles { tx, rx, input, output })
}
