//! The DMA block of one NeuronCore: 16 DMA engines, each serving 8 SBUF partitions, each with
//! 16 FIFO queues, moving data between HBM (through the HBM model) and SBUF/PSUM (through the
//! core's memory unit) (spec §4).
//!
//! ```text
//!  engines ── DmaCmd ──► DmaBlock ── split by partition ──► engine e (partitions 8e..8e+8)
//!                          │                                 queues[16] ─ arbiter ─ packets
//!  SemUnit ◄── SemOp::Inc ─┤ (one per engine per command)     │ MemReq/MemResp (32 B bursts)
//!                          │                                  ├──────────────► HBM stack port e
//!                          │                                  │ MemAccess/MemDone
//!                          └──────────────────────────────────┴──────────────► SBUF client e
//! ```
//!
//! **What it models.**
//! - A [`DmaCmd`] moves `bytes_per_partition` bytes for each partition of its on-chip side
//!   (the destination's if both sides are on chip; HBM->HBM is one row on engine 0). Engine `e`
//!   takes the partitions `[8e, 8e + 8)` of it (its *part*) and appends the part to its queue
//!   `cmd.queue`.
//! - A part becomes eligible `start_latency` (1300 ns) after the command arrived; commands
//!   overlap their start latencies.
//! - Each engine moves one packet at a time (~`packet_bytes`, 4 KiB) from the queue its
//!   arbiter picks: round robin over ready queues (v2/v3) or four priority classes, queue `q`
//!   in class `q % 4`, class 0 first (v4). A packet is the engine's partitions x a range of each
//!   partition's bytes, cut so that the on-chip side of a packet is one access pattern
//!   (one [`MemAccess`] over up to 8 partitions; see `plan.rs`).
//! - HBM side: one [`MemReq`] per 32 B-aligned burst (`addr + p * partition_stride + offset`),
//!   at most `outstanding` per engine in flight. HBM->SBUF: the packet's reads, then one SBUF
//!   write when all its data is back. SBUF->HBM: one SBUF read (read ahead up to
//!   `packets_in_flight` packets), then write bursts carrying the data. SBUF->SBUF: read, then
//!   write.
//! - Rate: each engine has a byte budget that accrues at `peak_bytes_per_ns` with simulated
//!   time (integer µB/ps, not per cycle, so the block's clock does not change the rate) and is
//!   capped at one burst; each HBM burst of the packet's charged stage costs 32 B (a partial
//!   burst costs a whole one), an SBUF->SBUF packet its bytes. A burst may issue while the
//!   budget is positive (it may go into debt).
//! - Completion: when an engine's part is complete (its last packet's write done), it sends
//!   `SemOp::Inc { sem, delta: 1 }`. A 128-partition DMA so increments 16 times: after `n` such
//!   DMAs on semaphore `s`, wait with `sem_wait s >= 16 * n` (in general, the number of engines
//!   the on-chip partition range touches, per DMA).
//!
//! **Leaves out.** Descriptor rings in HBM and their fetch traffic (folded into the start
//! latency), DGE modes, DMA transpose and inline casts (bytes are copied as they are), write
//! byte masks (a partial burst is sent with only its bytes), and the SBUF side's bandwidth (the
//! memory unit charges it).
//!
//! **Malformed commands** (pattern bytes differ from `bytes_per_partition`, partitions outside
//! the core, queue out of range, ...) move nothing: they are counted (`malformed_commands`) and
//! complete after the start latency like an empty command, so a waiting program does not hang.
//!
//! **What it needs from the SBUF unit.** Each engine's accesses cover its own partitions
//! (e.g. 8 partitions from 8, 16, 24, ...), which the compute engines' partition-start rule
//! (spec §3: 8 partitions must start at a multiple of 32) does not allow; the unit must not
//! apply that rule to DMA clients. Reads use interface 0, writes interface 2.
//!
//! **Statistics** (owner = the component's name): `bytes`, `packets`, `engine{e}.bytes`,
//! `engine{e}.packets`, `commands`, `commands_done`, `malformed_commands`, `sem_increments`,
//! `hbm_read_bursts`, `hbm_write_bursts`, `sbuf_reads`, `sbuf_writes`, `sbuf_bytes`, `psum_bytes`
//! (bytes of those accesses by memory), `busy_ps` (time with a
//! command in flight), `bandwidth_busy_GBps` (bytes over that time), `latency_ns_*` (arrival
//! to the last engine's completion: count, mean, p50, p99, max) and `queued_parts_{mean,max}`
//! (parts waiting in queues, start latency included).
//!
//! **Trace** (after [`DmaBlock::declare_tracks`]): a `packet` slice per packet on the track of
//! its engine; a `dma` slice per command (arrival to completion) on the track of its queue
//! (`queue{q}`) that ends the issuing instruction's flow (`DmaCmd::flow`); a `sem_inc` instant per increment on
//! the engine's track that starts the flow carried in [`SemOp::Inc`].

mod book;
mod engine;
mod hook;
mod params;
mod plan;
mod sched;
mod stats;

#[cfg(test)]
mod tests;

pub use hook::QueueHook;
pub use params::{DmaParams, Scheduling};
pub use sched::Arbiter as QueueArbiter;

use crate::msg::{DmaCmd, MemAccess, MemDone, SemOp};
use book::Book;
use engine::{Engine, EnginePorts, Env, Part};
use plan::Plan;
use trnsim_kernel::{
    Activity, Component, ComponentId, Ctx, Dur, Flow, InPort, InputIndex, OutPort, SimBuilder, StatsWriter, Time,
    TrackId, TrackKind,
};
use trnsim_mem::hbm::{MemReq, MemResp};

/// The ports of a DMA block.
pub struct DmaPorts {
    /// Commands from the engines that may start DMAs (read in port order each cycle).
    pub cmds: Vec<InPort<DmaCmd>>,
    /// Semaphore increments to the core's semaphore unit.
    pub sem: OutPort<SemOp>,
    /// One SBUF/PSUM client per DMA engine (interface 0 = reads, 2 = writes).
    pub sbuf: Vec<(OutPort<MemAccess>, InPort<MemDone>)>,
    /// One HBM port pair per DMA engine (the harness wires them to a stack's `add_port`).
    pub hbm: Vec<(OutPort<MemReq>, InPort<MemResp>)>,
}

/// The DMA block of one NeuronCore, as a kernel component (see the module docs).
pub struct DmaBlock {
    p: DmaParams,
    env: Env,
    cmds: Vec<InPort<DmaCmd>>,
    sem: OutPort<SemOp>,
    engines: Vec<Engine>,
    /// The block's inputs by key: engine `e`'s HBM responses are number `2e`, its SBUF
    /// answers `2e + 1`, command input `k` is `2 * engines + k` (to skip engines with no
    /// answer in flight or arrived, and command inputs with none).
    responses: InputIndex,
    book: Book,
}

/// A DMA block's trace tracks (one per engine, one per queue), declared before it is made.
pub struct DmaTracks {
    engines: Vec<TrackId>,
    queues: Vec<TrackId>,
    /// `DMA Throughput` and `Pending DMA Count` counters (the Explorer layout).
    counters: Option<(TrackId, TrackId)>,
}

impl DmaTracks {
    /// The Explorer layout's DMA tracks ([`crate::layout`]).
    pub fn from_layout(l: &crate::layout::DmaLayout) -> DmaTracks {
        DmaTracks { engines: l.engines.clone(), queues: l.queues.clone(), counters: Some((l.throughput, l.pending)) }
    }
}

impl DmaBlock {
    /// A block with `params` on `ports`; with `functional`, data moves too.
    ///
    /// # Panics
    /// If `params` do not validate or the port lists are not one per engine (assembly errors;
    /// use [`DmaBlock::try_new`] to get them as values).
    pub fn new(params: DmaParams, ports: DmaPorts, functional: bool) -> DmaBlock {
        match DmaBlock::try_new(params, ports, functional) {
            Ok(b) => b,
            Err(e) => panic!("dma block: {e}"),
        }
    }

    /// [`DmaBlock::new`], reporting bad parameters or port counts as an error.
    pub fn try_new(params: DmaParams, ports: DmaPorts, functional: bool) -> Result<DmaBlock, String> {
        params.validate()?;
        let n = params.engines as usize;
        if ports.sbuf.len() != n || ports.hbm.len() != n {
            return Err(format!(
                "{} engines need as many SBUF and HBM ports (got {} and {})",
                n,
                ports.sbuf.len(),
                ports.hbm.len()
            ));
        }
        let env = Env {
            functional,
            rate: params.rate_ub_per_ps(),
            cap: i64::from(params.access_bytes) * 1_000_000,
            access: plan::Granule::new(u64::from(params.access_bytes)),
            outstanding: params.outstanding,
            bulk: params.bulk,
        };
        let mut responses = InputIndex::new();
        for e in 0..n {
            responses.push(ports.hbm[e].1.key());
            responses.push(ports.sbuf[e].1.key());
        }
        for c in &ports.cmds {
            responses.push(c.key());
        }
        let engines = (0..n)
            .map(|e| {
                let ((hbm_req, hbm_resp), (sbuf_req, sbuf_done)) = (ports.hbm[e], ports.sbuf[e]);
                Engine::new(e as u32, &params, EnginePorts { hbm_req, hbm_resp, sbuf_req, sbuf_done }, &env)
            })
            .collect();
        Ok(DmaBlock { env, cmds: ports.cmds, sem: ports.sem, engines, responses, book: Book::default(), p: params })
    }

    /// Declares one slice track per engine ("engine0" ...) under component `id`: a slice per
    /// packet, from its start to its write's completion. Commands appear on the component's
    /// own track, ending the issuing instruction's flow.
    pub fn declare_tracks(&mut self, b: &mut SimBuilder, id: ComponentId) {
        let t = DmaBlock::tracks(&self.p, b, id);
        self.set_tracks(t);
    }

    /// The tracks [`DmaBlock::declare_tracks`] declares, declared before the block is made (a
    /// block installed as a constructor, `SimBuilder::install_with`); give them to the block
    /// with [`DmaBlock::set_tracks`].
    pub fn tracks(p: &DmaParams, b: &mut SimBuilder, id: ComponentId) -> DmaTracks {
        DmaTracks {
            engines: (0..p.engines).map(|e| b.track(id, &format!("engine{e}"), TrackKind::Slice)).collect(),
            queues: (0..p.queues).map(|q| b.track(id, &format!("queue{q}"), TrackKind::Slice)).collect(),
            counters: None,
        }
    }

    /// Takes tracks declared by [`DmaBlock::tracks`] for this block's parameters.
    pub fn set_tracks(&mut self, t: DmaTracks) {
        for (eng, track) in self.engines.iter_mut().zip(t.engines) {
            eng.track = Some(track);
        }
        self.book.queue_tracks.extend(t.queues);
        self.book.counters = t.counters.map(|(throughput, pending)| book::Counters::new(throughput, pending));
    }

    /// The parameters.
    pub fn params(&self) -> &DmaParams {
        &self.p
    }

    /// Puts `hook` on engine `engine`'s queues (a swap-in; the error names an engine that
    /// does not exist or already has one).
    pub fn attach_queue_hook(&mut self, engine: u32, hook: Box<dyn QueueHook>) -> Result<(), String> {
        let n = self.engines.len();
        let e = self.engines.get_mut(engine as usize).ok_or_else(|| format!("dma: no engine {engine} (0..{n})"))?;
        if e.hook.is_some() {
            return Err(format!("dma: engine {engine} already has a queue hook"));
        }
        e.hook = Some(hook);
        Ok(())
    }

    /// Bytes each engine has moved (completed packets).
    pub fn bytes_per_engine(&self) -> Vec<u64> {
        self.engines.iter().map(|e| e.stats.bytes).collect()
    }

    /// Queues engine `e` served, in order (tests only).
    #[cfg(test)]
    pub(crate) fn picks(&self, e: usize) -> &[u8] {
        &self.engines[e].picks
    }

    fn accept(&mut self, cx: &mut Ctx<'_>, cmd: DmaCmd) {
        let now = cx.now();
        let p = &self.p;
        let ppe = p.partitions_per_engine;
        let mut plan = Plan::new(&cmd, ppe, p.engines * ppe, p.packet_bytes);
        let q = usize::from(cmd.queue);
        if q >= p.queues as usize {
            plan.reject("queue out of range");
        }
        if plan.malformed.is_some() {
            self.book.stats.malformed += 1;
            if let Some(mut tr) = cx.tracer() {
                let track = tr.own_track();
                tr.instant(track, "dma_malformed", Flow::None, None);
            }
        }
        let slot = self.book.admit(&cmd, plan, now, self.engines.len());
        self.book.show_pending(cx);
        let total = plan.packets_per_part();
        let eligible = now + p.start_latency;
        for (e, r0, r1) in plan.parts(ppe) {
            let c = &mut self.book.cmds[slot as usize];
            c.left[e as usize] = total;
            c.parts_left += 1;
            let part = Part { cmd: slot, r0, r1, next: 0, total, eligible };
            self.engines[e as usize].enqueue(now, q % p.queues as usize, part);
            self.book.queued += 1;
        }
        self.book.stats.queued.set(now, self.book.queued);
    }

    fn send_sems(&mut self, cx: &mut Ctx<'_>) {
        while let Some(&op) = self.book.sems.front() {
            if cx.send(self.sem, op).is_err() {
                break;
            }
            self.book.sems.pop_front();
            self.book.stats.sem_incs += 1;
        }
    }
}

impl Component for DmaBlock {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let now = cx.now();
        // Which response and command inputs may hold a message.
        let pending = cx.pending_in(&self.responses);
        let n = self.engines.len();
        for k in 0..self.cmds.len() {
            if pending.may_hold(2 * n + k) {
                while let Some(cmd) = cx.recv(self.cmds[k]) {
                    self.accept(cx, cmd);
                }
            }
        }
        let mut wake = Time::NEVER;
        for (k, e) in self.engines.iter_mut().enumerate() {
            let answers = (pending.may_hold(2 * k), pending.may_hold(2 * k + 1));
            wake = wake.min(e.tick_if_due(cx, &mut self.book, &self.env, answers));
        }
        self.send_sems(cx);
        if !wake.is_never() {
            cx.wake_at(wake.max(now + Dur::from_ps(1)));
        }
        Activity::Idle
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        if out.is_probe() {
            // The report leaves this block out: one figure says it has some.
            out.count("in_flight", self.book.stats.in_flight);
            return;
        }
        let engines: Vec<_> = self.engines.iter().map(|e| e.stats.clone()).collect();
        stats::write(out, &self.book.stats, &engines);
    }

    /// Bytes moved, SBUF and PSUM bytes, over every engine (as the report's totals).
    fn counters(&self, out: &mut dyn FnMut(&'static str, u64)) {
        for e in &self.engines {
            out("bytes", e.stats.bytes);
            out("sbuf_bytes", e.stats.sbuf_bytes);
            out("psum_bytes", e.stats.psum_bytes);
        }
    }

    fn has_outstanding_work(&self) -> bool {
        self.book.stats.in_flight > 0 || !self.book.sems.is_empty()
    }
}
