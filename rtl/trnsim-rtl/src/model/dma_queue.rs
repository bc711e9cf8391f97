//! One DMA engine's descriptor queues and their arbiter (rtl/blocks/dma_queue.sv), cycle for
//! cycle; its stimulus and diff configuration. tests/dma_queue.rs checks it against trnsim-core's
//! own queue arbiter (`trnsim_core::dma::QueueArbiter`) with the engine's queue rules.

use crate::block::{Block, ModelVcd, PortInfo, VltError};
use crate::diff::DiffConfig;
use crate::stimulus::Stimulus;
use std::collections::VecDeque;
use std::path::Path;
use trnsim_kernel::SimRng;

/// Port indices of [`DmaQueue::ports`].
pub mod dma_queue_port {
    #![allow(missing_docs)]
    pub const CLK: usize = 0;
    pub const RST: usize = 1;
    pub const ENQ_VALID: usize = 2;
    pub const ENQ_QUEUE: usize = 3;
    pub const ENQ_TAG: usize = 4;
    pub const ENQ_PKTS: usize = 5;
    pub const ENQ_READY: usize = 6;
    pub const START_OK: usize = 7;
    pub const START: usize = 8;
    pub const START_QUEUE: usize = 9;
    pub const START_TAG: usize = 10;
    pub const START_PKT: usize = 11;
    pub const START_LAST: usize = 12;
    pub const READY: usize = 13;
    pub const EMPTY_RET: usize = 14;
    pub const COUNT: usize = 15;
}
use dma_queue_port as P;

/// Tag and packet-count widths of the block (the RTL's TW and NW).
pub const DMA_TAG_BITS: u32 = 8;
/// Packet-count width (a descriptor moves 0..=255 packets).
pub const DMA_PKT_BITS: u32 = 8;

#[derive(Clone, Copy, Debug)]
struct Desc {
    tag: u32,
    pkts: u32,
    /// Cycles until eligible (0: eligible).
    wait: u32,
}

/// This cycle's combinational outputs.
#[derive(Clone, Copy, Debug, Default)]
struct Eval {
    ready: u64,
    empty_ret: u64,
    start: bool,
    sel: usize,
    class: usize,
    tag: u32,
    pkt: u32,
    last: bool,
    enq_ready: bool,
}

/// The descriptor queues of one DMA engine: `queues` FIFOs of `depth` descriptors (tag, packet
/// count), each eligible `latency` cycles after it was enqueued, and the engine's arbiter
/// (round robin over ready queues, or with `qos` four strict-priority classes `q % 4`, round
/// robin inside each), at rtl/blocks/dma_queue.sv's ports.
///
/// Leaves out (against models/core/src/dma): the queues are bounded (`enq_ready` refuses a
/// descriptor for a full queue; the simulator's are unbounded), an eligible empty part leaves
/// its queue one per queue per cycle, and the queue whose empty head leaves is considered for
/// a packet from the next cycle (the simulator retires every eligible empty head in one tick
/// before it picks), at most one packet starts per cycle (the engine's `may_start` is the
/// `start_ok` input), and the parts' commands, packets and byte budget are the engine's.
pub struct DmaQueue {
    queues: usize,
    depth: usize,
    latency: u32,
    qos: bool,
    qw: u32,
    cw: u32,
    ports: Vec<PortInfo>,
    q: Vec<VecDeque<Desc>>,
    nxt: Vec<u32>,
    ptr: [usize; 4],
    rst: bool,
    enq_valid: bool,
    enq_queue: usize,
    enq_tag: u32,
    enq_pkts: u32,
    start_ok: bool,
    out: Eval,
    trace: Option<ModelVcd>,
    cycle: u64,
}

fn clog2(n: usize) -> u32 {
    usize::BITS - (n.max(1) - 1).leading_zeros()
}

impl DmaQueue {
    /// Empty queues: `queues` 1..=16, `depth` 1..=16, `latency` 1..=1024 cycles, `qos` the
    /// four-class arbiter (else round robin).
    pub fn new(queues: usize, depth: usize, latency: u32, qos: bool) -> DmaQueue {
        assert!(
            (1..=16).contains(&queues) && (1..=16).contains(&depth) && (1..=1024).contains(&latency),
            "dma_queue: 1..=16 queues of 1..=16 descriptors, latency 1..=1024"
        );
        let qw = clog2(queues).max(1);
        let cw = clog2(depth + 1);
        let port = |name, input, width| PortInfo { name, input, width };
        let ports = vec![
            port("clk", true, 1),
            port("rst", true, 1),
            port("enq_valid", true, 1),
            port("enq_queue", true, qw),
            port("enq_tag", true, DMA_TAG_BITS),
            port("enq_pkts", true, DMA_PKT_BITS),
            port("enq_ready", false, 1),
            port("start_ok", true, 1),
            port("start", false, 1),
            port("start_queue", false, qw),
            port("start_tag", false, DMA_TAG_BITS),
            port("start_pkt", false, DMA_PKT_BITS),
            port("start_last", false, 1),
            port("ready", false, queues as u32),
            port("empty_ret", false, queues as u32),
            port("count", false, queues as u32 * cw),
        ];
        let mut m = DmaQueue {
            queues,
            depth,
            latency,
            qos,
            qw,
            cw,
            ports,
            q: (0..queues).map(|_| VecDeque::with_capacity(depth)).collect(),
            nxt: vec![0; queues],
            ptr: [0; 4],
            rst: false,
            enq_valid: false,
            enq_queue: 0,
            enq_tag: 0,
            enq_pkts: 0,
            start_ok: false,
            out: Eval::default(),
            trace: None,
            cycle: 0,
        };
        m.out = m.eval();
        m
    }

    fn class(&self, q: usize) -> usize {
        if self.qos {
            q % 4
        } else {
            0
        }
    }

    fn eval(&self) -> Eval {
        let mut e = Eval::default();
        for (k, q) in self.q.iter().enumerate() {
            if let Some(h) = q.front().filter(|h| h.wait == 0) {
                if h.pkts > 0 {
                    e.ready |= 1 << k;
                } else {
                    e.empty_ret |= 1 << k;
                }
            }
        }
        'pick: for c in 0..4 {
            for k in 0..self.queues {
                let q = (self.ptr[c] + k) % self.queues;
                if e.ready >> q & 1 == 1 && self.class(q) == c {
                    (e.sel, e.class) = (q, c);
                    e.start = self.start_ok;
                    break 'pick;
                }
            }
        }
        if e.start {
            let h = self.q[e.sel][0];
            (e.tag, e.pkt, e.last) = (h.tag, self.nxt[e.sel], self.nxt[e.sel] + 1 == h.pkts);
        }
        e.enq_ready = self.enq_queue < self.queues && self.q[self.enq_queue].len() != self.depth;
        e
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

impl Block for DmaQueue {
    fn ports(&self) -> &[PortInfo] {
        &self.ports
    }

    fn set_input(&mut self, port: usize, v: u128) {
        match port {
            P::RST => self.rst = v & 1 == 1,
            P::ENQ_VALID => self.enq_valid = v & 1 == 1,
            P::ENQ_QUEUE => self.enq_queue = (v & ((1 << self.qw) - 1)) as usize,
            P::ENQ_TAG => self.enq_tag = (v & ((1 << DMA_TAG_BITS) - 1)) as u32,
            P::ENQ_PKTS => self.enq_pkts = (v & ((1 << DMA_PKT_BITS) - 1)) as u32,
            P::START_OK => self.start_ok = v & 1 == 1,
            _ => panic!("dma_queue: port {port} is not a data input"),
        }
    }

    fn settle(&mut self) -> Result<(), VltError> {
        self.out = self.eval();
        self.dump(false);
        Ok(())
    }

    fn output(&self, port: usize) -> u128 {
        let e = &self.out;
        match port {
            P::CLK => 0,
            P::RST => self.rst as u128,
            P::ENQ_VALID => self.enq_valid as u128,
            P::ENQ_QUEUE => self.enq_queue as u128,
            P::ENQ_TAG => self.enq_tag as u128,
            P::ENQ_PKTS => self.enq_pkts as u128,
            P::ENQ_READY => e.enq_ready as u128,
            P::START_OK => self.start_ok as u128,
            P::START => e.start as u128,
            P::START_QUEUE => {
                if e.start {
                    e.sel as u128
                } else {
                    0
                }
            }
            P::START_TAG => e.tag as u128,
            P::START_PKT => e.pkt as u128,
            P::START_LAST => e.last as u128,
            P::READY => e.ready as u128,
            P::EMPTY_RET => e.empty_ret as u128,
            P::COUNT => self.q.iter().enumerate().fold(0, |m, (k, q)| m | (q.len() as u128) << (k as u32 * self.cw)),
            _ => panic!("dma_queue: no port {port}"),
        }
    }

    fn posedge(&mut self) -> Result<(), VltError> {
        if self.rst {
            self.q.iter_mut().for_each(VecDeque::clear);
            self.nxt.iter_mut().for_each(|n| *n = 0);
            self.ptr = [0; 4];
        } else {
            let e = self.eval();
            for k in 0..self.queues {
                for d in self.q[k].iter_mut() {
                    d.wait = d.wait.saturating_sub(1);
                }
                let started = e.start && e.sel == k;
                if started {
                    self.nxt[k] = if e.last { 0 } else { self.nxt[k] + 1 };
                }
                if (started && e.last) || e.empty_ret >> k & 1 == 1 {
                    self.q[k].pop_front();
                }
                if self.enq_valid && e.enq_ready && self.enq_queue == k {
                    let d = Desc { tag: self.enq_tag, pkts: self.enq_pkts, wait: self.latency - 1 };
                    self.q[k].push_back(d);
                }
            }
            if e.start {
                self.ptr[e.class] = (e.sel + 1) % self.queues;
            }
        }
        self.out = self.eval();
        self.dump(true);
        self.cycle += 1;
        Ok(())
    }

    fn open_vcd(&mut self, path: &Path) -> Result<(), VltError> {
        if self.trace.is_some() {
            return Err(VltError::TraceAlreadyOpen);
        }
        self.trace = Some(ModelVcd::create(path, "dma_queue", &self.ports, 10 * self.cycle)?);
        Ok(())
    }

    fn close_vcd(&mut self) {
        self.trace = None;
    }
}

impl DiffConfig {
    /// The DMA descriptor queues: every output every cycle (idle `start_*` are 0 on both sides).
    pub fn dma_queue(cycles: u64) -> DiffConfig {
        DiffConfig { name: "dma_queue".into(), ..DiffConfig::every_cycle(cycles) }
    }
}

/// Random descriptors for [`DmaQueue`], in phases of enqueue rate (0.05 to 1 per cycle),
/// engine availability (`start_ok` 0.05 to 1), queue mix (all queues, two hot queues, one
/// priority class, out-of-range queue numbers) and packet counts (1-4 mostly, empty parts,
/// long parts up to 255), with a reset at cycles 0-1 and rarely afterwards. Open loop: it does
/// not hold a refused descriptor (the block does not care).
pub struct DmaQueueStimulus {
    rng: SimRng,
    queues: u64,
    phase_left: u64,
    p_enq: f64,
    p_ok: f64,
    mix: u8,
    hot: [u64; 2],
    p_empty: f64,
    p_long: f64,
}

impl DmaQueueStimulus {
    /// For a block of `queues` queues, from `seed` (the kernel's deterministic RNG, stream 11).
    pub fn new(queues: usize, seed: u64) -> DmaQueueStimulus {
        DmaQueueStimulus {
            rng: SimRng::new(seed, 11),
            queues: queues as u64,
            phase_left: 0,
            p_enq: 0.5,
            p_ok: 0.5,
            mix: 0,
            hot: [0, 1],
            p_empty: 0.1,
            p_long: 0.0,
        }
    }

    /// A descriptor's packet count.
    pub fn pkts(rng: &mut SimRng, p_empty: f64, p_long: f64) -> u128 {
        if rng.chance(p_empty) {
            0
        } else if rng.chance(p_long) {
            5 + u128::from(rng.below(251))
        } else {
            1 + u128::from(rng.below(4))
        }
    }
}

impl Stimulus for DmaQueueStimulus {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        let rng = &mut self.rng;
        if self.phase_left == 0 {
            self.p_enq = [0.05, 0.3, 0.6, 1.0][rng.below(4) as usize];
            self.p_ok = [0.05, 0.3, 0.7, 1.0][rng.below(4) as usize];
            self.mix = rng.below(4) as u8;
            self.hot = [rng.below(self.queues), rng.below(self.queues)];
            self.p_empty = [0.0, 0.1, 0.5][rng.below(3) as usize];
            self.p_long = [0.0, 0.0, 0.05][rng.below(3) as usize];
            self.phase_left = 16 + rng.below(600);
        }
        self.phase_left -= 1;
        let q = match self.mix {
            0 => rng.below(self.queues),
            1 => self.hot[rng.below(2) as usize],
            // One priority class (QoS), or a queue number past the last (when there is one).
            2 => (self.hot[0] % 4 + 4 * rng.below(4)) % self.queues,
            _ => rng.below(self.queues.next_power_of_two().max(2)),
        };
        inputs[P::RST] = u128::from(cycle < 2 || rng.below(30_000) == 0);
        inputs[P::ENQ_VALID] = u128::from(rng.chance(self.p_enq));
        inputs[P::ENQ_QUEUE] = u128::from(q);
        inputs[P::ENQ_TAG] = u128::from(rng.below(256));
        inputs[P::ENQ_PKTS] = Self::pkts(rng, self.p_empty, self.p_long);
        inputs[P::START_OK] = u128::from(rng.chance(self.p_ok));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(m: &mut DmaQueue, enq: Option<(u128, u128, u128)>, ok: bool) -> [u128; 6] {
        let (q, tag, pkts) = enq.unwrap_or((0, 0, 0));
        for (p, v) in [(P::ENQ_VALID, enq.is_some() as u128), (P::ENQ_QUEUE, q), (P::ENQ_TAG, tag)] {
            m.set_input(p, v);
        }
        m.set_input(P::ENQ_PKTS, pkts);
        m.set_input(P::START_OK, ok as u128);
        m.settle().unwrap();
        let o =
            [P::START, P::START_QUEUE, P::START_TAG, P::START_PKT, P::START_LAST, P::EMPTY_RET].map(|p| m.output(p));
        m.posedge().unwrap();
        o
    }

    #[test]
    fn dma_queue_waits_the_latency_then_takes_turns_and_retires_empty_parts() {
        let mut m = DmaQueue::new(4, 2, 3, false);
        step(&mut m, Some((2, 7, 2)), true);
        step(&mut m, Some((1, 5, 1)), true);
        assert_eq!(step(&mut m, Some((3, 9, 0)), true)[0], 0, "queue 2's part is 2 cycles old: not yet");
        assert_eq!(step(&mut m, None, true), [1, 2, 7, 0, 0, 0], "eligible 3 cycles after it was enqueued");
        assert_eq!(step(&mut m, None, true), [1, 1, 5, 0, 1, 0], "round robin from one past queue 2 wraps to 1");
        assert_eq!(step(&mut m, None, false), [0, 0, 0, 0, 0, 1 << 3], "queue 3's empty part leaves without a start");
        assert_eq!(step(&mut m, None, true), [1, 2, 7, 1, 1, 0]);
        assert_eq!(m.output(P::COUNT), 0);
        for k in 0..3 {
            step(&mut m, Some((0, k, 1)), false);
        }
        assert_eq!((m.output(P::COUNT) & 3, m.output(P::ENQ_READY)), (2, 0), "the third is refused");
    }
}
