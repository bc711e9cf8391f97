//! Messages between a core's blocks: engines, the semaphore unit, the SBUF/PSUM unit and the
//! DMA block. Each is a kernel link payload.

use crate::isa::{Ap, DmaAddr, Sem};
use trnsim_kernel::Payload;

/// A semaphore operation sent to the core's semaphore unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SemOp {
    /// Add `delta` to `sem`.
    Inc {
        /// Semaphore.
        sem: Sem,
        /// Increment.
        delta: u32,
        /// Trace flow id started by the signaller (0 = none), ended by the instruction it
        /// releases.
        flow: u64,
    },
    /// Set `sem` to `value`.
    Set {
        /// Semaphore.
        sem: Sem,
        /// Value.
        value: u32,
        /// Trace flow id (as for `Inc`).
        flow: u64,
    },
    /// Answer with a [`SemGrant`] once `sem` >= `value` (at most one outstanding per sender).
    Wait {
        /// Semaphore.
        sem: Sem,
        /// Threshold.
        value: u32,
    },
}

impl Payload for SemOp {
    fn size_bytes(&self) -> u32 {
        4
    }
}

/// A satisfied [`SemOp::Wait`]; carries a flow id for the trace arrow from the signal that
/// released it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SemGrant {
    /// The semaphore.
    pub sem: Sem,
    /// Flow id of the last signal that raised it (0 if none).
    pub flow: u64,
}

impl Payload for SemGrant {
    fn size_bytes(&self) -> u32 {
        4
    }
}

/// A read or write of an access pattern in SBUF or PSUM.
#[derive(Clone, Debug, PartialEq)]
pub struct MemAccess {
    /// The requester's tag, echoed in the reply.
    pub tag: u64,
    /// Which of the requester's interfaces (0 = first read port, 1 = second read port, 2 =
    /// write port), so the unit charges the right SRAM client.
    pub iface: u8,
    /// Where.
    pub ap: Ap,
    /// Write (else read).
    pub write: bool,
    /// Add FP32 values into PSUM instead of overwriting (matmul accumulation).
    pub accumulate: bool,
    /// Element bytes of a write in functional mode (pattern order, partition-major); empty in
    /// timing-only mode.
    pub data: Vec<u8>,
}

impl Payload for MemAccess {
    fn size_bytes(&self) -> u32 {
        16
    }
}

/// The completion of a [`MemAccess`]; a read carries the bytes in functional mode.
#[derive(Clone, Debug, PartialEq)]
pub struct MemDone {
    /// The request's tag.
    pub tag: u64,
    /// Read bytes (pattern order), empty for writes and in timing-only mode.
    pub data: Vec<u8>,
}

impl Payload for MemDone {
    fn size_bytes(&self) -> u32 {
        16
    }
}

/// A DMA started by an engine (`dma_start`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DmaCmd {
    /// Unique per core (engine id << 32 | sequence), for flows.
    pub id: u64,
    /// Queue 0..16 on every DMA engine.
    pub queue: u8,
    /// Source.
    pub src: DmaAddr,
    /// Destination.
    pub dst: DmaAddr,
    /// Bytes per partition.
    pub bytes_per_partition: u32,
    /// Semaphore incremented by each participating DMA engine on completion.
    pub sem: Option<Sem>,
    /// Trace flow id from the issuing instruction.
    pub flow: u64,
}

impl Payload for DmaCmd {
    fn size_bytes(&self) -> u32 {
        32
    }
}
