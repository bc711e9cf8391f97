//! How the flow-level network's flows share links: older steps first, and the flows of one
//! step max-min fairly among themselves (progressive filling).
//!
//! A link of the packet-level network is a FIFO: a step's packets, queued before the next
//! step's, leave first, while the packets of one step's messages, sent by many chips at about
//! the same time, interleave. So the flows of the step with the lowest tag take what they can
//! first, max-min fairly among themselves; the next step's flows share what is left, and so
//! on. Sharing every flow max-min fairly regardless of its step was 10 % slow on a
//! hierarchical all-reduce (a step's message waited behind the next step's); serving every
//! flow first come, first served made each flow's rate depend on its rank in the queue, so no
//! two flows ended together and every end cost a pass over all flows (the pipelined all-reduce
//! of 1 GiB across two UltraServers did not finish in 300 s).

use super::paths::{Paths, Route};

/// One active flow: a message, or the part of one that crosses one of its source's links.
pub(super) struct Flow {
    /// The message (an index into the run's messages in flight).
    pub(super) msg: u32,
    /// The step the message belongs to: its sharing class.
    pub(super) tag: u32,
    /// Bytes still to move.
    pub(super) left: f64,
    /// Current rate in bytes per picosecond.
    pub(super) rate: f64,
    pub(super) route: Route,
    /// Whether its bytes count in its source link's queue (the link is a choice: `Paths::choice`).
    pub(super) queues: bool,
}

/// One edge (or aggregate): its capacity in bytes per ps; in a pass, what the flows given
/// rates so far leave of it, and the flows of the class being filled that use it (their shares
/// summed, those still rising counted, and where they start in the pass's list); and the bytes
/// queued on it as a source's link (one cache line).
#[derive(Clone, Copy)]
#[repr(align(64))]
pub(super) struct Link {
    pub(super) cap: f64,
    residual: f64,
    demand: f64,
    /// The pass `residual` belongs to, and the class the rest does.
    seen: u64,
    class: u64,
    queued: f64,
    /// The event `queued` belongs to.
    qtick: u64,
    /// Where the class's flows on this link go in `Scratch::on` as they are listed, then how
    /// many still rise.
    at: u32,
    rising: u32,
}

impl Link {
    pub(super) fn new(cap: f64) -> Link {
        Link { cap, residual: 0.0, demand: 0.0, seen: 0, class: 0, queued: 0.0, qtick: 0, at: 0, rising: 0 }
    }

    /// Bytes queued on this link as a source's link at event `tick` (none if no flow added
    /// any since).
    pub(super) fn queued_at(&self, tick: u64) -> f64 {
        if self.qtick == tick {
            self.queued
        } else {
            0.0
        }
    }

    /// Adds `bytes` to what is queued at event `tick`.
    pub(super) fn queue(&mut self, tick: u64, bytes: f64) {
        self.queued = self.queued_at(tick) + bytes;
        self.qtick = tick;
    }

    /// Whether the flows given rates leave nothing of it.
    #[inline(always)]
    fn full(&self) -> bool {
        self.residual <= self.cap * 1e-9
    }
}

/// Scratch lists of [`rates`].
#[derive(Default)]
pub(super) struct Scratch {
    order: Vec<u32>,
    /// The links a class uses, each with where its flows start in `on` and how many they are.
    used: Vec<(u32, u32, u32)>,
    on: Vec<u32>,
    /// Classes filled so far (`Link::class`).
    classes: u64,
}

/// Gives every flow its rate (see the module docs) as pass `pass` at time `now`; returns when
/// the next transfer ends (infinity if none moves). Deterministic: classes in tag order, flows
/// in each in their order in `flows`.
pub(super) fn rates(
    flows: &mut [Flow],
    links: &mut [Link],
    paths: &Paths,
    pass: u64,
    now: f64,
    s: &mut Scratch,
) -> f64 {
    let mut order = std::mem::take(&mut s.order);
    order.clear();
    // Flows number below `u32::MAX` (each is a message of a program `flatten` counted).
    order.extend(0..flows.len() as u32);
    if flows.windows(2).any(|w| w[1].tag < w[0].tag) {
        order.sort_by_key(|&i| flows[i as usize].tag);
    }
    let mut i = 0;
    while i < order.len() {
        let tag = flows[order[i] as usize].tag;
        let mut j = i + 1;
        while j < order.len() && flows[order[j] as usize].tag == tag {
            j += 1;
        }
        s.classes += 1;
        fill(&order[i..j], s, flows, links, paths, pass);
        i = j;
    }
    s.order = order;
    flows.iter().filter(|f| f.rate > 0.0).map(|f| now + f.left / f.rate).fold(f64::INFINITY, f64::min)
}

/// Progressive filling of one class: every flow still rising gains the same rate until a link
/// it uses is full; the flows through a full link stop; until none rises. Works per link, not
/// per flow: a flow is visited when the class starts and when it stops.
fn fill(class: &[u32], s: &mut Scratch, flows: &mut [Flow], links: &mut [Link], paths: &Paths, pass: u64) {
    let cls = s.classes;
    s.used.clear();
    // The links the class uses, their demand and flow counts.
    for &f in class {
        let f = &mut flows[f as usize];
        f.rate = -1.0; // rising
        paths.each(&f.route, |e, sh| {
            let l = &mut links[e as usize];
            if l.seen != pass {
                (l.seen, l.residual) = (pass, l.cap);
            }
            if l.class != cls {
                (l.class, l.demand, l.rising) = (cls, 0.0, 0);
                s.used.push((e, 0, 0));
            }
            l.demand += sh;
            l.rising += 1;
        });
    }
    // Each link's flows, in class order.
    let mut n = 0u32;
    for u in &mut s.used {
        let l = &mut links[u.0 as usize];
        (u.1, u.2) = (n, l.rising);
        (l.at, n) = (n, n + l.rising);
        l.rising = 0;
    }
    s.on.clear();
    s.on.resize(n as usize, 0);
    for &f in class {
        paths.each(&flows[f as usize].route, |e, _| {
            let l = &mut links[e as usize];
            s.on[(l.at + l.rising) as usize] = f;
            l.rising += 1;
        });
    }
    let mut level = 0.0;
    loop {
        s.used.retain(|u| links[u.0 as usize].rising > 0);
        let step = s
            .used
            .iter()
            .map(|u| &links[u.0 as usize])
            .map(|l| l.residual.max(0.0) / l.demand)
            .fold(f64::INFINITY, f64::min);
        if !step.is_finite() {
            break; // no flow rises, or those left use no link: they never move
        }
        level += step;
        for u in &s.used {
            let l = &mut links[u.0 as usize];
            l.residual -= step * l.demand;
        }
        let mut stopped = false;
        for &(e, at, count) in &s.used {
            if !links[e as usize].full() {
                continue;
            }
            for &f in &s.on[at as usize..(at + count) as usize] {
                let f = &mut flows[f as usize];
                if f.rate < 0.0 {
                    f.rate = level;
                    stopped = true;
                    paths.each(&f.route, |e, sh| {
                        let l = &mut links[e as usize];
                        l.demand -= sh;
                        l.rising -= 1;
                    });
                }
            }
        }
        if !stopped {
            break; // rounding left the bottleneck a hair above full
        }
    }
    for &f in class {
        let f = &mut flows[f as usize];
        if f.rate < 0.0 {
            f.rate = if level.is_finite() { level } else { 0.0 };
        }
    }
}
