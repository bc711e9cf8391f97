//! Input stimulus for lock-step diffs: seeded random (deterministic, so a divergence can be
//! replayed to write VCDs) or recorded vectors.

use crate::model::link_fifo_port as P;
use trnsim_kernel::SimRng;

pub use crate::model::IslipStimulus;
pub use crate::model::SramBankStimulus;

/// Chooses each cycle's input values.
pub trait Stimulus {
    /// Fills `inputs` (one slot per port of the reference block; output slots are ignored).
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]);
}

/// Random traffic for the link FIFO, in phases that fill it, drain it, stream through it and
/// idle, with a reset at cycle 0 and rarely afterwards. Data is random over 128 bits (the
/// blocks mask it), so width masking is exercised too.
pub struct LinkFifoStimulus {
    rng: SimRng,
    phase_left: u64,
    p_in: f64,
    p_out: f64,
}

impl LinkFifoStimulus {
    /// Phases (in-valid, out-ready probabilities): fill, drain, balanced, saturated, trickle.
    const PHASES: [(f64, f64); 6] = [(0.9, 0.1), (0.1, 0.9), (0.5, 0.5), (1.0, 1.0), (0.95, 0.95), (0.05, 0.05)];

    /// Stimulus from `seed` (the kernel's deterministic RNG, stream 6).
    pub fn new(seed: u64) -> Self {
        LinkFifoStimulus { rng: SimRng::new(seed, 6), phase_left: 0, p_in: 0.5, p_out: 0.5 }
    }
}

impl Stimulus for LinkFifoStimulus {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        if self.phase_left == 0 {
            (self.p_in, self.p_out) = Self::PHASES[self.rng.below(Self::PHASES.len() as u64) as usize];
            self.phase_left = 8 + self.rng.below(400);
        }
        self.phase_left -= 1;
        let rst = cycle < 2 || self.rng.below(4096) == 0;
        inputs[P::RST] = rst as u128;
        inputs[P::IN_VALID] = self.rng.chance(self.p_in) as u128;
        inputs[P::OUT_READY] = self.rng.chance(self.p_out) as u128;
        inputs[P::IN_DATA] = (self.rng.next_u64() as u128) << 64 | self.rng.next_u64() as u128;
    }
}

/// Plays back recorded input vectors (then holds the last one); e.g. from a fuzzer.
pub struct Replay(pub Vec<Vec<u128>>);

impl Stimulus for Replay {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        let Some(v) = self.0.get(cycle as usize).or(self.0.last()) else { return };
        for (slot, x) in inputs.iter_mut().zip(v) {
            *slot = *x;
        }
    }
}
