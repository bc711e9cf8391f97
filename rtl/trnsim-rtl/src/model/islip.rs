//! The switch crossbar arbiter (rtl/blocks/islip_arbiter.sv), cycle for cycle; its stimulus and
//! diff configuration.

use crate::block::{Block, ModelVcd, PortInfo, VltError};
use crate::diff::DiffConfig;
use crate::stimulus::Stimulus;
use std::path::Path;
use trnsim_kernel::SimRng;

/// How the grant pointers move (the RTL's `MODE` parameter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArbMode {
    /// iSLIP (`MODE = 0`): a grant pointer moves one past the input only when its
    /// first-iteration grant is accepted.
    Islip,
    /// RRM (`MODE = 1`): a grant pointer moves one past every first-iteration grant.
    Rrm,
}

/// Port indices of [`IslipArbiter::ports`].
pub mod islip_port {
    #![allow(missing_docs)]
    pub const CLK: usize = 0;
    pub const RST: usize = 1;
    pub const REQ: usize = 2;
    pub const MATCH_VALID: usize = 3;
    pub const MATCH_OUT: usize = 4;
    pub const GRANT_PTR: usize = 5;
    pub const ACCEPT_PTR: usize = 6;
}
use islip_port as P;

/// iSLIP / RRM crossbar arbiter with `n` ports and `iter` request-grant-accept iterations per
/// clock, at the RTL's port boundary (see rtl/blocks/islip_arbiter.sv).
///
/// Inputs: `rst`, `req` (`n * n` bits, bit `i * n + j`: input `i` requests output `j`).
/// Outputs (combinational from `req` and the pointers): `match_valid` (bit `i`: input `i` is
/// matched), `match_out` (`w = ceil(log2 n)` bits per input, its output, 0 when unmatched);
/// registered: `grant_ptr` (per output) and `accept_ptr` (per input), `w` bits each.
/// The same algorithm as trnsim-fabric's `Islip` / `RoundRobin`, including that iterations
/// after the first see the pointers as the first moved them. Leaves out: nothing observable.
pub struct IslipArbiter {
    n: usize,
    iter: u32,
    mode: ArbMode,
    ports: Vec<PortInfo>,
    gptr: Vec<usize>,
    aptr: Vec<usize>,
    rst: bool,
    req: u128,
    /// Per input, its output this cycle (valid after `settle`).
    out_of: Vec<Option<usize>>,
    gnext: Vec<usize>,
    anext: Vec<usize>,
    stale: bool,
    trace: Option<ModelVcd>,
    cycle: u64,
}

/// The first set bit of `v` at or after `start`, wrapping around (`v` has no bits at or
/// above the port count, `start` is below it).
fn rr_pick(v: u32, start: usize) -> Option<usize> {
    match (v, v >> start) {
        (0, _) => None,
        (_, 0) => Some(v.trailing_zeros() as usize),
        (_, hi) => Some(start + hi.trailing_zeros() as usize),
    }
}

impl IslipArbiter {
    /// An arbiter with zeroed pointers. `n` 2..=11 (the request matrix fits 128 bits), `iter`
    /// 1..=n.
    pub fn new(n: usize, iter: u32, mode: ArbMode) -> IslipArbiter {
        assert!((2..=11).contains(&n) && (1..=n as u32).contains(&iter), "islip_arbiter: n 2..=11, iter 1..=n");
        let w = usize::BITS - (n - 1).leading_zeros(); // $clog2(n)
        let port = |name, input, width| PortInfo { name, input, width };
        let ports = vec![
            port("clk", true, 1),
            port("rst", true, 1),
            port("req", true, (n * n) as u32),
            port("match_valid", false, n as u32),
            port("match_out", false, n as u32 * w),
            port("grant_ptr", false, n as u32 * w),
            port("accept_ptr", false, n as u32 * w),
        ];
        IslipArbiter {
            n,
            iter,
            mode,
            ports,
            gptr: vec![0; n],
            aptr: vec![0; n],
            rst: false,
            req: 0,
            out_of: vec![None; n],
            gnext: vec![0; n],
            anext: vec![0; n],
            stale: true,
            trace: None,
            cycle: 0,
        }
    }

    /// Ports.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Grant pointers (per output) and accept pointers (per input), as registered now.
    pub fn pointers(&self) -> (&[usize], &[usize]) {
        (&self.gptr, &self.aptr)
    }
    /// The matching of the last `settle`: per input, its output.
    pub fn matching(&self) -> &[Option<usize>] {
        &self.out_of
    }
    /// Pointer width in bits.
    fn w(&self) -> u32 {
        usize::BITS - (self.n - 1).leading_zeros()
    }

    fn arbitrate(&mut self) {
        let n = self.n;
        let mut cols = [0u32; 11]; // cols[j]: the inputs requesting output j
        for i in 0..n {
            let mut row = (self.req >> (i * n)) as u32 & ((1 << n) - 1);
            while row != 0 {
                cols[row.trailing_zeros() as usize] |= 1 << i;
                row &= row - 1;
            }
        }
        self.gnext.copy_from_slice(&self.gptr);
        self.anext.copy_from_slice(&self.aptr);
        let (g, a) = (&mut self.gnext, &mut self.anext);
        let (mut free_in, mut free_out) = ((1u32 << n) - 1, (1u32 << n) - 1);
        self.out_of.iter_mut().for_each(|o| *o = None);
        for it in 0..self.iter {
            let mut gnt = [0u32; 11]; // gnt[i]: the outputs granting input i
            for j in 0..n {
                if free_out >> j & 1 == 0 {
                    continue;
                }
                if let Some(i) = rr_pick(cols[j] & free_in, g[j]) {
                    gnt[i] |= 1 << j;
                    if it == 0 && self.mode == ArbMode::Rrm {
                        g[j] = (i + 1) % n;
                    }
                }
            }
            for i in 0..n {
                let Some(j) = rr_pick(gnt[i], a[i]) else { continue };
                self.out_of[i] = Some(j);
                free_in &= !(1 << i);
                free_out &= !(1 << j);
                if it == 0 {
                    a[i] = (j + 1) % n;
                    if self.mode == ArbMode::Islip {
                        g[j] = (i + 1) % n;
                    }
                }
            }
        }
        self.stale = false;
    }

    fn pack(&self, v: impl Iterator<Item = usize>) -> u128 {
        let w = self.w();
        v.enumerate().fold(0, |acc, (k, x)| acc | (x as u128) << (k as u32 * w))
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

impl Block for IslipArbiter {
    fn ports(&self) -> &[PortInfo] {
        &self.ports
    }

    fn set_input(&mut self, port: usize, v: u128) {
        match port {
            P::RST => self.rst = v & 1 == 1,
            P::REQ => {
                let bits = self.n * self.n;
                self.req = if bits == 128 { v } else { v & ((1 << bits) - 1) };
            }
            _ => panic!("islip_arbiter: port {port} is not a data input"),
        }
        self.stale = true;
    }

    fn settle(&mut self) -> Result<(), VltError> {
        self.arbitrate();
        self.dump(false);
        Ok(())
    }

    fn output(&self, port: usize) -> u128 {
        match port {
            P::CLK => 0,
            P::RST => self.rst as u128,
            P::REQ => self.req,
            P::MATCH_VALID => self.out_of.iter().enumerate().fold(0, |m, (i, o)| m | (o.is_some() as u128) << i),
            P::MATCH_OUT => self.pack(self.out_of.iter().map(|o| o.unwrap_or(0))),
            P::GRANT_PTR => self.pack(self.gptr.iter().copied()),
            P::ACCEPT_PTR => self.pack(self.aptr.iter().copied()),
            _ => panic!("islip_arbiter: no port {port}"),
        }
    }

    fn posedge(&mut self) -> Result<(), VltError> {
        if self.stale {
            self.arbitrate();
        }
        if self.rst {
            self.gptr.iter_mut().chain(self.aptr.iter_mut()).for_each(|p| *p = 0);
        } else {
            self.gptr.copy_from_slice(&self.gnext);
            self.aptr.copy_from_slice(&self.anext);
        }
        self.stale = true;
        self.dump(true);
        self.cycle += 1;
        Ok(())
    }

    fn open_vcd(&mut self, path: &Path) -> Result<(), VltError> {
        if self.trace.is_some() {
            return Err(VltError::TraceAlreadyOpen);
        }
        self.trace = Some(ModelVcd::create(path, "islip_arbiter", &self.ports, 10 * self.cycle)?);
        Ok(())
    }

    fn close_vcd(&mut self) {
        self.trace = None;
    }
}

impl DiffConfig {
    /// The crossbar arbiter: every output is compared every cycle (`match_out` is 0 for
    /// unmatched inputs, so nothing is don't-care).
    pub fn islip_arbiter(cycles: u64) -> DiffConfig {
        DiffConfig {
            cycles,
            history: 8,
            dont_care: vec![],
            vcd_dir: None,
            name: "islip_arbiter".into(),
            vcd_window: 2000,
            waves: crate::diff::Waves::Fail,
            coverage: Vec::new(),
            until_coverage: None,
            monitors: Vec::new(),
        }
    }
}

/// Random request matrices for an `n`-port arbiter, in phases: a request density (sparse to
/// full), a hotspot (most requests to a few outputs), a permutation (one output per input),
/// or a matrix held for the whole phase (pointer desynchronization under constant load);
/// reset at cycles 0-1 and rarely afterwards.
pub struct IslipStimulus {
    n: usize,
    rng: SimRng,
    phase_left: u64,
    kind: u8,
    density: f64,
    held: u128,
}

impl IslipStimulus {
    const DENSITIES: [f64; 6] = [0.05, 0.2, 0.4, 0.6, 0.85, 1.0];

    /// Stimulus for `n` ports from `seed` (the kernel's deterministic RNG, stream 7).
    pub fn new(n: usize, seed: u64) -> Self {
        IslipStimulus { n, rng: SimRng::new(seed, 7), phase_left: 0, kind: 0, density: 0.5, held: 0 }
    }

    /// A random matrix with each request present with probability `p` (to 1/256).
    fn random(&mut self, p: f64) -> u128 {
        let threshold = (p * 256.0).round() as u64;
        let mut m = 0;
        let mut bits = 0;
        let mut word = 0;
        for b in 0..self.n * self.n {
            if bits == 0 {
                (word, bits) = (self.rng.next_u64(), 8);
            }
            m |= (((word & 0xff) < threshold) as u128) << b;
            (word, bits) = (word >> 8, bits - 1);
        }
        m
    }
}

impl Stimulus for IslipStimulus {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        let n = self.n;
        if self.phase_left == 0 {
            self.kind = self.rng.below(4) as u8;
            self.density = Self::DENSITIES[self.rng.below(Self::DENSITIES.len() as u64) as usize];
            self.phase_left = 4 + self.rng.below(300);
            self.held = self.random(self.density);
        }
        self.phase_left -= 1;
        let req = match self.kind {
            0 => self.random(self.density),
            1 => {
                // Hotspot: outputs 0 and 1 requested by most inputs, the rest sparsely.
                let mut m = self.random(0.1);
                for i in 0..n {
                    for j in 0..2 {
                        m |= (self.rng.chance(0.9) as u128) << (i * n + j);
                    }
                }
                m
            }
            2 => {
                let shift = self.rng.below(n as u64) as usize;
                (0..n).fold(0, |m, i| m | 1u128 << (i * n + (i + shift) % n))
            }
            _ => self.held,
        };
        inputs[P::RST] = (cycle < 2 || self.rng.below(4096) == 0) as u128;
        inputs[P::REQ] = req;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(a: &mut IslipArbiter, req: &[(usize, usize)]) -> Vec<Option<usize>> {
        let n = a.n();
        a.set_input(P::REQ, req.iter().fold(0, |m, &(i, j)| m | 1 << (i * n + j)));
        a.settle().unwrap();
        let m = a.matching().to_vec();
        a.posedge().unwrap();
        m
    }

    #[test]
    fn islip_moves_grant_pointers_only_on_accepted_grants() {
        let mut a = IslipArbiter::new(2, 1, ArbMode::Islip);
        assert_eq!(step(&mut a, &[(0, 0), (0, 1), (1, 0), (1, 1)]), [Some(0), None]);
        assert_eq!(a.pointers(), (&[1, 0][..], &[1, 0][..]));
        let mut r = IslipArbiter::new(2, 1, ArbMode::Rrm);
        step(&mut r, &[(0, 0), (0, 1), (1, 0), (1, 1)]);
        assert_eq!(r.pointers().0, &[1, 1], "rrm moves both grant pointers");
    }

    #[test]
    fn ports_pack_per_input_fields_lsb_first() {
        let mut a = IslipArbiter::new(5, 2, ArbMode::Islip);
        assert_eq!(a.ports()[P::REQ].width, 25);
        assert_eq!(a.ports()[P::MATCH_OUT].width, 15);
        a.set_input(P::REQ, 1 << (4 * 5 + 3)); // input 4 -> output 3
        a.settle().unwrap();
        assert_eq!(a.output(P::MATCH_VALID), 0b10000);
        assert_eq!(a.output(P::MATCH_OUT), 3 << 12);
        a.posedge().unwrap();
        assert_eq!(a.output(P::GRANT_PTR), 0, "output 3's pointer: 4 + 1 wraps to 0");
        assert_eq!(a.output(P::ACCEPT_PTR), 4 << 12);
    }
}
