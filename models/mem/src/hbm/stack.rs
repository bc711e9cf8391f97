//! The HBM stack as a kernel component: request ports in, response ports out, clocked by CK.
//!
//! ```text
//!  port k: InPort<MemReq> ──► decode ─┬──────────────────────► channel c / pc p queues ──► commands
//!                                     └► pc p intake buffer ──┘ (oldest first, as slots free)
//!  port k: OutPort<MemResp> ◄── completion at RD + CL + BL (WR + CWL + BL)
//! ```
//!
//! The component sleeps between controller events: it is ticked only when a request arrives,
//! a command may become legal, or a completion is due.
//!
//! **Front end.** Each tick the intake buffers move their oldest requests into the queues as
//! far as the queues have room; then the ports, in round-robin order, hand over their link
//! heads: a request goes straight into its pseudo-channel's queue when that pseudo-channel's
//! buffer is empty and its queue has room, else to the end of the buffer. Only a request whose
//! queue and buffer are both full stays at the head of its link, back-pressuring that port.
//! So one busy pseudo-channel stops a port only after `intake_buffer` of its requests wait
//! (per pseudo-channel, shared by the ports, in arrival order, as a memory controller's
//! transaction queue in front of its scheduler's command queues); with `intake_buffer = 0` a
//! full queue blocks its port for every channel (head-of-line), as a trace front end that
//! retries its head request does. Requests to one pseudo-channel keep their arrival order
//! through the buffer, so functional data (taken when a request enters its queue) stays in
//! order per address.

use crate::hbm::channel::{Channel, StepOut};
use crate::hbm::command::{Command, CommandRecord, CommandSink};
use crate::hbm::config::ControllerConfig;
use crate::hbm::controller::{Completion, Entry, PcController, Shared};
use crate::hbm::mapping::AddressMap;
use crate::hbm::org::{Location, Organization};
use crate::hbm::presets::Preset;
use crate::hbm::stats::PcStats;
use crate::hbm::timing::TimingParams;
use crate::hbm::{refresh, sched};
use std::collections::VecDeque;
use trnsim_kernel::{
    Activity, Component, ComponentId, Ctx, Flow, Histogram, InPort, InputIndex, OutPort, Payload, SimBuilder,
    StatsWriter, TrackId, TrackKind,
};

/// A memory request of one burst (the stack's access size).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemReq {
    /// The requester's tag, echoed in the response.
    pub tag: u64,
    /// Byte address (decoded by the stack's address map, modulo capacity).
    pub addr: u64,
    /// Write (else read).
    pub write: bool,
    /// Bytes of the burst (the stack's access size), for link bandwidth.
    pub bytes: u32,
    /// A write's bytes in functional mode (None in timing-only runs: no allocation).
    pub data: Option<Box<[u8]>>,
}

impl Payload for MemReq {
    /// A read is an 8-byte command; a write carries its data too.
    fn size_bytes(&self) -> u32 {
        if self.write {
            8 + self.bytes
        } else {
            8
        }
    }
    fn trace_bits(&self) -> u64 {
        self.addr
    }
}

/// The completion of a [`MemReq`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemResp {
    /// The request's tag.
    pub tag: u64,
    /// Write (else read).
    pub write: bool,
    /// Bytes of the burst.
    pub bytes: u32,
    /// A read's bytes in functional mode.
    pub data: Option<Box<[u8]>>,
}

impl Payload for MemResp {
    /// A read response carries its data; a write acknowledgement is 8 bytes.
    fn size_bytes(&self) -> u32 {
        if self.write {
            8
        } else {
            8 + self.bytes
        }
    }
    fn trace_bits(&self) -> u64 {
        self.tag
    }
}

/// Everything that defines a stack.
#[derive(Clone, Debug)]
pub struct StackConfig {
    /// Preset name (for reports).
    pub preset: String,
    /// Organization.
    pub org: Organization,
    /// Timing.
    pub timing: TimingParams,
    /// Controller parameters.
    pub controller: ControllerConfig,
    /// Which stack of a multi-stack memory this is (stamped on command records).
    pub index: u32,
    /// Stacks in the memory (the address map's `st` level; 1 for a lone stack).
    pub stacks: u32,
    /// Keep the stored bytes (functional runs): writes store their data, reads return it.
    /// Data takes effect when a request enters the controller, in arrival order.
    pub functional: bool,
    /// Cycle-level controllers, or the transaction-level model of [`crate::hbm::fast`].
    pub fidelity: Fidelity,
    /// Currents and voltage for the energy figures (none: the stack reports no energy; the
    /// fast fidelity, which issues no commands, reports none either).
    pub energy: Option<crate::hbm::energy::EnergySpec>,
}

/// How an HBM stack is simulated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fidelity {
    /// Per-pseudo-channel controllers scheduling every command cycle by cycle (FR-FCFS,
    /// queues, refresh, the JEDEC timing table).
    #[default]
    Cycle,
    /// Each request's completion computed when it arrives, from per-bank and per-bus
    /// availability ([`crate::hbm::fast`]): no stepping, no reordering.
    Fast,
}

impl Fidelity {
    /// Parses "cycle" or "fast".
    pub fn parse(s: &str) -> Option<Fidelity> {
        match s {
            "cycle" => Some(Fidelity::Cycle),
            "fast" => Some(Fidelity::Fast),
            _ => None,
        }
    }
}

impl StackConfig {
    /// A stack of `preset` with default controller parameters.
    pub fn from_preset(p: &Preset) -> StackConfig {
        StackConfig {
            preset: p.name.to_string(),
            org: p.org.clone(),
            timing: p.timing.clone(),
            controller: ControllerConfig::default(),
            index: 0,
            stacks: 1,
            functional: false,
            fidelity: Fidelity::Cycle,
            energy: None,
        }
    }

    /// Checks everything; the error names the field.
    pub fn validate(&self) -> Result<AddressMap, String> {
        self.org.validate().map_err(|e| format!("org.{e}"))?;
        self.timing.validate().map_err(|e| format!("timing.{e}"))?;
        self.controller.validate().map_err(|e| format!("controller.{e}"))?;
        AddressMap::new(&self.controller.address_map, &self.org, self.stacks)
            .map_err(|e| format!("controller.address_map: {}", e.0))
    }
}

/// A request held aside at its port while its pseudo-channel queue is full.
struct Held {
    req: MemReq,
    loc: Location,
    port: u16,
    /// The cycle it left its port.
    intake: u64,
}

/// A bank hook's place checked: the stack issues commands (cycle fidelity) and has `ch`, `pc`
/// and `bank`.
fn check_bank_hook(org: &Organization, fast: bool, ch: u32, pc: u32, bank: u32) -> Result<(), String> {
    if fast {
        return Err("a fast-fidelity stack issues no DRAM commands (use fidelity cycle)".into());
    }
    let (chs, pcs, banks) = (org.channels, org.pseudo_channels, org.banks_per_pc());
    if bank >= banks {
        return Err(format!("bank {bank} does not exist (a pseudo-channel has banks 0..{banks})"));
    }
    if ch >= chs {
        return Err(format!("channel {ch} does not exist (0..{chs})"));
    }
    if pc >= pcs {
        return Err(format!("pseudo-channel {pc} does not exist (0..{pcs})"));
    }
    Ok(())
}

/// Per pseudo-channel trace tracks under component `id`: with `detail` a command track, a
/// queue-depth counter and a bandwidth counter; without, the two counters (commands go to
/// the bandwidth track, which never shows them).
fn pc_tracks(org: &Organization, b: &mut SimBuilder, id: ComponentId, detail: bool) -> Vec<PcTracks> {
    let mut v = Vec::new();
    for c in 0..org.channels {
        for p in 0..org.pseudo_channels {
            let cmds = detail.then(|| b.track(id, &format!("ch{c}.pc{p} commands"), TrackKind::Slice));
            let queue = b.track(id, &format!("ch{c}.pc{p} queue"), TrackKind::Counter { unit: "requests" });
            let bw = b.track(id, &format!("ch{c}.pc{p} bandwidth"), TrackKind::Counter { unit: "GB/s" });
            v.push(PcTracks { cmds: cmds.unwrap_or(bw), queue, bw, last_depth: 0, window_start: 0, window_bytes: 0 });
        }
    }
    v
}

/// What a system sets on a stack before the run: implemented by the stack and by its
/// declaration ([`StackDecl`]), so a builder need not know which it has.
pub trait StackSetup {
    /// Adds a request/response port pair.
    fn add_port(&mut self, req: InPort<MemReq>, resp: OutPort<MemResp>);
    /// Sends the commands of bank `hook.bank()` of pseudo-channel `pc` of channel `ch` to
    /// `hook` (see [`HbmStack::attach_bank_hook`]).
    fn attach_bank_hook(
        &mut self,
        ch: u32,
        pc: u32,
        hook: Box<dyn crate::hbm::controller::BankHook>,
    ) -> Result<(), String>;
}

impl StackSetup for HbmStack {
    fn add_port(&mut self, req: InPort<MemReq>, resp: OutPort<MemResp>) {
        HbmStack::add_port(self, req, resp);
    }
    fn attach_bank_hook(
        &mut self,
        ch: u32,
        pc: u32,
        hook: Box<dyn crate::hbm::controller::BankHook>,
    ) -> Result<(), String> {
        HbmStack::attach_bank_hook(self, ch, pc, hook)
    }
}

/// A stack declared in a system and made when the simulation is built
/// (`SimBuilder::install_with` with [`StackDecl::make`]): its ports, trace tracks and bank
/// hooks are set while the system is declared (track ids then agree in every partition of a
/// partitioned run) and applied to the stack when it is made, which only the partition that
/// runs it does. Everything checked at declaration is checked as the stack itself checks it.
pub struct StackDecl {
    cfg: StackConfig,
    ports: Vec<(InPort<MemReq>, OutPort<MemResp>)>,
    tracks: Option<(Vec<PcTracks>, bool)>,
    hooks: Vec<(u32, u32, Box<dyn crate::hbm::controller::BankHook>)>,
}

impl StackDecl {
    /// Declares a stack of `cfg`; the configuration is checked here as [`HbmStack::new`]
    /// checks it.
    pub fn new(cfg: &StackConfig) -> Result<StackDecl, String> {
        cfg.validate()?;
        sched::by_name(&cfg.controller.scheduler).ok_or("controller.scheduler: unknown")?;
        let t = &cfg.timing;
        refresh::by_name(&cfg.controller.refresh, t.refi, t.refi_pb, cfg.org.banks_per_pc(), 0)
            .ok_or("controller.refresh: unknown")?;
        Ok(StackDecl { cfg: cfg.clone(), ports: Vec::new(), tracks: None, hooks: Vec::new() })
    }

    /// As [`HbmStack::declare_tracks`].
    pub fn declare_tracks(&mut self, b: &mut SimBuilder, id: ComponentId) {
        self.tracks = Some((pc_tracks(&self.cfg.org, b, id, true), true));
    }

    /// As [`HbmStack::declare_summary_tracks`].
    pub fn declare_summary_tracks(&mut self, b: &mut SimBuilder, id: ComponentId) {
        self.tracks = Some((pc_tracks(&self.cfg.org, b, id, false), false));
    }

    /// Makes the stack with everything declared on it.
    pub fn make(self) -> Result<HbmStack, String> {
        let mut st = HbmStack::new(&self.cfg)?;
        for (req, resp) in self.ports {
            st.add_port(req, resp);
        }
        if let Some((tracks, detail)) = self.tracks {
            st.tracks = tracks;
            st.trace_detail = detail;
        }
        for (ch, pc, hook) in self.hooks {
            st.attach_bank_hook(ch, pc, hook)?;
        }
        Ok(st)
    }
}

impl StackSetup for StackDecl {
    fn add_port(&mut self, req: InPort<MemReq>, resp: OutPort<MemResp>) {
        self.ports.push((req, resp));
    }
    fn attach_bank_hook(
        &mut self,
        ch: u32,
        pc: u32,
        hook: Box<dyn crate::hbm::controller::BankHook>,
    ) -> Result<(), String> {
        check_bank_hook(&self.cfg.org, self.cfg.fidelity == Fidelity::Fast, ch, pc, hook.bank())?;
        self.hooks.push((ch, pc, hook));
        Ok(())
    }
}

struct PcTracks {
    cmds: TrackId,
    queue: TrackId,
    bw: TrackId,
    last_depth: usize,
    window_start: u64,
    window_bytes: u64,
}

/// An HBM stack: per-pseudo-channel controllers behind request/response port pairs.
pub struct HbmStack {
    sh: Shared,
    map: AddressMap,
    index: u32,
    channels: Vec<Channel>,
    /// Per channel: its `next` and `queued`, side by side (a tick reads them for every
    /// channel; each channel's own fields are a cache line of their own). Brought up to date
    /// wherever a channel steps or takes a request (`sync_channel`).
    chan_due: Vec<(u64, u32)>,
    ports: Vec<(InPort<MemReq>, OutPort<MemResp>)>,
    /// The request ports by input key (to tell which ports may hold a request from the
    /// kernel's list of pending inputs).
    port_keys: InputIndex,
    done_reads: VecDeque<Completion>,
    done_writes: VecDeque<Completion>,
    cmds: Vec<CommandRecord>,
    fresh: Vec<Completion>,
    /// Read and write latencies of every pseudo-channel, in either fidelity (the
    /// pseudo-channels' own statistics leave them empty; a report shows only the stack's sum).
    latency: [Histogram; 2],
    sink: Option<Box<dyn CommandSink>>,
    tracks: Vec<PcTracks>,
    /// Command slices and every queue-depth change are traced (false: the summary tracks of
    /// [`HbmStack::declare_summary_tracks`]).
    trace_detail: bool,
    /// Skip whole refresh periods of idle channels (see `set_idle_skip`).
    idle_skip: bool,
    /// Per pseudo-channel: the intake buffer, requests that found its queue full, in arrival
    /// order (at most `intake_buffer`; grown on demand, never shrunk, so a run allocates only
    /// while its high-water mark rises).
    held: Vec<VecDeque<Held>>,
    /// Requests in intake buffers.
    buffered: usize,
    /// Requests that went through an intake buffer.
    intake_buffered: u64,
    /// The most requests one intake buffer held.
    intake_max: usize,
    /// Cycles requests spent in intake buffers, summed.
    intake_wait_cycles: u64,
    stalled_since: Vec<Option<u64>>,
    port_stall_cycles: u64,
    misrouted: u64,
    /// Energy per action (from `StackConfig::energy`; none: no energy figures).
    energy: Option<crate::hbm::energy::PerAction>,
    /// The address map has an `st` level (cached: checked per request).
    stack_level: bool,
    /// Start and end times of this tick's commands (reused; filled only when tracing).
    spans: Vec<(trnsim_kernel::Time, trnsim_kernel::Time)>,
    /// A tracer was attached at the last tick (what a settle, which has none, goes by).
    traced: bool,
    /// Within a settle: set (its commands are kept in `settled` when traced).
    settling: bool,
    /// Commands a settle issued, for the trace at the next tick (when traced in detail).
    settled: Vec<CommandRecord>,
    data: Option<crate::hbm::data::HbmData>,
    read_data: fxhash::FxHashMap<(u16, u64), Box<[u8]>>,
    /// The transaction-level model (fast fidelity), and its completions in order of
    /// (cycle, arrival number).
    fast: Option<crate::hbm::fast::FastStack>,
    fast_done: crate::hbm::due::DueQueue<FastDone>,
    /// Fast fidelity, within a tick: the requests that arrived, in order (reused: as long as
    /// the most that arrived in one tick), and a chunk of their bursts (targets, and the requests
    /// they belong to as spans).
    fast_reqs: Vec<FastReq>,
    burst_targets: Vec<crate::hbm::fast::Target>,
    /// The chunk's requests in order, each with how many of its bursts the chunk holds.
    burst_spans: Vec<(usize, usize)>,
    /// Fast fidelity: how a request's consecutive bursts' targets follow one another, when
    /// the map allows ([`AddressMap::sum_steps`]).
    fast_steps: Option<crate::hbm::mapping::SumSteps<3>>,
}

/// Where [`next_chunk`] is in a tick's requests: the next request, and the bursts left of a
/// request cut by a chunk's end.
struct ChunkWalk<W> {
    next: usize,
    cut: Option<(W, u64)>,
}

impl<W> Default for ChunkWalk<W> {
    fn default() -> Self {
        ChunkWalk { next: 0, cut: None }
    }
}

/// Fills `out` with the next (at most `chunk`) bursts of `reqs`, in order, and `spans` with
/// their requests in order, each with how many of `out`'s bursts are its; false when every
/// burst has been given. The chunks together are the requests' bursts one after another: a
/// one-burst request's `first`, or the first `bursts` of `walk_of(addr)` (the request's
/// consecutive bursts, as `first` is made of a location).
fn next_chunk<T: Copy, W: BurstWalk<T>>(
    walk: &mut ChunkWalk<W>,
    reqs: &[FastReq<T>],
    (out, spans): (&mut Vec<T>, &mut Vec<(usize, usize)>),
    chunk: usize,
    walk_of: impl Fn(u64) -> W,
) -> bool {
    out.clear();
    spans.clear();
    while out.len() < chunk && walk.next < reqs.len() {
        let (r, q) = (walk.next, &reqs[walk.next]);
        if q.bursts == 1 {
            out.push(q.first);
            spans.push((r, 1));
            walk.next += 1;
            continue;
        }
        let (bursts, left) = walk.cut.get_or_insert_with(|| (walk_of(q.addr), q.bursts));
        let take = (chunk - out.len()).min(usize::try_from(*left).unwrap_or(usize::MAX));
        bursts.push_next(out, take);
        spans.push((r, take));
        *left -= take as u64;
        if *left == 0 {
            walk.cut = None;
            walk.next += 1;
        }
    }
    !out.is_empty()
}

/// A request's consecutive bursts, appended to a chunk `n` at a time ([`next_chunk`]).
trait BurstWalk<T> {
    /// Appends the next `n` bursts to `out`.
    fn push_next(&mut self, out: &mut Vec<T>, n: usize);
}

impl BurstWalk<Location> for crate::hbm::Bursts<'_> {
    fn push_next(&mut self, out: &mut Vec<Location>, n: usize) {
        out.extend(self.by_ref().take(n));
    }
}

impl BurstWalk<crate::hbm::fast::Target> for TargetWalk<'_> {
    #[inline]
    fn push_next(&mut self, out: &mut Vec<crate::hbm::fast::Target>, n: usize) {
        out.reserve(n);
        match self {
            // (Runs of the lowest digit without carry checks: most of a request's bursts.)
            TargetWalk::Sums(s) => s.for_next(n, |v| out.push(crate::hbm::fast::Target::from_sums(v))),
            TargetWalk::Locations(b, org) => {
                out.extend(b.by_ref().take(n).map(|l| crate::hbm::fast::Target::of(org, &l)))
            }
        }
    }
}

/// A fast request's consecutive bursts as targets: by weighted sums of their level indices
/// where the map has no XOR hashes ([`AddressMap::sums`]), otherwise from their locations.
enum TargetWalk<'a> {
    Sums(crate::hbm::mapping::Sums<'a, 3>),
    Locations(crate::hbm::Bursts<'a>, &'a Organization),
}

impl<'a> TargetWalk<'a> {
    fn new(
        map: &'a AddressMap,
        steps: Option<&'a crate::hbm::mapping::SumSteps<3>>,
        org: &'a Organization,
        addr: u64,
    ) -> Self {
        match steps {
            Some(steps) => TargetWalk::Sums(map.sums(steps, addr)),
            None => TargetWalk::Locations(map.bursts(addr), org),
        }
    }
}

/// A request the fast fidelity serves this tick: its address, bursts and (a one-burst
/// request's) first burst's target ([`crate::hbm::fast::Target::of`]), its completion entry
/// and (once served) the cycle its last burst is done.
#[derive(Clone, Copy, Debug)]
struct FastReq<T = crate::hbm::fast::Target> {
    addr: u64,
    bursts: u64,
    first: T,
    entry: FastDone,
    done: u64,
}

/// A fast-fidelity completion: (tag, port, write, bytes), queued at its done cycle.
type FastDone = (u64, u16, bool, u32);

/// Trace counter window for per-pseudo-channel bandwidth, in CK cycles.
const BW_WINDOW: u64 = 2048;

impl HbmStack {
    /// Builds a stack from `cfg` (validated; the error names the field).
    pub fn new(cfg: &StackConfig) -> Result<HbmStack, String> {
        let map = cfg.validate()?;
        let fast = (cfg.fidelity == Fidelity::Fast).then(|| {
            crate::hbm::fast::FastStack::new(
                &cfg.org,
                &cfg.timing,
                &cfg.controller.refresh,
                cfg.controller.refresh_schedule,
            )
        });
        let fast_steps = fast.as_ref().and_then(|_| map.sum_steps(&crate::hbm::fast::Target::weights(&cfg.org)));
        let stack_level = map.has_stack_level();
        let sched = sched::by_name(&cfg.controller.scheduler).ok_or("controller.scheduler: unknown")?;
        let sh = Shared::new(cfg.org.clone(), cfg.timing.clone(), cfg.controller.clone(), sched);
        let t = &cfg.timing;
        let banks = cfg.org.banks_per_pc();
        // The cycle-level controllers (a fast stack has none: its model keeps its own state).
        let mut channels = Vec::new();
        let cycle_channels = if cfg.fidelity == Fidelity::Cycle { cfg.org.channels } else { 0 };
        for c in 0..cycle_channels {
            let mut v = Vec::new();
            for p in 0..cfg.org.pseudo_channels {
                // Stagger refresh over the pseudo-channels (unless the schedule is simultaneous).
                let name = cfg.controller.refresh.as_str();
                let interval = refresh::interval(name, t.refi, t.refi_pb);
                let (chs, pcs) = (cfg.org.channels, cfg.org.pseudo_channels);
                let phase = refresh::phase(name, cfg.controller.refresh_schedule, c, p, chs, pcs, interval);
                let pol =
                    refresh::by_name(name, t.refi, t.refi_pb, banks, phase).ok_or("controller.refresh: unknown")?;
                v.push(PcController::new(&sh, pol));
            }
            channels.push(Channel::new(v));
        }
        Ok(HbmStack {
            sh,
            map,
            index: cfg.index,
            chan_due: channels.iter().map(|c| (c.next, c.queued)).collect(),
            channels,
            ports: Vec::new(),
            port_keys: InputIndex::new(),
            done_reads: VecDeque::new(),
            done_writes: VecDeque::new(),
            cmds: Vec::new(),
            fresh: Vec::new(),
            latency: [Histogram::new(), Histogram::new()],
            sink: None,
            tracks: Vec::new(),
            trace_detail: true,
            idle_skip: true,
            held: (0..cfg.org.pcs()).map(|_| VecDeque::new()).collect(),
            buffered: 0,
            intake_buffered: 0,
            intake_max: 0,
            intake_wait_cycles: 0,
            stalled_since: Vec::new(),
            port_stall_cycles: 0,
            misrouted: 0,
            energy: cfg.energy.as_ref().map(|e| crate::hbm::energy::PerAction::new(e, &cfg.timing, &cfg.org)),
            stack_level,
            spans: Vec::new(),
            traced: false,
            settling: false,
            settled: Vec::new(),
            data: cfg.functional.then(crate::hbm::data::HbmData::new),
            read_data: fxhash::FxHashMap::default(),
            fast_steps,
            fast,
            fast_done: crate::hbm::due::DueQueue::new(),
            burst_targets: Vec::new(),
            burst_spans: Vec::new(),
            fast_reqs: Vec::new(),
        })
    }

    /// Plans every pseudo-channel on every cycle instead of only at its events: the reference
    /// that the event-driven stepping must match command for command (tests use it; slow).
    pub fn set_exhaustive_stepping(&mut self, on: bool) {
        for ch in &mut self.channels {
            ch.exhaustive = on;
        }
    }

    /// Sends the commands of bank `hook.bank()` of pseudo-channel `pc` of channel `ch` to
    /// `hook` (swap-in of an RTL bank FSM; call before the run). Turns idle skipping off (the
    /// hook sees every refresh command; the statistics are the same either way, see
    /// [`HbmStack::set_idle_skip`]). The error names what does not exist, or a fast-fidelity
    /// stack (it issues no commands).
    pub fn attach_bank_hook(
        &mut self,
        ch: u32,
        pc: u32,
        hook: Box<dyn crate::hbm::controller::BankHook>,
    ) -> Result<(), String> {
        check_bank_hook(&self.sh.org, self.fast.is_some(), ch, pc, hook.bank())?;
        let p = &mut self.channels[ch as usize].pcs[pc as usize];
        p.set_bank_hook(hook);
        self.idle_skip = false;
        Ok(())
    }

    /// Adds a request/response port pair (call before the run).
    pub fn add_port(&mut self, req: InPort<MemReq>, resp: OutPort<MemResp>) {
        self.port_keys.push(req.key());
        self.ports.push((req, resp));
        self.stalled_since.push(None);
    }

    /// Sends every issued command to `sink` (a command-trace writer or a checker).
    pub fn set_command_sink(&mut self, sink: Box<dyn CommandSink>) {
        self.sink = Some(sink);
    }

    /// Takes the command sink back (e.g. to read a checker's verdict after the run).
    pub fn take_command_sink(&mut self) -> Option<Box<dyn CommandSink>> {
        self.sink.take()
    }

    /// Declares this stack's trace tracks under component `id`: per pseudo-channel a command
    /// track (one slice per command), a queue-depth counter and a bandwidth counter (GB/s).
    pub fn declare_tracks(&mut self, b: &mut SimBuilder, id: ComponentId) {
        self.tracks.extend(pc_tracks(&self.sh.org, b, id, true));
        self.trace_detail = true;
    }

    /// Declares summary tracks only, for systems of many stacks: per pseudo-channel a bandwidth
    /// counter and a queue-depth counter, both sampled once per bandwidth window (2048 CK) in
    /// which the pseudo-channel completed an access; no command slices. A traced 64-chip run
    /// then writes megabytes, not gigabytes.
    pub fn declare_summary_tracks(&mut self, b: &mut SimBuilder, id: ComponentId) {
        self.tracks.extend(pc_tracks(&self.sh.org, b, id, false));
        self.trace_detail = false;
    }

    /// The stored bytes (functional mode), e.g. to load weights before a run.
    pub fn data_mut(&mut self) -> Option<&mut crate::hbm::data::HbmData> {
        self.data.as_mut()
    }

    /// The address map in use.
    pub fn address_map(&self) -> &AddressMap {
        &self.map
    }

    /// The organization.
    pub fn org(&self) -> &Organization {
        &self.sh.org
    }

    /// The timing parameters.
    pub fn timing(&self) -> &TimingParams {
        &self.sh.timing
    }

    /// The controller of pseudo-channel `pc` of channel `ch` (for tests and inspection; `None`
    /// in the fast fidelity, which has no cycle-level controllers).
    pub fn controller(&self, ch: u32, pc: u32) -> Option<&PcController> {
        self.channels.get(ch as usize)?.pcs.get(pc as usize)
    }

    /// Every (channel, pseudo-channel), in order.
    fn pc_indices(&self) -> impl Iterator<Item = (usize, usize)> {
        let (chs, pcs) = (self.sh.org.channels as usize, self.sh.org.pseudo_channels as usize);
        (0..chs).flat_map(move |c| (0..pcs).map(move |p| (c, p)))
    }

    /// Statistics summed over every pseudo-channel.
    pub fn totals(&self) -> PcStats {
        let mut t = PcStats::default();
        for (ci, pi) in self.pc_indices() {
            t.merge(self.pc_stats(ci, pi));
        }
        t.read_latency.merge(&self.latency[0]);
        t.write_latency.merge(&self.latency[1]);
        t
    }

    /// Statistics of pseudo-channel `pi` of channel `ci` (of whichever fidelity runs).
    fn pc_stats(&self, ci: usize, pi: usize) -> &PcStats {
        match &self.fast {
            Some(f) => f.stats(ci as u32, pi as u32),
            None => &self.channels[ci].pcs[pi].stats,
        }
    }

    /// One tick of the fast fidelity: every arrived request is served at once (its
    /// completion cycle computed), and due completions are sent.
    fn tick_fast(&mut self, cx: &mut Ctx<'_>, now: u64) -> Activity {
        // Every arrived request, in port turn and arrival order.
        self.fast_reqs.clear();
        let access = u64::from(self.sh.org.access_bytes());
        for pi in self.ports_in_turn(cx, now) {
            let port = self.ports[pi].0;
            while let Some(req) = cx.recv(port) {
                self.store_data(pi, &req);
                // A request of several bursts (a fast DMA engine's) is served burst by burst,
                // walked from its address ([`next_chunk`]): its first target is made only for
                // a one-burst request (otherwise a placeholder never read), and its address
                // decoded only then or to check its stack.
                let bursts = (req.addr % access + u64::from(req.bytes)).div_ceil(access).max(1);
                let mut first = crate::hbm::fast::Target::default();
                if bursts == 1 || self.stack_level {
                    let loc = self.map.decode(req.addr);
                    if self.stack_level && loc.stack != self.index {
                        self.misrouted += 1;
                    }
                    first = crate::hbm::fast::Target::of(&self.sh.org, &loc);
                }
                let entry = (req.tag, pi as u16, req.write, req.bytes);
                self.fast_reqs.push(FastReq { addr: req.addr, bursts, first, entry, done: 0 });
            }
        }
        if !self.fast_reqs.is_empty() {
            self.serve_fast(now);
        }
        // (Each entry is found once: sent and taken, or the first not due yet.)
        let mut later = None;
        while let Some(p) = self.fast_done.peek() {
            let (done, (tag, port, write, bytes)) = (p.due, p.item);
            if done > now {
                later = Some(done);
                break;
            }
            let c = Completion { tag, port, write, done };
            let port = self.ports[c.port as usize].1;
            let data =
                if c.write || self.read_data.is_empty() { None } else { self.read_data.remove(&(c.port, c.tag)) };
            let resp = MemResp { tag: c.tag, write: c.write, bytes, data };
            if let Err(b) = cx.send(port, resp) {
                if let Some(d) = b.0.data {
                    self.read_data.insert((c.port, c.tag), d);
                }
                return Activity::Busy;
            }
            self.fast_done.take(p);
        }
        if let Some(done) = later {
            if done == now + 1 {
                return Activity::Busy;
            }
            let t = cx.clock().edge(done);
            cx.wake_at(t);
        }
        Activity::Idle
    }

    /// Serves this tick's requests (`fast_reqs`) in order and queues their completions. The
    /// bursts go in chunks ([`next_chunk`]): a chunk's state is read first in loads that do not
    /// wait for one another ([`FastStack::touch`]: their cache misses overlap), then each of its
    /// bursts is served. Chunks bound the memory a long request needs.
    fn serve_fast(&mut self, now: u64) {
        const CHUNK: usize = 256;
        let fast = self.fast.as_mut().expect("fast fidelity");
        let (map, reqs, latency) = (&self.map, &mut self.fast_reqs, &mut self.latency);
        let (targets, spans) = (&mut self.burst_targets, &mut self.burst_spans);
        let (org, steps, mut walk) = (&self.sh.org, self.fast_steps.as_ref(), ChunkWalk::default());
        while next_chunk(&mut walk, reqs, (targets, spans), CHUNK, |addr| TargetWalk::new(map, steps, org, addr)) {
            std::hint::black_box(fast.touch(targets.iter(), now));
            let mut at = targets.iter();
            for &(r, n) in spans.iter() {
                let q = &mut reqs[r];
                let (write, mut done) = (q.entry.2, q.done);
                for &t in at.by_ref().take(n) {
                    done = done.max(fast.serve(t, write, now, latency));
                }
                q.done = done;
            }
        }
        for q in reqs.iter() {
            self.fast_done.push(q.done, q.entry);
        }
    }

    /// Moves arrived requests into their controllers' queues, ports in round-robin order
    /// starting at `now % ports` (so the order never depends on how often the stack ticks).
    /// First each pseudo-channel's intake buffer moves its oldest requests into the queue as
    /// far as it has room; then each port's link head goes to its queue (if its buffer is
    /// empty and the queue has room) or to the end of its buffer (if the buffer has room), and
    /// otherwise waits at the head of its link. Returns true if some request waits.
    fn intake(&mut self, cx: &mut Ctx<'_>, now: u64) -> bool {
        let cap = self.sh.cfg.intake_buffer as usize;
        let pcs_per = self.sh.org.pseudo_channels as usize;
        let mut waiting = false;
        if self.buffered > 0 {
            for flat in 0..self.held.len() {
                while let Some(h) = self.held[flat].front() {
                    let (c, p) = (flat / pcs_per, flat % pcs_per);
                    if !self.channels[c].pcs[p].can_accept(h.req.write, &self.sh.cfg) {
                        break;
                    }
                    let h = self.held[flat].pop_front().expect("front");
                    self.buffered -= 1;
                    self.admit(cx, h.port as usize, h.req, h.loc, h.intake, now);
                }
            }
        }
        for pi in self.ports_in_turn(cx, now) {
            let port = self.ports[pi].0;
            while let Some((addr, write)) = cx.peek(port).map(|r| (r.addr, r.write)) {
                let loc = self.map.decode(addr);
                let flat = loc.channel as usize * pcs_per + loc.pc as usize;
                let fits = self.held[flat].is_empty()
                    && self.channels[loc.channel as usize].pcs[loc.pc as usize].can_accept(write, &self.sh.cfg);
                if !fits && self.held[flat].len() >= cap {
                    self.stalled_since[pi].get_or_insert(now);
                    waiting = true;
                    break;
                }
                let req = cx.recv(port).expect("peeked");
                if let Some(since) = self.stalled_since[pi].take() {
                    self.port_stall_cycles += now - since;
                }
                if fits {
                    self.admit(cx, pi, req, loc, now, now);
                } else {
                    self.held[flat].push_back(Held { req, loc, port: pi as u16, intake: now });
                    self.buffered += 1;
                    self.intake_buffered += 1;
                    self.intake_max = self.intake_max.max(self.held[flat].len());
                }
            }
        }
        waiting || self.buffered > 0
    }

    /// The ports that may hold a request, in round-robin order from port `now % ports` (the
    /// others hold none: visiting them would change nothing). With more than 64 ports, every
    /// port.
    fn ports_in_turn(&self, cx: &Ctx<'_>, now: u64) -> PortTurn {
        let n = self.ports.len();
        if n == 0 {
            return PortTurn { low: 0, high: 0, every: None };
        }
        // (A mask when the port count is a power of two: a division per tick otherwise.)
        let m = if n.is_power_of_two() { now & (n as u64 - 1) } else { now % n as u64 };
        let start = usize::try_from(m).unwrap_or(0);
        if n > 64 {
            return PortTurn { low: 0, high: 0, every: Some((start, n, 0)) };
        }
        let mask = cx.pending_in(&self.port_keys).low_bits();
        let from = !0u64 << start;
        PortTurn { low: mask & from, high: mask & !from, every: None }
    }

    /// Puts `req` (from port `pi` at cycle `intake`, decoded to `loc`) into its controller's
    /// queue.
    fn admit(&mut self, cx: &mut Ctx<'_>, pi: usize, req: MemReq, loc: Location, intake: u64, now: u64) {
        self.intake_wait_cycles += now - intake;
        self.store_data(pi, &req);
        if self.stack_level && loc.stack != self.index {
            self.misrouted += 1;
        }
        self.catch_up_channel(Some(&mut *cx), loc.channel as usize, now);
        let ch = &mut self.channels[loc.channel as usize];
        let pc = &mut ch.pcs[loc.pc as usize];
        let b = pc.timing_state().bank_ref(loc.bank_index(&self.sh.org));
        let e = Entry {
            tag: req.tag,
            port: pi as u16,
            seq: 0,
            arrive: now,
            b,
            row: loc.row,
            col: loc.column,
            write: req.write,
        };
        pc.enqueue(e, now);
        ch.poke(&self.sh, loc.pc, b.bank, now);
        self.sync_channel(loc.channel as usize);
    }

    /// Copies channel `ci`'s `next` and `queued` to `chan_due` (after it stepped or took a
    /// request).
    #[inline]
    fn sync_channel(&mut self, ci: usize) {
        let ch = &self.channels[ci];
        self.chan_due[ci] = (ch.next, ch.queued);
    }

    /// Functional mode: stores a write's bytes, or reads a read's (kept until its response).
    fn store_data(&mut self, pi: usize, req: &MemReq) {
        if let Some(d) = self.data.as_mut() {
            let a = req.addr % self.map.capacity();
            if let Some(bytes) = &req.data {
                d.write(a, bytes);
            } else if !req.write {
                let mut buf = vec![0u8; req.bytes as usize].into_boxed_slice();
                d.read(a, &mut buf);
                self.read_data.insert((pi as u16, req.tag), buf);
            }
        }
    }

    /// Brings idle channels' background work (refresh) up to `cycle`, feeding the command sink.
    /// An idle stack does not wake for refresh; the refreshes it owes are issued, at their own
    /// cycles, when a request next arrives, or here (call it before reading a checker's verdict).
    pub fn catch_up_to(&mut self, cycle: u64) {
        self.cmds.clear();
        self.fresh.clear();
        self.catch_up_all(None, cycle + 1, false);
    }

    /// Steps every channel (only those with no request queued if `idle_only`) through every
    /// cycle before `until` and hands the commands on. With a command sink, in rounds that
    /// take every channel to the same cycle, so that the sink gets commands in cycle order
    /// (`flush_commands`) and a round's commands stay few: at most two per channel per cycle
    /// ([`ROUND_CYCLES`]). Without one, channel by channel (an idle channel skips whole
    /// refresh periods).
    fn catch_up_all(&mut self, mut cx: Option<&mut Ctx<'_>>, until: u64, idle_only: bool) {
        let lags = |d: &(u64, u32), before: u64| d.0 < before && (!idle_only || d.1 == 0);
        if self.sink.is_none() {
            for ci in 0..self.channels.len() {
                if lags(&self.chan_due[ci], until) {
                    self.catch_up_channel(cx.as_deref_mut(), ci, until);
                }
            }
            return self.flush_commands(cx);
        }
        let round = (ROUND_CYCLES / self.channels.len().max(1) as u64).max(1);
        loop {
            let first = self.chan_due.iter().filter(|d| lags(d, until)).map(|d| d.0).min();
            let Some(first) = first else { break };
            let bound = until.min(first.saturating_add(round));
            for ci in 0..self.channels.len() {
                if lags(&self.chan_due[ci], bound) {
                    self.catch_up_channel(cx.as_deref_mut(), ci, bound);
                }
            }
            self.flush_commands(cx.as_deref_mut());
        }
        self.flush_commands(cx);
    }

    /// Steps channel `ci` through every cycle before `now` that it owes (refresh of an idle
    /// channel), handing the commands on in chunks of [`CATCH_UP_CHUNK`]: a long idle gap
    /// costs time per refresh owed but no memory.
    fn catch_up_channel(&mut self, mut cx: Option<&mut Ctx<'_>>, ci: usize, now: u64) {
        // Every command is wanted when a sink or the trace's command tracks take them.
        let tracing = self.traces_commands(cx.as_deref_mut());
        let mut may_skip = self.idle_skip && self.sink.is_none() && !tracing;
        while self.channels[ci].next < now {
            let period = self.channels[ci].idle_period();
            if may_skip && period > 0 && now - self.channels[ci].next > 4 * period {
                // Step two periods; if the second repeated the first exactly, skip whole
                // periods up to one before `now` in O(1).
                let t0 = self.channels[ci].next;
                self.step_until(cx.as_deref_mut(), ci, t0 + period);
                let (a, counts_a) =
                    (self.channels[ci].view(&self.sh, t0 + period), self.channels[ci].refresh_counts(t0 + period));
                self.step_until(cx.as_deref_mut(), ci, t0 + 2 * period);
                let ch = &self.channels[ci];
                if ch.view(&self.sh, t0 + 2 * period) == a && ch.idle_period() == period {
                    let counts_b = ch.refresh_counts(t0 + 2 * period);
                    let per: Vec<PcStats> = counts_a
                        .iter()
                        .zip(&counts_b)
                        .map(|(a, b)| {
                            let mut d = PcStats::default();
                            for (x, (p, q)) in d.commands.iter_mut().zip(a.commands.iter().zip(b.commands)) {
                                *x = q - p;
                            }
                            d.refresh_bank_cycles = b.refresh_bank_cycles - a.refresh_bank_cycles;
                            d.bank_closes = b.bank_closes - a.bank_closes;
                            d.active_cycles = b.active_cycles - a.active_cycles;
                            d
                        })
                        .collect();
                    let periods = (now - (t0 + 2 * period)) / period;
                    let periods = periods.saturating_sub(1);
                    self.channels[ci].shift(t0 + 2 * period, periods * period, periods, &per);
                } else {
                    may_skip = false;
                }
                continue;
            }
            self.step_until(cx.as_deref_mut(), ci, self.channels[ci].next + 1);
        }
        self.sync_channel(ci);
    }

    /// Steps channel `ci` through every event before `until`, handing commands on in chunks.
    fn step_until(&mut self, mut cx: Option<&mut Ctx<'_>>, ci: usize, until: u64) {
        let ids = (self.index, ci as u32);
        // The records feed only the sink and the trace tracks (`flush_commands`, `tick`).
        let record = self.sink.is_some() || !self.tracks.is_empty();
        while self.channels[ci].next < until {
            let ch = &mut self.channels[ci];
            let at = ch.next;
            let out = &mut StepOut {
                commands: &mut self.cmds,
                completions: &mut self.fresh,
                record,
                latency: &mut self.latency,
            };
            ch.step(&self.sh, at, ids, out);
            // (With a sink, rounds bound the commands gathered: `catch_up_all`.)
            if self.cmds.len() >= CATCH_UP_CHUNK && self.sink.is_none() {
                self.flush_commands(cx.as_deref_mut());
            }
        }
    }

    /// Skips whole refresh periods of idle channels in O(1) (on by default; exact: statistics
    /// and later commands are those of stepping through). Off, an idle gap is stepped through
    /// refresh by refresh (tests compare the two).
    pub fn set_idle_skip(&mut self, on: bool) {
        self.idle_skip = on;
    }

    /// Counts every buffered column command in its pseudo-channel's bandwidth track, at `at`
    /// (None: at the command's own cycle).
    fn account_columns(&mut self, cx: &mut Ctx<'_>, at: Option<u64>) {
        let pcs_per = self.sh.org.pseudo_channels as usize;
        if self.tracks.is_empty() {
            return;
        }
        for i in 0..self.cmds.len() {
            let r = self.cmds[i];
            if r.cmd.is_column() {
                let k = r.channel as usize * pcs_per + r.pc as usize;
                self.account_bandwidth(cx, k, at.unwrap_or(r.cycle));
            }
        }
    }

    /// Hands the issued commands gathered so far to the command sink and the trace, and
    /// forgets them (column commands are counted in the bandwidth tracks first).
    fn flush_commands(&mut self, cx: Option<&mut Ctx<'_>>) {
        self.hand_to_sink();
        if self.settling && self.traces_commands(None) {
            self.settled.extend_from_slice(&self.cmds);
        }
        if let Some(cx) = cx {
            self.trace_commands(cx);
            self.account_columns(cx, None);
        }
        self.cmds.clear();
    }

    /// Hands the commands gathered to the command sink, if any, in cycle order (then channel
    /// and pseudo-channel; each pseudo-channel's in issue order). Every channel has stepped
    /// through the same cycles when this is called, and through all earlier ones at the
    /// call before, so the sink sees one stream in cycle order.
    fn hand_to_sink(&mut self) {
        if let Some(s) = self.sink.as_mut() {
            // (A stable sort: a pseudo-channel's commands of one cycle keep their order.)
            self.cmds.sort_by_key(|r| (r.cycle, r.channel, r.pc));
            for r in &self.cmds {
                s.command(r);
            }
        }
    }

    /// Commands go to the trace's command tracks: detail tracks were declared and a tracer is
    /// attached (`cx`'s, or, without one, as at the last tick).
    fn traces_commands(&mut self, cx: Option<&mut Ctx<'_>>) -> bool {
        !self.tracks.is_empty() && self.trace_detail && cx.map_or(self.traced, |c| c.tracer().is_some())
    }

    fn trace_commands(&mut self, cx: &mut Ctx<'_>) {
        if self.tracks.is_empty() || !self.trace_detail {
            return;
        }
        if cx.tracer().is_none() {
            return;
        }
        let t = &self.sh.timing;
        self.spans.clear();
        for rec in &self.cmds {
            let dur = match rec.cmd {
                crate::hbm::Command::Act => t.rcd_rd,
                crate::hbm::Command::Pre | crate::hbm::Command::PreAll => t.rp,
                c if c.is_read() => t.cl + t.bl,
                c if c.is_write() => t.cwl + t.bl,
                crate::hbm::Command::Ref => t.rfc,
                _ => t.rfc_pb,
            } as u64;
            // The stack is clocked by CK, so its clock's edges are the command cycles.
            self.spans.push((cx.clock().edge(rec.cycle), cx.clock().edge(rec.cycle + dur)));
        }
        let Some(mut tr) = cx.tracer() else { return };
        for (rec, &(start, end)) in self.cmds.iter().zip(&self.spans) {
            let k = (rec.channel * self.sh.org.pseudo_channels + rec.pc) as usize;
            tr.slice(self.tracks[k].cmds, rec.cmd.name(), start, end, Flow::None, None);
        }
    }

    fn trace_levels(&mut self, cx: &mut Ctx<'_>) {
        if self.tracks.is_empty() || !self.trace_detail || cx.tracer().is_none() {
            return;
        }
        let pcs_per = self.sh.org.pseudo_channels as usize;
        let Some(mut tr) = cx.tracer() else { return };
        for (ci, ch) in self.channels.iter().enumerate() {
            for (pi, pc) in ch.pcs.iter().enumerate() {
                let k = ci * pcs_per + pi;
                let depth = pc.queued();
                if depth != self.tracks[k].last_depth {
                    self.tracks[k].last_depth = depth;
                    tr.counter(self.tracks[k].queue, depth as f64);
                }
            }
        }
    }

    fn account_bandwidth(&mut self, cx: &mut Ctx<'_>, k: usize, done: u64) {
        if self.tracks.is_empty() {
            return;
        }
        let bytes = self.sh.org.access_bytes() as u64;
        let pcs = self.sh.org.pseudo_channels as usize;
        let depth = if self.trace_detail { 0 } else { self.channels[k / pcs].pcs[k % pcs].queued() };
        let detail = self.trace_detail;
        let tk = &mut self.tracks[k];
        tk.window_bytes += bytes;
        if done >= tk.window_start + BW_WINDOW {
            let ns = BW_WINDOW as f64 * 1000.0 / self.sh.timing.ck_mhz as f64;
            let gbps = tk.window_bytes as f64 / ns;
            tk.window_bytes = 0;
            tk.window_start = done - (done - tk.window_start) % BW_WINDOW;
            if let Some(mut tr) = cx.tracer() {
                tr.counter(tk.bw, gbps);
                if !detail {
                    tr.counter(tk.queue, depth as f64);
                }
            }
        }
    }

    fn send_completions(&mut self, cx: &mut Ctx<'_>, now: u64) {
        for write in [false, true] {
            loop {
                let q = if write { &mut self.done_writes } else { &mut self.done_reads };
                let Some(&c) = q.front() else { break };
                if c.done > now {
                    break;
                }
                let port = self.ports[c.port as usize].1;
                let data =
                    if c.write || self.read_data.is_empty() { None } else { self.read_data.remove(&(c.port, c.tag)) };
                let resp = MemResp { tag: c.tag, write: c.write, bytes: self.sh.org.access_bytes(), data };
                if let Err(b) = cx.send(port, resp) {
                    if let Some(d) = b.0.data {
                        self.read_data.insert((c.port, c.tag), d);
                    }
                    break;
                }
                q.pop_front();
            }
        }
    }
}

/// Steps `ch` at each of its event cycles before `now` (only idle channels lag behind).
/// Commands gathered while catching up before they are handed on (bounds the memory an idle
/// gap costs).
const CATCH_UP_CHUNK: usize = 4096;

/// With a command sink, channel-cycles per catch-up round (`catch_up_all`): a round takes
/// every channel through `ROUND_CYCLES / channels` cycles, at most two commands a channel a
/// cycle, so at most `2 * ROUND_CYCLES` commands wait for the sink.
const ROUND_CYCLES: u64 = 2048;

impl Component for HbmStack {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let now = cx.cycle().0;
        debug_assert_eq!(cx.clock().frequency(), self.sh.timing.frequency(), "an HBM stack must be clocked by its CK");
        if self.fast.is_some() {
            return self.tick_fast(cx, now);
        }
        self.traced = cx.tracer().is_some();
        if !self.settled.is_empty() {
            // Commands of the settle at the end of the last run call, traced now.
            std::mem::swap(&mut self.cmds, &mut self.settled);
            self.trace_commands(cx);
            std::mem::swap(&mut self.cmds, &mut self.settled);
            self.settled.clear();
        }
        self.cmds.clear();
        self.fresh.clear();
        if self.sink.is_some() {
            // Every channel through the cycles before this one first (a request's channel
            // would otherwise catch up alone): the sink then gets commands in cycle order.
            self.catch_up_all(Some(&mut *cx), now, false);
        }
        let blocked = self.intake(cx, now);
        // Channels without requests do not wake the stack for refresh (see `catch_up_to`).
        let mut next = u64::MAX;
        for ci in 0..self.chan_due.len() {
            debug_assert_eq!(self.chan_due[ci], (self.channels[ci].next, self.channels[ci].queued));
            if self.chan_due[ci].0 <= now {
                self.catch_up_channel(Some(&mut *cx), ci, now + 1);
            }
            let (at, queued) = self.chan_due[ci];
            if queued > 0 {
                next = next.min(at);
            }
        }
        self.hand_to_sink();
        self.trace_commands(cx);
        for i in 0..self.fresh.len() {
            let c = self.fresh[i];
            if c.write {
                self.done_writes.push_back(c);
            } else {
                self.done_reads.push_back(c);
            }
        }
        self.account_columns(cx, Some(now));
        self.trace_levels(cx);
        self.send_completions(cx, now);
        if blocked && !self.fresh.is_empty() {
            next = now + 1; // a queue slot freed: retry the blocked port next cycle
        }
        for q in [&self.done_reads, &self.done_writes] {
            if let Some(c) = q.front() {
                next = next.min(c.done.max(now + 1));
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
        if out.is_probe() {
            // The report leaves this stack out: one figure says it has some (its totals over
            // every pseudo-channel and their names are not built).
            out.count("port_stall_cycles", self.port_stall_cycles);
            return;
        }
        let ns = 1000.0 / self.sh.timing.ck_mhz as f64;
        let end_ps = out.end_time().as_ps();
        let cycles = (end_ps as u128 * self.sh.timing.ck_mhz as u128 / 1_000_000) as u64;
        let bytes = self.sh.org.access_bytes();
        let banks = self.sh.org.banks_per_pc();
        let mut tot = self.totals();
        if self.fast.is_none() {
            for pc in self.channels.iter().flat_map(|c| &c.pcs) {
                let (area, write_mode) = pc.tail(cycles);
                tot.queue_area += area;
                tot.write_mode_cycles += write_mode;
                tot.active_cycles += pc.active_cycles(cycles);
            }
        }
        tot.write(out, "", ns, cycles, bytes, (banks, self.sh.org.pcs()));
        if let (Some(p), None) = (&self.energy, &self.fast) {
            let e = crate::hbm::energy::Breakdown::of(&tot, self.sh.org.pcs(), cycles, bytes, p, &self.sh.timing);
            for (name, pj) in crate::hbm::energy::ACTIONS.iter().zip(e.0) {
                out.value(&format!("energy_pJ_{name}"), pj);
            }
            out.value("energy_pJ_total", e.total());
            let secs = cycles as f64 * ns * 1e-9;
            out.value("power_mW_mean", if secs > 0.0 { e.total() * 1e-9 / secs } else { 0.0 });
            // The counts the energy multiplies, beside the commands': banks closed and
            // pseudo-channel cycles with a bank open or refreshing.
            out.count("energy_bank_closes", tot.bank_closes);
            out.count("energy_active_cycles", tot.active_cycles);
        }
        let peak = bytes as f64 / self.sh.timing.bl as f64 * self.sh.timing.ck_mhz as f64 * 1e6;
        for (ci, pi) in self.pc_indices() {
            let s = self.pc_stats(ci, pi);
            let moved = (s.reads + s.writes) * bytes as u64;
            let secs = cycles as f64 * ns * 1e-9;
            let util = if secs > 0.0 { moved as f64 / secs / peak } else { 0.0 };
            out.value(&format!("ch{ci}.pc{pi}.utilization"), util);
        }
        out.count("port_stall_cycles", self.port_stall_cycles);
        out.count("intake_buffered", self.intake_buffered);
        out.count("intake_buffer_max", self.intake_max as u64);
        if self.intake_buffered > 0 {
            let mean = self.intake_wait_cycles as f64 / self.intake_buffered as f64 * ns;
            out.value("intake_wait_ns_mean", mean);
        }
        if self.misrouted > 0 {
            out.count("misrouted_requests", self.misrouted);
        }
    }

    /// Steps the channels with no request queued through the cycles before `now` (one at
    /// `now` belongs to a tick, which may take a request first): the refreshes they owe,
    /// which an idle channel does only when the stack next ticks, so a report counts them
    /// to the end of the run. The command sink takes them at once, the trace at the next
    /// tick. (Channels with requests queued have stepped already: they wake the stack.)
    fn settle(&mut self, now: trnsim_kernel::Time, clock: &trnsim_kernel::Clock) {
        if self.fast.is_some() {
            return;
        }
        let bound = clock.edge_index_at_or_after(now);
        self.cmds.clear();
        self.fresh.clear();
        self.settling = true;
        self.catch_up_all(None, bound, true);
        debug_assert!(self.fresh.is_empty(), "a channel with no request completes none");
        self.settling = false;
    }

    /// Reads, writes and each command's issues, summed over every pseudo-channel (as the
    /// report's totals).
    fn counters(&self, out: &mut dyn FnMut(&'static str, u64)) {
        let (mut reads, mut writes) = (0u64, 0u64);
        let mut cmds = [0u64; Command::COUNT];
        for (ci, pi) in self.pc_indices() {
            let s = self.pc_stats(ci, pi);
            reads += s.reads;
            writes += s.writes;
            for (a, b) in cmds.iter_mut().zip(s.commands) {
                *a += b;
            }
        }
        out("reads", reads);
        out("writes", writes);
        for c in Command::ALL {
            out(c.counter_name(), cmds[c as usize]);
        }
    }

    fn has_outstanding_work(&self) -> bool {
        !self.done_reads.is_empty()
            || !self.done_writes.is_empty()
            || self.chan_due.iter().any(|&(_, queued)| queued > 0)
            || self.buffered > 0
            || !self.fast_done.is_empty()
    }
}

/// Port indices in round-robin order: the set bits of `low` (ports from the turn's first on)
/// and then of `high` (the ports before it), or, for more than 64 ports, every port from
/// `every`'s start (start, count, visited).
#[derive(Clone, Copy, Debug)]
struct PortTurn {
    low: u64,
    high: u64,
    every: Option<(usize, usize, usize)>,
}

impl Iterator for PortTurn {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if let Some((start, n, k)) = self.every.as_mut() {
            if *k == *n {
                return None;
            }
            *k += 1;
            return Some((*start + *k - 1) % *n);
        }
        for bits in [&mut self.low, &mut self.high] {
            if *bits != 0 {
                let b = bits.trailing_zeros() as usize;
                *bits &= *bits - 1;
                return Some(b);
            }
        }
        None
    }
}

#[cfg(test)]
mod chunk_tests {
    use super::{next_chunk, ChunkWalk, FastReq};
    use crate::hbm::mapping::AddressMap;
    use crate::hbm::presets;

    #[test]
    fn chunks_give_every_requests_bursts_in_order_whatever_their_size() {
        let org = presets::find("hbm3e-9600").unwrap().org.clone();
        let map = AddressMap::new("RoBaRaCoCh", &org, 1).unwrap();
        let access = u64::from(org.access_bytes());
        // One-burst, long (crossing chunks) and odd-sized requests, some unaligned.
        let reqs: Vec<FastReq<crate::hbm::Location>> =
            [(0u64, 1u64), (4096, 700), (77 * access + 5, 3), (1 << 20, 1), (1 << 24, 257)]
                .iter()
                .enumerate()
                .map(|(i, &(addr, bursts))| FastReq {
                    addr,
                    bursts,
                    first: map.decode(addr),
                    entry: (i as u64, 0, false, 0),
                    done: 0,
                })
                .collect();
        let mut want = Vec::new();
        for (r, q) in reqs.iter().enumerate() {
            if q.bursts == 1 {
                want.push((q.first, r));
            } else {
                want.extend(map.bursts(q.addr).take(q.bursts as usize).map(|l| (l, r)));
            }
        }
        for chunk in [1, 3, 64, 256, 5_000] {
            let (mut walk, mut locs, mut spans, mut got) = (ChunkWalk::default(), Vec::new(), Vec::new(), Vec::new());
            while next_chunk(&mut walk, &reqs, (&mut locs, &mut spans), chunk, |a| map.bursts(a)) {
                assert!(locs.len() <= chunk);
                assert_eq!(spans.iter().map(|s| s.1).sum::<usize>(), locs.len());
                let mut at = locs.iter();
                for &(r, n) in &spans {
                    got.extend(at.by_ref().take(n).map(|&l| (l, r)));
                }
            }
            assert_eq!(got, want, "chunks of {chunk}");
        }
    }
}
