//! Reactive constrained-random stimulus: drivers that see the block's outputs of the previous
//! cycle ([`Stimulus::observe`]) and keep the interface's rules as a real neighbour would,
//! choosing what to do next from weighted sequences. Seeded and deterministic: the same seed
//! is the same run (`trnsim diff BLOCK --stimulus reactive --seed S` replays it).
//!
//! - [`CreditSender`]: the sender and receiver around a credit-based link buffer (the link
//!   FIFO): it sends only with a credit (starting with the buffer's depth, one back per
//!   `credit_ret`), in sequences of bursts, idles and sparse traffic, while the receiver stalls,
//!   streams or takes at random.
//! - [`HoldingRequesters`]: requesters of a shared bank that hold a request (valid, write,
//!   address, data) until it is granted, as a valid/ready master must, with sequences of hot
//!   addresses, read or write mixes and idles.

use crate::block::PortInfo;
use crate::stimulus::Stimulus;
use trnsim_kernel::SimRng;

/// One of `options`, chosen with probability proportional to its weight.
pub fn weighted<T: Copy>(rng: &mut SimRng, options: &[(u32, T)]) -> T {
    let total: u64 = options.iter().map(|&(w, _)| u64::from(w)).sum();
    let mut x = rng.below(total.max(1));
    for &(w, t) in options {
        if x < u64::from(w) {
            return t;
        }
        x -= u64::from(w);
    }
    options[options.len() - 1].1
}

fn index(ports: &[PortInfo], name: &str) -> usize {
    ports.iter().position(|p| p.name == name).unwrap_or_else(|| panic!("the block has no port {name}"))
}

/// What the sender does for a while.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Send {
    /// Send whenever a credit is there.
    Burst,
    /// Send nothing.
    Idle,
    /// Send with this probability when a credit is there.
    Sparse(f64),
}

/// What the receiver does for a while.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Take {
    /// Always ready.
    Stream,
    /// Never ready (the buffer fills).
    Stall,
    /// Ready with this probability.
    Random(f64),
}

/// Sender and receiver of a credit-based link buffer with ports `rst`, `in_valid`,
/// `in_data`, `out_ready` (driven) and `credit_ret` (observed).
pub struct CreditSender {
    rng: SimRng,
    depth: u64,
    credits: u64,
    send: Send,
    take: Take,
    send_left: u64,
    take_left: u64,
    /// Messages sent and credits spent (never more than the credits held).
    pub sent: u64,
    p: [usize; 5],
}

impl CreditSender {
    /// For a buffer of `depth` entries with `ports`, from `seed`.
    pub fn new(ports: &[PortInfo], depth: u64, seed: u64) -> CreditSender {
        let p = ["rst", "in_valid", "in_data", "out_ready", "credit_ret"].map(|n| index(ports, n));
        CreditSender {
            rng: SimRng::new(seed, 21),
            depth,
            credits: depth,
            send: Send::Burst,
            take: Take::Stream,
            send_left: 0,
            take_left: 0,
            sent: 0,
            p,
        }
    }
}

impl Stimulus for CreditSender {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        let [rst, in_valid, in_data, out_ready, _] = self.p;
        if self.send_left == 0 {
            self.send = weighted(&mut self.rng, &[(4, Send::Burst), (2, Send::Idle), (3, Send::Sparse(0.3))]);
            self.send_left = 1 + self.rng.below(64);
        }
        if self.take_left == 0 {
            self.take = weighted(&mut self.rng, &[(3, Take::Stream), (2, Take::Stall), (3, Take::Random(0.5))]);
            self.take_left = 1 + self.rng.below(64);
        }
        self.send_left -= 1;
        self.take_left -= 1;
        let reset = cycle < 2 || self.rng.below(8192) == 0;
        inputs[rst] = u128::from(reset);
        let want = match self.send {
            Send::Burst => true,
            Send::Idle => false,
            Send::Sparse(p) => self.rng.chance(p),
        };
        let send = !reset && want && self.credits > 0;
        inputs[in_valid] = u128::from(send);
        inputs[in_data] = (self.rng.next_u64() as u128) << 64 | self.rng.next_u64() as u128;
        inputs[out_ready] = u128::from(match self.take {
            Take::Stream => true,
            Take::Stall => false,
            Take::Random(p) => self.rng.chance(p),
        });
        if send {
            self.credits -= 1;
            self.sent += 1;
        }
    }

    fn observe(&mut self, _cycle: u64, ports: &[u128]) {
        let [rst, _, _, _, credit_ret] = self.p;
        if ports[rst] & 1 == 1 {
            // Reset empties the buffer and drops a pending credit: the sender starts over.
            self.credits = self.depth;
        } else if ports[credit_ret] & 1 == 1 {
            self.credits = (self.credits + 1).min(self.depth);
        }
    }
}

/// What the requesters do for a while.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Pattern {
    /// New requests to a few hot addresses (conflicts, read-after-write).
    Hot,
    /// New requests anywhere.
    Spread,
    /// No new requests (held ones stay until granted).
    Quiet,
}

/// Requesters of a shared bank (ports `rst`, `req_valid`, `req_write`, `req_addr`,
/// `req_wdata` driven; `grant` observed), each holding its request until granted.
pub struct HoldingRequesters {
    rng: SimRng,
    req: usize,
    aw: u32,
    width: u32,
    words: u64,
    /// Each requester's request: (write, address, data), held until granted.
    held: Vec<Option<(bool, u64, u128)>>,
    pattern: Pattern,
    p_write: f64,
    left: u64,
    hot: [u64; 2],
    p: [usize; 6],
}

impl HoldingRequesters {
    /// For `req` requesters of a bank of `words` words of `width` bits with `ports`.
    pub fn new(ports: &[PortInfo], words: u64, width: u32, req: usize, seed: u64) -> HoldingRequesters {
        let p = ["rst", "req_valid", "req_write", "req_addr", "req_wdata", "grant"].map(|n| index(ports, n));
        HoldingRequesters {
            rng: SimRng::new(seed, 22),
            req,
            aw: words.trailing_zeros(),
            width,
            words,
            held: vec![None; req],
            pattern: Pattern::Spread,
            p_write: 0.5,
            left: 0,
            hot: [0, 1],
            p,
        }
    }
}

impl Stimulus for HoldingRequesters {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        let [rst, valid, write, addr, wdata, _] = self.p;
        if self.left == 0 {
            self.pattern = weighted(&mut self.rng, &[(3, Pattern::Hot), (3, Pattern::Spread), (1, Pattern::Quiet)]);
            self.p_write = weighted(&mut self.rng, &[(1, 0.1), (2, 0.5), (1, 0.9)]);
            self.hot = [self.rng.below(self.words), self.rng.below(self.words)];
            self.left = 1 + self.rng.below(128);
        }
        self.left -= 1;
        let reset = cycle < 2 || self.rng.below(8192) == 0;
        inputs[rst] = u128::from(reset);
        if reset {
            self.held.iter_mut().for_each(|h| *h = None);
        }
        let (mut v, mut w, mut a, mut d) = (0u128, 0u128, 0u128, 0u128);
        let mask = if self.width >= 128 { u128::MAX } else { (1u128 << self.width) - 1 };
        for k in 0..self.req {
            if self.held[k].is_none() && !reset {
                let new = match self.pattern {
                    Pattern::Quiet => false,
                    _ => self.rng.chance(0.7),
                };
                if new {
                    let at = match self.pattern {
                        Pattern::Hot => self.hot[self.rng.below(2) as usize],
                        _ => self.rng.below(self.words),
                    };
                    let data = ((self.rng.next_u64() as u128) << 64 | self.rng.next_u64() as u128) & mask;
                    self.held[k] = Some((self.rng.chance(self.p_write), at, data));
                }
            }
            if let Some((wr, at, data)) = self.held[k] {
                v |= 1 << k;
                w |= u128::from(wr) << k;
                a |= u128::from(at) << (k as u32 * self.aw);
                d |= data << (k as u32 * self.width);
            }
        }
        inputs[valid] = v;
        inputs[write] = w;
        inputs[addr] = a;
        inputs[wdata] = d;
    }

    fn observe(&mut self, _cycle: u64, ports: &[u128]) {
        let [rst, valid, _, _, _, grant] = self.p;
        if ports[rst] & 1 == 1 {
            return;
        }
        for k in 0..self.req {
            if (ports[grant] >> k) & 1 == 1 && (ports[valid] >> k) & 1 == 1 {
                self.held[k] = None;
            }
        }
    }
}

/// What the DMA engine does for a while.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Engine {
    /// Starts a packet whenever one is ready.
    Busy,
    /// Starts none (the queues fill).
    Stalled,
    /// May start with this probability.
    Random(f64),
}

/// The producer and the engine around DMA descriptor queues (ports `rst`, `enq_valid`,
/// `enq_queue`, `enq_tag`, `enq_pkts`, `start_ok` driven; `enq_ready` observed): the producer
/// holds a descriptor (valid, queue, tag, packets) until it is taken, as a valid/ready master
/// must, in sequences of bursts to one queue, spread traffic and idles; the engine is busy,
/// stalled or random.
pub struct HoldingDescriptors {
    rng: SimRng,
    queues: u64,
    held: Option<(u64, u128, u128)>,
    burst_queue: Option<u64>,
    p_new: f64,
    engine: Engine,
    left: u64,
    eng_left: u64,
    p: [usize; 7],
}

impl HoldingDescriptors {
    /// For a block of `queues` queues with `ports`, from `seed`.
    pub fn new(ports: &[PortInfo], queues: u64, seed: u64) -> HoldingDescriptors {
        let p =
            ["rst", "enq_valid", "enq_queue", "enq_tag", "enq_pkts", "start_ok", "enq_ready"].map(|n| index(ports, n));
        HoldingDescriptors {
            rng: SimRng::new(seed, 23),
            queues,
            held: None,
            burst_queue: None,
            p_new: 0.5,
            engine: Engine::Busy,
            left: 0,
            eng_left: 0,
            p,
        }
    }
}

impl Stimulus for HoldingDescriptors {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        let [rst, valid, queue, tag, pkts, start_ok, _] = self.p;
        if self.left == 0 {
            (self.burst_queue, self.p_new) =
                weighted(&mut self.rng, &[(3, (Some(0), 1.0)), (3, (None, 0.7)), (2, (None, 0.2)), (1, (None, 0.0))]);
            self.burst_queue = self.burst_queue.map(|_| self.rng.below(self.queues));
            self.left = 1 + self.rng.below(96);
        }
        if self.eng_left == 0 {
            self.engine = weighted(&mut self.rng, &[(3, Engine::Busy), (2, Engine::Stalled), (3, Engine::Random(0.4))]);
            self.eng_left = 1 + self.rng.below(96);
        }
        self.left -= 1;
        self.eng_left -= 1;
        let reset = cycle < 2 || self.rng.below(16_384) == 0;
        inputs[rst] = u128::from(reset);
        if reset {
            self.held = None;
        }
        if self.held.is_none() && !reset && self.rng.chance(self.p_new) {
            let q = self.burst_queue.unwrap_or_else(|| self.rng.below(self.queues));
            let n = crate::model::DmaQueueStimulus::pkts(&mut self.rng, 0.1, 0.02);
            self.held = Some((q, u128::from(self.rng.below(256)), n));
        }
        inputs[valid] = u128::from(self.held.is_some());
        if let Some((q, t, n)) = self.held {
            (inputs[queue], inputs[tag], inputs[pkts]) = (u128::from(q), t, n);
        }
        inputs[start_ok] = u128::from(match self.engine {
            Engine::Busy => true,
            Engine::Stalled => false,
            Engine::Random(p) => self.rng.chance(p),
        });
    }

    fn observe(&mut self, _cycle: u64, ports: &[u128]) {
        let [rst, valid, _, _, _, _, ready] = self.p;
        if ports[rst] & 1 == 0 && ports[valid] & 1 == 1 && ports[ready] & 1 == 1 {
            self.held = None;
        }
    }
}

/// The two neighbours of a link transmitter's replay buffer (ports `rst`, `dllp_valid`,
/// `dllp_nak`, `dllp_seq`, `lane_ready`, `new_valid`, `new_data` driven; `tx_valid`, `tx_seq`,
/// `tx_replay`, `new_take` observed): a packer that holds its unit until it is taken, and the
/// link's far end as trnsim-fabric's `LinkRx` behaves (go-back-N): a unit is lost on the wire
/// with a phase's error rate; the receiver takes the expected sequence number, ACKs every
/// `ack_every` units (and duplicates at once), NAKs the expected number when a unit is lost
/// unless a NAK is outstanding, and its DLLPs arrive `latency` cycles later, one per cycle. A
/// lost replay is left to the transmitter's timer.
pub struct LinkFarEnd {
    rng: SimRng,
    mask: u32,
    half: u32,
    /// The packer's unit, held until taken.
    held: Option<u128>,
    expected: u32,
    nak_out: bool,
    unacked: u32,
    ack_every: u32,
    latency: u64,
    p_err: f64,
    p_lane: f64,
    p_new: f64,
    left: u64,
    /// DLLPs on the way back: (arrival cycle, NAK, sequence number).
    dllps: std::collections::VecDeque<(u64, bool, u32)>,
    p: [usize; 11],
}

impl LinkFarEnd {
    /// For a buffer with `seq_bits`-bit sequence numbers and `ports`, from `seed`.
    pub fn new(ports: &[PortInfo], seq_bits: u32, seed: u64) -> LinkFarEnd {
        let p = [
            "rst",
            "dllp_valid",
            "dllp_nak",
            "dllp_seq",
            "lane_ready",
            "new_valid",
            "new_data",
            "tx_valid",
            "tx_seq",
            "tx_replay",
            "new_take",
        ]
        .map(|n| index(ports, n));
        LinkFarEnd {
            rng: SimRng::new(seed, 24),
            mask: (1 << seq_bits) - 1,
            half: 1 << (seq_bits - 1),
            held: None,
            expected: 0,
            nak_out: false,
            unacked: 0,
            ack_every: 4,
            latency: 8,
            p_err: 0.01,
            p_lane: 1.0,
            p_new: 1.0,
            left: 0,
            dllps: std::collections::VecDeque::new(),
            p,
        }
    }
}

impl Stimulus for LinkFarEnd {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        let [rst, dv, dn, ds, lane, nv, nd, ..] = self.p;
        if self.left == 0 {
            self.p_err = weighted(&mut self.rng, &[(2, 0.0), (3, 0.01), (2, 0.1), (1, 0.5)]);
            self.p_lane = weighted(&mut self.rng, &[(3, 1.0), (2, 0.5), (1, 0.1)]);
            self.p_new = weighted(&mut self.rng, &[(3, 1.0), (2, 0.3), (1, 0.0)]);
            self.ack_every = 1 + self.rng.below(8) as u32;
            self.latency = 1 + self.rng.below(40);
            self.left = 64 + self.rng.below(2000);
        }
        self.left -= 1;
        let reset = cycle < 2 || self.rng.below(50_000) == 0;
        inputs[rst] = u128::from(reset);
        if reset {
            (self.held, self.expected, self.nak_out, self.unacked) = (None, 0, false, 0);
            self.dllps.clear();
        }
        if self.held.is_none() && !reset && self.rng.chance(self.p_new) {
            self.held = Some(u128::from(self.rng.next_u64()));
        }
        inputs[nv] = u128::from(self.held.is_some());
        if let Some(d) = self.held {
            inputs[nd] = d;
        }
        inputs[lane] = u128::from(self.rng.chance(self.p_lane));
        inputs[dv] = 0;
        if self.dllps.front().is_some_and(|d| d.0 <= cycle) {
            let (_, nak, seq) = self.dllps.pop_front().unwrap_or_default();
            (inputs[dv], inputs[dn], inputs[ds]) = (1, u128::from(nak), u128::from(seq));
        }
    }

    fn observe(&mut self, cycle: u64, ports: &[u128]) {
        let [rst, .., tx_valid, tx_seq, _, new_take] = self.p;
        if ports[rst] & 1 == 1 {
            return;
        }
        if ports[new_take] & 1 == 1 {
            self.held = None;
        }
        if ports[tx_valid] & 1 == 0 {
            return;
        }
        let seq = ports[tx_seq] as u32;
        let due = cycle + self.latency;
        let last = self.expected.wrapping_sub(1) & self.mask;
        if self.rng.chance(self.p_err) {
            // Lost on the wire: ask for the expected one again, once.
            if !self.nak_out {
                self.nak_out = true;
                self.dllps.push_back((due, true, self.expected));
            }
        } else if seq == self.expected {
            self.expected = (self.expected + 1) & self.mask;
            self.nak_out = false;
            self.unacked += 1;
            if self.unacked >= self.ack_every {
                self.unacked = 0;
                self.dllps.push_back((due, false, self.expected.wrapping_sub(1) & self.mask));
            }
        } else if self.expected.wrapping_sub(seq) & self.mask <= self.half {
            // A duplicate (a replay of what arrived already): ACK at once.
            self.dllps.push_back((due, false, last));
        }
    }
}
