//! The block registry: every block `trnsim diff` knows, with how to build its model, its RTL
//! and its stimulus, and how to compare them. Adding a block to the CLI is one entry in
//! [`BLOCKS`] (copy one; `rtl!(Type)` names the generated `verilator_sys::models` type).
//!
//! ```
//! use trnsim_rtl::registry::{self, DiffRequest};
//! let e = registry::find("islip_n4_i1").unwrap();
//! // Without feature `rtl` the model can be diffed against itself (the CLI's self-check).
//! let r = e.diff_with(&DiffRequest::new(10_000, 1), || Ok((e.make_model)())).unwrap();
//! assert_eq!(r.cycles, 10_000);
//! ```

use crate::block::{Block, VltError};
use crate::coverage::{Cover, Expr};
use crate::diff::{diff, diff_transactions, DiffConfig, DiffError, DiffReport};
use crate::model::{ArbMode, IslipArbiter, IslipStimulus, LinkFifo, SramBank, SramBankStimulus};
use crate::monitor::Protocol;
use crate::reactive::{CreditSender, HoldingDescriptors, HoldingRequesters, LinkFarEnd};
use crate::scoreboard::{Order, ScoreboardConfig, TxnId, TxnStream};
use crate::stimulus::{FuzzStimulus, LinkFifoStimulus, Stimulus};
use crate::trace::PortTrace;
use std::path::PathBuf;

mod added;
pub use added::{add, all};

/// Builds a block's Verilated RTL as a [`Block`] (an error without feature `rtl`).
pub type RtlCtor = fn() -> Result<Box<dyn Block>, VltError>;

/// One block: a Rust model, its RTL, a seeded stimulus and the comparison rules.
pub struct BlockEntry {
    /// CLI name (the `verilator_sys` model name by convention).
    pub name: &'static str,
    /// One line for `trnsim diff --list`.
    pub description: &'static str,
    /// A fresh model (reset state).
    pub make_model: fn() -> Box<dyn Block>,
    /// A fresh RTL instance: `rtl!(GeneratedType)`.
    pub make_rtl: RtlCtor,
    /// The seeded random stimulus.
    pub make_stimulus: fn(u64) -> Box<dyn Stimulus>,
    /// The cycle-by-cycle comparison rules (don't-care ports) for a run of `cycles`.
    pub diff_config: fn(u64) -> DiffConfig,
    /// The transactions for scoreboard mode (`--scoreboard`), if the block has them.
    pub scoreboard: Option<fn() -> ScoreboardConfig>,
    /// The block's cover points (functional coverage, sampled on both sides of every diff).
    pub coverage: fn() -> Vec<Cover>,
    /// Interface rules checked on both sides every cycle (protocol monitors).
    pub monitors: fn() -> Vec<Protocol>,
    /// A reactive stimulus (`--stimulus reactive`: drivers that see the outputs), if the
    /// block has one.
    pub make_reactive: Option<fn(u64) -> Box<dyn Stimulus>>,
}

impl std::fmt::Debug for BlockEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BlockEntry({})", self.name)
    }
}

/// `rtl!(IslipArbiterN4I1)`: an [`RtlCtor`] for a generated model, or (without feature `rtl`)
/// one that says how to build with it.
#[macro_export]
macro_rules! rtl {
    ($t:ident) => {{
        #[cfg(feature = "rtl")]
        fn make() -> Result<Box<dyn $crate::block::Block>, $crate::block::VltError> {
            Ok(Box::new($crate::rtl::Rtl::<$crate::verilator_sys::models::$t>::new()?))
        }
        #[cfg(not(feature = "rtl"))]
        fn make() -> Result<Box<dyn $crate::block::Block>, $crate::block::VltError> {
            Err($crate::registry::no_rtl())
        }
        make as $crate::registry::RtlCtor
    }};
}

/// `rtl_of!(models::OotAcc)`: an [`RtlCtor`] for a crate of its own blocks (docs/rtl.md, "A
/// block in your own crate"): the generated model wrapped in [`crate::rtl::Rtl`] when the
/// calling crate has cfg `trnsim_rtl` (its build.rs sets it when verilator-sys has the RTL),
/// otherwise the "built without the RTL" error. The cfg is the caller's: the path is not
/// resolved in a build without the RTL.
#[macro_export]
macro_rules! rtl_of {
    ($t:path) => {{
        #[cfg(trnsim_rtl)]
        fn make() -> Result<Box<dyn $crate::block::Block>, $crate::block::VltError> {
            Ok(Box::new($crate::rtl::Rtl::<$t>::new()?))
        }
        #[cfg(not(trnsim_rtl))]
        fn make() -> Result<Box<dyn $crate::block::Block>, $crate::block::VltError> {
            Err($crate::registry::no_rtl())
        }
        make as $crate::registry::RtlCtor
    }};
}

/// The error of an RTL constructor built without feature `rtl`.
pub fn no_rtl() -> VltError {
    VltError::Rtl(NO_RTL.into())
}

/// How to get the RTL (one line).
pub const NO_RTL: &str = "built without RTL co-simulation: run `make diff BLOCK=...`, or build with \
                          `CARGO_TARGET_DIR=target/rtl cargo build --release -p trnsim-harness --features rtl` \
                          and run target/rtl/release/trnsim (needs Verilator 5: \
                          `apt-get install -y verilator`)";

/// Whether this build has the Verilated RTL.
pub const HAS_RTL: bool = cfg!(feature = "rtl");

fn islip_cfg(cycles: u64) -> DiffConfig {
    DiffConfig::islip_arbiter(cycles)
}

fn islip_sb() -> ScoreboardConfig {
    let s = TxnStream { name: "match", valid: "match_valid", ready: None, data: vec!["match_out"], id: TxnId::Lane };
    ScoreboardConfig::new(vec![s], Order::ById, 0)
}

/// The link FIFO's transactions: pops (valid and ready, with their data) and credits, in
/// order. Public for a block crate's own link FIFO (a swap-in at a kernel link's boundary).
pub fn fifo_sb() -> ScoreboardConfig {
    let out = TxnStream {
        name: "pop",
        valid: "out_valid",
        ready: Some("out_ready"),
        data: vec!["out_data"],
        id: TxnId::None,
    };
    let credit = TxnStream { name: "credit", valid: "credit_ret", ready: None, data: vec![], id: TxnId::None };
    ScoreboardConfig::new(vec![out, credit], Order::InOrder, 0)
}

fn sram_sb() -> ScoreboardConfig {
    let read = TxnStream { name: "read", valid: "rvalid", ready: None, data: vec!["rdata"], id: TxnId::Lane };
    let grant = TxnStream { name: "grant", valid: "grant", ready: None, data: vec![], id: TxnId::Lane };
    ScoreboardConfig::new(vec![read, grant], Order::ById, 0)
}

fn sbuf_bank_sb() -> ScoreboardConfig {
    let grant = TxnStream { name: "grant", valid: "grant", ready: None, data: vec![], id: TxnId::Lane };
    ScoreboardConfig::new(vec![grant], Order::ById, 0)
}

fn dma_queue_sb() -> ScoreboardConfig {
    let start = TxnStream {
        name: "packet start",
        valid: "start",
        ready: None,
        data: vec!["start_queue", "start_tag", "start_pkt", "start_last"],
        id: TxnId::None,
    };
    ScoreboardConfig::new(vec![start], Order::InOrder, 0)
}

fn replay_buf_sb() -> ScoreboardConfig {
    let tx = TxnStream {
        name: "unit sent",
        valid: "tx_valid",
        ready: None,
        data: vec!["tx_seq", "tx_data", "tx_replay"],
        id: TxnId::None,
    };
    ScoreboardConfig::new(vec![tx], Order::InOrder, 0)
}

/// The link FIFO of `depth` entries: every occupancy, push x pop x full (push needs room:
/// the full-and-push combinations cannot occur), backpressure on the output, credits
/// returned, every data bit seen at 1. Public for a block crate's own link FIFO.
pub fn fifo_cover(depth: u128) -> Vec<Cover> {
    let push = ("push", Expr::all(&["in_valid", "in_ready"]));
    let pop = ("pop", Expr::all(&["out_valid", "out_ready"]));
    let full = ("full", Expr::Eq(Box::new(Expr::port("count")), depth));
    vec![
        Cover::values("occupancy", Expr::port("count"), 0..=depth),
        Cover::cross("push x pop x full", vec![push, pop, full], &[0b101, 0b111]),
        Cover::cross(
            "output stalled",
            vec![("out_valid", Expr::port("out_valid")), ("out_ready", Expr::port("out_ready"))],
            &[],
        ),
        Cover::transitions("credit return", Expr::port("credit_ret"), &[(0, 1), (1, 1), (1, 0)]),
        Cover::bits("out_data bits", "out_data"),
    ]
}

/// The link FIFO's interfaces: its output is a valid/ready stream (a stalled message holds),
/// its input a credit link (`depth` credits). Public for a block crate's own link FIFO.
pub fn fifo_monitors(depth: u64) -> Vec<Protocol> {
    vec![
        Protocol::valid_ready("output stream", "out_valid", "out_ready", &["out_data"]),
        Protocol::Credit {
            name: "input credits",
            take: vec!["in_valid", "in_ready"],
            credit: "credit_ret",
            credits: depth,
        },
    ]
}

/// A crossbar arbiter of `n` ports: every output matched, every number of matches in a
/// cycle, request loads from none to all, and every grant and accept pointer value.
fn arbiter_cover(n: u32) -> Vec<Cover> {
    let w = 32 - (n - 1).leading_zeros();
    let nn = u128::from(n * n);
    vec![
        Cover::bits("output matched", "match_valid"),
        Cover::values("matches per cycle", Expr::Pop("match_valid"), 0..=u128::from(n)),
        Cover::ranges(
            "requests",
            Expr::Pop("req"),
            &[("none", 0, 0), ("some", 1, u128::from(n) - 1), ("many", u128::from(n), nn - 1), ("all", nn, nn)],
        ),
        Cover::lanes("grant pointer", "grant_ptr", n, w, u128::from(n)),
        Cover::lanes("accept pointer", "accept_ptr", n, w, u128::from(n)),
    ]
}

/// An SRAM bank of `q` requesters: each granted and each served a read, every number of
/// requesters at once, every round-robin pointer, and requester 0's read/write x grant.
fn sram_cover(q: u32) -> Vec<Cover> {
    let req0 = vec![
        ("valid", Expr::Bit("req_valid", 0)),
        ("write", Expr::Bit("req_write", 0)),
        ("grant", Expr::Bit("grant", 0)),
    ];
    vec![
        Cover::bits("granted", "grant"),
        Cover::bits("read served", "rvalid"),
        Cover::values("requesters at once", Expr::Pop("req_valid"), 0..=u128::from(q)),
        Cover::values("round-robin pointer", Expr::port("rr_ptr"), 0..=u128::from(q) - 1),
        // A grant needs a valid request, and write means nothing without valid: the
        // granted-but-not-valid and write-without-valid combinations are ignored.
        Cover::cross("requester 0", req0, &[0b010, 0b100, 0b110]),
    ]
}

/// Bins 0, 1, 2-3, 4-7, ... by powers of two up to `n`, the last one `2^k..=top`.
fn pow2_bins(n: u32, top: u32) -> Vec<(String, u128, u128)> {
    let mut bins = vec![("0".to_string(), 0, 0)];
    let mut lo = 1;
    while lo <= n {
        let hi = if 2 * lo > n { top } else { 2 * lo - 1 };
        let name = if lo == hi { lo.to_string() } else { format!("{lo}-{hi}") };
        bins.push((name, u128::from(lo), u128::from(hi)));
        lo *= 2;
    }
    bins
}

/// One SBUF / PSUM bank of `n` slots and `g` groups: the number of grants (0, 1, 2-3, 4-7, ...,
/// 16 and more for 32 slots) and of valid slots (likewise, and all `n`) in a cycle, every slot
/// granted, a read refused x a write refused in one cycle (both: read and write ports exhausted
/// in the same cycle), a full-range request refused x one granted, the last slot's valid x
/// write x grant (grant without valid, and write without valid, ignored), a valid slot whose
/// range covers no group (first > last), and the stall count at 0, below 4096, below 65536 and
/// beyond.
fn sbuf_bank_cover(n: u32, g: u32) -> Vec<Cover> {
    let gw = crate::model::sbuf_bank_group_bits(g);
    let not = |e: Expr| Expr::Eq(Box::new(e), 0);
    // Refused: valid, not granted, not in reset (when nothing is granted).
    let refused = |k: u32| vec![Expr::Bit("req_valid", k), not(Expr::Bit("grant", k)), not(Expr::port("rst"))];
    let dir = |k: u32, write: bool| if write { Expr::Bit("req_write", k) } else { not(Expr::Bit("req_write", k)) };
    let refused_dir =
        |write: bool| Expr::Any((0..n).map(|k| Expr::All([refused(k), vec![dir(k, write)]].concat())).collect());
    let (first, last) = (|k: u32| Expr::Lane("req_first", k, gw), |k: u32| Expr::Lane("req_last", k, gw));
    let full = |k: u32| vec![not(first(k)), Expr::Eq(Box::new(last(k)), u128::from(g - 1))];
    let full_refused = Expr::Any((0..n).map(|k| Expr::All([refused(k), full(k)].concat())).collect());
    let full_granted = Expr::Any((0..n).map(|k| Expr::All([vec![Expr::Bit("grant", k)], full(k)].concat())).collect());
    let empty = Expr::Any(
        (0..n)
            .map(|k| Expr::All(vec![Expr::Bit("req_valid", k), Expr::Gt(Box::new(first(k)), Box::new(last(k)))]))
            .collect(),
    );
    let last_slot = vec![
        ("valid", Expr::Bit("req_valid", n - 1)),
        ("write", Expr::Bit("req_write", n - 1)),
        ("grant", Expr::Bit("grant", n - 1)),
    ];
    fn as_str(bins: &[(String, u128, u128)]) -> Vec<(&str, u128, u128)> {
        bins.iter().map(|(s, lo, hi)| (s.as_str(), *lo, *hi)).collect()
    }
    let grants = pow2_bins(n / 2, n);
    let mut valid = pow2_bins(n - 1, n - 1);
    valid.push((n.to_string(), u128::from(n), u128::from(n)));
    vec![
        Cover::ranges("grants per cycle", Expr::Pop("grant"), &as_str(&grants)),
        Cover::ranges("valid slots at once", Expr::Pop("req_valid"), &as_str(&valid)),
        Cover::bits("granted", "grant"),
        Cover::cross(
            "refused read x refused write",
            vec![("read", refused_dir(false)), ("write", refused_dir(true))],
            &[],
        ),
        Cover::cross("full range refused x granted", vec![("refused", full_refused), ("granted", full_granted)], &[]),
        Cover::cross("last slot", last_slot, &[0b010, 0b100, 0b110]),
        Cover::ranges("valid slot with first > last", empty, &[("seen", 1, 1)]),
        Cover::ranges(
            "stall count",
            Expr::port("stalls"),
            &[("0", 0, 0), ("1-4095", 1, 4095), ("4096-65535", 4096, 65535), ("65536-", 65536, u128::from(u32::MAX))],
        ),
    ]
}

/// A systolic tile of `rows` x `cols`: every row fed, every column's result out, every number
/// of rows fed at once, every weight row loaded, and load x swap x streaming.
fn tile_cover(rows: u32, cols: u32) -> Vec<Cover> {
    let _ = cols;
    vec![
        Cover::bits("row fed", "a_valid"),
        Cover::bits("column out", "out_valid"),
        Cover::values("rows fed at once", Expr::Pop("a_valid"), 0..=u128::from(rows)),
        Cover::values("weight row", Expr::port("w_row"), 0..=u128::from(rows) - 1),
        Cover::cross(
            "load x swap x stream",
            vec![("load", Expr::port("w_load")), ("swap", Expr::port("w_swap")), ("stream", Expr::Pop("a_valid"))],
            &[],
        ),
    ]
}

/// The HBM bank FSM: every state, the arcs between them, every command issued, every command
/// legal at some time, and every reason a command is refused.
fn hbm_bank_cover() -> Vec<Cover> {
    vec![
        Cover::values("state", Expr::port("state"), 0..=4),
        Cover::transitions("state arcs", Expr::port("state"), &[(0, 1), (1, 2), (2, 3), (3, 0), (0, 4), (4, 0)]),
        Cover::values("command", Expr::port("cmd"), 0..=7),
        Cover::bits("command legal", "legal"),
        Cover::values("refusal reason", Expr::port("vcode"), 0..=3),
    ]
}

/// DMA descriptor queues (`q` queues of `depth`): every queue at every occupancy, every queue
/// ready and every queue retiring an empty part, how many queues are ready at once, a
/// packet started x its part's last (last needs a start), the enqueue handshake, the engine's
/// offer x a start (a start needs `start_ok`), and every bit of the started tag.
fn dma_queue_cover(q: u32, depth: u32) -> Vec<Cover> {
    let cw = 32 - depth.leading_zeros();
    let (n, half) = (u128::from(q), u128::from(q / 2));
    vec![
        Cover::lanes("occupancy", "count", q, cw, u128::from(depth) + 1),
        Cover::bits("queue ready", "ready"),
        Cover::bits("empty part retired", "empty_ret"),
        Cover::ranges(
            "queues ready at once",
            Expr::Pop("ready"),
            &[("none", 0, 0), ("one", 1, 1), ("some", 2, half), ("many", half + 1, n - 1), ("all", n, n)],
        ),
        Cover::cross("start x last", vec![("start", Expr::port("start")), ("last", Expr::port("start_last"))], &[0b10]),
        Cover::cross("enqueue", vec![("valid", Expr::port("enq_valid")), ("ready", Expr::port("enq_ready"))], &[]),
        Cover::cross("engine", vec![("start_ok", Expr::port("start_ok")), ("start", Expr::port("start"))], &[0b10]),
        Cover::bits("start_tag bits", "start_tag"),
    ]
}

/// A replay buffer of `cap` units: occupancy from empty to full, ACK and NAK, new and replayed
/// units sent, the replay timer, replays starting, running and ending, new units taken and
/// refused (also while full), and every bit of the sequence numbers sent.
fn replay_buf_cover(cap: u128) -> Vec<Cover> {
    let full = ("full", Expr::Eq(Box::new(Expr::port("count")), cap));
    vec![
        Cover::ranges(
            "occupancy",
            Expr::port("count"),
            &[("empty", 0, 0), ("one", 1, 1), ("low", 2, cap / 2), ("high", cap / 2 + 1, cap - 1), ("full", cap, cap)],
        ),
        Cover::cross("dllp", vec![("valid", Expr::port("dllp_valid")), ("nak", Expr::port("dllp_nak"))], &[0b10]),
        Cover::cross("sent", vec![("valid", Expr::port("tx_valid")), ("replay", Expr::port("tx_replay"))], &[0b10]),
        Cover::values("replay timer expired", Expr::port("timeout"), 0..=1),
        Cover::transitions("replaying", Expr::port("replaying"), &[(0, 1), (1, 1), (1, 0)]),
        Cover::cross(
            "new unit x full",
            vec![full, ("new", Expr::port("new_valid")), ("take", Expr::port("new_take"))],
            &[0b100, 0b101],
        ),
        Cover::bits("tx_seq bits", "tx_seq"),
    ]
}

/// Every block `trnsim diff` knows.
pub static BLOCKS: &[BlockEntry] = &[
    BlockEntry {
        name: "link_fifo",
        description: "credit-based link receive FIFO, 64 bits x 4 (rtl/blocks/link_fifo.sv)",
        make_model: || Box::new(LinkFifo::new(64, 4)),
        make_rtl: rtl!(LinkFifoW64D4),
        make_stimulus: |seed| Box::new(LinkFifoStimulus::new(seed)),
        diff_config: DiffConfig::link_fifo,
        scoreboard: Some(fifo_sb),
        coverage: || fifo_cover(4),
        monitors: || fifo_monitors(4),
        make_reactive: Some(|seed| {
            let m = LinkFifo::new(64, 4);
            Box::new(CreditSender::new(m.ports(), 4, seed))
        }),
    },
    BlockEntry {
        name: "link_fifo_w100_d5",
        description: "the link FIFO at 100 bits x 5 (wide ports, depth not a power of two)",
        make_model: || Box::new(LinkFifo::new(100, 5)),
        make_rtl: rtl!(LinkFifoW100D5),
        make_stimulus: |seed| Box::new(LinkFifoStimulus::new(seed)),
        diff_config: DiffConfig::link_fifo,
        scoreboard: Some(fifo_sb),
        coverage: || fifo_cover(5),
        monitors: || fifo_monitors(5),
        make_reactive: Some(|seed| {
            let m = LinkFifo::new(100, 5);
            Box::new(CreditSender::new(m.ports(), 5, seed))
        }),
    },
    BlockEntry {
        name: "islip_n4_i1",
        description: "switch crossbar arbiter, iSLIP, 4 ports, 1 iteration (rtl/blocks/islip_arbiter.sv)",
        make_model: || Box::new(IslipArbiter::new(4, 1, ArbMode::Islip)),
        make_rtl: rtl!(IslipArbiterN4I1),
        make_stimulus: |seed| Box::new(IslipStimulus::new(4, seed)),
        diff_config: islip_cfg,
        scoreboard: Some(islip_sb),
        coverage: || arbiter_cover(4),
        monitors: Vec::new,
        make_reactive: None,
    },
    BlockEntry {
        name: "islip_n4_i3",
        description: "switch crossbar arbiter, iSLIP, 4 ports, 3 iterations",
        make_model: || Box::new(IslipArbiter::new(4, 3, ArbMode::Islip)),
        make_rtl: rtl!(IslipArbiterN4I3),
        make_stimulus: |seed| Box::new(IslipStimulus::new(4, seed)),
        diff_config: islip_cfg,
        scoreboard: Some(islip_sb),
        coverage: || arbiter_cover(4),
        monitors: Vec::new,
        make_reactive: None,
    },
    BlockEntry {
        name: "islip_n8_i1",
        description: "switch crossbar arbiter, iSLIP, 8 ports, 1 iteration (the switch bench's)",
        make_model: || Box::new(IslipArbiter::new(8, 1, ArbMode::Islip)),
        make_rtl: rtl!(IslipArbiterN8I1),
        make_stimulus: |seed| Box::new(IslipStimulus::new(8, seed)),
        diff_config: islip_cfg,
        scoreboard: Some(islip_sb),
        coverage: || arbiter_cover(8),
        monitors: Vec::new,
        make_reactive: None,
    },
    BlockEntry {
        name: "islip_n8_i3",
        description: "switch crossbar arbiter, iSLIP, 8 ports, 3 iterations",
        make_model: || Box::new(IslipArbiter::new(8, 3, ArbMode::Islip)),
        make_rtl: rtl!(IslipArbiterN8I3),
        make_stimulus: |seed| Box::new(IslipStimulus::new(8, seed)),
        diff_config: islip_cfg,
        scoreboard: Some(islip_sb),
        coverage: || arbiter_cover(8),
        monitors: Vec::new,
        make_reactive: None,
    },
    BlockEntry {
        name: "rrm_n5_i2",
        description: "switch crossbar arbiter, round-robin matching (RRM), 5 ports, 2 iterations",
        make_model: || Box::new(IslipArbiter::new(5, 2, ArbMode::Rrm)),
        make_rtl: rtl!(RrmArbiterN5I2),
        make_stimulus: |seed| Box::new(IslipStimulus::new(5, seed)),
        diff_config: islip_cfg,
        scoreboard: Some(islip_sb),
        coverage: || arbiter_cover(5),
        monitors: Vec::new,
        make_reactive: None,
    },
    BlockEntry {
        name: "rrm_n8_i3",
        description: "switch crossbar arbiter, RRM, 8 ports, 3 iterations",
        make_model: || Box::new(IslipArbiter::new(8, 3, ArbMode::Rrm)),
        make_rtl: rtl!(RrmArbiterN8I3),
        make_stimulus: |seed| Box::new(IslipStimulus::new(8, seed)),
        diff_config: islip_cfg,
        scoreboard: Some(islip_sb),
        coverage: || arbiter_cover(8),
        monitors: Vec::new,
        make_reactive: None,
    },
    BlockEntry {
        name: "sram_bank",
        description:
            "SBUF bank slice, 64 words x 32 bits, 2 read / 2 write ports, 4 requesters (rtl/blocks/sram_bank.sv)",
        make_model: || Box::new(SramBank::new(64, 32, 2, 2, 4)),
        make_rtl: rtl!(SramBankD64W32R2W2Q4),
        make_stimulus: |seed| Box::new(SramBankStimulus::new(64, 32, 4, seed)),
        diff_config: DiffConfig::sram_bank,
        scoreboard: Some(sram_sb),
        coverage: || sram_cover(4),
        monitors: Vec::new,
        make_reactive: Some(|seed| {
            let m = SramBank::new(64, 32, 2, 2, 4);
            Box::new(HoldingRequesters::new(m.ports(), 64, 32, 4, seed))
        }),
    },
    BlockEntry {
        name: "sram_bank_d16_w8_r1w1_q3",
        description: "SRAM bank, 16 words x 8 bits, 1 read / 1 write port, 3 requesters",
        make_model: || Box::new(SramBank::new(16, 8, 1, 1, 3)),
        make_rtl: rtl!(SramBankD16W8R1W1Q3),
        make_stimulus: |seed| Box::new(SramBankStimulus::new(16, 8, 3, seed)),
        diff_config: DiffConfig::sram_bank,
        scoreboard: Some(sram_sb),
        coverage: || sram_cover(3),
        monitors: Vec::new,
        make_reactive: Some(|seed| {
            let m = SramBank::new(16, 8, 1, 1, 3);
            Box::new(HoldingRequesters::new(m.ports(), 16, 8, 3, seed))
        }),
    },
    BlockEntry {
        name: "systolic_tile",
        description: "weight-stationary systolic tile, 8 x 8 PEs, BF16 x BF16 -> FP32, bit-exact with the functional \
                      mode (rtl/blocks/systolic_tile.sv)",
        make_model: || Box::new(crate::model::SystolicTile::new(8, 8)),
        make_rtl: rtl!(SystolicTileR8C8),
        make_stimulus: |seed| Box::new(crate::model::SystolicTileStimulus::new(8, 8, seed)),
        diff_config: DiffConfig::systolic_tile,
        scoreboard: None,
        coverage: || tile_cover(8, 8),
        monitors: Vec::new,
        make_reactive: None,
    },
    BlockEntry {
        name: "systolic_tile_r3_c4",
        description: "the systolic tile at 3 rows x 4 columns",
        make_model: || Box::new(crate::model::SystolicTile::new(3, 4)),
        make_rtl: rtl!(SystolicTileR3C4),
        make_stimulus: |seed| Box::new(crate::model::SystolicTileStimulus::new(3, 4, seed)),
        diff_config: DiffConfig::systolic_tile,
        scoreboard: None,
        coverage: || tile_cover(3, 4),
        monitors: Vec::new,
        make_reactive: None,
    },
    BlockEntry {
        name: "hbm_bank",
        description: "HBM bank timing FSM, hbm3-6400 timing (rtl/blocks/hbm_bank.sv; rules of trnsim-mem's table)",
        make_model: || Box::new(crate::model::HbmBank::new(&trnsim_mem::hbm::presets::HBM3_6400)),
        make_rtl: rtl!(HbmBank6400),
        make_stimulus: |seed| Box::new(crate::model::HbmBankStimulus::new(&trnsim_mem::hbm::presets::HBM3_6400, seed)),
        diff_config: DiffConfig::hbm_bank,
        scoreboard: None,
        coverage: hbm_bank_cover,
        monitors: Vec::new,
        make_reactive: None,
    },
    BlockEntry {
        name: "hbm_bank_hbm2_2000",
        description: "the HBM bank timing FSM with hbm2-2000 timing (no tPPD)",
        make_model: || Box::new(crate::model::HbmBank::new(&trnsim_mem::hbm::presets::HBM2_2000)),
        make_rtl: rtl!(HbmBank2000),
        make_stimulus: |seed| Box::new(crate::model::HbmBankStimulus::new(&trnsim_mem::hbm::presets::HBM2_2000, seed)),
        diff_config: DiffConfig::hbm_bank,
        scoreboard: None,
        coverage: hbm_bank_cover,
        monitors: Vec::new,
        make_reactive: None,
    },
    BlockEntry {
        name: "hbm_bank_hbm3_5700",
        description: "the HBM bank timing FSM with hbm3-5700 timing (Trn2's stacks)",
        make_model: || Box::new(crate::model::HbmBank::new(&trnsim_mem::hbm::presets::HBM3_5700)),
        make_rtl: rtl!(HbmBank5700),
        make_stimulus: |seed| Box::new(crate::model::HbmBankStimulus::new(&trnsim_mem::hbm::presets::HBM3_5700, seed)),
        diff_config: DiffConfig::hbm_bank,
        scoreboard: None,
        coverage: hbm_bank_cover,
        monitors: Vec::new,
        make_reactive: None,
    },
    BlockEntry {
        name: "dma_queue",
        description: "one DMA engine's 16 descriptor queues (depth 4, start latency 8 cycles) and round-robin \
                      arbiter (rtl/blocks/dma_queue.sv; trnsim-core's DMA queue arbiter)",
        make_model: || Box::new(crate::model::DmaQueue::new(16, 4, 8, false)),
        make_rtl: rtl!(DmaQueueQ16D4),
        make_stimulus: |seed| Box::new(crate::model::DmaQueueStimulus::new(16, seed)),
        diff_config: DiffConfig::dma_queue,
        scoreboard: Some(dma_queue_sb),
        coverage: || dma_queue_cover(16, 4),
        monitors: Vec::new,
        make_reactive: Some(|seed| {
            let m = crate::model::DmaQueue::new(16, 4, 8, false);
            Box::new(HoldingDescriptors::new(m.ports(), 16, seed))
        }),
    },
    BlockEntry {
        name: "dma_queue_q6_qos",
        description: "the DMA descriptor queues at 6 queues of 3, start latency 2, four priority classes (v4 QoS)",
        make_model: || Box::new(crate::model::DmaQueue::new(6, 3, 2, true)),
        make_rtl: rtl!(DmaQueueQ6D3Qos),
        make_stimulus: |seed| Box::new(crate::model::DmaQueueStimulus::new(6, seed)),
        diff_config: DiffConfig::dma_queue,
        scoreboard: Some(dma_queue_sb),
        coverage: || dma_queue_cover(6, 3),
        monitors: Vec::new,
        make_reactive: Some(|seed| {
            let m = crate::model::DmaQueue::new(6, 3, 2, true);
            Box::new(HoldingDescriptors::new(m.ports(), 6, seed))
        }),
    },
    BlockEntry {
        name: "dma_queue_q16_qos",
        description: "the DMA descriptor queues at 16 queues of 16, start latency 8, four priority classes \
                      (Trn3's nc-v4 engine, the default swap-in of a chip's nc{i}.dma.engine{e})",
        make_model: || Box::new(crate::model::DmaQueue::new(16, 16, 8, true)),
        make_rtl: rtl!(DmaQueueQ16D16Qos),
        make_stimulus: |seed| Box::new(crate::model::DmaQueueStimulus::new(16, seed)),
        diff_config: DiffConfig::dma_queue,
        scoreboard: Some(dma_queue_sb),
        coverage: || dma_queue_cover(16, 16),
        monitors: Vec::new,
        make_reactive: Some(|seed| {
            let m = crate::model::DmaQueue::new(16, 16, 8, true);
            Box::new(HoldingDescriptors::new(m.ports(), 16, seed))
        }),
    },
    BlockEntry {
        name: "replay_buf",
        description: "PCIe Gen6 link-layer replay buffer: 256 units, 10-bit sequence numbers, ACK/NAK, replay timer \
                      1000 cycles (rtl/blocks/replay_buf.sv; trnsim-fabric's ReplayBuffer)",
        make_model: || Box::new(crate::model::ReplayBuf::new(256, 10, 16, 1000)),
        make_rtl: rtl!(ReplayBufC256),
        make_stimulus: |seed| Box::new(crate::model::ReplayBufStimulus::new(256, 10, 16, 1000, seed)),
        diff_config: DiffConfig::replay_buf,
        scoreboard: Some(replay_buf_sb),
        coverage: || replay_buf_cover(256),
        monitors: Vec::new,
        make_reactive: Some(|seed| {
            let m = crate::model::ReplayBuf::new(256, 10, 16, 1000);
            Box::new(LinkFarEnd::new(m.ports(), 10, seed))
        }),
    },
    BlockEntry {
        name: "replay_buf_c5",
        description: "the replay buffer at 5 units, 4-bit sequence numbers (wrapping every 16), replay timer 24 cycles",
        make_model: || Box::new(crate::model::ReplayBuf::new(5, 4, 8, 24)),
        make_rtl: rtl!(ReplayBufC5),
        make_stimulus: |seed| Box::new(crate::model::ReplayBufStimulus::new(5, 4, 8, 24, seed)),
        diff_config: DiffConfig::replay_buf,
        scoreboard: Some(replay_buf_sb),
        coverage: || replay_buf_cover(5),
        monitors: Vec::new,
        make_reactive: Some(|seed| {
            let m = crate::model::ReplayBuf::new(5, 4, 8, 24);
            Box::new(LinkFarEnd::new(m.ports(), 4, seed))
        }),
    },
    BlockEntry {
        name: "sbuf_bank",
        description: "one SBUF bank at the SRAM model's port boundary: 32 request slots, each a range of \
                      16 partition groups, 2 read / 2 write ports per group, all-or-nothing grants \
                      (rtl/blocks/sbuf_bank.sv)",
        make_model: || Box::new(crate::model::SbufBank::new(32, 16, 2, 2)),
        make_rtl: rtl!(SbufBankN32G16R2W2),
        make_stimulus: |seed| Box::new(crate::model::SbufBankStimulus::new(32, 16, seed)),
        diff_config: DiffConfig::sbuf_bank,
        scoreboard: Some(sbuf_bank_sb),
        coverage: || sbuf_bank_cover(32, 16),
        monitors: Vec::new,
        make_reactive: Some(|seed| Box::new(crate::model::SbufBankClients::new(32, 16, seed))),
    },
    BlockEntry {
        name: "psum_bank",
        description: "the SBUF bank block as a PSUM bank: 1 read / 1 write port per group",
        make_model: || Box::new(crate::model::SbufBank::new(32, 16, 1, 1)),
        make_rtl: rtl!(PsumBankN32G16R1W1),
        make_stimulus: |seed| Box::new(crate::model::SbufBankStimulus::new(32, 16, seed)),
        diff_config: DiffConfig::sbuf_bank,
        scoreboard: Some(sbuf_bank_sb),
        coverage: || sbuf_bank_cover(32, 16),
        monitors: Vec::new,
        make_reactive: Some(|seed| Box::new(crate::model::SbufBankClients::new(32, 16, seed))),
    },
];

/// The block called `name`: trnsim's, or one a block crate added ([`add`]).
pub fn find(name: &str) -> Option<&'static BlockEntry> {
    all().into_iter().find(|b| b.name == name)
}

/// All names, trnsim's then the added ones, comma-separated (for error messages).
pub fn names() -> String {
    all().iter().map(|b| b.name).collect::<Vec<_>>().join(", ")
}

/// Where a diff's inputs come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StimulusKind {
    /// The block's seeded random stimulus.
    Random,
    /// Bytes (a fuzzer's corpus file) decoded by [`FuzzStimulus`].
    Fuzz(Vec<u8>),
    /// A recorded port trace.
    Trace(PortTrace),
    /// The block's reactive stimulus (drivers that see its outputs), seeded.
    Reactive,
}

/// One diff run's parameters (what the CLI's options set).
#[derive(Clone, Debug)]
pub struct DiffRequest {
    /// Cycles to run at most (a fuzz or trace stimulus may end sooner).
    pub cycles: u64,
    /// Seed of the random stimulus.
    pub seed: u64,
    /// The inputs.
    pub stimulus: StimulusKind,
    /// Scoreboard mode when set (else every port every cycle).
    pub scoreboard: Option<ScoreboardConfig>,
    /// Write both sides' VCDs around a divergence here.
    pub vcd_dir: Option<PathBuf>,
    /// Cycles of history (and matched transactions) in a divergence report.
    pub history: usize,
    /// Stop once both sides cover this percentage of the block's bins (or at `cycles`).
    pub until_coverage: Option<f64>,
    /// Which cycles the waveforms in `vcd_dir` cover.
    pub waves: crate::diff::Waves,
}

impl DiffRequest {
    /// `cycles` of the seeded random stimulus, cycle-by-cycle, 8 cycles of history, no VCDs.
    pub fn new(cycles: u64, seed: u64) -> DiffRequest {
        DiffRequest {
            cycles,
            seed,
            stimulus: StimulusKind::Random,
            scoreboard: None,
            vcd_dir: None,
            history: 8,
            until_coverage: None,
            waves: crate::diff::Waves::Fail,
        }
    }
}

impl BlockEntry {
    /// A stimulus constructor for `kind` (checked against the block's ports first).
    pub fn stimulus(&self, kind: &StimulusKind, seed: u64) -> Result<Box<dyn Fn() -> Box<dyn Stimulus> + '_>, String> {
        let model = (self.make_model)();
        let ports = model.ports().to_vec();
        Ok(match kind {
            StimulusKind::Random => Box::new(move || (self.make_stimulus)(seed)),
            StimulusKind::Fuzz(bytes) => {
                let f = FuzzStimulus::from_bytes_reset(&ports, model.reset(), bytes);
                let v = f.vectors().to_vec();
                Box::new(move || Box::new(crate::stimulus::Replay(v.clone())))
            }
            StimulusKind::Trace(t) => {
                let s = t.stimulus_for(&ports).map_err(|e| e.to_string())?;
                Box::new(move || Box::new(s.clone()))
            }
            StimulusKind::Reactive => match self.make_reactive {
                Some(f) => Box::new(move || f(seed)),
                None => {
                    return Err(format!(
                        "block {} has no reactive stimulus (blocks with one: {})",
                        self.name,
                        BLOCKS
                            .iter()
                            .filter(|b| b.make_reactive.is_some())
                            .map(|b| b.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                }
            },
        })
    }

    /// The diff configuration for `req`.
    pub fn config(&self, req: &DiffRequest) -> DiffConfig {
        let mut cfg = (self.diff_config)(req.cycles);
        cfg.history = req.history;
        cfg.vcd_dir = req.vcd_dir.clone();
        cfg.waves = req.waves;
        cfg.name = self.name.into();
        cfg.coverage = (self.coverage)();
        cfg.monitors = (self.monitors)();
        cfg.until_coverage = req.until_coverage;
        cfg
    }

    /// Model against RTL.
    pub fn diff(&self, req: &DiffRequest) -> Result<DiffReport, DiffError> {
        self.diff_with(req, self.make_rtl)
    }

    /// Model against `dut` (the RTL, or another model in tests and self-checks). A stimulus
    /// that does not fit the block is a [`DiffError::Ports`].
    pub fn diff_with(
        &self,
        req: &DiffRequest,
        dut: impl FnMut() -> Result<Box<dyn Block>, VltError>,
    ) -> Result<DiffReport, DiffError> {
        let stim = self.stimulus(&req.stimulus, req.seed).map_err(DiffError::Ports)?;
        let cfg = self.config(req);
        match &req.scoreboard {
            Some(sb) => diff_transactions(self.make_model, dut, stim, &cfg, sb),
            None => diff(self.make_model, dut, stim, &cfg),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_block_has_a_unique_name_and_its_model_diffs_clean_against_itself() {
        for (k, e) in BLOCKS.iter().enumerate() {
            assert!(BLOCKS[..k].iter().all(|o| o.name != e.name), "{} twice", e.name);
            let r = e.diff_with(&DiffRequest::new(3_000, 5), || Ok((e.make_model)())).unwrap();
            assert_eq!(r.cycles, 3_000);
            if let Some(sb) = e.scoreboard {
                let req = DiffRequest { scoreboard: Some(sb()), ..DiffRequest::new(3_000, 5) };
                let r = e.diff_with(&req, || Ok((e.make_model)())).unwrap_or_else(|err| panic!("{}: {err}", e.name));
                assert!(r.transactions.unwrap().matched > 100, "{}: too few transactions", e.name);
            }
        }
        assert!(find("islip_n8_i1").is_some() && find("nope").is_none());
        assert!(names().starts_with("link_fifo, "));
    }

    #[test]
    fn fuzz_stimulus_ends_the_run_at_its_length() {
        let e = find("sram_bank").unwrap();
        let bytes: Vec<u8> = (0..4000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        let req = DiffRequest { stimulus: StimulusKind::Fuzz(bytes), ..DiffRequest::new(1_000_000, 0) };
        let r = e.diff_with(&req, || Ok((e.make_model)())).unwrap();
        assert!(r.cycles > 100 && r.cycles < 4000 * 8, "{} cycles", r.cycles);
    }

    #[test]
    fn a_trace_for_other_ports_is_a_port_error() {
        let t = PortTrace::parse("x.trace", "trnsim-port-trace 1\nports rst:1 req:16\n1 0\n").unwrap();
        let req = DiffRequest { stimulus: StimulusKind::Trace(t), ..DiffRequest::new(10, 0) };
        let e = find("islip_n8_i1").unwrap();
        let err = e.diff_with(&req, || Ok((e.make_model)())).unwrap_err();
        assert_eq!(err.to_string(), "port mismatch: x.trace:2:1: req: 16 bits in the trace, 64 on the block");
    }

    #[cfg(not(feature = "rtl"))]
    #[test]
    fn without_rtl_the_rtl_constructor_says_how_to_build_it() {
        let err = (find("link_fifo").unwrap().make_rtl)().err().unwrap();
        assert!(err.to_string().contains("apt-get install -y verilator"));
    }
}

#[cfg(test)]
mod coverage_tests {
    use super::*;

    /// The shipped random stimulus reaches 95 % of every block's declared bins within 1 M
    /// cycles (model against model: the RTL side samples the same ports).
    #[test]
    fn the_shipped_stimulus_covers_every_block() {
        for e in BLOCKS {
            let req = DiffRequest { until_coverage: Some(95.0), ..DiffRequest::new(1_000_000, 1) };
            let r = e.diff_with(&req, || Ok((e.make_model)())).unwrap_or_else(|err| panic!("{}: {err}", e.name));
            let (m, t) = r.coverage.unwrap();
            assert_eq!(m, t, "{}: both sides sample the same ports", e.name);
            eprintln!("{}: {} cycles, {:.1} %\n{}", e.name, r.cycles, m.percent(), m.table(20));
            assert!(
                m.percent() >= 95.0,
                "{}: {:.1} % after {} cycles; holes: {:?}",
                e.name,
                m.percent(),
                r.cycles,
                m.holes()
            );
        }
    }
}

#[cfg(test)]
mod monitor_tests {
    use super::*;
    use crate::block::PortInfo;
    use crate::diff::DiffError;

    /// The link FIFO model, but in the cycle after a stall (`out_valid` without `out_ready`)
    /// its `out_data` is flipped: a planted protocol bug.
    struct Fickle {
        inner: Box<dyn Block>,
        ready: u128,
        stalled: bool,
    }

    impl Fickle {
        fn port(&self, name: &str) -> usize {
            self.inner.ports().iter().position(|p| p.name == name).unwrap()
        }
    }

    impl Block for Fickle {
        fn ports(&self) -> &[PortInfo] {
            self.inner.ports()
        }
        fn set_input(&mut self, port: usize, v: u128) {
            if port == self.port("out_ready") {
                self.ready = v;
            }
            self.inner.set_input(port, v)
        }
        fn settle(&mut self) -> Result<(), VltError> {
            self.inner.settle()
        }
        fn output(&self, port: usize) -> u128 {
            let v = self.inner.output(port);
            if self.stalled && port == self.port("out_data") {
                !v
            } else {
                v
            }
        }
        fn posedge(&mut self) -> Result<(), VltError> {
            self.stalled = self.inner.output(self.port("out_valid")) == 1 && self.ready == 0;
            self.inner.posedge()
        }
        fn open_vcd(&mut self, p: &std::path::Path) -> Result<(), VltError> {
            self.inner.open_vcd(p)
        }
        fn close_vcd(&mut self) {
            self.inner.close_vcd()
        }
    }

    #[test]
    fn a_stream_that_changes_its_stalled_data_breaks_the_output_monitor() {
        let e = find("link_fifo").unwrap();
        let dir = std::env::temp_dir().join(format!("trnsim-fickle-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let req = DiffRequest { vcd_dir: Some(dir.clone()), ..DiffRequest::new(100_000, 1) };
        let err = e
            .diff_with(&req, || Ok(Box::new(Fickle { inner: (e.make_model)(), ready: 0, stalled: false })))
            .unwrap_err();
        let DiffError::Protocol(p) = err else { panic!("expected a protocol violation, got {err}") };
        assert_eq!((p.side, p.violation.monitor), ("RTL", "output stream"));
        // The data port by name, the history labelled as the side that broke the rule, and
        // every waveform, the merged one too.
        assert!(p.violation.rule.starts_with("out_data changed while stalled"), "{}", p.violation);
        let text = p.to_string();
        assert!(text.contains("protocol violation at cycle") && text.contains("cycles (RTL side)"), "{text}");
        assert!(!text.contains("reference side"), "{text}");
        let merged = dir.join("link_fifo.diff.vcd");
        assert!(text.contains(&format!("mismatch signal per port: {}", merged.display())), "{text}");
        assert!(merged.is_file() && dir.join("link_fifo.rtl.vcd").is_file());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[cfg(test)]
mod reactive_tests {
    use super::*;
    use crate::reactive::CreditSender;
    use crate::stimulus::Stimulus;

    #[test]
    fn reactive_drivers_keep_the_interface_rules_and_cover_their_blocks() {
        for e in BLOCKS.iter().filter(|e| e.make_reactive.is_some()) {
            let req = DiffRequest { stimulus: StimulusKind::Reactive, ..DiffRequest::new(200_000, 3) };
            // The monitors (credits, handshakes) run on both sides: a driver breaking them fails.
            let r = e.diff_with(&req, || Ok((e.make_model)())).unwrap_or_else(|err| panic!("{}: {err}", e.name));
            let (m, _) = r.coverage.unwrap();
            assert!(m.percent() >= 95.0, "{}: {:.1} %, holes {:?}", e.name, m.percent(), m.holes());
        }
        let e = find("islip_n4_i1").unwrap();
        let req = DiffRequest { stimulus: StimulusKind::Reactive, ..DiffRequest::new(10, 3) };
        assert!(e.diff_with(&req, || Ok((e.make_model)())).unwrap_err().to_string().contains("no reactive stimulus"));
    }

    /// The drivers of blocks with a valid/ready input hold a refused item (checked with the
    /// valid/ready monitor on the input side, which open-loop and fuzz stimulus do not keep, so
    /// the blocks do not declare it).
    #[test]
    fn reactive_producers_keep_the_valid_ready_rule() {
        use crate::monitor::Monitors;
        let rules = [
            (
                "dma_queue",
                Protocol::valid_ready("enqueue", "enq_valid", "enq_ready", &["enq_queue", "enq_tag", "enq_pkts"]),
            ),
            ("replay_buf_c5", Protocol::valid_ready("new unit", "new_valid", "new_take", &["new_data"])),
        ];
        for (name, rule) in rules {
            let e = find(name).unwrap();
            let mut m = (e.make_model)();
            let ports = m.ports().to_vec();
            let mut mon = Monitors::new(&[rule], &ports).unwrap();
            let mut s = (e.make_reactive.unwrap())(5);
            let mut v = vec![0u128; ports.len()];
            for cycle in 0..100_000 {
                s.drive(cycle, &mut v);
                for (i, _) in ports.iter().enumerate().filter(|(_, p)| p.input && p.name != "clk") {
                    m.set_input(i, v[i]);
                }
                m.settle().unwrap();
                m.read_all(&mut v);
                mon.check(&v).unwrap_or_else(|err| panic!("{name}: cycle {cycle}: {err}"));
                s.observe(cycle, &v);
                m.posedge().unwrap();
            }
        }
    }

    #[test]
    fn the_credit_sender_never_sends_without_a_credit() {
        let mut fifo = LinkFifo::new(64, 4);
        let ports = fifo.ports().to_vec();
        let mut s = CreditSender::new(&ports, 4, 9);
        let idx = |n: &str| ports.iter().position(|p| p.name == n).unwrap();
        let (mut v, mut held) = (vec![0u128; ports.len()], 0i64);
        for cycle in 0..100_000 {
            s.drive(cycle, &mut v);
            for (i, p) in ports.iter().enumerate().filter(|(_, p)| p.input && p.name != "clk") {
                fifo.set_input(i, v[i]);
                let _ = p;
            }
            fifo.settle().unwrap();
            fifo.read_all(&mut v);
            if v[idx("rst")] == 1 {
                held = 0;
            } else {
                held += v[idx("in_valid")] as i64 - v[idx("credit_ret")] as i64;
                assert!(v[idx("in_valid")] == 0 || v[idx("in_ready")] == 1, "cycle {cycle}: sent into a full buffer");
                assert!((0..=4).contains(&held), "cycle {cycle}: {held} credits outstanding");
            }
            s.observe(cycle, &v);
            fifo.posedge().unwrap();
        }
        assert!(s.sent > 20_000, "it sends: {}", s.sent);
    }
}
