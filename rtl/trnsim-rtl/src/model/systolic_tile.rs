//! A weight-stationary systolic-array tile (rtl/blocks/systolic_tile.sv), cycle for cycle, whose
//! arithmetic is the NeuronCore functional mode's own; its stimulus and diff configuration.
//!
//! ```text
//!            w[0][0]   w[0][1]  ...            a_data[r] (row r, skewed by r cycles)
//!   row 0 ──► PE ──────► PE ──► ...             │ activations move right, one PE per cycle
//!             │ +0 from above                   ▼
//!   row 1 ──► PE ──────► PE ──► ...            psum moves down: p = p_above + w * a (FP32)
//!             ▼          ▼
//!        out_valid[0], psum col 0   out_valid[1], psum col 1   (column c: t + ROWS + c)
//! ```

use crate::block::{Block, ModelVcd, PortInfo, VltError};
use crate::diff::DiffConfig;
use crate::stimulus::Stimulus;
use std::path::Path;
use trnsim_core::numeric::bf16_to_f32;
use trnsim_kernel::SimRng;

/// Port indices of [`SystolicTile::ports`].
pub mod systolic_tile_port {
    #![allow(missing_docs)]
    pub const CLK: usize = 0;
    pub const RST: usize = 1;
    pub const W_LOAD: usize = 2;
    pub const W_ROW: usize = 3;
    pub const W_DATA: usize = 4;
    pub const W_SWAP: usize = 5;
    pub const A_VALID: usize = 6;
    pub const A_DATA: usize = 7;
    pub const OUT_VALID: usize = 8;
    pub const PSUM_LO: usize = 9;
    pub const PSUM_HI: usize = 10;
}
use systolic_tile_port as P;

/// The canonical quiet NaN both sides put on the psum ports for every NaN.
pub const CANONICAL_NAN: u32 = 0x7FC0_0000;

/// `x`'s bits, with any NaN replaced by [`CANONICAL_NAN`] (Rust, like IEEE 754, leaves NaN
/// payloads and signs of arithmetic results unspecified; whether a result is NaN is exact).
pub fn canonical_bits(x: f32) -> u32 {
    if x.is_nan() {
        CANONICAL_NAN
    } else {
        x.to_bits()
    }
}

/// One PE step, exactly as the functional mode's matmul (`trnsim_core::numeric::matmul_ref`,
/// `*o += s * v`) does it: the BF16 weight and activation widened with trnsim-core's
/// `bf16_to_f32`, multiplied in f32 (exact unless subnormal or overflowing) and added to the
/// partial sum in f32, each with one round-to-nearest-even; no fused multiply-add.
#[inline]
pub fn pe_mac(psum: f32, weight: u16, act: u16) -> f32 {
    psum + bf16_to_f32(weight) * bf16_to_f32(act)
}

/// The tile: `rows` x `cols` PEs (each 1..=8, `cols` even), ports and timing as in
/// rtl/blocks/systolic_tile.sv.
///
/// Inputs: `w_load`/`w_row`/`w_data` write one row of shadow weights (BF16 per column), `w_swap`
/// makes the shadow (with this cycle's write) active at the edge; `a_valid[r]`/`a_data[r]` are
/// row r's activation, skewed by the caller (element k of a vector entering at t on row k at
/// t + k). Outputs: `out_valid[c]` and column c's FP32 sum (`psum_lo` for c < cols/2,
/// `psum_hi` for the rest), registered; 0 while invalid, NaNs canonical. A vector x entering at
/// t yields, on column c at t + rows + c, `sum_k W[k][c] * x[k]` in k order from +0: bit for bit
/// what `matmul_ref` (hence `exec::compute` of a BF16 `MultiplyMoving` into FP32 PSUM) gives.
/// Leaves out: PSUM accumulation across matmuls (done in PSUM, not in the array), the
/// hardware's real adder order and internal precision (which the functional mode does not
/// model either), FP8/FP32/MX operands, and the array's clock-gating and power.
pub struct SystolicTile {
    rows: usize,
    cols: usize,
    ports: Vec<PortInfo>,
    /// Shadow and active weights, row-major.
    ws: Vec<u16>,
    w: Vec<u16>,
    /// Per PE (row-major): registered activation and its valid, partial sum and its valid.
    a: Vec<u16>,
    av: Vec<bool>,
    p: Vec<f32>,
    pv: Vec<bool>,
    rst: bool,
    w_load: bool,
    w_row: u128,
    w_data: u128,
    w_swap: bool,
    a_valid: u128,
    a_data: u128,
    trace: Option<ModelVcd>,
    cycle: u64,
}

fn mask(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1 << bits) - 1
    }
}

impl SystolicTile {
    /// A tile in its reset state (all weights +0, nothing valid).
    pub fn new(rows: usize, cols: usize) -> SystolicTile {
        assert!((1..=8).contains(&rows), "systolic_tile: rows 1..=8 (128-bit ports)");
        assert!((2..=8).contains(&cols) && cols.is_multiple_of(2), "systolic_tile: cols 2..=8, even");
        let rw = if rows > 1 { usize::BITS - (rows - 1).leading_zeros() } else { 1 };
        let (r, c) = (rows as u32, cols as u32);
        let port = |name, input, width| PortInfo { name, input, width };
        let ports = vec![
            port("clk", true, 1),
            port("rst", true, 1),
            port("w_load", true, 1),
            port("w_row", true, rw),
            port("w_data", true, c * 16),
            port("w_swap", true, 1),
            port("a_valid", true, r),
            port("a_data", true, r * 16),
            port("out_valid", false, c),
            port("psum_lo", false, c / 2 * 32),
            port("psum_hi", false, (c - c / 2) * 32),
        ];
        let n = rows * cols;
        SystolicTile {
            rows,
            cols,
            ports,
            ws: vec![0; n],
            w: vec![0; n],
            a: vec![0; n],
            av: vec![false; n],
            p: vec![0.0; n],
            pv: vec![false; n],
            rst: false,
            w_load: false,
            w_row: 0,
            w_data: 0,
            w_swap: false,
            a_valid: 0,
            a_data: 0,
            trace: None,
            cycle: 0,
        }
    }

    /// Column `c`'s output lane: its canonical FP32 bits while valid, else 0.
    fn lane(&self, c: usize) -> u128 {
        let i = (self.rows - 1) * self.cols + c;
        if self.pv[i] {
            canonical_bits(self.p[i]) as u128
        } else {
            0
        }
    }

    fn dump(&mut self, high: bool) {
        if self.trace.is_some() {
            let mut v: Vec<u128> = (0..self.ports.len()).map(|i| self.output(i)).collect();
            if let Some(t) = self.trace.as_mut() {
                t.dump(P::CLK, &mut v, high);
            }
        }
    }
}

impl Block for SystolicTile {
    fn ports(&self) -> &[PortInfo] {
        &self.ports
    }

    fn set_input(&mut self, port: usize, v: u128) {
        let v = v & mask(self.ports[port].width);
        match port {
            P::RST => self.rst = v == 1,
            P::W_LOAD => self.w_load = v == 1,
            P::W_ROW => self.w_row = v,
            P::W_DATA => self.w_data = v,
            P::W_SWAP => self.w_swap = v == 1,
            P::A_VALID => self.a_valid = v,
            P::A_DATA => self.a_data = v,
            _ => panic!("systolic_tile: port {port} is not a data input"),
        }
    }

    fn settle(&mut self) -> Result<(), VltError> {
        self.dump(false);
        Ok(())
    }

    fn output(&self, port: usize) -> u128 {
        let half = self.cols / 2;
        match port {
            P::CLK => 0,
            P::RST => self.rst as u128,
            P::W_LOAD => self.w_load as u128,
            P::W_ROW => self.w_row,
            P::W_DATA => self.w_data,
            P::W_SWAP => self.w_swap as u128,
            P::A_VALID => self.a_valid,
            P::A_DATA => self.a_data,
            P::OUT_VALID => (0..self.cols).fold(0, |m, c| m | (self.pv[(self.rows - 1) * self.cols + c] as u128) << c),
            P::PSUM_LO => (0..half).fold(0, |m, c| m | self.lane(c) << (32 * c)),
            P::PSUM_HI => (half..self.cols).fold(0, |m, c| m | self.lane(c) << (32 * (c - half))),
            _ => panic!("systolic_tile: no port {port}"),
        }
    }

    fn posedge(&mut self) -> Result<(), VltError> {
        let (rows, cols) = (self.rows, self.cols);
        if self.rst {
            self.ws.iter_mut().chain(self.w.iter_mut()).chain(self.a.iter_mut()).for_each(|x| *x = 0);
            self.av.iter_mut().chain(self.pv.iter_mut()).for_each(|x| *x = false);
            self.p.iter_mut().for_each(|x| *x = 0.0);
        } else {
            // Bottom-right first, so every PE reads its neighbours' old registers.
            for r in (0..rows).rev() {
                for c in (0..cols).rev() {
                    let i = r * cols + c;
                    let (a_in, av_in) = match c {
                        0 => ((self.a_data >> (16 * r)) as u16, self.a_valid >> r & 1 == 1),
                        _ => (self.a[i - 1], self.av[i - 1]),
                    };
                    let (p_in, pv_in) = if r == 0 { (0.0, true) } else { (self.p[i - cols], self.pv[i - cols]) };
                    self.a[i] = a_in;
                    self.av[i] = av_in;
                    self.pv[i] = av_in && pv_in;
                    // An invalid partial sum never reaches a port: compute only valid ones.
                    if self.pv[i] {
                        self.p[i] = pe_mac(p_in, self.w[i], a_in);
                    }
                }
            }
            let load = self.w_load && (self.w_row as usize) < rows;
            if load {
                let r = self.w_row as usize;
                for c in 0..cols {
                    self.ws[r * cols + c] = (self.w_data >> (16 * c)) as u16;
                }
            }
            if self.w_swap {
                self.w.copy_from_slice(&self.ws);
            }
        }
        self.dump(true);
        self.cycle += 1;
        Ok(())
    }

    fn open_vcd(&mut self, path: &Path) -> Result<(), VltError> {
        if self.trace.is_some() {
            return Err(VltError::TraceAlreadyOpen);
        }
        self.trace = Some(ModelVcd::create(path, "systolic_tile", &self.ports, 10 * self.cycle)?);
        Ok(())
    }

    fn close_vcd(&mut self) {
        self.trace = None;
    }
}

impl DiffConfig {
    /// The systolic tile: every output every cycle (invalid lanes are driven to 0).
    pub fn systolic_tile(cycles: u64) -> DiffConfig {
        DiffConfig {
            cycles,
            history: 8,
            dont_care: vec![],
            vcd_dir: None,
            name: "systolic_tile".into(),
            vcd_window: 2000,
            waves: crate::diff::Waves::Fail,
            coverage: Vec::new(),
            until_coverage: None,
            monitors: Vec::new(),
        }
    }
}

/// How often each kind of BF16 value appears (one phase of [`SystolicTileStimulus`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueMix {
    /// Normal values of moderate magnitude (2^-15..2^15), a few zeros and small integers.
    Clean,
    /// Mostly clean; about 1 in 10 values a zero, subnormal, tiny, huge, inf or NaN.
    Sprinkled,
    /// A third of the values special: products underflow, overflow, 0 x inf, inf - inf.
    Heavy,
    /// Mostly small integers and halves of both signs: sums cancel exactly (x + -x = +0).
    Palette,
    /// Mostly tiny values and subnormals: products and sums in the f32 subnormal range.
    Underflow,
}

const PALETTE: [u16; 10] = [0x3F80, 0xBF80, 0x4000, 0xC000, 0x3F00, 0xBF00, 0x4040, 0xC040, 0x0000, 0x8000];

/// A random BF16 value of the given mix.
pub fn bf16_value(rng: &mut SimRng, mix: ValueMix) -> u16 {
    // Class weights out of 100: normal, palette, zero, subnormal, tiny, huge, inf, nan, any bits.
    let w: [u64; 9] = match mix {
        ValueMix::Clean => [90, 5, 5, 0, 0, 0, 0, 0, 0],
        ValueMix::Sprinkled => [80, 5, 4, 2, 3, 3, 1, 1, 1],
        ValueMix::Heavy => [37, 5, 8, 8, 15, 15, 3, 3, 6],
        ValueMix::Palette => [15, 75, 10, 0, 0, 0, 0, 0, 0],
        ValueMix::Underflow => [0, 0, 5, 15, 80, 0, 0, 0, 0],
    };
    let k = rng.below(100);
    let class = (0..w.len()).find(|&i| k < w[..=i].iter().sum()).unwrap_or(0);
    let sign = (rng.below(2) as u16) << 15;
    let mant = rng.below(128) as u16;
    let field = |e: u64| (e as u16) << 7;
    sign | match class {
        0 => field(112 + rng.below(31)) | mant,
        1 => PALETTE[rng.below(PALETTE.len() as u64) as usize] & 0x7FFF,
        2 => 0,
        3 => mant.max(1),
        // 2^-72..2^-56: products straddle the f32 subnormal range and underflow.
        4 => field(55 + rng.below(17)) | mant,
        // 2^58..2^127: products and sums overflow to inf.
        5 => field(185 + rng.below(70)) | mant,
        6 => 0x7F80,
        7 => 0x7F80 | mant.max(1),
        _ => rng.next_u64() as u16 & 0x7FFF,
    }
}

/// Random traffic for a `rows` x `cols` tile, in phases: a value mix, a vector rate (back to
/// back .. sparse), weight-load and swap rates (swaps also land while vectors are in flight),
/// and now and then a "chaos" phase whose row valids ignore the skew (partial sums meet invalid
/// neighbours). Vectors are skewed as the port contract asks; reset at cycles 0-1 and rarely.
pub struct SystolicTileStimulus {
    rows: usize,
    cols: usize,
    rng: SimRng,
    phase_left: u64,
    mix: ValueMix,
    p_start: f64,
    p_load: f64,
    p_swap: f64,
    chaos: bool,
    /// The last `rows` vectors started (ring, by cycle), `None` for no vector.
    recent: Vec<Option<Vec<u16>>>,
}

impl SystolicTileStimulus {
    /// Stimulus from `seed` (the kernel's deterministic RNG, stream 9).
    pub fn new(rows: usize, cols: usize, seed: u64) -> Self {
        SystolicTileStimulus {
            rows,
            cols,
            rng: SimRng::new(seed, 9),
            phase_left: 0,
            mix: ValueMix::Clean,
            p_start: 1.0,
            p_load: 0.0,
            p_swap: 0.0,
            chaos: false,
            recent: vec![None; rows],
        }
    }
}

impl Stimulus for SystolicTileStimulus {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        let rng = &mut self.rng;
        if self.phase_left == 0 {
            self.mix = [
                ValueMix::Clean,
                ValueMix::Clean,
                ValueMix::Sprinkled,
                ValueMix::Sprinkled,
                ValueMix::Heavy,
                ValueMix::Palette,
                ValueMix::Underflow,
            ][rng.below(7) as usize];
            self.p_start = [1.0, 1.0, 0.9, 0.5, 0.1][rng.below(5) as usize];
            self.p_load = [0.0, 0.05, 0.5][rng.below(3) as usize];
            self.p_swap = [0.0, 0.01, 0.2][rng.below(3) as usize];
            self.chaos = rng.below(10) == 0;
            self.phase_left = 16 + rng.below(500);
        }
        self.phase_left -= 1;
        let start = rng.chance(self.p_start);
        let v = start.then(|| (0..self.rows).map(|_| bf16_value(rng, self.mix)).collect::<Vec<_>>());
        self.recent[cycle as usize % self.rows] = v;
        let (mut valid, mut data) = (0u128, 0u128);
        for r in 0..self.rows {
            // Row r carries element r of the vector that started r cycles ago.
            let slot = (cycle as usize + self.rows - r) % self.rows;
            let x = if self.chaos {
                rng.chance(0.5).then(|| bf16_value(rng, self.mix))
            } else {
                self.recent[slot].as_ref().map(|v| v[r])
            };
            valid |= (x.is_some() as u128) << r;
            data |= (x.unwrap_or(rng.next_u64() as u16) as u128) << (16 * r);
        }
        let mut wdata = 0u128;
        for c in 0..self.cols {
            wdata |= (bf16_value(rng, self.mix) as u128) << (16 * c);
        }
        let row_bits = if self.rows > 1 { usize::BITS - (self.rows - 1).leading_zeros() } else { 1 };
        inputs[P::RST] = (cycle < 2 || rng.below(8192) == 0) as u128;
        inputs[P::W_LOAD] = rng.chance(self.p_load) as u128;
        inputs[P::W_ROW] = rng.below(1 << row_bits) as u128;
        inputs[P::W_DATA] = wdata;
        inputs[P::W_SWAP] = rng.chance(self.p_swap) as u128;
        inputs[P::A_VALID] = valid;
        inputs[P::A_DATA] = data;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn systolic_tile_one_vector_through_a_2x2() {
        let mut t = SystolicTile::new(2, 2);
        // W = [[1, 2], [3, 4]] (bf16), loaded row by row, then swapped in with the last row.
        let bf = |x: f32| trnsim_core::numeric::f32_to_bf16(x) as u128;
        for (r, (a, b)) in [(1.0, 2.0), (3.0, 4.0)].into_iter().enumerate() {
            t.set_input(P::W_LOAD, 1);
            t.set_input(P::W_ROW, r as u128);
            t.set_input(P::W_DATA, bf(a) | bf(b) << 16);
            t.set_input(P::W_SWAP, (r == 1) as u128);
            t.posedge().unwrap();
        }
        t.set_input(P::W_LOAD, 0);
        t.set_input(P::W_SWAP, 0);
        // x = [10, 100]: row 0 at cycle 0, row 1 at cycle 1.
        let mut outs = vec![];
        for cyc in 0..5 {
            t.set_input(P::A_VALID, [0b01, 0b10, 0, 0, 0][cyc]);
            t.set_input(P::A_DATA, [bf(10.0), bf(100.0) << 16, 0, 0, 0][cyc]);
            t.settle().unwrap();
            outs.push((t.output(P::OUT_VALID), t.output(P::PSUM_LO), t.output(P::PSUM_HI)));
            t.posedge().unwrap();
        }
        let f = |x: f32| x.to_bits() as u128;
        // Column 0 at cycle 2 (t + rows + 0), column 1 at cycle 3.
        assert_eq!(outs[2], (0b01, f(310.0), 0));
        assert_eq!(outs[3], (0b10, 0, f(420.0)));
        assert_eq!(outs[4], (0, 0, 0));
    }
}
