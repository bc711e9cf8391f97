//! Swap-in of a registered block into a running system, at the port boundary of its model.
//!
//! [`BlockHost`] is the generic part: it runs any [`registry`] block (the Verilated RTL, or
//! its Rust port-level model with [`Impl::BlockModel`]) inside a kernel component, one clock
//! per cycle the host asks for, records every clocked cycle's inputs, and after the run
//! ([`SwapSet::check`]) replays them through the lock-step [`diff`](crate::diff::diff) (the
//! block's model against what ran), which reports the first divergence with both sides'
//! history and writes `STEM.model.vcd`, `STEM.rtl.vcd` and the merged `STEM.diff.vcd`.
//!
//! Three adapters use it:
//!
//! ```text
//!   kernel link "a.out -> b.in" ── LinkHook::sent/received ──► LinkFifoSwap ─► link_fifo
//!     (the link's buffer and credits      push in the cycle before a message is visible,
//!      decide what the receiver gets)     out_ready on a receive; in_ready, out_valid,
//!                                         out_data, count, credit_ret checked
//!   PcController::issue(cmd, bank b) ──── BankHook::command ──► HbmBankSwap ─► hbm_bank
//!     (the controller's timing state      NOPs up to the command's cycle, then the command:
//!      decides what issues)               `violation` = the RTL refuses what the model allowed
//!   Sram arbiter, one bank's requests ─── BankPortHook::cycle ─► SramBankSwap ─► sbuf_bank
//!     (the memory's arbiter decides       the requests in visiting order in the slots;
//!      who streams)                       `grant` and `stalls` checked every cycle
//! ```
//!
//! In both the model still decides what the system does and the block's outputs are checked
//! where the system uses them, not fed back: a wrong block cannot derail or deadlock the run,
//! the statistics are the all-model run's by construction, and the first cycle the block
//! differs is reported, by the system's own check or, for outputs the system never reads
//! (`legal` raised too early), by the replay.
//!
//! Leaves out (see each adapter): PREA and all-bank REF (the block has neither: reported as an
//! error; the stock per-bank refresh policy issues neither), rows beyond the block's 14-bit
//! `row` port, skipping a bank's idle cycles (the block is clocked every controller cycle up
//! to the bank's last command); link payload bits beyond `trace_bits`, more than one message
//! per receiver cycle, credit latencies above one cycle. The recorded inputs take 16 bytes per
//! input port per clocked cycle, for the first [`MAX_RECORDED`] cycles.

use crate::block::{Block, VltError};
use crate::diff::{diff, DiffError};
use crate::model::HBM_OPCODES;
use crate::registry::{self, BlockEntry};
use crate::stimulus::Stimulus;
use crate::swap::Impl;
use std::cell::RefCell;
use std::fmt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use trnsim_mem::hbm::controller::BankHook;
use trnsim_mem::hbm::Command;

mod bind;
mod dma;
pub use bind::{bound_block, boundary, check_boundary, kind, parse_binding, Binding};
pub use dma::{dma_queue_block, parse_dma_queue, DmaQueueAt, DmaQueueSwap};

/// The most block cycles whose inputs a [`BlockHost`] records (2^22: 64 MiB per input port);
/// the replay checks those, and the report says so when the run clocked more.
pub const MAX_RECORDED: u64 = 1 << 22;

/// Wraps each block a [`SwapSet`] builds, the replay's copy included: how a test plants a bug
/// at the block's ports (a port-level mutant of a `// MUT:` line) without rebuilding the RTL.
pub type Wrap = Rc<dyn Fn(Box<dyn Block>) -> Box<dyn Block>>;

/// A registered block run inside a system: port lookup by name, clocking with the first error
/// kept, every clocked cycle's inputs recorded for the replay diff.
pub struct BlockHost {
    instance: String,
    entry: &'static BlockEntry,
    imp: Impl,
    wrap: Option<Wrap>,
    block: Box<dyn Block>,
    /// Input ports but `clk`, in port order, and their names.
    inputs: Vec<usize>,
    input_names: Vec<&'static str>,
    /// One slot per port (inputs as last set).
    values: Vec<u128>,
    /// `inputs.len()` values per clocked cycle.
    rows: Vec<u128>,
    clocks: u64,
    error: Option<String>,
    /// The block itself failed (an RTL error): it is not clocked again.
    broken: bool,
}

impl BlockHost {
    /// Builds `entry`'s block (RTL or model, wrapped by `wrap` if given) for `instance` and
    /// clocks one reset cycle if the block has a reset.
    pub fn new(instance: &str, entry: &'static BlockEntry, imp: Impl, wrap: Option<Wrap>) -> Result<BlockHost, String> {
        let block = make(entry, imp, wrap.as_ref()).map_err(|e| format!("{instance}: block {}: {e}", entry.name))?;
        let ports = block.ports();
        let inputs: Vec<usize> = (0..ports.len()).filter(|&i| ports[i].input && ports[i].name != "clk").collect();
        let input_names = inputs.iter().map(|&i| ports[i].name).collect();
        let values = vec![0; ports.len()];
        let reset = block.reset();
        let mut h = BlockHost {
            instance: instance.to_string(),
            entry,
            imp,
            wrap,
            block,
            inputs,
            input_names,
            values,
            rows: Vec::new(),
            clocks: 0,
            error: None,
            broken: false,
        };
        if let Some(r) = reset {
            let p = h.port(r.name, true)?;
            h.set(p, u128::from(!r.active_low));
            h.clock();
            h.set(p, u128::from(r.active_low));
        }
        Ok(h)
    }

    /// The index of port `name` (an input if `input`), or an error naming it.
    pub fn port(&self, name: &str, input: bool) -> Result<usize, String> {
        let ports = self.block.ports();
        match ports.iter().position(|p| p.name == name) {
            Some(i) if ports[i].input == input => Ok(i),
            Some(_) => {
                Err(format!("{}: port {name} of block {} has the wrong direction", self.instance, self.entry.name))
            }
            None => Err(format!("{}: block {} has no port {name}", self.instance, self.entry.name)),
        }
    }

    /// Sets input `port`.
    pub fn set(&mut self, port: usize, v: u128) {
        self.values[port] = v;
        self.block.set_input(port, v);
    }

    /// Settles the block; false (and the error kept) if the block failed.
    pub fn settle(&mut self) -> bool {
        if self.broken {
            return false;
        }
        if let Err(e) = self.block.settle() {
            self.fail(format!("block cycle {}: {e}", self.clocks));
            self.broken = true;
            return false;
        }
        true
    }

    /// Output (or input) `port` after [`BlockHost::settle`].
    pub fn get(&self, port: usize) -> u128 {
        self.block.output(port)
    }

    /// Records this cycle's inputs and clocks one rising edge (settling first if needed).
    pub fn clock(&mut self) -> bool {
        if !self.settle() {
            return false;
        }
        if self.clocks < MAX_RECORDED {
            self.rows.extend(self.inputs.iter().map(|&i| self.values[i]));
        }
        self.clocks += 1;
        if let Err(e) = self.block.posedge() {
            self.fail(format!("block cycle {}: {e}", self.clocks - 1));
            self.broken = true;
            return false;
        }
        true
    }

    /// Keeps `msg` as the instance's error if it is the first.
    pub fn fail(&mut self, msg: String) {
        self.error.get_or_insert(msg);
    }

    /// Whether an error was kept.
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Block cycles clocked so far (the reset cycle included).
    pub fn clocks(&self) -> u64 {
        self.clocks
    }

    /// The instance's name.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// The block it runs.
    pub fn entry(&self) -> &'static BlockEntry {
        self.entry
    }

    /// Puts the block's model in place of what ran and drops that (the run is over). Models
    /// may be made and deleted in any order: the Verilator shim makes each model's own
    /// context current before it acts (rtl/vlt-build's model shim).
    fn release(&mut self) {
        self.block = (self.entry.make_model)();
        self.broken = true;
    }

    /// Replays the recorded inputs through the lock-step diff: the block's model (reference)
    /// against a fresh copy of what ran (the RTL, or the model with [`Impl::BlockModel`]).
    /// With `vcd_dir`, a divergence writes `INSTANCE.{model,rtl,diff}.vcd` there.
    pub fn replay(&self, vcd_dir: Option<&Path>) -> Result<u64, DiffError> {
        let names = &self.input_names;
        let rows = Rc::new(self.rows.clone());
        let n = self.clocks.min(MAX_RECORDED);
        let mut cfg = (self.entry.diff_config)(n);
        cfg.name = file_stem(&self.instance);
        cfg.vcd_dir = vcd_dir.map(Path::to_path_buf);
        cfg.vcd_window = n;
        let (entry, imp, wrap) = (self.entry, self.imp, self.wrap.clone());
        let dut = move || make(entry, imp, wrap.as_ref());
        let reference = (entry.make_model)();
        let map: Vec<usize> = names
            .iter()
            .map(|n| reference.ports().iter().position(|p| p.name == *n))
            .collect::<Option<_>>()
            .ok_or_else(|| DiffError::Ports(format!("the model of {} lacks an input the block has", entry.name)))?;
        drop(reference);
        let stim = move || Replay { rows: rows.clone(), map: map.clone() };
        diff(entry.make_model, dut, stim, &cfg).map(|r| r.cycles)
    }
}

/// `instance` as a file name: every character but ASCII letters, digits, `.`, `-` and `_`
/// becomes `_` (a link named `a.out -> b.in` gives `a.out_-__b.in`).
pub fn file_stem(instance: &str) -> String {
    instance.chars().map(|c| if c.is_ascii_alphanumeric() || ".-_".contains(c) { c } else { '_' }).collect()
}

/// A fresh block of `entry`: the RTL or the model, wrapped.
fn make(entry: &BlockEntry, imp: Impl, wrap: Option<&Wrap>) -> Result<Box<dyn Block>, VltError> {
    let b = match imp {
        Impl::Rtl => (entry.make_rtl)()?,
        Impl::BlockModel => (entry.make_model)(),
    };
    Ok(match wrap {
        Some(w) => w(b),
        None => b,
    })
}

/// The recorded inputs of a [`BlockHost`], played into a block by port index.
struct Replay {
    rows: Rc<Vec<u128>>,
    map: Vec<usize>,
}

impl Stimulus for Replay {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        let k = self.map.len();
        let at = cycle as usize * k;
        if let Some(row) = self.rows.get(at..at + k) {
            for (&i, &v) in self.map.iter().zip(row) {
                inputs[i] = v;
            }
        }
    }
    fn cycles(&self) -> Option<u64> {
        Some((self.rows.len() / self.map.len().max(1)) as u64)
    }
}

/// Where an HBM bank instance is: stack, channel, pseudo-channel, bank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HbmBankAt {
    /// Stack index on the chip.
    pub stack: u32,
    /// Channel of the stack.
    pub ch: u32,
    /// Pseudo-channel of the channel.
    pub pc: u32,
    /// Bank of the pseudo-channel.
    pub bank: u32,
}

/// Parses `hbm{k}.ch{c}.pc{p}.bank{b}` (None if `s` has another shape).
pub fn parse_hbm_bank(s: &str) -> Option<HbmBankAt> {
    let mut parts = s.split('.');
    let mut num = |prefix: &str| indexed(parts.next()?, prefix);
    let at = HbmBankAt { stack: num("hbm")?, ch: num("ch")?, pc: num("pc")?, bank: num("bank")? };
    parts.next().is_none().then_some(at)
}

/// The index of a name part `{prefix}{digits}` (at most 9 digits), e.g. 13 of `bank13`.
fn indexed(part: &str, prefix: &str) -> Option<u32> {
    let p = part.strip_prefix(prefix)?;
    if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) || p.len() > 9 {
        return None;
    }
    p.parse().ok()
}

/// The registry block of an HBM preset's bank FSM (the error lists the presets built).
pub fn hbm_bank_block(preset: &str) -> Result<&'static BlockEntry, String> {
    let name = match preset {
        "hbm3-6400" => "hbm_bank",
        "hbm2-2000" => "hbm_bank_hbm2_2000",
        "hbm3-5700" => "hbm_bank_hbm3_5700",
        other => {
            return Err(format!(
                "no hbm_bank block is built for preset {other:?} (built: hbm3-6400, hbm2-2000, hbm3-5700)"
            ))
        }
    };
    registry::find(name).ok_or_else(|| format!("block {name} is not in the registry"))
}

/// One HBM bank's commands clocked through the `hbm_bank` block (see the module doc).
pub struct HbmBankSwap {
    host: Rc<RefCell<BlockHost>>,
    bank: u32,
    /// cmd, row, violation, vcode.
    p: [usize; 4],
    /// The controller cycle the next block clock stands for.
    next: u64,
    row_max: u32,
}

impl HbmBankSwap {
    /// Watches bank `bank` with `host` (an `hbm_bank` block).
    pub fn new(host: Rc<RefCell<BlockHost>>, bank: u32) -> Result<HbmBankSwap, String> {
        let h = host.borrow();
        let p = [h.port("cmd", true)?, h.port("row", true)?, h.port("violation", false)?, h.port("vcode", false)?];
        let row_w = h.block.ports()[p[1]].width.min(31);
        drop(h);
        Ok(HbmBankSwap { host, bank, p, next: 0, row_max: (1 << row_w) - 1 })
    }
}

impl BankHook for HbmBankSwap {
    fn bank(&self) -> u32 {
        self.bank
    }

    fn command(&mut self, now: u64, cmd: Command, row: u32) {
        let mut h = self.host.borrow_mut();
        if h.failed() {
            return;
        }
        let [p_cmd, p_row, p_viol, p_vcode] = self.p;
        if now < self.next {
            h.fail(format!("cycle {now}: a second command to the bank in one cycle"));
            return;
        }
        h.set(p_cmd, 0);
        h.set(p_row, 0);
        while self.next < now {
            if !h.clock() {
                return;
            }
            self.next += 1;
        }
        let Some(op) = HBM_OPCODES.iter().position(|c| *c == Some(cmd)) else {
            h.fail(format!("cycle {now}: {} has no opcode in the hbm_bank block", cmd.name()));
            return;
        };
        if row > self.row_max {
            h.fail(format!("cycle {now}: row {row} does not fit the block's row port"));
            return;
        }
        h.set(p_cmd, op as u128);
        h.set(p_row, u128::from(row));
        if !h.settle() {
            return;
        }
        if h.get(p_viol) != 0 {
            let code = h.get(p_vcode);
            let why = match code {
                1 => "bank state",
                2 => "wrong row",
                3 => "timing, too early",
                _ => "unknown code",
            };
            let c = h.clocks();
            let name = cmd.name();
            h.fail(format!(
                "cycle {now} (block cycle {c}): the RTL refuses {name} row {row} that the controller's timing allows (vcode {code}: {why})"
            ));
        }
        h.clock();
        h.set(p_cmd, 0);
        self.next = now + 1;
    }
}

/// The registry block for a kernel link of receive-buffer depth `depth` (the error lists the
/// depths built).
pub fn link_fifo_block(depth: u32) -> Result<&'static BlockEntry, String> {
    let name = match depth {
        4 => "link_fifo",
        5 => "link_fifo_w100_d5",
        d => return Err(format!("no link_fifo block is built for depth {d} (built: 4, 5)")),
    };
    registry::find(name).ok_or_else(|| format!("block {name} is not in the registry"))
}

/// A kernel link's receive side clocked through a `link_fifo` block, one block clock per
/// receiver cycle: a message that becomes visible to the receiver at cycle `k` is pushed in
/// cycle `k - 1` (`in_valid`/`in_data` = its [`trnsim_kernel::Payload::trace_bits`]; the
/// FIFO shows it from the next cycle on), and a receive at cycle `k` is `out_ready` in cycle
/// `k`. Cycle `k` is clocked once its inputs are all known: when the receiver's next receive
/// comes, or at [`SwapSet::check`]. Checked in every clocked cycle: `in_ready` high for each
/// push (the link's credits admitted it), `out_valid` and `out_data` for each receive (the
/// oldest message), `count` (messages pushed and not taken) and `credit_ret` (high the cycle
/// after each receive: the credit the kernel returns).
///
/// Leaves out: payload bits beyond `trace_bits` (64; payloads whose `trace_bits` is 0 are
/// compared only as valid bits), credit latencies above one receiver cycle (the block's credit
/// is always one cycle; the kernel's own return still decides when the sender sees it),
/// preloaded messages, links that deliver or take more than one message per receiver cycle
/// (reported as an error: the block pushes and pops one per cycle), and idle stretches
/// (clocked once: an idle cycle after the first changes nothing in the block).
pub struct LinkFifoSwap {
    st: Rc<RefCell<LinkFifoState>>,
}

struct LinkFifoState {
    host: Rc<RefCell<BlockHost>>,
    clock: trnsim_kernel::Clock,
    /// in_valid, in_data, out_ready, in_ready, out_valid, out_data, credit_ret, count.
    p: [usize; 8],
    mask: u128,
    /// (receiver cycle of the push, bits), in order.
    pushes: std::collections::VecDeque<(u64, u64)>,
    /// The receive not clocked yet: (receiver cycle, bits).
    pop: Option<(u64, u64)>,
    /// The receiver cycle the next block clock stands for.
    next: u64,
    /// Messages pushed and not taken, by the link's account.
    held: u128,
    /// The last clocked cycle had a receive (so `credit_ret` is due).
    popped: bool,
}

impl LinkFifoSwap {
    /// Watches a link whose receiver runs on `clock`, with `host` (a `link_fifo` block).
    pub fn new(host: Rc<RefCell<BlockHost>>, clock: trnsim_kernel::Clock) -> Result<LinkFifoSwap, String> {
        let h = host.borrow();
        let names = [
            ("in_valid", true),
            ("in_data", true),
            ("out_ready", true),
            ("in_ready", false),
            ("out_valid", false),
            ("out_data", false),
            ("credit_ret", false),
            ("count", false),
        ];
        let mut p = [0; 8];
        for (slot, (n, input)) in p.iter_mut().zip(names) {
            *slot = h.port(n, input)?;
        }
        let w = h.block.ports()[p[5]].width;
        let mask = if w >= 128 { u128::MAX } else { (1 << w) - 1 };
        drop(h);
        let st = LinkFifoState {
            host,
            clock,
            p,
            mask,
            pushes: Default::default(),
            pop: None,
            next: 0,
            held: 0,
            popped: false,
        };
        Ok(LinkFifoSwap { st: Rc::new(RefCell::new(st)) })
    }

    /// Clocks every cycle whose inputs are known (called after the run).
    fn finisher(&self) -> Box<dyn Fn()> {
        let st = self.st.clone();
        Box::new(move || {
            let mut st = st.borrow_mut();
            let end = st.pop.map_or(st.next, |(c, _)| c + 1);
            st.run_to(end);
        })
    }
}

impl LinkFifoState {
    /// Clocks receiver cycle `k`.
    fn cycle(&mut self, h: &mut BlockHost, k: u64) -> bool {
        let [in_valid, in_data, out_ready, in_ready, out_valid, out_data, credit_ret, count] = self.p;
        let push = match self.pushes.front() {
            Some(&(c, bits)) if c <= k => {
                self.pushes.pop_front();
                if c < k || self.pushes.front().is_some_and(|&(c, _)| c == k) {
                    h.fail(format!(
                        "receiver cycle {}: two messages become visible at once; the block takes one per cycle",
                        k + 1
                    ));
                    return false;
                }
                Some(bits)
            }
            _ => None,
        };
        let take = match self.pop {
            Some((c, bits)) if c == k => {
                self.pop = None;
                Some(bits)
            }
            _ => None,
        };
        h.set(in_valid, u128::from(push.is_some()));
        h.set(in_data, u128::from(push.unwrap_or(0)) & self.mask);
        h.set(out_ready, u128::from(take.is_some()));
        if !h.settle() {
            return false;
        }
        let c = h.clocks();
        let at = format!("receiver cycle {k} (block cycle {c})");
        if h.get(credit_ret) != u128::from(self.popped) {
            h.fail(format!(
                "{at}: credit_ret {} where the link returns {} credit",
                h.get(credit_ret),
                u8::from(self.popped)
            ));
        } else if h.get(count) != self.held {
            h.fail(format!("{at}: count {} where the link holds {} arrived messages", h.get(count), self.held));
        } else if push.is_some() && h.get(in_ready) != 1 {
            h.fail(format!("{at}: in_ready 0 for a message the link's credits admitted"));
        } else if let Some(bits) = take {
            let want = u128::from(bits) & self.mask;
            if h.get(out_valid) != 1 {
                h.fail(format!("{at}: out_valid 0 where the receiver takes a message ({want:#x})"));
            } else if h.get(out_data) & self.mask != want {
                h.fail(format!("{at}: out_data {:#x} where the receiver takes {want:#x}", h.get(out_data)));
            }
        }
        if !h.clock() {
            return false;
        }
        self.held = (self.held + u128::from(push.is_some())).saturating_sub(u128::from(take.is_some()));
        self.popped = take.is_some();
        !h.failed()
    }

    /// Clocks the cycles before `end`.
    fn run_to(&mut self, end: u64) {
        let host = self.host.clone();
        let mut h = host.borrow_mut();
        while self.next < end && !h.failed() {
            let push_at = self.pushes.front().map_or(u64::MAX, |&(k, _)| k);
            let pop_at = self.pop.map_or(u64::MAX, |(k, _)| k);
            if !self.popped && push_at > self.next && pop_at > self.next {
                // Quiescent: nothing enters or leaves before the next push or receive.
                self.next = push_at.min(pop_at).min(end);
                continue;
            }
            let k = self.next;
            if !self.cycle(&mut h, k) {
                return;
            }
            self.next += 1;
        }
    }
}

impl trnsim_kernel::LinkHook for LinkFifoSwap {
    fn sent(&mut self, arrival: trnsim_kernel::Time, bits: u64) {
        let mut st = self.st.borrow_mut();
        let k = st.clock.edge_index_at_or_after(arrival);
        st.pushes.push_back((k.saturating_sub(1), bits));
    }

    fn received(&mut self, now: trnsim_kernel::Time, bits: u64) {
        let mut st = self.st.borrow_mut();
        let c = st.clock.edge_index_at_or_after(now);
        if st.pop.is_some_and(|(k, _)| k == c) {
            st.host
                .borrow_mut()
                .fail(format!("receiver cycle {c}: a second receive in one cycle; the block pops one per cycle"));
            return;
        }
        // Every push of a cycle before `c` is known now (its message is visible by `c`).
        st.run_to(c);
        st.pop = Some((c, bits));
    }
}

/// A swappable instance of a chip, by name (docs/rtl.md, Swap-in).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Instance {
    /// `hbm{k}.ch{c}.pc{p}.bank{b}`: one HBM bank's timing FSM.
    HbmBank(HbmBankAt),
    /// `nc{i}.sbuf.bank{b}` or `nc{i}.psum.bank{b}`: one SRAM bank's port arbitration.
    SramBank(SramBankAt),
    /// `nc{i}.dma.engine{e}`: one DMA engine's descriptor queues and arbiter.
    DmaQueue(DmaQueueAt),
    /// `SRC.PORT -> DST.PORT`: a kernel link's receive buffer and credits (component names
    /// within the chip, as the link is called in a chip alone).
    Link(String),
}

/// What a chip's `rtl` list accepts, for messages.
pub const INSTANCE_FORMS: &str = "hbm{k}.ch{c}.pc{p}.bank{b} (an HBM bank's timing FSM), nc{i}.sbuf.bank{b} or \
                                  nc{i}.psum.bank{b} (an SRAM bank's port arbitration), nc{i}.dma.engine{e} (a DMA \
                                  engine's queues and arbiter), \"SRC.PORT -> DST.PORT\" (a \
                                  link's receive buffer, e.g. \"nc0.tensor.sem -> nc0.sem.tensor.op\")";

/// Parses an instance name (None if it has none of the shapes of [`Instance`]).
pub fn parse_instance(s: &str) -> Option<Instance> {
    if let Some(at) = parse_hbm_bank(s) {
        return Some(Instance::HbmBank(at));
    }
    if let Some(at) = parse_sram_bank(s) {
        return Some(Instance::SramBank(at));
    }
    if let Some(at) = parse_dma_queue(s) {
        return Some(Instance::DmaQueue(at));
    }
    let (src, dst) = s.split_once(" -> ")?;
    let side = |x: &str| {
        let (comp, port) = x.rsplit_once('.')?;
        let ok = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_graphic() && b != b'"');
        (ok(comp) && ok(port)).then_some(())
    };
    side(src)?;
    side(dst)?;
    Some(Instance::Link(s.to_string()))
}

/// Where an SRAM bank instance is: core, memory, bank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SramBankAt {
    /// Core index on the chip.
    pub core: u32,
    /// PSUM (else SBUF).
    pub psum: bool,
    /// Bank of the memory.
    pub bank: u32,
}

/// Parses `nc{i}.sbuf.bank{b}` or `nc{i}.psum.bank{b}` (None if `s` has another shape).
pub fn parse_sram_bank(s: &str) -> Option<SramBankAt> {
    let parts: Vec<&str> = s.split('.').collect();
    let [core, mem, bank] = parts[..] else { return None };
    let psum = match mem {
        "sbuf" => false,
        "psum" => true,
        _ => return None,
    };
    Some(SramBankAt { core: indexed(core, "nc")?, psum, bank: indexed(bank, "bank")? })
}

/// The registry block of an SBUF (or PSUM, `psum`) bank whose geometry has `read_ports` and
/// `write_ports` per bank (the error says which port counts are built).
pub fn sram_bank_block(psum: bool, read_ports: u32, write_ports: u32) -> Result<&'static BlockEntry, String> {
    let (name, built) = if psum { ("psum_bank", (1, 1)) } else { ("sbuf_bank", (2, 2)) };
    if (read_ports, write_ports) != built {
        return Err(format!(
            "no {name} block is built for {read_ports} read / {write_ports} write ports per bank (built: {} / {})",
            built.0, built.1
        ));
    }
    registry::find(name).ok_or_else(|| format!("block {name} is not in the registry"))
}

/// One SBUF or PSUM bank's arbitration clocked through an `sbuf_bank` block, one block clock
/// per memory cycle with requests on the bank: the requests in the arbiter's visiting order
/// fill the block's slots (`req_valid`, `req_write`, and the first and last partition group
/// each covers, `req_first` and `req_last`); checked each cycle:
/// `grant` per slot against the arbiter's decision, and `stalls` (registered) against the
/// bank's stall count before the cycle; after the run one idle cycle checks the last count.
///
/// Leaves out: cycles without requests on the bank (the block's only state is its stall
/// count, which they do not change), more requests on the bank in one cycle than the block
/// has slots (reported as an error), and which client each slot is (the block arbitrates
/// slots in the order given; the memory-wide rotating priority decides that order).
pub struct SramBankSwap {
    st: Rc<RefCell<SramBankState>>,
}

struct SramBankState {
    host: Rc<RefCell<BlockHost>>,
    bank: u32,
    /// req_valid, req_write, req_first, req_last, grant, stalls.
    p: [usize; 6],
    slots: usize,
    /// Bits of a group number in `req_first` and `req_last`.
    gbits: u32,
    /// The `stalls` port's values (it wraps).
    mask: u128,
    /// The bank's stall count after the last cycle shown.
    stalls: u64,
}

impl SramBankSwap {
    /// Watches bank `bank` with `host` (an `sbuf_bank` block).
    pub fn new(host: Rc<RefCell<BlockHost>>, bank: u32) -> Result<SramBankSwap, String> {
        let h = host.borrow();
        let names = [
            ("req_valid", true),
            ("req_write", true),
            ("req_first", true),
            ("req_last", true),
            ("grant", false),
            ("stalls", false),
        ];
        let mut p = [0; 6];
        for (slot, (n, input)) in p.iter_mut().zip(names) {
            *slot = h.port(n, input)?;
        }
        let ports = h.block.ports();
        let slots = ports[p[0]].width as usize;
        let gbits = ports[p[2]].width / ports[p[0]].width.max(1);
        if gbits < 4 || slots == 0 {
            return Err(format!("{}: block {} numbers fewer than 16 groups", h.instance, h.entry.name));
        }
        let w = ports[p[5]].width;
        let mask = if w >= 128 { u128::MAX } else { (1 << w) - 1 };
        drop(h);
        let st = SramBankState { host, bank, p, slots, gbits, mask, stalls: 0 };
        Ok(SramBankSwap { st: Rc::new(RefCell::new(st)) })
    }

    /// Clocks one idle cycle that checks the last stall count (called after the run).
    fn finisher(&self) -> Box<dyn Fn()> {
        let st = self.st.clone();
        Box::new(move || {
            let st = st.borrow();
            let mut h = st.host.borrow_mut();
            if !h.failed() && h.clocks() > 1 {
                st.check_stalls(&mut h, "after the run");
                h.clock();
            }
        })
    }
}

impl SramBankState {
    /// Presents no requests, settles and checks `stalls` against the count so far.
    fn check_stalls(&self, h: &mut BlockHost, at: &str) {
        let [valid, write, first, last, _, stalls] = self.p;
        for port in [valid, write, first, last] {
            h.set(port, 0);
        }
        if h.settle() && h.get(stalls) != u128::from(self.stalls) & self.mask {
            let c = h.clocks();
            h.fail(format!(
                "{at} (block cycle {c}): stalls {} where the bank's stall count is {}",
                h.get(stalls),
                self.stalls
            ));
        }
    }
}

impl trnsim_mem::sram::BankPortHook for SramBankSwap {
    fn bank(&self) -> u32 {
        self.st.borrow().bank
    }

    fn cycle(&mut self, now: u64, reqs: &[trnsim_mem::sram::PortRequest], stalls: u64) {
        let mut st = self.st.borrow_mut();
        let host = st.host.clone();
        let mut h = host.borrow_mut();
        if h.failed() {
            return;
        }
        if reqs.len() > st.slots {
            h.fail(format!("cycle {now}: {} requests on the bank; the block has {} slots", reqs.len(), st.slots));
            return;
        }
        let [p_valid, p_write, p_first, p_last, p_grant, p_stalls] = st.p;
        let (mut valid, mut write, mut first, mut last) = (0u128, 0u128, 0u128, 0u128);
        for (k, r) in reqs.iter().enumerate() {
            let (lo, hi) = (r.groups.trailing_zeros(), 15u32.saturating_sub(r.groups.leading_zeros()));
            let span = (((1u32 << (hi + 1)) - 1) & !((1u32 << lo) - 1)) as u16;
            if r.groups == 0 || r.groups != span {
                h.fail(format!("cycle {now}: slot {k}'s groups {:#06x} are not one contiguous range", r.groups));
                return;
            }
            valid |= 1 << k;
            write |= u128::from(r.write) << k;
            first |= u128::from(lo) << (k as u32 * st.gbits);
            last |= u128::from(hi) << (k as u32 * st.gbits);
        }
        h.set(p_valid, valid);
        h.set(p_write, write);
        h.set(p_first, first);
        h.set(p_last, last);
        if !h.settle() {
            return;
        }
        let c = h.clocks();
        let before = stalls - reqs.iter().filter(|r| !r.granted).count() as u64;
        let (grant, seen) = (h.get(p_grant), h.get(p_stalls));
        if seen != u128::from(before) & st.mask {
            h.fail(format!("cycle {now} (block cycle {c}): stalls {seen} where the bank's stall count is {before}"));
        } else if let Some((k, r)) = reqs.iter().enumerate().find(|(k, r)| (grant >> k & 1 == 1) != r.granted) {
            let (dir, does) = (if r.write { "write" } else { "read" }, if r.granted { "grants" } else { "refuses" });
            h.fail(format!(
                "cycle {now} (block cycle {c}): slot {k} (client {}, {dir}, groups {:#06x}): the arbiter {does} it, the RTL does not",
                r.client.0, r.groups
            ));
        }
        h.clock();
        st.stalls = stalls;
    }
}

/// The instances a system swapped in, for the check after the run.
#[derive(Clone, Default)]
pub struct SwapSet {
    hosts: Vec<Rc<RefCell<BlockHost>>>,
    /// Clocks what each host still holds, before the check.
    finish: Vec<Rc<dyn Fn()>>,
    /// Where the replay writes VCDs on a divergence.
    pub vcd_dir: Option<PathBuf>,
    /// Wraps every block built from now on (see [`Wrap`]).
    pub wrap: Option<Wrap>,
}

impl fmt::Debug for SwapSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self.hosts.iter().map(|h| h.borrow().instance.clone()).collect();
        write!(f, "SwapSet({names:?})")
    }
}

/// One swapped instance after the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwapResult {
    /// Instance name.
    pub instance: String,
    /// Registry block.
    pub block: &'static str,
    /// Block cycles clocked in the run (the reset cycle included).
    pub cycles: u64,
}

impl fmt::Display for SwapResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: RTL {} clocked {} times, replay against its model clean",
            self.instance, self.block, self.cycles
        )?;
        if self.cycles > MAX_RECORDED {
            write!(f, " (the first {MAX_RECORDED} cycles recorded and replayed)")?;
        }
        Ok(())
    }
}

impl SwapSet {
    /// An empty set (no instance swapped).
    pub fn new() -> SwapSet {
        SwapSet::default()
    }

    /// Adds a host to be checked after the run.
    pub fn add(&mut self, host: Rc<RefCell<BlockHost>>) {
        self.hosts.push(host);
    }

    /// Whether nothing is swapped in.
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    /// Swaps bank `at` of `stack` (built from `preset`) for `block`, or by default `preset`'s
    /// `hbm_bank` block.
    pub fn swap_hbm_bank(
        &mut self,
        instance: &str,
        stack: &mut dyn trnsim_mem::hbm::StackSetup,
        preset: &str,
        at: HbmBankAt,
        imp: Impl,
        block: Option<&'static BlockEntry>,
    ) -> Result<(), String> {
        let entry = match block {
            Some(b) => b,
            None => hbm_bank_block(preset).map_err(|e| format!("{instance}: {e}"))?,
        };
        let host = Rc::new(RefCell::new(BlockHost::new(instance, entry, imp, self.wrap.clone())?));
        let hook = HbmBankSwap::new(host.clone(), at.bank)?;
        stack.attach_bank_hook(at.ch, at.pc, Box::new(hook)).map_err(|e| format!("{instance}: {e}"))?;
        self.add(host);
        Ok(())
    }

    /// Swaps bank `at.bank` of an SBUF (or PSUM) with `read_ports` and `write_ports` per bank
    /// for `block`, or by default its `sbuf_bank` block; the hook returned goes to the core's
    /// memory (`trnsim_core::core::build_hooked`).
    pub fn swap_sram_bank(
        &mut self,
        instance: &str,
        at: SramBankAt,
        (read_ports, write_ports): (u32, u32),
        imp: Impl,
        block: Option<&'static BlockEntry>,
    ) -> Result<Box<dyn trnsim_mem::sram::BankPortHook>, String> {
        let entry = match block {
            Some(b) => b,
            None => sram_bank_block(at.psum, read_ports, write_ports).map_err(|e| format!("{instance}: {e}"))?,
        };
        let host = Rc::new(RefCell::new(BlockHost::new(instance, entry, imp, self.wrap.clone())?));
        let hook = SramBankSwap::new(host.clone(), at.bank)?;
        self.finish.push(Rc::from(hook.finisher()));
        self.add(host);
        Ok(Box::new(hook))
    }

    /// Swaps DMA engine `at.engine`'s queues (of an engine with `params`) for `block`, or by
    /// default the `dma_queue` block of its queues and scheduling; the hook returned goes to
    /// the core's DMA block (`trnsim_core::core::build_hooked`).
    pub fn swap_dma_queue(
        &mut self,
        instance: &str,
        at: DmaQueueAt,
        params: &trnsim_core::dma::DmaParams,
        imp: Impl,
        block: Option<&'static BlockEntry>,
    ) -> Result<Box<dyn trnsim_core::dma::QueueHook>, String> {
        let qos = params.scheduling == trnsim_core::dma::Scheduling::Qos4;
        let entry = match block {
            Some(b) => b,
            None => dma_queue_block(params.queues, qos).map_err(|e| format!("{instance}: {e}"))?,
        };
        if at.engine >= params.engines {
            return Err(format!("{instance}: no DMA engine {} (0..{})", at.engine, params.engines));
        }
        let clock = trnsim_kernel::Clock::new("dma", params.clock).map_err(|e| format!("{instance}: {e}"))?;
        let host = Rc::new(RefCell::new(BlockHost::new(instance, entry, imp, self.wrap.clone())?));
        let hook = DmaQueueSwap::new(host.clone(), clock, params.queues)?;
        self.finish.push(Rc::from(hook.finisher()));
        self.add(host);
        Ok(Box::new(hook))
    }

    /// Swaps the receive side of the link called `name` in `b` for `block`, or by default
    /// the `link_fifo` block of its depth (see [`LinkFifoSwap`]).
    pub fn swap_link(
        &mut self,
        b: &mut trnsim_kernel::SimBuilder,
        name: &str,
        imp: Impl,
        block: Option<&'static BlockEntry>,
    ) -> Result<(), String> {
        let (mut host, mut finish) = (None, None);
        let wrap = self.wrap.clone();
        b.hook_link(name, &mut |spec, clock| {
            let entry = match block {
                Some(b) => b,
                None => link_fifo_block(spec.depth).map_err(|e| format!("{name}: {e}"))?,
            };
            let h = Rc::new(RefCell::new(BlockHost::new(name, entry, imp, wrap.clone())?));
            host = Some(h.clone());
            let hook = LinkFifoSwap::new(h, clock.clone())?;
            finish = Some(hook.finisher());
            Ok(Box::new(hook))
        })?;
        self.add(host.ok_or("the link hook was not made")?);
        self.finish.extend(finish.map(Rc::from));
        Ok(())
    }

    /// After the run: every instance ran without an error the system saw, and its recorded
    /// inputs replay through the lock-step diff without a divergence. The error is the first
    /// instance's report (the divergence, both sides' history, the VCD paths).
    pub fn check(&self) -> Result<Vec<SwapResult>, String> {
        for f in &self.finish {
            f();
        }
        let mut out = Vec::new();
        if let Some(d) = &self.vcd_dir {
            std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        }
        for h in &self.hosts {
            h.borrow_mut().release();
        }
        for h in &self.hosts {
            let h = h.borrow();
            let replay = h.replay(self.vcd_dir.as_deref());
            let name = &h.instance;
            match (&h.error, replay) {
                (None, Ok(_)) => out.push(SwapResult { instance: name.clone(), block: h.entry.name, cycles: h.clocks }),
                (Some(e), Ok(_)) => return Err(format!("{name} ({}): {e}", h.entry.name)),
                (e, Err(d)) => {
                    let seen = e.as_ref().map(|e| format!("{e}\n")).unwrap_or_default();
                    return Err(format!(
                        "{name} ({}): {seen}replay of its {} inputs against the model: {d}",
                        h.entry.name, h.clocks
                    ));
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hbm_bank_instances_parse_and_refuse_other_shapes() {
        assert_eq!(parse_hbm_bank("hbm1.ch2.pc0.bank13"), Some(HbmBankAt { stack: 1, ch: 2, pc: 0, bank: 13 }));
        for bad in ["hbm1.ch2.pc0", "hbm1.ch2.pc0.bank13.x", "hbm.ch2.pc0.bank1", "hbm1.ch-2.pc0.bank1", "", "nc0.sbuf"]
        {
            assert_eq!(parse_hbm_bank(bad), None, "{bad}");
        }
        assert_eq!(hbm_bank_block("hbm3-6400").unwrap().name, "hbm_bank");
        assert!(hbm_bank_block("hbm3e-9600").unwrap_err().contains("built: hbm3-6400, hbm2-2000"));
    }

    #[test]
    fn block_host_on_the_model_records_and_replays_clean() {
        let entry = hbm_bank_block("hbm3-6400").unwrap();
        let host = Rc::new(RefCell::new(BlockHost::new("hbm0.ch0.pc0.bank3", entry, Impl::BlockModel, None).unwrap()));
        let mut s = HbmBankSwap::new(host.clone(), 3).unwrap();
        s.command(10, Command::Act, 5);
        s.command(200, Command::Rd, 5);
        s.command(400, Command::Pre, 0);
        assert!(!host.borrow().failed(), "{:?}", host.borrow().error);
        assert_eq!(host.borrow().clocks(), 402, "a reset cycle, then every cycle up to the last command");
        assert_eq!(host.borrow().replay(None).unwrap(), 402);
        s.command(401, Command::Rd, 5);
        let e = host.borrow().error.clone().unwrap();
        assert!(e.contains("refuses RD row 5") && e.contains("vcode 1: bank state"), "{e}");
    }
}
