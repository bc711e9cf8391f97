//! One NeuronCore engine: its sequencer (fetch, registers, branches, semaphore waits) and its
//! datapath timing (the cost model's initiation interval per instruction, SBUF/PSUM accesses
//! through the core's memory unit), as a kernel component on the engine's own clock.
//!
//! ```text
//!        SemGrant ──►┌──────────────┐── SemOp ──► semaphore unit
//!   MemDone ────────►│ EngineUnit   │── MemAccess ──► CoreMem (SBUF/PSUM)
//!                    │ (sequencer + │── DmaCmd ──► DMA block (sync/scalar/gpsimd)
//!                    │  datapath)   │
//!                    └──────────────┘
//! ```
//!
//! Timing: a data instruction issues when the datapath is free (the previous instruction's
//! initiation interval has passed), its inputs are not being written by an unfinished
//! instruction of this engine, and (tensor engine) its weights are loaded. It reads its inputs
//! through the memory unit, and writes its output once both the reads are back and its
//! interval and the engine's latency (`costs.<engine>.latency_cycles`) have passed; it is
//! complete when the write is. LoadStationary runs in the
//! background on its own resource while a MultiplyMoving streams (two weight buffers).
//! `sem_inc`/`sem_set` wait until every earlier instruction of the engine is complete.
//! Control instructions take the core's `costs.control_cycles` (one).

use crate::cost::{self, CostModel};
use crate::exec;
use crate::isa::{Ap, Cond, Engine, Instr, Mem, Operand, RegOp, Stream};
use crate::layout::EngineTracks;
use crate::msg::{DmaCmd, MemAccess, MemDone, SemGrant, SemOp};
use crate::throttle::ThrottleState;
use std::collections::VecDeque;
use trnsim_kernel::{Activity, Component, Ctx, Flow, InPort, OutPort, StatsWriter, Time};

/// Registers per sequencer (spec §2).
pub const REGS: usize = 64;

/// The engine's ports.
pub struct EnginePorts {
    /// Semaphore operations out.
    pub sem: OutPort<SemOp>,
    /// Grants in.
    pub grant: InPort<SemGrant>,
    /// SBUF/PSUM requests out.
    pub mem: OutPort<MemAccess>,
    /// SBUF/PSUM completions in.
    pub mem_done: InPort<MemDone>,
    /// DMA starts out (engines that may start DMAs).
    pub dma: Option<OutPort<DmaCmd>>,
}

/// A stationary matrix in the PE array (one of two buffers).
struct Weights {
    /// Columns M.
    m: u64,
    /// Tag of the LoadStationary that loads it.
    tag: u64,
    /// Cycle the load completed (None while loading).
    ready: Option<u64>,
    /// Where it came from and its bytes (functional mode: elements, then MXFP8 scales).
    ap: Ap,
    data: Vec<Vec<u8>>,
}

struct InFlight {
    tag: u64,
    index: usize,
    reads_left: u8,
    inputs: Vec<Vec<u8>>,
    ready_at: u64,
    write_sent: bool,
    writes_left: u8,
    done: bool,
    start: Time,
    flow: u64,
    /// MultiplyMoving: its flops over the array's peak flops per tensor cycle in its format
    /// (the cycles it would take at full rate), for the MFU counter.
    full_rate_cycles: f64,
    /// MultiplyMoving: the cycles it held the array (its interval as issued, throttled
    /// cycles included), for the HFU counter.
    array_cycles: u64,
    /// Functional mode, MultiplyMoving: the weights it multiplies by (copied at issue, since the
    /// array may load the next ones before this one's inputs arrive).
    weights: Option<(Ap, Vec<Vec<u8>>)>,
}

/// The formats the tensor engine counts MACs in (statistics `macs_<name>`): FP8 E4M3 and E5M2
/// count as `fp8`.
pub const MAC_FORMATS: [&str; 5] = ["bf16", "fp16", "fp32", "fp8", "mxfp8"];

/// The statistics naming the tensor engine's MACs, `macs_<format>` in [`MAC_FORMATS`] order.
pub const MAC_COUNTERS: [&str; 5] = ["macs_bf16", "macs_fp16", "macs_fp32", "macs_fp8", "macs_mxfp8"];

/// The [`MAC_FORMATS`] index of a matmul whose moving operand is `d` (None: not a matmul format).
fn mac_format(d: crate::isa::Dtype) -> Option<usize> {
    use crate::isa::Dtype;
    match d {
        Dtype::Bf16 => Some(0),
        Dtype::Fp16 => Some(1),
        Dtype::Fp32 => Some(2),
        Dtype::Fp8E4m3 | Dtype::Fp8E5m2 => Some(3),
        Dtype::MxFp8E4m3 => Some(4),
        Dtype::I32 => None,
    }
}

/// Engine statistics.
#[derive(Clone, Debug, Default)]
pub struct EngineStats {
    /// Data instructions retired (those with a datapath cost: matmul, activation, ...).
    pub instrs: u64,
    /// Control instructions executed: semaphore waits and signals, register operations,
    /// branches (each time one runs), DMA starts and halt. They take one cycle each.
    pub control_instrs: u64,
    /// Datapath cycles charged (sum of initiation intervals).
    pub busy_cycles: u64,
    /// Floating-point operations (2 per MAC on the tensor engine; 1 per element elsewhere).
    pub flops: u64,
    /// Tensor engine: MACs by the moving operand's format, in [`MAC_FORMATS`] order (what
    /// energy is priced by: a MAC's energy depends on its format).
    pub macs: [u64; MAC_FORMATS.len()],
    /// Bytes the issued instructions read from and write to SBUF (their access patterns).
    pub sbuf_bytes: u64,
    /// Bytes the issued instructions read from and write to PSUM (an accumulating write
    /// counts once).
    pub psum_bytes: u64,
    /// Cycles spent waiting on semaphores.
    pub sem_wait_cycles: u64,
    /// DMAs started.
    pub dmas: u64,
    /// Cycle the first data instruction issued.
    pub first: Option<u64>,
    /// Cycle the last data instruction issued.
    pub last_issue: u64,
    /// Issue cycle of each of the first 64 data instructions (for timing tests).
    pub issues: Vec<u64>,
    /// Last completion cycle.
    pub last: u64,
}

/// One engine with its instruction stream.
pub struct EngineUnit {
    engine: Engine,
    /// The core's costs and tensor array.
    model: CostModel,
    /// Cycles a control instruction takes (the core's `costs.control_cycles`).
    control: u64,
    /// Cycles after an instruction's interval before its results are written.
    latency: u64,
    /// The tensor engine's warm-up throttle (None: off, or another engine).
    throttle: Option<ThrottleState>,
    /// The limit (basis points) the last matmul issued under, for the `Throttling` counter.
    throttle_shown: u64,
    stream: Stream,
    ports: EnginePorts,
    functional: bool,
    pc: usize,
    regs: [i32; REGS],
    next_issue: u64,
    ls_free: u64,
    /// Weights being loaded (or loaded and not yet used by a MultiplyMoving).
    loading: Option<Weights>,
    /// Weights the array holds for the current MultiplyMoving.
    active: Option<Weights>,
    waiting: Option<u64>,
    /// Flow of the signal that released the last wait, ended by the next data instruction.
    released_by: u64,
    inflight: VecDeque<InFlight>,
    /// No cycle before this one has work for `progress`: every in-flight instruction it could
    /// act on (reads back, interval over) or retire (done at the front) gets there no
    /// earlier. Lowered when reads come back, writes complete or an instruction without
    /// reads issues; recomputed by each pass.
    next_progress: u64,
    halted: bool,
    next_tag: u64,
    dma_seq: u64,
    /// The Explorer layout's tracks ([`crate::layout`]), when traced so.
    tracks: Option<EngineTracks>,
    /// When the previous MultiplyMoving retired (the MFU and HFU counters' interval starts
    /// there).
    hfu_from: Option<Time>,
    /// Statistics.
    pub stats: EngineStats,
}

impl EngineUnit {
    /// An engine running `stream`.
    pub fn new(engine: Engine, stream: Stream, ports: EnginePorts, functional: bool, model: CostModel) -> EngineUnit {
        EngineUnit {
            engine,
            control: model.costs.control_cycles,
            latency: model.latency(engine),
            throttle: if engine == Engine::Tensor {
                ThrottleState::new(&model.costs.tensor.throttle, model.tensor_clock)
            } else {
                None
            },
            throttle_shown: 0,
            model,
            stream,
            ports,
            functional,
            pc: 0,
            regs: [0; REGS],
            next_issue: 0,
            ls_free: 0,
            loading: None,
            active: None,
            waiting: None,
            released_by: 0,
            inflight: VecDeque::new(),
            next_progress: u64::MAX,
            halted: false,
            next_tag: 0,
            dma_seq: 0,
            tracks: None,
            hfu_from: None,
            stats: EngineStats::default(),
        }
    }

    /// Counts an issued data instruction's flops, MACs by format and SBUF/PSUM bytes (its
    /// inputs read and outputs written).
    fn count_traffic(&mut self, instr: &Instr, inputs: &exec::Few<Ap>, m: u64) {
        let flops = exec::flops(instr, m);
        self.stats.flops += flops;
        if let Instr::MultiplyMoving { src, .. } = instr {
            if let Some(k) = mac_format(src.dtype) {
                self.stats.macs[k] += flops / 2;
            }
        }
        let outputs = exec::outputs(instr);
        for ap in inputs.iter().chain(outputs.iter().map(|(ap, _)| ap)) {
            match ap.mem {
                Mem::Sbuf => self.stats.sbuf_bytes += ap.bytes(),
                Mem::Psum => self.stats.psum_bytes += ap.bytes(),
            }
        }
    }

    /// A matmul's flops over the array's peak flops per cycle in its format.
    fn full_rate_cycles(&self, instr: &Instr, m: u64) -> f64 {
        let Instr::MultiplyMoving { src, .. } = instr else { return 0.0 };
        let t = &self.model.tensor;
        let rate = t.rate(src.dtype).unwrap_or(crate::spec::Rate { macs_per_pe: 1, cycles_per_column: 1 });
        let per_cycle = f64::from(t.rows) * f64::from(t.columns) * 2.0 * f64::from(rate.macs_per_pe)
            / f64::from(rate.cycles_per_column.max(1));
        exec::flops(instr, m) as f64 / per_cycle
    }

    /// Writes the `Throttling` counter when the limit a matmul issues under changes.
    fn show_throttle(&mut self, cx: &mut Ctx<'_>, limit: u64) {
        if limit == self.throttle_shown {
            return;
        }
        self.throttle_shown = limit;
        if let (Some(track), Some(mut tr)) = (self.tracks.and_then(|t| t.throttling), cx.tracer()) {
            tr.counter(track, limit as f64 / 100.0);
        }
    }

    /// Writes slices and counters to the Explorer layout's tracks ([`crate::layout`]) instead
    /// of the component's own track.
    pub fn with_tracks(mut self, tracks: Option<EngineTracks>) -> EngineUnit {
        self.tracks = tracks;
        self
    }

    /// The source line of the instruction the engine is at (the last one once it has run off
    /// the end), if the stream has any. A `sem_wait` moves past itself as it starts to wait:
    /// while it waits, the engine is at the wait.
    pub fn line(&self) -> Option<u32> {
        let n = self.stream.lines.len();
        let at = if self.waiting.is_some() { self.pc.saturating_sub(1) } else { self.pc };
        self.stream.lines.get(at.min(n.saturating_sub(1))).copied()
    }

    /// True once the stream has ended (halt or past the last instruction) and all work is done.
    pub fn finished(&self) -> bool {
        (self.halted || self.pc >= self.stream.instrs.len()) && self.inflight.is_empty()
    }

    /// Register `i`'s value.
    pub fn reg(&self, i: usize) -> i32 {
        self.regs[i]
    }

    fn operand(&self, o: Operand) -> i32 {
        match o {
            Operand::Reg(r) => self.regs[r.0 as usize],
            Operand::Imm(v) => v,
        }
    }

    fn receive(&mut self, cx: &mut Ctx<'_>, now: u64) {
        while let Some(g) = cx.recv(self.ports.grant) {
            if let Some(since) = self.waiting.take() {
                self.stats.sem_wait_cycles += now - since;
            }
            self.released_by = g.flow;
        }
        while let Some(d) = cx.recv(self.ports.mem_done) {
            // Access tags are instruction tag x 4 + input index (3 for writes).
            let (tag, k) = (d.tag / 4, (d.tag % 4) as usize);
            let Some(f) = self.inflight.iter_mut().find(|f| f.tag == tag) else { continue };
            if f.write_sent {
                f.writes_left -= 1;
                f.done = f.writes_left == 0;
                if f.done {
                    self.next_progress = 0; // it may retire
                }
            } else {
                f.reads_left -= 1;
                if f.reads_left == 0 {
                    self.next_progress = self.next_progress.min(f.ready_at);
                }
                // (Only a functional run's accesses carry data: a timing run keeps none, and
                // allocates nothing per instruction.)
                if self.functional {
                    if f.inputs.len() <= k {
                        f.inputs.resize(k + 1, Vec::new());
                    }
                    f.inputs[k] = d.data;
                }
            }
        }
    }

    /// Sends writes of instructions whose reads are back and whose interval has passed;
    /// completes instructions without outputs.
    fn progress(&mut self, cx: &mut Ctx<'_>, now: u64) {
        if now < self.next_progress {
            debug_assert!(
                self.inflight.front().is_none_or(|f| !f.done)
                    && self.inflight.iter().all(|f| f.done || f.write_sent || f.reads_left > 0 || f.ready_at > now),
                "an in-flight instruction could move before the engine's next progress cycle"
            );
            return;
        }
        let mut next = u64::MAX;
        for i in 0..self.inflight.len() {
            let (reads_left, ready_at, write_sent, done) = {
                let f = &self.inflight[i];
                (f.reads_left, f.ready_at, f.write_sent, f.done)
            };
            if done || write_sent || reads_left > 0 {
                continue;
            }
            if ready_at > now {
                next = next.min(ready_at);
                continue;
            }
            let instr = self.stream.instrs[self.inflight[i].index];
            let inputs = std::mem::take(&mut self.inflight[i].inputs);
            let outs = exec::outputs(&instr);
            if outs.is_empty() {
                let tag = self.inflight[i].tag;
                if let Some(w) = self.loading.as_mut().filter(|w| w.tag == tag) {
                    w.ready = Some(now);
                    w.data = inputs;
                }
                self.inflight[i].done = true;
                continue;
            }
            let tag = self.inflight[i].tag;
            let write = |dst, accumulate, data| MemAccess {
                tag: tag * 4 + 3,
                iface: 2,
                ap: dst,
                write: true,
                accumulate,
                data,
            };
            // Links to the memory unit are sized for every outstanding access: never refused.
            if self.functional {
                let w = self.inflight[i].weights.as_ref().map(|(ap, d)| (ap, d.as_slice()));
                for ((dst, accumulate), data) in outs.iter().zip(exec::compute(&instr, &inputs, w)) {
                    let _ = cx.send(self.ports.mem, write(dst, accumulate, data));
                }
            } else {
                for (dst, accumulate) in outs.iter() {
                    let _ = cx.send(self.ports.mem, write(dst, accumulate, Vec::new()));
                }
            }
            let f = &mut self.inflight[i];
            f.write_sent = true;
            f.writes_left = outs.len() as u8;
        }
        while let Some(f) = self.inflight.front() {
            if !f.done {
                break;
            }
            let f = self.inflight.pop_front().expect("front");
            self.retire(cx, f, now);
        }
        self.next_progress = next;
    }

    fn retire(&mut self, cx: &mut Ctx<'_>, f: InFlight, now: u64) {
        self.stats.instrs += 1;
        self.stats.last = now;
        let instr = &self.stream.instrs[f.index];
        let name = instr.mnemonic();
        let end = cx.now();
        let matrix = matches!(instr, Instr::MultiplyMoving { .. });
        let hfu_from = if matrix { self.hfu_from.replace(end) } else { None };
        let period_ps = cx.clock().cycles_to_dur(trnsim_kernel::Cycles(1)).as_ps();
        if let Some(mut tr) = cx.tracer() {
            let track = match self.tracks {
                Some(t) if matrix => t.matrix.unwrap_or(t.instr),
                Some(t) => t.instr,
                None => tr.own_track(),
            };
            let flow = if f.flow != 0 { Flow::End(f.flow) } else { Flow::None };
            tr.slice(track, name, f.start, end, flow, None);
            if let (true, Some(t)) = (matrix, self.tracks) {
                // Over the time since the previous matmul ended (this one's own span the first
                // time): the share of the array's peak this matmul's flops make (MFU), and the
                // share of the time it held the array (HFU).
                let from = hfu_from.unwrap_or(f.start);
                let cycles = end.since(from).as_ps() as f64 / period_ps.max(1) as f64;
                let pct = |x: f64| if cycles > 0.0 { (100.0 * x / cycles).min(100.0) } else { 100.0 };
                if let Some(mfu) = t.mfu {
                    tr.counter(mfu, pct(f.full_rate_cycles));
                }
                if let Some(hfu) = t.hfu {
                    tr.counter(hfu, pct(f.array_cycles as f64));
                }
            }
        }
    }

    /// Tries to issue the instruction at `pc`; returns false when it must wait.
    fn issue(&mut self, cx: &mut Ctx<'_>, now: u64) -> bool {
        if self.halted || self.waiting.is_some() || self.pc >= self.stream.instrs.len() {
            return false;
        }
        let instr = self.stream.instrs[self.pc];
        match instr {
            Instr::SemWait { sem, value } => {
                if cx.send(self.ports.sem, SemOp::Wait { sem, value }).is_err() {
                    return false;
                }
                self.waiting = Some(now);
                self.pc += 1;
                self.stats.control_instrs += 1;
                false
            }
            Instr::SemInc { sem, delta } => {
                let flow = self.trace_flow(cx);
                self.signal(cx, SemOp::Inc { sem, delta, flow })
            }
            Instr::SemSet { sem, value } => {
                let flow = self.trace_flow(cx);
                self.signal(cx, SemOp::Set { sem, value, flow })
            }
            Instr::RegAlu { op, dst, a, b } => {
                let (a, b) = (self.operand(a), self.operand(b));
                self.regs[dst.0 as usize] = match op {
                    RegOp::Mov => a,
                    RegOp::Add => a.wrapping_add(b),
                    RegOp::Sub => a.wrapping_sub(b),
                    RegOp::Mul => a.wrapping_mul(b),
                };
                self.pc += 1;
                self.stats.control_instrs += 1;
                self.next_issue = self.next_issue.max(now + self.control);
                false
            }
            Instr::Branch { cond, a, b, target } => {
                let (a, b) = (self.operand(a), self.operand(b));
                let taken = match cond {
                    Cond::Always => true,
                    Cond::Eq => a == b,
                    Cond::Ne => a != b,
                    Cond::Lt => a < b,
                    Cond::Ge => a >= b,
                };
                self.pc = if taken { target as usize } else { self.pc + 1 };
                self.stats.control_instrs += 1;
                self.next_issue = self.next_issue.max(now + self.control);
                false
            }
            Instr::Halt => {
                self.halted = true;
                self.stats.control_instrs += 1;
                false
            }
            Instr::DmaStart { queue, src, dst, bytes_per_partition, sem } => {
                let Some(port) = self.ports.dma else {
                    self.pc += 1;
                    self.stats.control_instrs += 1;
                    return true;
                };
                self.dma_seq += 1;
                let id = ((self.engine as u64) << 32) | self.dma_seq;
                let flow = cx.new_flow_id();
                let cmd = DmaCmd { id, queue, src, dst, bytes_per_partition, sem, flow };
                if cx.send(port, cmd).is_err() {
                    return false;
                }
                if let Some(mut tr) = cx.tracer() {
                    let track = self.tracks.map_or_else(|| tr.own_track(), |t| t.instr);
                    tr.instant(track, "dma_start", Flow::Step(flow), None);
                }
                self.stats.dmas += 1;
                self.pc += 1;
                self.stats.control_instrs += 1;
                self.next_issue = self.next_issue.max(now + self.control);
                false
            }
            _ => self.issue_data(cx, instr, now),
        }
    }

    /// A new flow id when tracing (0 otherwise, so untraced runs draw no ids).
    fn trace_flow(&mut self, cx: &mut Ctx<'_>) -> u64 {
        if cx.tracer().is_some() && self.inflight.is_empty() {
            cx.new_flow_id()
        } else {
            0
        }
    }

    fn signal(&mut self, cx: &mut Ctx<'_>, op: SemOp) -> bool {
        if !self.inflight.is_empty() {
            return false;
        }
        if cx.send(self.ports.sem, op).is_err() {
            return false;
        }
        let flow = match op {
            SemOp::Inc { flow, .. } | SemOp::Set { flow, .. } => flow,
            SemOp::Wait { .. } => 0,
        };
        if flow != 0 {
            if let Some(mut tr) = cx.tracer() {
                let track = self.tracks.map_or_else(|| tr.own_track(), |t| t.instr);
                tr.instant(track, self.stream.instrs[self.pc].mnemonic(), Flow::Step(flow), None);
            }
        }
        self.pc += 1;
        self.stats.control_instrs += 1;
        self.next_issue = self.next_issue.max(cx.cycle().0 + self.control);
        false
    }

    fn hazard(&self, inputs: &exec::Few<Ap>) -> bool {
        self.inflight.iter().any(|f| {
            let i = &self.stream.instrs[f.index];
            !f.done && exec::outputs(i).iter().any(|(dst, _)| inputs.iter().any(|a| exec::overlaps(&a, &dst)))
        })
    }

    fn issue_data(&mut self, cx: &mut Ctx<'_>, instr: Instr, now: u64) -> bool {
        let is_ls = matches!(instr, Instr::LoadStationary { .. });
        let is_mm = matches!(instr, Instr::MultiplyMoving { .. });
        if is_ls {
            // Two weight buffers: a new load may start once the previous one is in use.
            if now < self.ls_free || self.loading.is_some() {
                return false;
            }
        } else if now < self.next_issue {
            return false;
        }
        // (After the cheaper checks: the hazard scan reads every instruction in flight.)
        let inputs = exec::inputs(&instr);
        if self.hazard(&inputs) {
            return false;
        }
        let mut m = 0;
        if is_mm {
            match &self.loading {
                Some(w) if w.ready.is_some_and(|r| r <= now) => {
                    self.active = self.loading.take();
                }
                Some(_) => return false,
                None if self.active.is_none() => return false, // no weights yet: waits (deadlock if never)
                None => {}
            }
            m = self.active.as_ref().map_or(0, |w| w.m);
        }
        let mut ii = cost::cycles(self.engine, &instr, m, &self.model);
        if let (true, Some(t)) = (is_mm, self.throttle.as_mut()) {
            let limit;
            (ii, limit) = t.matmul(now, ii);
            self.show_throttle(cx, limit);
        }
        let tag = self.next_tag;
        self.next_tag += 1;
        for (k, ap) in inputs.iter().enumerate() {
            // LoadStationary reads on the second port so it streams beside the running multiply.
            let iface = if is_ls { 1 } else { k.min(1) as u8 };
            let msg =
                MemAccess { tag: tag * 4 + k as u64, iface, ap, write: false, accumulate: false, data: Vec::new() };
            if cx.send(self.ports.mem, msg).is_err() {
                return false; // links are sized so this does not happen; retry next cycle
            }
        }
        if let Instr::LoadStationary { src, .. } = instr {
            self.loading = Some(Weights { m: src.matmul_columns(), tag, ready: None, ap: src, data: Vec::new() });
            self.ls_free = now + ii;
        } else {
            self.next_issue = now + ii;
        }
        self.stats.busy_cycles += if is_ls { 0 } else { ii };
        self.count_traffic(&instr, &inputs, m);
        self.stats.first.get_or_insert(now);
        self.stats.last_issue = now;
        if self.stats.issues.len() < 64 {
            self.stats.issues.push(now);
        }
        let start = cx.now();
        // Results are written once the interval and the datapath's latency have passed.
        let ready_at = now + ii + self.latency;
        if inputs.is_empty() {
            self.next_progress = self.next_progress.min(ready_at);
        }
        self.inflight.push_back(InFlight {
            tag,
            index: self.pc,
            reads_left: inputs.len() as u8,
            inputs: if self.functional { Vec::with_capacity(inputs.len()) } else { Vec::new() },
            ready_at,
            write_sent: false,
            writes_left: 0,
            done: false,
            start,
            flow: std::mem::take(&mut self.released_by),
            full_rate_cycles: if is_mm { self.full_rate_cycles(&instr, m) } else { 0.0 },
            array_cycles: if is_mm { ii } else { 0 },
            weights: if is_mm && self.functional { self.active.as_ref().map(|w| (w.ap, w.data.clone())) } else { None },
        });
        self.pc += 1;
        true
    }
}

impl Component for EngineUnit {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let now = cx.cycle().0;
        self.receive(cx, now);
        self.progress(cx, now);
        // Issuing only appends to `inflight`; progress looks only at it, and its first pass
        // left nothing it could do again: a second pass is needed only for what was issued.
        let before = self.inflight.len();
        while self.issue(cx, now) {}
        if self.inflight.len() != before {
            self.progress(cx, now);
        }
        if self.finished() {
            return Activity::Idle;
        }
        // Wake for the next interval boundary; messages (grants, completions) wake us anyway.
        let mut next = u64::MAX;
        if self.waiting.is_none() && !self.halted && self.pc < self.stream.instrs.len() {
            next = next.min(self.next_issue.max(self.ls_free).max(now + 1));
        }
        for f in &self.inflight {
            if !f.write_sent && f.reads_left == 0 {
                next = next.min(f.ready_at.max(now + 1));
            }
        }
        if next == now + 1 {
            return Activity::Busy;
        }
        if next != u64::MAX {
            let t = cx.clock().edge(next);
            cx.wake_at(t);
        }
        Activity::Idle
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        let s = &self.stats;
        out.count("instructions", s.instrs);
        if out.is_probe() {
            return; // the report leaves this engine out: one figure says it has some
        }
        out.count("control_instructions", s.control_instrs);
        out.count("busy_cycles", s.busy_cycles);
        if !self.finished() {
            // Read back by runs that check every stream ended (partitioned runs among them).
            out.count("unfinished", 1);
        }
        out.count("flops", s.flops);
        if self.engine == Engine::Tensor {
            for (name, &n) in MAC_COUNTERS.iter().zip(&s.macs) {
                out.count(name, n);
            }
        }
        out.count("sbuf_bytes", s.sbuf_bytes);
        out.count("psum_bytes", s.psum_bytes);
        out.count("sem_wait_cycles", s.sem_wait_cycles);
        out.count("dmas", s.dmas);
        if let Some(t) = &self.throttle {
            out.count("throttled_cycles", t.added_cycles);
        }
        let span = s.last.saturating_sub(s.first.unwrap_or(0)).max(1);
        out.value("utilization", s.busy_cycles as f64 / span as f64);
    }

    /// Instructions, flops, the tensor engine's MACs by format, SBUF and PSUM bytes.
    fn counters(&self, out: &mut dyn FnMut(&'static str, u64)) {
        let s = &self.stats;
        out("instructions", s.instrs);
        out("flops", s.flops);
        if self.engine == Engine::Tensor {
            for (name, &n) in MAC_COUNTERS.iter().zip(&s.macs) {
                out(name, n);
            }
        }
        out("sbuf_bytes", s.sbuf_bytes);
        out("psum_bytes", s.psum_bytes);
    }

    fn has_outstanding_work(&self) -> bool {
        !self.finished()
    }
}
