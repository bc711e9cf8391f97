//! A link transmitter's go-back-N replay buffer (rtl/blocks/replay_buf.sv), cycle for cycle; its
//! stimulus and diff configuration. tests/replay_buf.rs checks it against trnsim-fabric's own
//! `link::ReplayBuffer` (the one `LinkTx` runs).

use crate::block::{Block, ModelVcd, PortInfo, VltError};
use crate::diff::DiffConfig;
use crate::stimulus::Stimulus;
use std::collections::VecDeque;
use std::path::Path;
use trnsim_kernel::SimRng;

/// Port indices of [`ReplayBuf::ports`].
pub mod replay_buf_port {
    #![allow(missing_docs)]
    pub const CLK: usize = 0;
    pub const RST: usize = 1;
    pub const DLLP_VALID: usize = 2;
    pub const DLLP_NAK: usize = 3;
    pub const DLLP_SEQ: usize = 4;
    pub const LANE_READY: usize = 5;
    pub const NEW_VALID: usize = 6;
    pub const NEW_DATA: usize = 7;
    pub const NEW_TAKE: usize = 8;
    pub const TX_VALID: usize = 9;
    pub const TX_SEQ: usize = 10;
    pub const TX_DATA: usize = 11;
    pub const TX_REPLAY: usize = 12;
    pub const COUNT: usize = 13;
    pub const REPLAYING: usize = 14;
    pub const TIMEOUT: usize = 15;
}
use replay_buf_port as P;

/// This cycle's combinational results (steps 1-3 of the block).
#[derive(Clone, Copy, Debug, Default)]
struct Eval {
    purge: usize,
    rp: usize,
    rpl: bool,
    prog: bool,
    fire: bool,
    tx: Option<(u32, u128, bool)>,
}

/// The replay buffer of a link transmitter: `capacity` units of `data_bits`, `seq_bits`-bit
/// sequence numbers, a replay timer of `timeout` cycles, at rtl/blocks/replay_buf.sv's ports
/// (see there for the rules; they are trnsim-fabric's `ReplayBuffer`'s).
///
/// Leaves out (against models/fabric/src/link/tx.rs): the packer, credits and wire timing
/// (`new_valid` is "a unit is ready", `lane_ready` "the lanes are free"), one DLLP per cycle
/// (the transmitter drains several per tick), the epoch (replays are counted by the receiver
/// side here), bit errors, and the unbounded sequence numbers of the model (they wrap at
/// `seq_bits`; an ACK or NAK more than half the sequence space behind the oldest unit counts
/// as stale).
pub struct ReplayBuf {
    capacity: usize,
    seq_bits: u32,
    data_bits: u32,
    timeout: u32,
    ports: Vec<PortInfo>,
    units: VecDeque<u128>,
    hs: u32,
    rp: usize,
    rpl: bool,
    age: u32,
    rst: bool,
    dllp_valid: bool,
    dllp_nak: bool,
    dllp_seq: u32,
    lane_ready: bool,
    new_valid: bool,
    new_data: u128,
    out: Eval,
    trace: Option<ModelVcd>,
    cycle: u64,
}

fn clog2(n: usize) -> u32 {
    usize::BITS - (n.max(1) - 1).leading_zeros()
}

impl ReplayBuf {
    /// An empty buffer: `capacity` 1..=1024 units (less than half the sequence space),
    /// `seq_bits` 2..=16, `data_bits` 1..=64, `timeout` 1..=65535 cycles.
    pub fn new(capacity: usize, seq_bits: u32, data_bits: u32, timeout: u32) -> ReplayBuf {
        assert!(
            (2..=16).contains(&seq_bits)
                && (1..=1024).contains(&capacity)
                && capacity < 1 << (seq_bits - 1)
                && (1..=64).contains(&data_bits)
                && (1..=65535).contains(&timeout),
            "replay_buf: capacity 1..=1024 below 2^(seq_bits - 1), seq_bits 2..=16, data_bits 1..=64, timeout \
             1..=65535"
        );
        let port = |name, input, width| PortInfo { name, input, width };
        let ports = vec![
            port("clk", true, 1),
            port("rst", true, 1),
            port("dllp_valid", true, 1),
            port("dllp_nak", true, 1),
            port("dllp_seq", true, seq_bits),
            port("lane_ready", true, 1),
            port("new_valid", true, 1),
            port("new_data", true, data_bits),
            port("new_take", false, 1),
            port("tx_valid", false, 1),
            port("tx_seq", false, seq_bits),
            port("tx_data", false, data_bits),
            port("tx_replay", false, 1),
            port("count", false, clog2(capacity + 1)),
            port("replaying", false, 1),
            port("timeout", false, 1),
        ];
        let mut m = ReplayBuf {
            capacity,
            seq_bits,
            data_bits,
            timeout,
            ports,
            units: VecDeque::with_capacity(capacity),
            hs: 0,
            rp: 0,
            rpl: false,
            age: 0,
            rst: false,
            dllp_valid: false,
            dllp_nak: false,
            dllp_seq: 0,
            lane_ready: false,
            new_valid: false,
            new_data: 0,
            out: Eval::default(),
            trace: None,
            cycle: 0,
        };
        m.out = m.eval();
        m
    }

    fn seq_mask(&self) -> u32 {
        (1 << self.seq_bits) - 1
    }

    fn eval(&self) -> Eval {
        let cnt = self.units.len();
        let d = self.dllp_seq.wrapping_sub(self.hs) & self.seq_mask();
        let mut purge = 0;
        if self.dllp_valid && d < 1 << (self.seq_bits - 1) {
            purge = (d as usize + usize::from(!self.dllp_nak)).min(cnt);
        }
        let cnt1 = cnt - purge;
        let mut e = Eval {
            purge,
            rp: self.rp.saturating_sub(purge),
            rpl: self.rpl && cnt1 != 0,
            prog: purge != 0,
            ..Eval::default()
        };
        if self.dllp_valid && self.dllp_nak && cnt1 != 0 {
            (e.rpl, e.rp, e.prog) = (true, 0, true);
        }
        e.fire = cnt1 != 0 && !e.prog && self.age >= self.timeout;
        if e.fire {
            (e.rpl, e.rp) = (true, 0);
        }
        let hs1 = self.hs.wrapping_add(purge as u32);
        if self.lane_ready && e.rpl {
            let seq = hs1.wrapping_add(e.rp as u32) & self.seq_mask();
            e.tx = Some((seq, self.units[purge + e.rp], true));
        } else if self.lane_ready && self.new_valid && cnt1 < self.capacity {
            e.tx = Some((hs1.wrapping_add(cnt1 as u32) & self.seq_mask(), self.new_data, false));
        }
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

impl Block for ReplayBuf {
    fn ports(&self) -> &[PortInfo] {
        &self.ports
    }

    fn set_input(&mut self, port: usize, v: u128) {
        match port {
            P::RST => self.rst = v & 1 == 1,
            P::DLLP_VALID => self.dllp_valid = v & 1 == 1,
            P::DLLP_NAK => self.dllp_nak = v & 1 == 1,
            P::DLLP_SEQ => self.dllp_seq = (v & u128::from(self.seq_mask())) as u32,
            P::LANE_READY => self.lane_ready = v & 1 == 1,
            P::NEW_VALID => self.new_valid = v & 1 == 1,
            P::NEW_DATA => self.new_data = v & ((1u128 << self.data_bits) - 1),
            _ => panic!("replay_buf: port {port} is not a data input"),
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
            P::DLLP_VALID => self.dllp_valid as u128,
            P::DLLP_NAK => self.dllp_nak as u128,
            P::DLLP_SEQ => self.dllp_seq as u128,
            P::LANE_READY => self.lane_ready as u128,
            P::NEW_VALID => self.new_valid as u128,
            P::NEW_DATA => self.new_data,
            P::NEW_TAKE => e.tx.is_some_and(|t| !t.2) as u128,
            P::TX_VALID => e.tx.is_some() as u128,
            P::TX_SEQ => e.tx.map_or(0, |t| t.0 as u128),
            P::TX_DATA => e.tx.map_or(0, |t| t.1),
            P::TX_REPLAY => e.tx.is_some_and(|t| t.2) as u128,
            P::COUNT => self.units.len() as u128,
            P::REPLAYING => self.rpl as u128,
            P::TIMEOUT => e.fire as u128,
            _ => panic!("replay_buf: no port {port}"),
        }
    }

    fn posedge(&mut self) -> Result<(), VltError> {
        if self.rst {
            self.units.clear();
            (self.hs, self.rp, self.rpl, self.age) = (0, 0, false, 0);
        } else {
            let e = self.eval();
            self.units.drain(..e.purge);
            self.hs = self.hs.wrapping_add(e.purge as u32) & self.seq_mask();
            let was_empty = self.units.is_empty();
            (self.rp, self.rpl) = (e.rp, e.rpl);
            let mut pushed = false;
            match e.tx {
                Some((_, _, true)) => {
                    self.rp = e.rp + 1;
                    self.rpl = e.rp + 1 < self.units.len();
                }
                Some((_, data, false)) => {
                    self.units.push_back(data);
                    pushed = true;
                }
                None => {}
            }
            self.age = if e.prog || e.fire || (pushed && was_empty) { 1 } else { (self.age + 1).min(self.timeout) };
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
        self.trace = Some(ModelVcd::create(path, "replay_buf", &self.ports, 10 * self.cycle)?);
        Ok(())
    }

    fn close_vcd(&mut self) {
        self.trace = None;
    }
}

impl DiffConfig {
    /// The replay buffer: every output every cycle (idle `tx_*` are 0 on both sides).
    pub fn replay_buf(cycles: u64) -> DiffConfig {
        DiffConfig { name: "replay_buf".into(), ..DiffConfig::every_cycle(cycles) }
    }
}

/// A receiver for [`ReplayBuf`] as the link's far end behaves: it keeps its own copy of what
/// was sent (a shadow model), ACKs what it has seen (coalesced, now and then late), NAKs a
/// unit as if it failed its CRC, sends stale or repeated ACKs and NAKs, and falls silent long
/// enough for the replay timer (a tenth of the phases); the lanes are free at 1/4 to all cycles, and new units come in
/// bursts or trickles. Phases of these rates; a reset at cycles 0-1 and rarely afterwards.
pub struct ReplayBufStimulus {
    shadow: ReplayBuf,
    rng: SimRng,
    phase_left: u64,
    p_lane: f64,
    p_new: f64,
    p_ack: f64,
    p_nak: f64,
    p_odd: f64,
    timeout: u64,
}

impl ReplayBufStimulus {
    /// For a buffer like [`ReplayBuf::new`]'s, from `seed` (the kernel's deterministic RNG,
    /// stream 12).
    pub fn new(capacity: usize, seq_bits: u32, data_bits: u32, timeout: u32, seed: u64) -> ReplayBufStimulus {
        ReplayBufStimulus {
            shadow: ReplayBuf::new(capacity, seq_bits, data_bits, timeout),
            rng: SimRng::new(seed, 12),
            phase_left: 0,
            p_lane: 1.0,
            p_new: 1.0,
            p_ack: 0.1,
            p_nak: 0.01,
            p_odd: 0.01,
            timeout: u64::from(timeout),
        }
    }
}

impl Stimulus for ReplayBufStimulus {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        let rng = &mut self.rng;
        if self.phase_left == 0 {
            self.p_lane = [0.25, 0.7, 1.0, 1.0][rng.below(4) as usize];
            self.p_new = [0.1, 0.6, 1.0][rng.below(3) as usize];
            // Silent phases let the buffer fill and the replay timer expire.
            self.p_ack = [0.0, 0.02, 0.1, 0.3][rng.below(4) as usize];
            self.p_nak = [0.0, 0.005, 0.03][rng.below(3) as usize];
            self.p_odd = [0.0, 0.02][rng.below(2) as usize];
            self.phase_left = 32 + rng.below(1500);
            if rng.chance(0.1) {
                // Silence past the replay timer.
                (self.p_ack, self.p_nak, self.p_odd) = (0.0, 0.0, 0.0);
                self.phase_left = self.timeout + 32 + rng.below(self.timeout);
            }
        }
        self.phase_left -= 1;
        let s = &self.shadow;
        let (hs, cnt, mask) = (s.hs, s.units.len() as u32, s.seq_mask());
        // Sequence numbers around what is held: the oldest - 3 ..= the next + 2.
        let seq = |rng: &mut SimRng, lo: i64, hi: i64| (hs as i64 + lo + rng.below((hi - lo + 1) as u64) as i64) as u32;
        let (mut valid, mut nak, mut sq) = (false, false, rng.below(u64::from(mask) + 1) as u32);
        if rng.chance(self.p_odd) {
            (valid, nak, sq) = (true, rng.chance(0.5), seq(rng, -3, i64::from(cnt) + 2));
        } else if cnt > 0 && rng.chance(self.p_nak) {
            (valid, nak, sq) = (true, true, seq(rng, 0, i64::from(cnt) - 1));
        } else if cnt > 0 && rng.chance(self.p_ack) {
            (valid, nak, sq) = (true, false, seq(rng, 0, i64::from(cnt) - 1));
        }
        inputs[P::RST] = u128::from(cycle < 2 || rng.below(50_000) == 0);
        inputs[P::DLLP_VALID] = u128::from(valid);
        inputs[P::DLLP_NAK] = u128::from(nak);
        inputs[P::DLLP_SEQ] = u128::from(sq & mask);
        inputs[P::LANE_READY] = u128::from(rng.chance(self.p_lane));
        inputs[P::NEW_VALID] = u128::from(rng.chance(self.p_new));
        inputs[P::NEW_DATA] = u128::from(rng.next_u64());
        for p in [P::RST, P::DLLP_VALID, P::DLLP_NAK, P::DLLP_SEQ, P::LANE_READY, P::NEW_VALID, P::NEW_DATA] {
            self.shadow.set_input(p, inputs[p]);
        }
        let _ = self.shadow.settle();
        let _ = self.shadow.posedge();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One cycle: (dllp, lane, new) in; (tx_valid, tx_seq, tx_replay, timeout) out.
    fn step(m: &mut ReplayBuf, dllp: Option<(bool, u128)>, lane: bool, new: bool) -> [u128; 4] {
        let (nak, seq) = dllp.unwrap_or((false, 0));
        m.set_input(P::DLLP_VALID, dllp.is_some() as u128);
        m.set_input(P::DLLP_NAK, nak as u128);
        m.set_input(P::DLLP_SEQ, seq);
        m.set_input(P::LANE_READY, lane as u128);
        m.set_input(P::NEW_VALID, new as u128);
        m.set_input(P::NEW_DATA, 0x40 + m.cycle as u128);
        m.settle().unwrap();
        let o = [P::TX_VALID, P::TX_SEQ, P::TX_REPLAY, P::TIMEOUT].map(|p| m.output(p));
        m.posedge().unwrap();
        o
    }

    #[test]
    fn replay_buf_fills_acks_naks_replays_and_times_out() {
        let mut m = ReplayBuf::new(3, 3, 8, 5);
        for k in 0..3 {
            assert_eq!(step(&mut m, None, true, true), [1, k, 0, 0]);
        }
        assert_eq!(step(&mut m, None, true, true)[0], 0, "full: no new unit");
        assert_eq!(step(&mut m, Some((false, 0)), true, true), [1, 3, 0, 0], "ACK 0 frees one: seq 3");
        assert_eq!(step(&mut m, Some((true, 2)), true, true), [1, 2, 1, 0], "NAK 2: ACKs 1, replays 2");
        assert_eq!(step(&mut m, None, true, true), [1, 3, 1, 0]);
        assert_eq!(step(&mut m, None, true, true), [1, 4, 0, 0], "replay done: new seq 4");
        assert_eq!(m.output(P::COUNT), 3);
        for _ in 0..2 {
            step(&mut m, None, false, false);
        }
        assert_eq!(step(&mut m, None, true, false), [1, 2, 1, 1], "5 cycles without progress: replay from 2");
        step(&mut m, Some((false, 4)), true, true);
        assert_eq!(m.output(P::COUNT), 1, "ACK 4 (during the replay) dropped 2..=4, seq 5 went out");
        assert_eq!(step(&mut m, Some((false, 1)), true, true), [1, 6, 0, 0], "stale ACK 1 drops nothing");
        let seqs: Vec<u128> = (0..3).map(|_| step(&mut m, Some((false, 7)), true, true)[1]).collect();
        assert_eq!(seqs, [7, 0, 1], "sequence numbers wrap at 3 bits; the third ACK 7 is stale");
        assert_eq!(m.output(P::COUNT), 2);
    }
}
