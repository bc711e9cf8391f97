//! A core's on-chip memories (SBUF and PSUM) as one kernel component: engines and DMA engines
//! send [`MemAccess`] requests on their ports and get [`MemDone`] when the access's data is
//! usable. Timing comes from `trnsim_mem::sram::Sram` (ports per bank, conflicts, the static
//! overhead, 128 elements per cycle per interface, half rate above a 16 B stride); data, in
//! functional mode, from `SramData` (reads and writes take effect at completion, in completion
//! order).
//!
//! ```text
//!  engine/DMA k ── MemAccess ──► CoreMem ── start(client "k.rd0|rd1|wr") ──► Sram (SBUF | PSUM)
//!  engine/DMA k ◄── MemDone ───  CoreMem ◄── pop_completed ─────────────────
//! ```

use crate::isa::{Ap, Mem};
use crate::msg::{MemAccess, MemDone};
use fxhash::FxHashMap;
use trnsim_kernel::{Activity, Component, Ctx, Cycles, InPort, InputIndex, OutPort, StatsWriter};
use trnsim_mem::sram::pattern::MAX_DIMS;
use trnsim_mem::sram::{AccessPattern, Dim, Sram, SramData, SramGeometry};

/// Interfaces per client: two read ports and one write port.
pub const IFACES: [&str; 3] = ["rd0", "rd1", "wr"];

/// One client's ports.
pub struct MemPort {
    /// Requests from the client.
    pub req: InPort<MemAccess>,
    /// Completions to the client.
    pub done: OutPort<MemDone>,
}

struct Pending {
    dma: bool,
    port: usize,
    tag: u64,
    ap: Ap,
    write: bool,
    accumulate: bool,
    data: Vec<u8>,
}

/// SBUF and PSUM of one core.
pub struct CoreMem {
    ports: Vec<MemPort>,
    /// The ports' request inputs by key (to poll only those that may hold a request).
    req_index: InputIndex,
    sbuf: Sram,
    psum: Sram,
    sbuf_data: Option<SramData>,
    psum_data: Option<SramData>,
    pending: FxHashMap<(bool, u64), Pending>,
    /// Ports from this index on belong to DMA engines.
    dma_from: usize,
    /// Answers to send, oldest first (a refused one waits here for the next tick).
    ready: Vec<(usize, MemDone)>,
    /// An empty list whose buffer the next tick's refused answers reuse.
    refused: Vec<(usize, MemDone)>,
    accesses: u64,
    bytes: u64,
    /// The `Sb Usage` and `PSUM Usage` counters' state, when traced so.
    occupancy: Option<Box<crate::occupancy::Occupancy>>,
}

/// Converts an ISA access pattern to the SRAM model's, byte for byte (for data); a DMA
/// engine's access may start at any multiple of 8 partitions.
pub fn to_pattern_for(ap: &Ap, dma: bool) -> AccessPattern {
    let p = to_pattern(ap);
    if dma {
        p.for_dma()
    } else {
        p
    }
}

/// An ISA pattern's dimensions as the SRAM model's, held in place (no allocation per access):
/// the array and how many of it are used (an ISA pattern has at most
/// [`trnsim_mem::sram::pattern::MAX_DIMS`] dimensions, as the SRAM model's).
fn sram_dims(ap: &Ap) -> ([Dim; MAX_DIMS], usize) {
    let mut out = [Dim::default(); MAX_DIMS];
    let dims = ap.dims();
    for (o, d) in out.iter_mut().zip(dims) {
        *o = Dim { size: d.size, stride: d.stride };
    }
    (out, dims.len().min(MAX_DIMS))
}

/// Converts an ISA access pattern to the SRAM model's, byte for byte (for data).
pub fn to_pattern(ap: &Ap) -> AccessPattern {
    let (dims, n) = sram_dims(ap);
    AccessPattern::new(ap.partition_start as u32, ap.partitions as u32, ap.offset, ap.dtype.bytes(), &dims[..n])
        .expect("access patterns are validated by the assembler")
}

/// The pattern the SRAM *timing* sees. Contiguous 1-byte elements (FP8, MXFP8) travel four to
/// a 4-byte port cycle, as the v3/v4 interfaces that take 4x and 8x 128 FP8 elements per cycle
/// into the tensor engine do (spec §2); a DMA engine moves bytes, so its contiguous 1- and
/// 2-byte elements pack into 4-byte port cycles too. Other accesses move one element per port
/// cycle.
pub fn to_timing_pattern(ap: &Ap, dma: bool) -> AccessPattern {
    let eb = ap.dtype.bytes();
    let pack = if eb == 1 || (dma && eb == 2) { 4 / eb } else { 1 };
    let dims = ap.dims();
    let last = dims[dims.len() - 1];
    let aligned = ap.offset.is_multiple_of(4) && u32::from(last.size).is_multiple_of(pack);
    if pack > 1 && last.stride == 1 && aligned {
        let (mut packed, n) = sram_dims(ap);
        if packed[..n - 1].iter().all(|d| (d.stride as i32 % pack as i32) == 0) {
            for d in &mut packed[..n - 1] {
                d.stride /= pack as i16;
            }
            packed[n - 1] = Dim { size: last.size / pack as u16, stride: 1 };
            let start = (ap.partition_start as u32, ap.partitions as u32);
            if let Ok(p) = AccessPattern::new(start.0, start.1, ap.offset, 4, &packed[..n]) {
                return if dma { p.for_dma() } else { p };
            }
        }
    }
    to_pattern_for(ap, dma)
}

impl CoreMem {
    /// The memories of one core for `clients` (names like "tensor", "dma3"), each with the
    /// three interfaces of [`IFACES`]; with `functional`, contents are kept.
    pub fn new(
        name: &str,
        sbuf: SramGeometry,
        psum: SramGeometry,
        clients: &[String],
        ports: Vec<MemPort>,
        dma_from: usize,
        functional: bool,
    ) -> Result<CoreMem, String> {
        let names: Vec<String> = clients.iter().flat_map(|c| IFACES.iter().map(move |i| format!("{c}.{i}"))).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mk = |n: &str, g: SramGeometry| Sram::new(&format!("{name}.{n}"), g, &refs).map_err(|e| e.to_string());
        let data = |n: &str, g: SramGeometry| SramData::new(&format!("{name}.{n}"), g).map_err(|e| e.to_string());
        let mut req_index = InputIndex::new();
        ports.iter().for_each(|p| req_index.push(p.req.key()));
        Ok(CoreMem {
            ports,
            req_index,
            sbuf_data: if functional { Some(data("sbuf", sbuf)?) } else { None },
            psum_data: if functional { Some(data("psum", psum)?) } else { None },
            sbuf: mk("sbuf", sbuf)?,
            psum: mk("psum", psum)?,
            pending: FxHashMap::default(),
            dma_from,
            ready: Vec::new(),
            refused: Vec::new(),
            accesses: 0,
            bytes: 0,
            occupancy: None,
        })
    }

    /// Sends one bank's arbitration of SBUF (or PSUM with `psum`) to `hook` (swap-in of an RTL
    /// bank, see `Sram::attach_bank_hook`; call before the run).
    pub fn attach_bank_hook(
        &mut self,
        psum: bool,
        hook: Box<dyn trnsim_mem::sram::BankPortHook>,
    ) -> Result<(), String> {
        if psum {
            self.psum.attach_bank_hook(hook)
        } else {
            self.sbuf.attach_bank_hook(hook)
        }
    }

    /// Shows occupancy on the `Sb Usage` and `PSUM Usage` counters (a traced core).
    pub fn set_occupancy(&mut self, o: crate::occupancy::Occupancy) {
        self.occupancy = Some(Box::new(o));
    }

    /// Functional contents of SBUF (None in timing-only mode).
    pub fn sbuf_data(&mut self) -> Option<&mut SramData> {
        self.sbuf_data.as_mut()
    }

    /// Functional contents of PSUM (None in timing-only mode).
    pub fn psum_data(&mut self) -> Option<&mut SramData> {
        self.psum_data.as_mut()
    }

    fn finish(&mut self, p: Pending) -> MemDone {
        if let Some(o) = &mut self.occupancy {
            o.access(&p.ap, p.write);
        }
        let pattern = to_pattern_for(&p.ap, p.dma);
        let store = if p.ap.mem == Mem::Sbuf { self.sbuf_data.as_mut() } else { self.psum_data.as_mut() };
        let mut out = Vec::new();
        if let Some(d) = store {
            if p.write && p.accumulate && !p.data.is_empty() {
                let vals: Vec<f32> =
                    p.data.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
                d.accumulate_f32(&pattern, &vals).expect("validated accumulate");
            } else if p.write && !p.data.is_empty() {
                d.write(&pattern, &p.data).expect("validated write");
            } else if !p.write {
                out = vec![0u8; p.ap.bytes() as usize];
                d.read(&pattern, &mut out).expect("validated read");
            }
        }
        MemDone { tag: p.tag, data: out }
    }
}

impl Component for CoreMem {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let now = cx.cycle();
        self.sbuf.advance(now);
        self.psum.advance(now);
        for psum in [false, true] {
            loop {
                let sram = if psum { &mut self.psum } else { &mut self.sbuf };
                let Some(c) = sram.pop_completed() else { break };
                let p = self.pending.remove(&(psum, c.id.0)).expect("pending access");
                let port = p.port;
                let done = self.finish(p);
                self.ready.push((port, done));
            }
        }
        if let Some(o) = &mut self.occupancy {
            o.show(cx);
        }
        // Only the ports that may hold a request.
        let pending = cx.pending_in(&self.req_index);
        for k in 0..self.ports.len() {
            if !pending.may_hold(k) {
                continue;
            }
            while let Some(a) = cx.recv(self.ports[k].req) {
                let psum = a.ap.mem == Mem::Psum;
                let client = trnsim_mem::sram::ClientId((k * IFACES.len() + a.iface as usize) as u32);
                let sram = if psum { &mut self.psum } else { &mut self.sbuf };
                let dma = k >= self.dma_from;
                let id = sram.start(client, &to_timing_pattern(&a.ap, dma), a.write, now).expect("validated access");
                self.accesses += 1;
                self.bytes += a.ap.bytes();
                let p = Pending {
                    dma,
                    port: k,
                    tag: a.tag,
                    ap: a.ap,
                    write: a.write,
                    accumulate: a.accumulate,
                    data: a.data,
                };
                self.pending.insert((psum, id.0), p);
            }
        }
        // Answers a full link refused wait in `ready`, in order; the two lists swap so that
        // neither is reallocated from tick to tick.
        let mut kept = std::mem::take(&mut self.refused);
        for (port, done) in self.ready.drain(..) {
            if let Err(b) = cx.send(self.ports[port].done, done) {
                kept.push((port, b.0));
            }
        }
        self.refused = std::mem::replace(&mut self.ready, kept);
        let next = [self.sbuf.next_event(), self.psum.next_event()].into_iter().flatten().min();
        if let Some(Cycles(n)) = next {
            if n <= now.0 {
                return Activity::Busy;
            }
            let t = cx.clock().edge(n);
            cx.wake_at(t);
        }
        Activity::Idle
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("accesses", self.accesses);
        out.count("bytes", self.bytes);
        self.sbuf.report_prefixed("sbuf.", out);
        self.psum.report_prefixed("psum.", out);
    }

    fn has_outstanding_work(&self) -> bool {
        !self.pending.is_empty() || !self.ready.is_empty()
    }
}
