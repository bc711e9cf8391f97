//! Simulations of a DMA block wired to a real HBM stack and to a fake SBUF that answers after a
//! fixed latency and stores bytes.

mod functional;
mod sched;
mod timing;
mod trace;

use super::{DmaBlock, DmaParams, DmaPorts};
use crate::isa::{Ap, Dim, DmaAddr, Dtype, Mem, Sem};
use crate::msg::{DmaCmd, MemAccess, MemDone, SemOp};
use std::collections::VecDeque;
use trnsim_kernel::{
    Activity, Component, ComponentId, Ctx, Cycles, Dur, InPort, LinkSpec, OutPort, SimBuilder, Simulation, Time,
};
use trnsim_mem::hbm::{presets, HbmStack, StackConfig};

/// Fake SBUF latency in its (the DMA block's) cycles: ~60-cycle static overhead, spec §3.
const SBUF_LATENCY: u64 = 60;

/// An SBUF that performs each access on arrival and answers `latency` cycles later.
pub(super) struct FakeSbuf {
    ports: Vec<(InPort<MemAccess>, OutPort<MemDone>)>,
    latency: u64,
    functional: bool,
    pub data: Store,
    pending: VecDeque<(u64, usize, MemDone)>,
}

/// Bytes of 128 partitions, grown on demand. (Not `trnsim_mem::sram::SramData`: it enforces
/// the compute engines' partition-start rule, which a DMA engine's 8 partitions break.)
#[derive(Default)]
pub(super) struct Store {
    parts: Vec<Vec<u8>>,
}

impl Store {
    /// Byte offsets of `ap`'s elements within a partition, in pattern order.
    fn offsets(ap: &Ap) -> Vec<usize> {
        let ds = i64::from(ap.dtype.bytes());
        let mut out = vec![i64::from(ap.offset)];
        for d in ap.dims() {
            out = out
                .iter()
                .flat_map(|&o| (0..i64::from(d.size)).map(move |i| o + i * i64::from(d.stride) * ds))
                .collect();
        }
        out.into_iter().map(|o| o as usize).collect()
    }

    /// The pattern's bytes, partition-major.
    pub fn read(&self, ap: &Ap) -> Vec<u8> {
        let ds = ap.dtype.bytes() as usize;
        let mut out = Vec::new();
        for p in ap.partition_start..ap.partition_start + ap.partitions {
            let part = self.parts.get(p as usize);
            for o in Store::offsets(ap) {
                for b in 0..ds {
                    out.push(part.and_then(|v| v.get(o + b)).copied().unwrap_or(0));
                }
            }
        }
        out
    }

    /// Stores the pattern's bytes (partition-major).
    pub fn write(&mut self, ap: &Ap, data: &[u8]) {
        let ds = ap.dtype.bytes() as usize;
        if self.parts.is_empty() {
            self.parts = vec![Vec::new(); 128];
        }
        let mut bytes = data.iter();
        for p in ap.partition_start..ap.partition_start + ap.partitions {
            let part = &mut self.parts[p as usize];
            for o in Store::offsets(ap) {
                if part.len() < o + ds {
                    part.resize(o + ds, 0);
                }
                for b in 0..ds {
                    part[o + b] = *bytes.next().expect("write data matches the pattern");
                }
            }
        }
        assert!(bytes.next().is_none(), "write data matches the pattern");
    }
}

impl Component for FakeSbuf {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let now = cx.cycle().0;
        for (k, &(req, _)) in self.ports.iter().enumerate() {
            while let Some(a) = cx.recv(req) {
                let mut out = Vec::new();
                if a.write && !a.data.is_empty() {
                    self.data.write(&a.ap, &a.data);
                } else if !a.write && self.functional {
                    out = self.data.read(&a.ap);
                }
                self.pending.push_back((now + self.latency, k, MemDone { tag: a.tag, data: out }));
            }
        }
        while let Some(&(due, k, _)) = self.pending.front() {
            if due > now {
                break;
            }
            let (_, _, done) = self.pending.pop_front().unwrap();
            if let Err(b) = cx.send(self.ports[k].1, done) {
                self.pending.push_front((due, k, b.0));
                break;
            }
        }
        if let Some(&(due, _, _)) = self.pending.front() {
            cx.wake_after(Cycles(due.saturating_sub(now).max(1)));
        }
        Activity::Idle
    }
}

/// Records every semaphore operation with its arrival time.
#[derive(Default)]
pub(super) struct SemSink {
    port: Option<InPort<SemOp>>,
    pub ops: Vec<(Time, SemOp)>,
}

impl Component for SemSink {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let port = self.port.unwrap();
        while let Some(op) = cx.recv(port) {
            self.ops.push((cx.now(), op));
        }
        Activity::Idle
    }
}

/// Sends each command at its time.
pub(super) struct Driver {
    port: OutPort<DmaCmd>,
    cmds: VecDeque<(Time, DmaCmd)>,
}

impl Component for Driver {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        while let Some(&(t, cmd)) = self.cmds.front() {
            if t > cx.now() || cx.send(self.port, cmd).is_err() {
                break;
            }
            self.cmds.pop_front();
        }
        if let Some(&(t, _)) = self.cmds.front() {
            cx.wake_at(t);
        }
        Activity::Idle
    }
}

/// A built test simulation.
pub(super) struct Rig {
    pub sim: Simulation,
    pub dma: ComponentId,
    pub hbm: ComponentId,
    pub sbuf: ComponentId,
    pub sink: ComponentId,
}

impl Rig {
    /// Runs until everything is idle.
    pub fn run(&mut self) {
        let stop = self.sim.run_until_idle(Dur::from_us(10_000)).unwrap();
        assert_eq!(stop, trnsim_kernel::Stop::Idle);
    }
    pub fn stat(&self, name: &str) -> f64 {
        self.sim.report().get("dma", name).unwrap_or_else(|| panic!("no stat {name}")).as_f64()
    }
    pub fn sem_ops(&self) -> &[(Time, SemOp)] {
        &self.sim.component::<SemSink>(self.sink).unwrap().ops
    }
    pub fn block(&self) -> &DmaBlock {
        self.sim.component::<DmaBlock>(self.dma).unwrap()
    }
    pub fn hbm_mut(&mut self) -> &mut HbmStack {
        self.sim.component_mut::<HbmStack>(self.hbm).unwrap()
    }
    pub fn sbuf_mut(&mut self) -> &mut FakeSbuf {
        self.sim.component_mut::<FakeSbuf>(self.sbuf).unwrap()
    }
    /// Latency of the only (or slowest) command, in ns.
    pub fn latency_ns(&self) -> f64 {
        self.stat("latency_ns_max")
    }
}

fn spec(depth: u32) -> LinkSpec {
    LinkSpec::default().depth(depth)
}

/// A DMA block on an HBM3E stack (Trn3) and a fake SBUF, fed `cmds` by a driver.
pub(super) fn rig(p: DmaParams, cmds: Vec<(Time, DmaCmd)>, functional: bool) -> Rig {
    let mut cfg = StackConfig::from_preset(&presets::HBM3E_9600);
    // The Trainium chip presets' map (models/configs/system/trn3-chip.ron).
    cfg.controller.address_map = trnsim_mem::hbm::AddressMap::BURST_INTERLEAVED.into();
    cfg.functional = functional;
    let mut b = SimBuilder::new();
    let clk = b.clock("dma", p.clock).unwrap();
    let hclk = b.clock("hbm", cfg.timing.frequency()).unwrap();
    let dma = b.reserve("dma", clk).unwrap();
    let hbm = b.reserve("hbm", hclk).unwrap();
    let sbuf = b.reserve("sbuf", clk).unwrap();
    let sink = b.reserve("sem", clk).unwrap();
    let driver = b.reserve("driver", clk).unwrap();
    let (cmd_out, cmd_in) = b.link::<DmaCmd>(driver, "cmd", dma, "cmd", spec(16)).unwrap();
    let (sem_out, sem_in) = b.link::<SemOp>(dma, "sem", sink, "op", spec(16)).unwrap();
    let mut stack = HbmStack::new(&cfg).unwrap();
    let mut fake = FakeSbuf {
        ports: Vec::new(),
        latency: SBUF_LATENCY,
        functional,
        data: Store::default(),
        pending: VecDeque::new(),
    };
    let mut ports = DmaPorts { cmds: vec![cmd_in], sem: sem_out, sbuf: Vec::new(), hbm: Vec::new() };
    for e in 0..p.engines {
        let n = p.outstanding;
        let (rq_out, rq_in) = b.link(dma, format!("hbm{e}.req"), hbm, format!("p{e}.req"), spec(n)).unwrap();
        let (rs_out, rs_in) = b.link(hbm, format!("p{e}.resp"), dma, format!("hbm{e}.resp"), spec(n)).unwrap();
        stack.add_port(rq_in, rs_out);
        ports.hbm.push((rq_out, rs_in));
        let (a_out, a_in) = b.link(dma, format!("sbuf{e}.req"), sbuf, format!("c{e}.req"), spec(8)).unwrap();
        let (d_out, d_in) = b.link(sbuf, format!("c{e}.done"), dma, format!("sbuf{e}.done"), spec(8)).unwrap();
        fake.ports.push((a_in, d_out));
        ports.sbuf.push((a_out, d_in));
    }
    let mut block = DmaBlock::new(p, ports, functional);
    block.declare_tracks(&mut b, dma);
    b.install(dma, block).unwrap();
    b.install(hbm, stack).unwrap();
    b.install(sbuf, fake).unwrap();
    b.install(sink, SemSink { port: Some(sem_in), ops: Vec::new() }).unwrap();
    b.install(driver, Driver { port: cmd_out, cmds: cmds.into() }).unwrap();
    Rig { sim: b.build().unwrap(), dma, hbm, sbuf, sink }
}

/// An SBUF pattern of `np` partitions from `p0`, `offset` bytes in, with `dims` (size, stride).
pub(super) fn ap(p0: u16, np: u16, offset: u32, dtype: Dtype, dims: &[(u16, i16)]) -> Ap {
    let mut d = [Dim::default(); 4];
    for (i, &(size, stride)) in dims.iter().enumerate() {
        d[i] = Dim { size, stride };
    }
    Ap { mem: Mem::Sbuf, partition_start: p0, partitions: np, offset, dims: d, ndims: dims.len() as u8, dtype }
}

/// A command with semaphore 0.
pub(super) fn cmd(id: u64, queue: u8, src: DmaAddr, dst: DmaAddr, bpp: u32) -> DmaCmd {
    DmaCmd { id, queue, src, dst, bytes_per_partition: bpp, sem: Some(Sem(0)), flow: id }
}

/// HBM -> SBUF of `np` partitions from `p0` x `bpp` bytes (contiguous FP32 rows), rows
/// `bpp` apart in HBM from `addr`.
pub(super) fn load(id: u64, queue: u8, addr: u64, p0: u16, np: u16, bpp: u32) -> DmaCmd {
    let dst = ap(p0, np, 0, Dtype::Fp32, &[((bpp / 4) as u16, 1)]);
    cmd(id, queue, DmaAddr::Hbm { addr, partition_stride: u64::from(bpp) }, DmaAddr::OnChip(dst), bpp)
}
