//! Swap-in of registered blocks inside running kernel systems (src/swap_in.rs): a kernel
//! link's receive side through the `link_fifo` block, and one HBM bank's commands through the
//! `hbm_bank` timing FSM. For each: the run's statistics JSON is byte-identical to the
//! all-model run and the recorded block inputs replay against the model clean; and a bug
//! planted at the block's ports (the behaviour of a `// MUT:` mutant of rtl/scripts/mutate.sh)
//! is found by running the system, reported with the cycle and both sides' VCDs. The RTL runs
//! need feature `rtl`; the same checks run on the port-level models without it.

use std::cell::Cell;
use std::path::PathBuf;
use std::rc::Rc;
use trnsim_kernel::{
    Activity, Component, Ctx, Dur, Frequency, InPort, LinkSpec, OutPort, SimBuilder, SimRng, Simulation,
};
use trnsim_mem::hbm::presets::HBM3_6400;
use trnsim_mem::hbm::traffic::{GenParams, Pattern, Synthetic, TrafficGen};
use trnsim_mem::hbm::{HbmStack, MemReq, MemResp, StackConfig};
use trnsim_rtl::block::{Block, PortInfo, VltError};
use trnsim_rtl::swap::Impl;
use trnsim_rtl::swap_in::{HbmBankAt, SwapSet, Wrap};

pub(crate) fn json(sim: &Simulation) -> String {
    serde_json::to_string_pretty(&sim.report()).unwrap()
}

pub(crate) fn vcd_dir(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("trnsim-swap-in-{tag}-{}", std::process::id()))
}

// ---- a link between two components -------------------------------------------------------

/// Sends `n` random words, one per cycle at most, at a random rate.
struct Src {
    out: OutPort<u64>,
    rng: SimRng,
    n: u64,
}

impl Component for Src {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        if self.n == 0 {
            return Activity::Idle;
        }
        if self.rng.chance(0.7) && cx.can_send(self.out) {
            let v = self.rng.next_u64();
            if cx.send(self.out, v).is_ok() {
                self.n -= 1;
            }
        }
        Activity::Busy
    }
}

/// Takes at most one word per cycle, stalling at random (so the buffer fills).
struct Dst {
    inp: InPort<u64>,
    rng: SimRng,
    n: u64,
    sum: u64,
}

impl Component for Dst {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        if self.n == 0 {
            return Activity::Idle;
        }
        if self.rng.chance(0.55) {
            if let Some(v) = cx.recv(self.inp) {
                self.sum = self.sum.wrapping_add(v);
                self.n -= 1;
            }
        }
        Activity::Busy
    }
    fn report(&self, out: &mut trnsim_kernel::StatsWriter<'_>) {
        out.count("sum", self.sum);
    }
}

const LINK: &str = "src.out -> dst.in";

/// Two components and a depth-`depth` link, `n` messages; the link's receive side swapped in
/// when `swap` is given (`swap` then holds it for the check).
fn link_run(depth: u32, seed: u64, swap: Option<&mut SwapSet>) -> String {
    let n = 6000;
    let mut b = SimBuilder::new();
    let clk = b.clock("clk", Frequency::from_mhz(1000)).unwrap();
    let src = b.reserve("src", clk).unwrap();
    let dst = b.reserve("dst", clk).unwrap();
    let spec = LinkSpec::default().depth(depth).latency(2);
    let (out, inp) = b.link::<u64>(src, "out", dst, "in", spec).unwrap();
    if let Some(s) = swap {
        s.swap_link(&mut b, LINK, imp(), None).unwrap_or_else(|e| panic!("{e}"));
    }
    b.install(src, Src { out, rng: SimRng::new(seed, 1), n }).unwrap();
    b.install(dst, Dst { inp, rng: SimRng::new(seed, 2), n, sum: 0 }).unwrap();
    let mut sim = b.build().unwrap();
    sim.run_until_idle(Dur::from_us(1000)).unwrap();
    let s = json(&sim);
    assert!(s.contains("\"sum\""), "{s}");
    s
}

pub(crate) fn imp() -> Impl {
    if cfg!(feature = "rtl") && std::env::var_os("SWAP_MODEL").is_none() {
        Impl::Rtl
    } else {
        Impl::BlockModel
    }
}

#[test]
fn link_fifo_swapped_into_a_kernel_link_gives_identical_statistics_and_replays_clean() {
    for (depth, seed) in [(4, 1), (5, 2)] {
        let mut s = SwapSet::new();
        let swapped = link_run(depth, seed, Some(&mut s));
        let r = s.check().unwrap_or_else(|e| panic!("{e}"));
        assert!(swapped == link_run(depth, seed, None), "depth {depth}: statistics differ with the block swapped in");
        assert_eq!(r[0].instance, LINK);
        assert_eq!(r[0].block, if depth == 4 { "link_fifo" } else { "link_fifo_w100_d5" });
        assert!(r[0].cycles > 6000, "one block clock per busy receiver cycle: {}", r[0].cycles);
    }
}

#[test]
fn a_link_without_a_block_of_its_depth_or_name_is_an_error_naming_it() {
    let mut b = SimBuilder::new();
    let clk = b.clock("clk", Frequency::from_mhz(1000)).unwrap();
    let (src, dst) = (b.reserve("src", clk).unwrap(), b.reserve("dst", clk).unwrap());
    b.link::<u64>(src, "out", dst, "in", LinkSpec::default().depth(7)).unwrap();
    let mut s = SwapSet::new();
    let e = s.swap_link(&mut b, LINK, Impl::BlockModel, None).unwrap_err();
    assert_eq!(e, "src.out -> dst.in: no link_fifo block is built for depth 7 (built: 4, 5)");
    let e = s.swap_link(&mut b, "src.out -> dst.nope", Impl::BlockModel, None).unwrap_err();
    assert!(e.starts_with("no link called \"src.out -> dst.nope\""), "{e}");
}

#[test]
fn a_link_fifo_losing_credits_is_found_by_running_the_system_with_both_sides_vcds() {
    let dir = vcd_dir("link");
    let mut s = SwapSet::new();
    (s.vcd_dir, s.wrap) = (Some(dir.clone()), Some(credit_lost()));
    link_run(4, 1, Some(&mut s));
    let e = s.check().unwrap_err();
    assert!(e.starts_with("src.out -> dst.in (link_fifo): receiver cycle "), "{e}");
    assert!(e.contains("credit_ret 0 where the link returns 1 credit"), "{e}");
    assert!(e.contains("divergence at cycle") && e.contains("on port credit_ret"), "{e}");
    let merged = dir.join("src.out_-__dst.in.diff.vcd");
    let v = std::fs::read_to_string(&merged).unwrap_or_else(|_| panic!("{e}"));
    assert!(v.contains("$scope module model") && v.contains("$scope module rtl") && v.contains("mismatch"));
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- one HBM bank ------------------------------------------------------------------------

/// One hbm3-6400 stack fed by a synthetic source of `count` requests; bank `at` swapped in
/// when `swap` is given. Returns the statistics JSON.
fn hbm_run(pattern: Pattern, count: u64, at: Option<(HbmBankAt, &mut SwapSet)>) -> String {
    let cfg = StackConfig::from_preset(&HBM3_6400);
    let mut b = SimBuilder::new();
    let clk = b.clock("hbm", cfg.timing.frequency()).unwrap();
    let mut stack = HbmStack::new(&cfg).unwrap();
    if let Some((at, s)) = at {
        s.swap_hbm_bank("hbm0.ch0.pc0.bank", &mut stack, "hbm3-6400", at, imp(), None)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let sid = b.reserve("hbm0", clk).unwrap();
    let gid = b.reserve("hbm0.gen", clk).unwrap();
    let p = GenParams { width: 1, in_flight: 64, rate: 0.5, bytes: cfg.org.access_bytes() };
    let spec = LinkSpec::default().depth(64).credit_latency(1);
    let (req_out, req_in) = b.link::<MemReq>(gid, "req", sid, "req", spec).unwrap();
    let (resp_out, resp_in) = b.link::<MemResp>(sid, "resp", gid, "resp", spec).unwrap();
    stack.add_port(req_in, resp_out);
    let src = Synthetic::new(pattern, count, 5, 1 << 20, u64::from(p.bytes), stack.address_map(), cfg.org.rows);
    b.install(sid, stack).unwrap();
    b.install(gid, TrafficGen::new(Box::new(src), p, req_out, resp_in)).unwrap();
    let mut sim = b.build().unwrap();
    sim.run_until_idle(Dur::from_us(10_000)).unwrap();
    json(&sim)
}

/// The bank the first request of a same-bank stream goes to (flat index in its
/// pseudo-channel).
fn bank_of_address_zero() -> HbmBankAt {
    let cfg = StackConfig::from_preset(&HBM3_6400);
    let map = HbmStack::new(&cfg).unwrap().address_map().clone();
    let l = map.decode(0);
    HbmBankAt { stack: 0, ch: l.channel, pc: l.pc, bank: l.bank_index(&cfg.org) }
}

#[test]
fn hbm_bank_fsm_swapped_into_a_stack_gives_identical_statistics_and_replays_clean() {
    let at = bank_of_address_zero();
    for (pattern, count) in [(Pattern::SameBank, 1500), (Pattern::Mix, 3000)] {
        let mut s = SwapSet::new();
        let swapped = hbm_run(pattern, count, Some((at, &mut s)));
        let r = s.check().unwrap_or_else(|e| panic!("{pattern:?}: {e}"));
        assert!(swapped == hbm_run(pattern, count, None), "{pattern:?}: statistics differ with the bank swapped in");
        assert_eq!(r[0].block, "hbm_bank");
        assert!(r[0].cycles > 1000, "{pattern:?}: clocked {} times", r[0].cycles);
    }
}

#[test]
fn an_hbm_bank_fsm_allowing_early_reads_is_found_by_running_the_system_with_both_sides_vcds() {
    let dir = vcd_dir("hbm");
    let mut s = SwapSet::new();
    (s.vcd_dir, s.wrap) = (Some(dir.clone()), Some(read_after_rcd_wr()));
    let swapped = hbm_run(Pattern::SameBank, 300, Some((bank_of_address_zero(), &mut s)));
    // The controller's own timing still decides: the run is the all-model run; the replay of
    // the block's inputs finds the early `legal` bit.
    assert!(swapped == hbm_run(Pattern::SameBank, 300, None));
    let e = s.check().unwrap_err();
    assert!(e.starts_with("hbm0.ch0.pc0.bank (hbm_bank): replay of its "), "{e}");
    assert!(e.contains("divergence at cycle") && e.contains("on port legal"), "{e}");
    let v = std::fs::read_to_string(dir.join("hbm0.ch0.pc0.bank.diff.vcd")).unwrap_or_else(|_| panic!("{e}"));
    assert!(v.contains("$scope module model") && v.contains("$scope module rtl") && v.contains("mismatch"));
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- one SBUF bank inside a running core ---------------------------------------------------

/// Three engines streaming through SBUF bank 0 at once (the vector engine two reads and a
/// write, the scalar engine a read and a write, GpSimd a write to half the partitions): more
/// reads and writes than the bank's two ports of each, so the arbiter refuses some.
const CONTENDING: &str = "\
.engine vector
    tensor_tensor add sbuf[0:128] +0x0 [512] fp32, sbuf[0:128] +0x800 [512] fp32 -> sbuf[0:128] +0x1000 [512] fp32
    tensor_tensor add sbuf[0:128] +0x800 [512] fp32, sbuf[0:128] +0x0 [512] fp32 -> sbuf[0:128] +0x1800 [512] fp32
    halt
.engine scalar
    activation exp sbuf[0:128] +0x0 [512:1] fp32 -> sbuf[0:128] +0x2000 [512:1] fp32, scale=1.0, bias=0.0
    activation exp sbuf[0:128] +0x800 [512:1] fp32 -> sbuf[0:128] +0x2800 [512:1] fp32, scale=1.0, bias=0.0
    halt
.engine gpsimd
    iota -> sbuf[0:64] +0x3000 [512] i32
    iota -> sbuf[64:64] +0x3000 [512] i32
    halt
";

const SBUF_BANK: &str = "nc0.sbuf.bank0";

/// One NC-v4 core running [`CONTENDING`]; SBUF bank 0 swapped in when `swap` is given.
/// Returns the statistics JSON.
fn core_run(swap: Option<&mut SwapSet>) -> String {
    use trnsim_core::core::{build_hooked, CoreHooks, CoreOptions};
    use trnsim_core::isa::asm::{assemble, AsmOptions};
    let program = assemble("contending.asm", CONTENDING, &AsmOptions::default()).unwrap_or_else(|e| panic!("{e:?}"));
    let mut hooks = Vec::new();
    if let Some(s) = swap {
        let at = trnsim_rtl::swap_in::parse_sram_bank(SBUF_BANK).unwrap();
        hooks.push((false, s.swap_sram_bank(SBUF_BANK, at, (2, 2), imp(), None).unwrap_or_else(|e| panic!("{e}"))));
    }
    let mut b = SimBuilder::new();
    let hooks = CoreHooks { banks: hooks, ..CoreHooks::default() };
    build_hooked(&mut b, "nc0", &program, &CoreOptions::default(), None, hooks).unwrap();
    let mut sim = b.build().unwrap();
    sim.run_until_idle(Dur::from_us(1000)).unwrap();
    json(&sim)
}

#[test]
fn an_sbuf_bank_swapped_into_a_running_core_gives_identical_statistics_and_replays_clean() {
    let mut s = SwapSet::new();
    let swapped = core_run(Some(&mut s));
    let r = s.check().unwrap_or_else(|e| panic!("{e}"));
    let plain = core_run(None);
    assert!(swapped == plain, "statistics differ with the bank swapped in");
    let stalls: serde_json::Value = serde_json::from_str(&plain).unwrap();
    let found = stalls.to_string();
    assert!(found.contains("\"sbuf.bank0_stall_cycles\""), "{plain}");
    assert!(!found.contains("\"sbuf.bank0_stall_cycles\":0"), "the program contends on bank 0: {plain}");
    assert_eq!((r[0].instance.as_str(), r[0].block), (SBUF_BANK, "sbuf_bank"));
    assert!(r[0].cycles > 500, "one block clock per cycle with requests on the bank: {}", r[0].cycles);
}

#[test]
fn an_sbuf_bank_granting_reads_beyond_its_ports_is_found_by_the_running_core_with_both_sides_vcds() {
    let dir = vcd_dir("sbuf");
    let mut s = SwapSet::new();
    let wrap = reads_never_refused();
    (s.vcd_dir, s.wrap) = (Some(dir.clone()), Some(wrap));
    let swapped = core_run(Some(&mut s));
    assert!(swapped == core_run(None), "the arbiter still decides: the run is the all-model run");
    let e = s.check().unwrap_err();
    assert!(e.starts_with("nc0.sbuf.bank0 (sbuf_bank): cycle "), "{e}");
    assert!(e.contains("read, groups 0xffff): the arbiter refuses it, the RTL does not"), "{e}");
    assert!(e.contains("divergence at cycle") && e.contains("on port grant"), "{e}");
    let v = std::fs::read_to_string(dir.join("nc0.sbuf.bank0.diff.vcd")).unwrap_or_else(|_| panic!("{e}"));
    assert!(v.contains("$scope module model") && v.contains("$scope module rtl") && v.contains("mismatch"));
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- bugs planted at a block's ports ------------------------------------------------------

/// A block with a bug planted at its ports: `out(inner, port, value)` is what output `port`
/// reads instead of `value`, and `edge(inner)` runs before each rising edge (to keep the
/// state the bug needs). How a test plants a `// MUT:` mutant's behaviour without rebuilding
/// the RTL.
pub(crate) struct Planted {
    inner: Box<dyn Block>,
    out: OutFn,
    edge: EdgeFn,
}

/// What an output of a [`Planted`] block reads: (inner block, port, its value) -> value.
pub(crate) type OutFn = Box<dyn Fn(&dyn Block, usize, u128) -> u128>;
/// What a [`Planted`] block does before each rising edge.
pub(crate) type EdgeFn = Box<dyn FnMut(&dyn Block)>;

impl Planted {
    /// A [`Wrap`] planting the bug `make(port index by name)` returns.
    pub(crate) fn wrap<F>(make: F) -> Wrap
    where
        F: Fn(&dyn Fn(&str) -> usize) -> (OutFn, EdgeFn) + 'static,
    {
        Rc::new(move |inner: Box<dyn Block>| {
            let (out, edge) = make(&|n: &str| inner.ports().iter().position(|p| p.name == n).unwrap());
            Box::new(Planted { inner, out, edge }) as Box<dyn Block>
        })
    }
}

impl Block for Planted {
    fn ports(&self) -> &[PortInfo] {
        self.inner.ports()
    }
    fn set_input(&mut self, port: usize, v: u128) {
        self.inner.set_input(port, v)
    }
    fn settle(&mut self) -> Result<(), VltError> {
        self.inner.settle()
    }
    fn output(&self, port: usize) -> u128 {
        (self.out)(&*self.inner, port, self.inner.output(port))
    }
    fn posedge(&mut self) -> Result<(), VltError> {
        (self.edge)(&*self.inner);
        self.inner.posedge()
    }
    fn open_vcd(&mut self, path: &std::path::Path) -> Result<(), VltError> {
        self.inner.open_vcd(path)
    }
    fn close_vcd(&mut self) {
        self.inner.close_vcd()
    }
}

/// The `credit` mutant of link_fifo.sv (`credit_ret <= pop && !push`): the credit of a pop
/// in a cycle that also pushes is lost.
fn credit_lost() -> Wrap {
    Planted::wrap(|at| {
        let (valid, ready, credit) = (at("in_valid"), at("in_ready"), at("credit_ret"));
        let pushed = Rc::new(Cell::new(false));
        let p = pushed.clone();
        let out = move |_: &dyn Block, port, v| if port == credit && p.get() { 0 } else { v };
        let edge = move |b: &dyn Block| pushed.set(b.output(valid) == 1 && b.output(ready) == 1);
        (Box::new(out), Box::new(edge))
    })
}

/// The `trcd` mutant of hbm_bank.sv (`return RCD_WR` for RD): RD and RDA become legal
/// tRCDWR (15) after the ACT instead of tRCDRD (31).
fn read_after_rcd_wr() -> Wrap {
    Planted::wrap(|at| {
        let (cmd, legal, violation, state) = (at("cmd"), at("legal"), at("violation"), at("state"));
        let t = HBM3_6400.timing.clone();
        let (rcd_rd, rcd_wr) = (u64::from(t.rcd_rd), u64::from(t.rcd_wr));
        let since_act = Rc::new(Cell::new(u64::MAX));
        let s = since_act.clone();
        let out = move |b: &dyn Block, port, v| {
            let activating = b.output(state) == 1;
            if port == legal && activating && (rcd_wr..rcd_rd).contains(&s.get()) {
                v | 1 << 2 | 1 << 6 // RD and RDA legal early
            } else {
                v
            }
        };
        let edge = move |b: &dyn Block| {
            let act = b.output(cmd) == 1 && b.output(violation) == 0;
            since_act.set(if act { 1 } else { since_act.get().saturating_add(1) });
        };
        (Box::new(out), Box::new(edge))
    })
}

/// The `rports` mutant of sbuf_bank.sv: every valid read is granted, beyond the read ports.
fn reads_never_refused() -> Wrap {
    Planted::wrap(|at| {
        let (valid, write, grant) = (at("req_valid"), at("req_write"), at("grant"));
        let out = move |b: &dyn Block, port, v| {
            if port == grant {
                v | (b.output(valid) & !b.output(write))
            } else {
                v
            }
        };
        (Box::new(out), Box::new(|_: &dyn Block| {}))
    })
}
