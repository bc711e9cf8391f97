//! # trnsim-outside-block
//!
//! A block that lives outside trnsim, as a user's crate would add one (docs/rtl.md, "A block in
//! your own crate"): its SystemVerilog (rtl/: two sources, an include directory, a define,
//! a string parameter, clock `clk_i`, asynchronous active-low reset `arst_ni`), built by
//! `build.rs` with trnsim-vlt-build; its cycle-exact Rust model [`Acc`]; a seeded stimulus
//! [`AccStimulus`]; cover points; and [`BLOCKS`], the entries its `outside-block diff` binary
//! adds to `trnsim diff`.
#![warn(missing_docs)]

pub mod fifo;
pub mod lane_max;
pub use lane_max::{LaneMax, LaneMaxStimulus};

use std::path::Path;
use trnsim_kernel::SimRng;
use trnsim_rtl::block::{Block, ModelVcd, PortInfo, ResetInfo, VltError};
use trnsim_rtl::coverage::{Cover, Expr};
use trnsim_rtl::diff::DiffConfig;
use trnsim_rtl::registry::{BlockEntry, RtlCtor};
use trnsim_rtl::stimulus::Stimulus;

/// The Verilated models (with the RTL only): `OotAcc` (MODE "sat") and `OotAccWrap` (MODE
/// "wrap", the planted bug), both with `ACC_STEP` 3; `OotLaneMax4`, `OotLaneMax16` and
/// `OotLaneMax4Skip` (the planted bug: `LANE_MAX_SKIP_LAST`); `OotFifo` and
/// `OotFifoLateCredit` (the planted bug: `OOT_FIFO_LATE_CREDIT`).
#[cfg(trnsim_rtl)]
pub mod models {
    verilator_sys::include_models!();
}

/// Whether this build has the RTL (verilator-sys with feature `rtl`).
pub const HAS_RTL: bool = cfg!(trnsim_rtl);

/// The step the build defines (`+define+ACC_STEP=3`).
pub const STEP: u8 = 3;

/// The reset the RTL declares (build.rs: `Reset::async_low("arst_ni")`).
pub const RESET: ResetInfo = ResetInfo { name: "arst_ni", active_low: true, asynchronous: true };

/// Port indices of [`Acc`]'s ports.
pub mod port {
    #![allow(missing_docs)]
    pub const CLK: usize = 0;
    pub const ARST_NI: usize = 1;
    pub const EN: usize = 2;
    pub const UP: usize = 3;
    pub const LOAD: usize = 4;
    pub const DIN: usize = 5;
    pub const COUNT: usize = 6;
    pub const AT_MAX: usize = 7;
    pub const AT_MIN: usize = 8;
}
use port as P;

const PORTS: &[PortInfo] = &[
    PortInfo { name: "clk", input: true, width: 1 },
    PortInfo { name: "arst_ni", input: true, width: 1 },
    PortInfo { name: "en", input: true, width: 1 },
    PortInfo { name: "up", input: true, width: 1 },
    PortInfo { name: "load", input: true, width: 1 },
    PortInfo { name: "din", input: true, width: 8 },
    PortInfo { name: "count", input: false, width: 8 },
    PortInfo { name: "at_max", input: false, width: 1 },
    PortInfo { name: "at_min", input: false, width: 1 },
];

/// rtl/acc_top.sv, cycle for cycle: an 8-bit up/down counter stepping by `step`, saturating
/// at 0 and 255 (`saturate`) or wrapping; `load` takes `din`; `arst_ni` low clears the count
/// at once (asynchronous: in `settle`, no clock edge needed) and holds it clear.
pub struct Acc {
    step: u8,
    saturate: bool,
    count: u8,
    arst_ni: bool,
    en: bool,
    up: bool,
    load: bool,
    din: u8,
    vcd: Option<ModelVcd>,
    cycle: u64,
}

impl Acc {
    /// A counter at 0.
    pub fn new(step: u8, saturate: bool) -> Acc {
        Acc { step, saturate, count: 0, arst_ni: false, en: false, up: false, load: false, din: 0, vcd: None, cycle: 0 }
    }

    fn dump(&mut self, high: bool) {
        if self.vcd.is_some() {
            let mut v: Vec<u128> = (0..PORTS.len()).map(|i| self.output(i)).collect();
            if let Some(t) = self.vcd.as_mut() {
                t.dump(P::CLK, &mut v, high);
            }
        }
    }
}

impl Block for Acc {
    fn ports(&self) -> &[PortInfo] {
        PORTS
    }
    fn set_input(&mut self, port: usize, v: u128) {
        let bit = v & 1 == 1;
        match port {
            P::ARST_NI => self.arst_ni = bit,
            P::EN => self.en = bit,
            P::UP => self.up = bit,
            P::LOAD => self.load = bit,
            P::DIN => self.din = v as u8,
            _ => panic!("acc: port {port} is not a data input"),
        }
    }
    fn settle(&mut self) -> Result<(), VltError> {
        if !self.arst_ni {
            self.count = 0; // asynchronous: no edge needed
        }
        self.dump(false);
        Ok(())
    }
    fn output(&self, port: usize) -> u128 {
        u128::from(match port {
            P::CLK => 0,
            P::ARST_NI => self.arst_ni as u8,
            P::EN => self.en as u8,
            P::UP => self.up as u8,
            P::LOAD => self.load as u8,
            P::DIN => self.din,
            P::COUNT => self.count,
            P::AT_MAX => (self.count == 0xff) as u8,
            P::AT_MIN => (self.count == 0) as u8,
            _ => panic!("acc: no port {port}"),
        })
    }
    fn posedge(&mut self) -> Result<(), VltError> {
        self.count = if !self.arst_ni {
            0
        } else if self.load {
            self.din
        } else if self.en && self.up {
            match self.count.checked_add(self.step) {
                Some(c) => c,
                None if self.saturate => 0xff,
                None => self.count.wrapping_add(self.step),
            }
        } else if self.en {
            match self.count.checked_sub(self.step) {
                Some(c) => c,
                None if self.saturate => 0,
                None => self.count.wrapping_sub(self.step),
            }
        } else {
            self.count
        };
        self.dump(true);
        self.cycle += 1;
        Ok(())
    }
    fn open_vcd(&mut self, path: &Path) -> Result<(), VltError> {
        self.vcd = Some(ModelVcd::create(path, "acc_top", PORTS, 10 * self.cycle)?);
        Ok(())
    }
    fn close_vcd(&mut self) {
        self.vcd = None;
    }
    fn reset(&self) -> Option<ResetInfo> {
        Some(RESET)
    }
}

/// Seeded inputs in phases of a few hundred cycles: mostly counting up (to reach and sit at
/// 255), mostly down (to 0), mixed, or idle; loads now and then, near the limits half the
/// time; reset at cycle 0 and rarely after, sometimes for several cycles.
pub struct AccStimulus {
    rng: SimRng,
    phase_left: u64,
    up_bias: f64,
    en_rate: f64,
    reset_left: u64,
}

impl AccStimulus {
    /// The stimulus of `seed`.
    pub fn new(seed: u64) -> AccStimulus {
        AccStimulus { rng: SimRng::new(seed, 0xacc), phase_left: 0, up_bias: 0.5, en_rate: 0.5, reset_left: 2 }
    }
}

impl Stimulus for AccStimulus {
    fn drive(&mut self, _cycle: u64, v: &mut [u128]) {
        if self.phase_left == 0 {
            self.phase_left = 50 + self.rng.below(400);
            self.up_bias = [0.95, 0.05, 0.5, 0.7, 0.3][self.rng.below(5) as usize];
            self.en_rate = [1.0, 0.8, 0.3, 0.05][self.rng.below(4) as usize];
        }
        self.phase_left -= 1;
        if self.reset_left == 0 && self.rng.chance(1.0 / 3000.0) {
            self.reset_left = 1 + self.rng.below(3);
        }
        v[P::ARST_NI] = u128::from(self.reset_left == 0);
        self.reset_left = self.reset_left.saturating_sub(1);
        v[P::EN] = u128::from(self.rng.chance(self.en_rate));
        v[P::UP] = u128::from(self.rng.chance(self.up_bias));
        v[P::LOAD] = u128::from(self.rng.chance(0.01));
        v[P::DIN] = u128::from(match self.rng.below(4) {
            0 => 255 - self.rng.below(6) as u8,
            1 => self.rng.below(6) as u8,
            _ => self.rng.below(256) as u8,
        });
    }
}

/// Every count region (0, low, high, 255), every en x up x load, the step into each limit
/// from inside it (saturation), and reset asserted and released.
pub fn acc_cover() -> Vec<Cover> {
    let inc = ("count up", Expr::all(&["en", "up"]));
    vec![
        Cover::ranges(
            "count",
            Expr::port("count"),
            &[("zero", 0, 0), ("low", 1, 127), ("high", 128, 254), ("max", 255, 255)],
        ),
        Cover::cross(
            "en x up x load",
            vec![("en", Expr::port("en")), ("up", Expr::port("up")), ("load", Expr::port("load"))],
            &[],
        ),
        Cover::cross("up at max", vec![("at_max", Expr::port("at_max")), inc], &[]),
        Cover::transitions("reset", Expr::port("arst_ni"), &[(1, 0), (0, 1)]),
    ]
}

const fn acc_entry(name: &'static str, description: &'static str, make_rtl: RtlCtor) -> BlockEntry {
    BlockEntry {
        name,
        description,
        make_model: || Box::new(Acc::new(STEP, true)),
        make_rtl,
        make_stimulus: |seed| Box::new(AccStimulus::new(seed)),
        diff_config: DiffConfig::every_cycle,
        scoreboard: None,
        coverage: acc_cover,
        monitors: Vec::new,
        make_reactive: None,
    }
}

/// The blocks `outside-block` adds to trnsim's: `oot_acc`, and `oot_acc_wrap_bug` (the
/// saturating model against the RTL built with MODE "wrap": it must diverge); the lane
/// maximum and its planted bug; `oot_fifo`, a link receive FIFO that a running chip takes in
/// place of a kernel link's buffer, and `oot_fifo_late_credit`, its planted bug.
pub static BLOCKS: &[BlockEntry] = &[
    acc_entry(
        "oot_acc",
        "out-of-tree example: saturating up/down counter, step 3 (rtl/examples/outside-block)",
        trnsim_rtl::rtl_of!(models::OotAcc),
    ),
    acc_entry(
        "oot_acc_wrap_bug",
        "planted bug: the saturating model against the RTL built with MODE \"wrap\" (must diverge)",
        trnsim_rtl::rtl_of!(models::OotAccWrap),
    ),
    BlockEntry {
        name: "oot_lane_max4",
        description: "out-of-tree example: maximum of 4 byte lanes, an unpacked array port (rtl/lane_max.sv)",
        make_model: || Box::new(LaneMax::new(4)),
        make_rtl: trnsim_rtl::rtl_of!(models::OotLaneMax4),
        make_stimulus: |seed| Box::new(LaneMaxStimulus::new(seed, 4)),
        diff_config: DiffConfig::every_cycle,
        scoreboard: None,
        coverage: || lane_max::lane_max_cover(4),
        monitors: Vec::new,
        make_reactive: None,
    },
    BlockEntry {
        name: "oot_lane_max16",
        description: "out-of-tree example: maximum of 16 byte lanes (a 128-bit unpacked array port)",
        make_model: || Box::new(LaneMax::new(16)),
        make_rtl: trnsim_rtl::rtl_of!(models::OotLaneMax16),
        make_stimulus: |seed| Box::new(LaneMaxStimulus::new(seed, 16)),
        diff_config: DiffConfig::every_cycle,
        scoreboard: None,
        coverage: || lane_max::lane_max_cover(16),
        monitors: Vec::new,
        make_reactive: None,
    },
    BlockEntry {
        name: "oot_lane_max4_skip_bug",
        description: "planted bug: the RTL never looks at the last lane (its immediate assertion fires)",
        make_model: || Box::new(LaneMax::new(4)),
        make_rtl: trnsim_rtl::rtl_of!(models::OotLaneMax4Skip),
        make_stimulus: |seed| Box::new(LaneMaxStimulus::new(seed, 4)),
        diff_config: DiffConfig::every_cycle,
        scoreboard: None,
        coverage: || lane_max::lane_max_cover(4),
        monitors: Vec::new,
        make_reactive: None,
    },
    fifo::fifo_entry(
        "oot_fifo",
        "out-of-tree link receive FIFO, 64 bits x 4, a collapsing queue at link_fifo's ports (rtl/oot_fifo.sv)",
        trnsim_rtl::rtl_of!(models::OotFifo),
    ),
    fifo::fifo_entry(
        "oot_fifo_late_credit",
        "planted bug: oot_fifo returning each credit two cycles after the pop (must be caught)",
        trnsim_rtl::rtl_of!(models::OotFifoLateCredit),
    ),
];
