//! Input stimulus for lock-step diffs: seeded random (deterministic, so a divergence can be
//! replayed to write VCDs), `arbitrary`-decoded bytes ([`FuzzStimulus`]), recorded vectors
//! ([`Replay`]) or a recorded port trace ([`crate::trace::TraceStimulus`]).

use crate::block::{PortInfo, ResetInfo};
use crate::model::link_fifo_port as P;
use arbitrary::{Arbitrary, Unstructured};
use trnsim_kernel::SimRng;

pub use crate::trace::TraceStimulus;

pub use crate::model::DmaQueueStimulus;
pub use crate::model::HbmBankStimulus;
pub use crate::model::IslipStimulus;
pub use crate::model::ReplayBufStimulus;
pub use crate::model::SbufBankStimulus;
pub use crate::model::SramBankStimulus;
pub use crate::model::SystolicTileStimulus;

/// Chooses each cycle's input values.
pub trait Stimulus {
    /// Fills `inputs` (one slot per port of the reference block; output slots are ignored).
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]);
    /// How many cycles it has, if finite (a recorded trace): a diff stops there.
    fn cycles(&self) -> Option<u64> {
        None
    }
    /// Sees the reference's port values of `cycle` (its inputs and, after `settle`, its
    /// outputs) before the clock edge, so a reactive driver chooses the next cycle's inputs
    /// from them (a handshake, a credit returned). Open-loop stimulus ignores it.
    fn observe(&mut self, _cycle: u64, _ports: &[u128]) {}
}

impl<S: Stimulus + ?Sized> Stimulus for Box<S> {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        (**self).drive(cycle, inputs)
    }
    fn cycles(&self) -> Option<u64> {
        (**self).cycles()
    }
    fn observe(&mut self, cycle: u64, ports: &[u128]) {
        (**self).observe(cycle, ports)
    }
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
    fn cycles(&self) -> Option<u64> {
        Some(self.0.len() as u64)
    }
}

/// Any block's inputs decoded from arbitrary bytes (a fuzzer's corpus file, `--stimulus
/// fuzz:FILE`): each step gives every input but `clk` a value (random bits masked to the
/// width, half the time thinned by AND with a second draw so sparse values occur), `rst` only
/// when its byte is 0 (rare), and holds it for 1..=8 cycles. `rst` is 1 in cycles 0 and 1.
/// A block with another reset ([`FuzzStimulus::from_bytes_reset`]): the same at its polarity.
/// The bytes run out after at most `bytes.len()` cycles; the same bytes give the same cycles.
pub struct FuzzStimulus(Replay);

#[derive(Arbitrary)]
struct FuzzStep {
    rst: u8,
    hold: u8,
}

impl FuzzStimulus {
    /// The vectors for a block with `ports` (reset: `rst`, active-high, if there is one).
    pub fn from_bytes(ports: &[PortInfo], bytes: &[u8]) -> FuzzStimulus {
        let rst = ports.iter().any(|p| p.name == "rst" && p.input);
        let reset = rst.then_some(ResetInfo { name: "rst", active_low: false, asynchronous: false });
        FuzzStimulus::from_bytes_reset(ports, reset, bytes)
    }
    /// The same for a block whose reset is `reset` (`Block::reset`): asserted rarely, and in
    /// cycles 0 and 1, at its polarity.
    pub fn from_bytes_reset(ports: &[PortInfo], reset: Option<ResetInfo>, bytes: &[u8]) -> FuzzStimulus {
        let is_rst = |p: &PortInfo| reset.is_some_and(|r| r.name == p.name);
        let asserted = reset.map_or(1, |r| r.asserted());
        let mut u = Unstructured::new(bytes);
        let mut out: Vec<Vec<u128>> = Vec::new();
        let width_mask = |w: u32| if w >= 128 { u128::MAX } else { (1 << w) - 1 };
        while let Ok(step) = FuzzStep::arbitrary(&mut u) {
            if u.is_empty() {
                break;
            }
            let mut v = vec![0u128; ports.len()];
            for (slot, p) in v.iter_mut().zip(ports).filter(|(_, p)| p.input && p.name != "clk") {
                *slot = if is_rst(p) {
                    if step.rst == 0 {
                        asserted
                    } else {
                        asserted ^ 1
                    }
                } else {
                    let (a, b, thin) = <(u128, u128, bool)>::arbitrary(&mut u).unwrap_or_default();
                    (if thin { a & b } else { a }) & width_mask(p.width)
                };
            }
            out.extend(std::iter::repeat_n(v, 1 + step.hold as usize % 8));
        }
        if let Some(rst) = ports.iter().position(|p| p.input && is_rst(p)) {
            out.iter_mut().take(2).for_each(|v| v[rst] = asserted);
        }
        FuzzStimulus(Replay(out))
    }
    /// The decoded vectors, one per cycle.
    pub fn vectors(&self) -> &[Vec<u128>] {
        &self.0 .0
    }
}

impl Stimulus for FuzzStimulus {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        self.0.drive(cycle, inputs)
    }
    fn cycles(&self) -> Option<u64> {
        self.0.cycles()
    }
}
