//! The chips' collective engines of the flow-level network: every program as runs of equal
//! steps flattened into two arrays, one cache line of state per chip.

use super::events::{Events, TIMER};
use crate::collective::schedule::Runs;

/// One run of equal steps of one chip, in the programs flattened ([`Programs`]).
pub(super) struct Run {
    /// The step's sends: `Programs::sends[sends.0..sends.1]`.
    pub(super) sends: (u32, u32),
    recvs: u32,
    /// Repetitions.
    reps: u32,
}

/// Every chip's program as runs of equal steps, flattened into two arrays in chip order (no
/// allocation per chip or step: a hierarchical all-reduce on 100,000 chips is 300,000 runs).
pub(super) struct Programs {
    pub(super) runs: Vec<Run>,
    /// Messages sent: (destination chip, payload bytes).
    pub(super) sends: Vec<(u32, u64)>,
}

/// One chip's collective engine (as the packet-level runner's), its program a range of
/// [`Programs::runs`]: the current step's state in one cache line per chip (the current run's
/// sends, receives and repetitions copied in: a step touches its run only when it starts one).
#[repr(align(64))]
pub(super) struct Engine {
    /// The current run (an index into `Programs::runs`) and the end of the chip's runs.
    run: u32,
    runs_end: u32,
    /// The current step's repetition within its run, and its index (the tag).
    rep: u32,
    pub(super) cur: u32,
    /// Steps in all.
    len: u32,
    /// The current run's messages needed per step, repetitions, and sends (as [`Run`]).
    recvs: u32,
    reps: u32,
    pub(super) sends: (u32, u32),
    /// Messages received for the current step and the next; those for later steps are in the
    /// chip's list of `far` receipts, `far` of them.
    got: [u32; 2],
    far: u32,
    pub(super) issued: bool,
    /// When the chip finished (NaN until it does).
    pub(super) done_ps: f64,
}

impl Engine {
    pub(super) fn done(&self) -> bool {
        !self.done_ps.is_nan()
    }

    /// Counts a message tagged `tag` (messages for steps already complete are dropped: no
    /// step waits for them).
    pub(super) fn receive(&mut self, tag: u32, far: &mut Vec<(u32, u32)>) {
        if tag == self.cur {
            self.got[0] += 1;
        } else if tag > self.cur && tag - self.cur == 1 {
            self.got[1] += 1;
        } else if tag > self.cur {
            match far.iter_mut().find(|r| r.0 == tag) {
                Some(r) => r.1 += 1,
                None => {
                    far.push((tag, 1));
                    self.far += 1;
                }
            }
        }
    }

    /// Moves to the next step (the caller checked there is one).
    fn advance(&mut self, runs: &[Run], far: &mut Vec<(u32, u32)>) {
        self.cur += 1;
        self.got = [self.got[1], 0];
        if self.far > 0 {
            // The step after the new current one: `cur + 1` (no overflow: `cur + 1 < len`).
            let next = self.cur + 1;
            if let Some(i) = far.iter().position(|r| r.0 == next) {
                self.got[1] = far.swap_remove(i).1;
                self.far -= 1;
            }
        }
        self.rep += 1;
        if self.rep < self.reps {
            return;
        }
        while self.run < self.runs_end && self.rep >= runs[self.run as usize].reps {
            self.run += 1;
            self.rep = 0;
        }
        if let Some(r) = runs.get(self.run as usize).filter(|_| self.run < self.runs_end) {
            (self.recvs, self.reps, self.sends) = (r.recvs, r.reps, r.sends);
        }
    }
}

/// Flattens `progs` ([`Programs`]) and makes each chip's engine; refuses programs the engines'
/// fields cannot count, and sends to chips that do not exist.
pub(super) fn flatten(progs: impl ExactSizeIterator<Item = Runs>) -> Result<(Programs, Vec<Engine>), String> {
    let chips = progs.len();
    if u32::try_from(chips).is_err() || u32::try_from(chips).is_ok_and(|n| n >= TIMER) {
        return Err(format!("{chips} chips: too many for the flow-level network"));
    }
    let (mut runs, mut sends, mut engines) = (Vec::new(), Vec::new(), Vec::with_capacity(chips));
    for (c, p) in progs.enumerate() {
        let len = p.iter().map(|r| u64::from(r.1)).sum::<u64>();
        let len = u32::try_from(len).map_err(|_| format!("chip {c}: more than {} steps", u32::MAX))?;
        let first = runs.len();
        let too_many_sends = |n: usize| format!("{n} sends in all: too many for the flow-level network");
        for (st, reps) in p {
            let s0 = u32::try_from(sends.len()).map_err(|_| too_many_sends(sends.len()))?;
            for (dst, bytes) in st.sends {
                let d = u32::try_from(dst).ok().filter(|_| dst < chips);
                let d = d.ok_or_else(|| format!("chip {c}: a send to chip {dst} of {chips}"))?;
                sends.push((d, bytes));
            }
            let s1 = u32::try_from(sends.len()).map_err(|_| too_many_sends(sends.len()))?;
            runs.push(Run { sends: (s0, s1), recvs: st.recvs, reps });
        }
        let too_many = || format!("{} runs of steps: too many for the flow-level network", runs.len());
        let run = u32::try_from(first).map_err(|_| too_many())?;
        let runs_end = u32::try_from(runs.len()).map_err(|_| too_many())?;
        let (recvs, reps, sends) = runs.get(first).map_or((0, 0, (0, 0)), |r: &Run| (r.recvs, r.reps, r.sends));
        let done_ps = if len == 0 { 0.0 } else { f64::NAN };
        let (got, far, issued) = ([0; 2], 0, false);
        engines.push(Engine { run, runs_end, rep: 0, cur: 0, len, recvs, reps, sends, got, far, issued, done_ps });
    }
    Ok((Programs { runs, sends }, engines))
}

/// Completes chip `c`'s current step if its sends are issued and its messages have arrived:
/// the chip is done, or its next step's timer is set.
pub(super) fn try_complete(
    engines: &mut [Engine],
    runs: &[Run],
    far: &mut [Vec<(u32, u32)>],
    c: usize,
    now: f64,
    overhead: f64,
    events: &mut Events,
) {
    let e = &mut engines[c];
    if e.done() || e.got[0] < e.recvs {
        return;
    }
    if u64::from(e.cur) + 1 == u64::from(e.len) {
        e.done_ps = now;
        return;
    }
    e.advance(runs, &mut far[c]);
    e.issued = false;
    // `c` is below `TIMER` (`flatten`).
    events.push(now + overhead, (c as u32 | TIMER, 0));
}
