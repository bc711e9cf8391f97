//! The second block: rtl/lane_max.sv, whose input is an unpacked array port (`logic [7:0]
//! lanes_i [LANES]`): at the Rust interface one port of `8 * LANES` bits, lane k at bits
//! `8k .. 8k+7`. Built with 4 and 16 lanes (16 x 8 = 128 bits, the widest port the harness
//! carries), and with 4 lanes and `LANE_MAX_SKIP_LAST` (the planted bug: the last lane is never
//! looked at, which its immediate assertion `a_max_bounds_last_lane`, in `always_comb`, reports).

use std::path::Path;
use trnsim_kernel::SimRng;
use trnsim_rtl::block::{Block, ModelVcd, PortInfo, VltError};
use trnsim_rtl::coverage::{Cover, Expr};
use trnsim_rtl::stimulus::Stimulus;

/// Port indices of [`LaneMax`].
pub mod port {
    #![allow(missing_docs)]
    pub const CLK: usize = 0;
    pub const RST: usize = 1;
    pub const VALID_I: usize = 2;
    pub const LANES_I: usize = 3;
    pub const VALID_O: usize = 4;
    pub const MAX_O: usize = 5;
    pub const IDX_O: usize = 6;
}
use port as P;

const PORTS_4: &[PortInfo] = &ports(4);
const PORTS_16: &[PortInfo] = &ports(16);

const fn ports(lanes: u32) -> [PortInfo; 7] {
    [
        PortInfo { name: "clk", input: true, width: 1 },
        PortInfo { name: "rst", input: true, width: 1 },
        PortInfo { name: "valid_i", input: true, width: 1 },
        PortInfo { name: "lanes_i", input: true, width: 8 * lanes },
        PortInfo { name: "valid_o", input: false, width: 1 },
        PortInfo { name: "max_o", input: false, width: 8 },
        PortInfo { name: "idx_o", input: false, width: lanes.trailing_zeros() },
    ]
}

/// rtl/lane_max.sv, cycle for cycle (4 or 16 lanes): the maximum lane and the lowest lane
/// holding it, registered while `valid_i`; `valid_o` follows `valid_i` by one cycle; `rst`
/// (synchronous) clears all three.
pub struct LaneMax {
    lanes: u32,
    rst: bool,
    valid_i: bool,
    lanes_i: u128,
    valid_o: bool,
    max_o: u8,
    idx_o: u8,
    vcd: Option<ModelVcd>,
    cycle: u64,
}

impl LaneMax {
    /// A block of `lanes` lanes (4 or 16: the built ones).
    pub fn new(lanes: u32) -> LaneMax {
        assert!(lanes == 4 || lanes == 16, "lane_max is built with 4 or 16 lanes");
        LaneMax {
            lanes,
            rst: false,
            valid_i: false,
            lanes_i: 0,
            valid_o: false,
            max_o: 0,
            idx_o: 0,
            vcd: None,
            cycle: 0,
        }
    }

    fn dump(&mut self, high: bool) {
        if self.vcd.is_some() {
            let mut v: Vec<u128> = (0..self.ports().len()).map(|i| self.output(i)).collect();
            if let Some(t) = self.vcd.as_mut() {
                t.dump(P::CLK, &mut v, high);
            }
        }
    }

    /// (maximum, its lowest lane) of the current input.
    fn max(&self) -> (u8, u8) {
        (0..self.lanes).fold((0, 0), |(m, k), i| {
            let v = (self.lanes_i >> (8 * i)) as u8;
            if i == 0 || v > m {
                (v, i as u8)
            } else {
                (m, k)
            }
        })
    }
}

impl Block for LaneMax {
    fn ports(&self) -> &[PortInfo] {
        if self.lanes == 4 {
            PORTS_4
        } else {
            PORTS_16
        }
    }
    fn set_input(&mut self, port: usize, v: u128) {
        match port {
            P::RST => self.rst = v & 1 == 1,
            P::VALID_I => self.valid_i = v & 1 == 1,
            P::LANES_I => self.lanes_i = if self.lanes == 16 { v } else { v & 0xffff_ffff },
            _ => panic!("lane_max: port {port} is not a data input"),
        }
    }
    fn settle(&mut self) -> Result<(), VltError> {
        self.dump(false);
        Ok(())
    }
    fn output(&self, port: usize) -> u128 {
        match port {
            P::CLK => 0,
            P::RST => self.rst as u128,
            P::VALID_I => self.valid_i as u128,
            P::LANES_I => self.lanes_i,
            P::VALID_O => self.valid_o as u128,
            P::MAX_O => self.max_o as u128,
            P::IDX_O => self.idx_o as u128,
            _ => panic!("lane_max: no port {port}"),
        }
    }
    fn posedge(&mut self) -> Result<(), VltError> {
        if self.rst {
            (self.valid_o, self.max_o, self.idx_o) = (false, 0, 0);
        } else {
            self.valid_o = self.valid_i;
            if self.valid_i {
                (self.max_o, self.idx_o) = self.max();
            }
        }
        self.dump(true);
        self.cycle += 1;
        Ok(())
    }
    fn open_vcd(&mut self, path: &Path) -> Result<(), VltError> {
        let ports = if self.lanes == 4 { PORTS_4 } else { PORTS_16 };
        self.vcd = Some(ModelVcd::create(path, "lane_max", ports, 10 * self.cycle)?);
        Ok(())
    }
    fn close_vcd(&mut self) {
        self.vcd = None;
    }
}

/// Seeded lanes: uniform bytes, ties (every lane from a palette of 2-3 values, so the lowest
/// of equal lanes must win), one lane far above the rest (each lane in turn), all equal, with
/// valid at a phase's rate; `rst` in cycles 0-1 and about once in 4,000 cycles.
pub struct LaneMaxStimulus {
    rng: SimRng,
    lanes: u32,
    phase_left: u64,
    mix: u8,
    rate: f64,
}

impl LaneMaxStimulus {
    /// The stimulus of `seed` for a block of `lanes` lanes.
    pub fn new(seed: u64, lanes: u32) -> LaneMaxStimulus {
        LaneMaxStimulus { rng: SimRng::new(seed, 0x1a7e), lanes, phase_left: 0, mix: 0, rate: 1.0 }
    }
}

impl Stimulus for LaneMaxStimulus {
    fn drive(&mut self, cycle: u64, v: &mut [u128]) {
        if self.phase_left == 0 {
            self.phase_left = 20 + self.rng.below(300);
            self.mix = self.rng.below(4) as u8;
            self.rate = [1.0, 0.7, 0.2][self.rng.below(3) as usize];
        }
        self.phase_left -= 1;
        v[P::RST] = u128::from(cycle < 2 || self.rng.chance(1.0 / 4000.0));
        v[P::VALID_I] = u128::from(self.rng.chance(self.rate));
        let palette = [self.rng.below(256) as u8, self.rng.below(256) as u8, self.rng.below(256) as u8];
        let hot = self.rng.below(u64::from(self.lanes)) as u32;
        let mut x = 0u128;
        for i in 0..self.lanes {
            let lane = match self.mix {
                0 => self.rng.below(256) as u8,
                1 => palette[self.rng.below(2 + (i & 1) as u64) as usize],
                2 if i == hot => 200 + self.rng.below(56) as u8,
                2 => self.rng.below(100) as u8,
                _ => palette[0],
            };
            x |= u128::from(lane) << (8 * i);
        }
        v[P::LANES_I] = x;
    }
}

/// The winner first, in the middle and last; valid in x out; the maximum's range; the winner
/// crossed with the maximum's range on valid outputs; a bubble in the output stream; lanes 0
/// and 1 ordered either way or tied (a tie must go to lane 0).
pub fn lane_max_cover(lanes: u32) -> Vec<Cover> {
    let lane = |k| Box::new(Expr::Lane("lanes_i", k, 8));
    let last = u128::from(lanes) - 1;
    vec![
        Cover::ranges("winner", Expr::port("idx_o"), &[("first", 0, 0), ("middle", 1, last - 1), ("last", last, last)]),
        Cover::cross("valid in x out", vec![("in", Expr::port("valid_i")), ("out", Expr::port("valid_o"))], &[]),
        Cover::ranges("maximum", Expr::port("max_o"), &[("low", 0, 63), ("mid", 64, 199), ("high", 200, 255)]),
        // The winner's position crossed with the maximum's range, sampled only on a valid
        // output (`iff (valid_o)`): a high maximum won by the last lane, and so on.
        Cover::cross_bins(
            "winner x maximum",
            &[
                ("winner", Expr::port("idx_o"), &[("first", 0, 0), ("middle", 1, last - 1), ("last", last, last)]),
                ("max", Expr::port("max_o"), &[("low", 0, 63), ("mid", 64, 199), ("high", 200, 255)]),
            ],
        )
        .iff(Expr::port("valid_o")),
        // The output stream's valid over three sampled cycles: a bubble between two results.
        Cover::sequences("valid_o bubble", Expr::port("valid_o"), &[&[1, 0, 1], &[0, 1, 1]]),
        // Both greater at once cannot be: ignored.
        Cover::cross(
            "lane 0 vs lane 1",
            vec![("0>1", Expr::Gt(lane(0), lane(1))), ("1>0", Expr::Gt(lane(1), lane(0)))],
            &[0b11],
        ),
    ]
}
