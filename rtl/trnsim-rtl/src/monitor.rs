//! Protocol monitors: interface rules checked every cycle on both sides of a diff, whatever
//! the block, by port names. A violation stops the diff and is reported like a divergence
//! (cycle, side, monitor, the rule broken, the last cycles of port values).
//!
//! - [`Protocol::ValidReady`]: a stream whose producer, once it raises `valid` without the
//!   consumer's `ready`, keeps `valid` high and its data unchanged until the transfer, or
//!   until a flush (an optional `flush` port at 1 cancels the stalled transfer that cycle).
//! - [`Protocol::Credit`]: a credit-based link's receiver: it never returns more credits than
//!   messages it took, and never holds more messages than the sender's credits.
//!
//! An input port named `rst` high resets every monitor (reset drops pending credits); in a diff,
//! a block that declares another reset ([`crate::block::Block::reset`]) resets them with it.

use crate::block::{PortInfo, ResetInfo};
use std::fmt;

/// An interface rule, by port names.
#[derive(Clone, Debug)]
pub enum Protocol {
    /// valid/ready handshake: a transfer is `valid && ready`; a stalled `valid` holds with
    /// the same data.
    ValidReady {
        /// Its name in reports.
        name: &'static str,
        /// The producer's valid.
        valid: &'static str,
        /// The consumer's ready.
        ready: &'static str,
        /// The data that must hold while stalled.
        data: Vec<&'static str>,
        /// A port that cancels a stalled transfer: in a cycle where it is 1, `valid` may drop
        /// and the data change, and nothing is held into the next cycle (a pipeline flush).
        flush: Option<&'static str>,
    },
    /// Credits of a link's receiver: `take` (1 when a message enters, e.g. `in_valid &&
    /// in_ready` as one expression of two ports) and `credit` (one credit returned).
    Credit {
        /// Its name in reports.
        name: &'static str,
        /// The ports whose AND is a message taken.
        take: Vec<&'static str>,
        /// A credit returned.
        credit: &'static str,
        /// Credits the sender starts with.
        credits: u64,
    },
}

impl Protocol {
    /// A valid/ready stream without a flush.
    pub fn valid_ready(
        name: &'static str,
        valid: &'static str,
        ready: &'static str,
        data: &[&'static str],
    ) -> Protocol {
        Protocol::ValidReady { name, valid, ready, data: data.to_vec(), flush: None }
    }
    /// The same stream with `flush` cancelling a stalled transfer (other rules unchanged).
    pub fn with_flush(self, port: &'static str) -> Protocol {
        match self {
            Protocol::ValidReady { name, valid, ready, data, .. } => {
                Protocol::ValidReady { name, valid, ready, data, flush: Some(port) }
            }
            other => other,
        }
    }
    /// The name in reports.
    pub fn name(&self) -> &'static str {
        match self {
            Protocol::ValidReady { name, .. } | Protocol::Credit { name, .. } => name,
        }
    }
}

/// A broken rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The monitor.
    pub monitor: &'static str,
    /// What was broken.
    pub rule: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.monitor, self.rule)
    }
}

enum State {
    /// `held`: the data of the stalled cycle (valid while `stalled`), kept in place: no
    /// allocation per cycle.
    ValidReady {
        valid: usize,
        ready: usize,
        data: Vec<usize>,
        /// The data ports' names, for reports.
        names: Vec<&'static str>,
        flush: Option<usize>,
        stalled: bool,
        held: Vec<u128>,
    },
    Credit {
        take: Vec<usize>,
        credit: usize,
        credits: u64,
        held: u64,
    },
}

/// The monitors of one side of a diff.
pub struct Monitors {
    names: Vec<&'static str>,
    states: Vec<State>,
    /// The reset input and the value that asserts it.
    rst: Option<(usize, u128)>,
}

impl Monitors {
    /// `protocols` over a block with `ports`; an error names a monitor whose port is missing.
    pub fn new(protocols: &[Protocol], ports: &[PortInfo]) -> Result<Monitors, String> {
        let idx = |m: &str, n: &str| {
            ports.iter().position(|p| p.name == n).ok_or_else(|| format!("monitor {m}: the block has no port {n}"))
        };
        let mut states = Vec::new();
        for p in protocols {
            states.push(match p {
                Protocol::ValidReady { name, valid, ready, data, flush } => State::ValidReady {
                    valid: idx(name, valid)?,
                    ready: idx(name, ready)?,
                    data: data.iter().map(|d| idx(name, d)).collect::<Result<_, _>>()?,
                    names: data.clone(),
                    flush: flush.map(|f| idx(name, f)).transpose()?,
                    stalled: false,
                    held: vec![0; data.len()],
                },
                Protocol::Credit { name, take, credit, credits } => State::Credit {
                    take: take.iter().map(|t| idx(name, t)).collect::<Result<_, _>>()?,
                    credit: idx(name, credit)?,
                    credits: *credits,
                    held: 0,
                },
            });
        }
        let rst = ports.iter().position(|p| p.name == "rst" && p.input).map(|i| (i, 1));
        Ok(Monitors { names: protocols.iter().map(Protocol::name).collect(), states, rst })
    }

    /// The same monitors reset by `reset` (a block's [`crate::block::Block::reset`]) instead of
    /// by a `rst` input; `None` keeps `rst`.
    pub fn with_reset(mut self, reset: Option<ResetInfo>, ports: &[PortInfo]) -> Monitors {
        if let Some(r) = reset {
            self.rst = ports.iter().position(|p| p.name == r.name && p.input).map(|i| (i, r.asserted()));
        }
        self
    }

    /// Checks one cycle's port values (after `settle`; the clock edge follows).
    pub fn check(&mut self, v: &[u128]) -> Result<(), Violation> {
        let reset = self.rst.is_some_and(|(r, on)| v[r] & 1 == on);
        for (name, s) in self.names.iter().zip(&mut self.states) {
            let fail = |rule: String| Err(Violation { monitor: name, rule });
            match s {
                State::ValidReady { valid, ready, data, names, flush, stalled, held } => {
                    if reset || flush.is_some_and(|f| v[f] & 1 == 1) {
                        *stalled = false;
                        continue;
                    }
                    let (vd, rd) = (v[*valid] & 1 == 1, v[*ready] & 1 == 1);
                    if *stalled {
                        if !vd {
                            return fail(
                                "valid dropped while stalled (valid without ready must hold until the transfer)".into(),
                            );
                        }
                        if let Some((k, &d)) = data.iter().enumerate().find(|&(k, &d)| v[d] != held[k]) {
                            return fail(format!(
                                "{} changed while stalled, {:#x} -> {:#x} (valid without ready must hold its data until the transfer)",
                                names[k], held[k], v[d]
                            ));
                        }
                    }
                    *stalled = vd && !rd;
                    if *stalled {
                        for (h, &d) in held.iter_mut().zip(data.iter()) {
                            *h = v[d];
                        }
                    }
                }
                State::Credit { take, credit, credits, held } => {
                    if reset {
                        *held = 0;
                        continue;
                    }
                    // A credit returned this cycle frees a message taken before.
                    if v[*credit] & 1 == 1 {
                        if *held == 0 {
                            return fail("a credit returned for no message held".into());
                        }
                        *held -= 1;
                    }
                    if take.iter().all(|&t| v[t] & 1 == 1) {
                        *held += 1;
                        if *held > *credits {
                            return fail(format!("{} messages held, more than the sender's {credits} credits", *held));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ports() -> Vec<PortInfo> {
        ["rst", "v", "r", "d", "take", "cr", "fl"]
            .iter()
            .map(|&name| PortInfo { name, width: if name == "d" { 8 } else { 1 }, input: name == "rst" })
            .collect()
    }

    #[test]
    fn each_rule_catches_what_it_says_and_reset_clears_it() {
        let vr = Protocol::valid_ready("out", "v", "r", &["d"]);
        let mut m = Monitors::new(std::slice::from_ref(&vr), &ports()).unwrap();
        m.check(&[0, 1, 0, 7, 0, 0, 0]).unwrap(); // stalled with 7
        m.check(&[0, 1, 1, 7, 0, 0, 0]).unwrap(); // transfer
        m.check(&[0, 1, 0, 8, 0, 0, 0]).unwrap(); // stalled with 8
        let e = m.check(&[0, 1, 0, 9, 0, 0, 0]).unwrap_err();
        // The data port by its name, with both values.
        assert!(e.rule.starts_with("d changed while stalled, 0x8 -> 0x9"), "{e}");
        let mut m = Monitors::new(std::slice::from_ref(&vr), &ports()).unwrap();
        m.check(&[0, 1, 0, 7, 0, 0, 0]).unwrap();
        assert!(m.check(&[0, 0, 0, 7, 0, 0, 0]).unwrap_err().rule.contains("valid dropped"));
        // Without a flush port the flush input means nothing: the same drop is still caught.
        let mut m = Monitors::new(std::slice::from_ref(&vr), &ports()).unwrap();
        m.check(&[0, 1, 0, 7, 0, 0, 0]).unwrap();
        assert!(m.check(&[0, 0, 0, 7, 0, 0, 1]).is_err());
        let cr = Protocol::Credit { name: "in", take: vec!["take"], credit: "cr", credits: 2 };
        let mut m = Monitors::new(std::slice::from_ref(&cr), &ports()).unwrap();
        m.check(&[0, 0, 0, 0, 1, 0, 0]).unwrap();
        m.check(&[0, 0, 0, 0, 1, 0, 0]).unwrap();
        assert!(m.check(&[0, 0, 0, 0, 1, 0, 0]).unwrap_err().rule.contains("more than the sender's 2"));
        let mut m = Monitors::new(std::slice::from_ref(&cr), &ports()).unwrap();
        m.check(&[0, 0, 0, 0, 1, 0, 0]).unwrap();
        m.check(&[1, 0, 0, 0, 0, 0, 0]).unwrap(); // reset drops what was held
        assert!(m.check(&[0, 0, 0, 0, 0, 1, 0]).unwrap_err().rule.contains("no message held"));
        assert!(Monitors::new(&[cr], &ports()[..2]).err().unwrap().contains("no port take"));
    }

    #[test]
    fn a_flush_cancels_a_stalled_transfer_and_only_that_cycle() {
        let vr = Protocol::valid_ready("out", "v", "r", &["d"]).with_flush("fl");
        let mut m = Monitors::new(std::slice::from_ref(&vr), &ports()).unwrap();
        m.check(&[0, 1, 0, 7, 0, 0, 0]).unwrap(); // stalled with 7
        m.check(&[0, 0, 0, 0, 0, 0, 1]).unwrap(); // flushed: valid may drop
        m.check(&[0, 1, 0, 5, 0, 0, 0]).unwrap(); // a new stalled transfer with 5
        m.check(&[0, 1, 0, 6, 0, 0, 1]).unwrap(); // flushed: the data may change
        m.check(&[0, 1, 0, 4, 0, 0, 0]).unwrap(); // stalled with 4, after the flush
        let e = m.check(&[0, 1, 0, 3, 0, 0, 0]).unwrap_err(); // no flush: the rule holds again
        assert!(e.rule.starts_with("d changed while stalled, 0x4 -> 0x3"), "{e}");
        let missing = Protocol::valid_ready("out", "v", "r", &["d"]).with_flush("flush_i");
        assert!(Monitors::new(&[missing], &ports()).err().unwrap().contains("no port flush_i"));
    }
}
