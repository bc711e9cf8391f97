//! An SRAM bank with read and write ports shared by requesters (rtl/blocks/sram_bank.sv), cycle
//! for cycle; its stimulus and diff configuration.

use crate::block::{Block, ModelVcd, PortInfo, VltError};
use crate::diff::DiffConfig;
use crate::stimulus::Stimulus;
use std::path::Path;
use trnsim_kernel::SimRng;

/// Port indices of [`SramBank::ports`].
pub mod sram_bank_port {
    #![allow(missing_docs)]
    pub const CLK: usize = 0;
    pub const RST: usize = 1;
    pub const REQ_VALID: usize = 2;
    pub const REQ_WRITE: usize = 3;
    pub const REQ_ADDR: usize = 4;
    pub const REQ_WDATA: usize = 5;
    pub const GRANT: usize = 6;
    pub const RVALID: usize = 7;
    pub const RDATA: usize = 8;
    pub const RR_PTR: usize = 9;
}
use sram_bank_port as P;

/// One SRAM bank: `words` words of `width` bits, `r` read and `w` write ports, `req`
/// requesters, at the RTL's port boundary (see rtl/blocks/sram_bank.sv for the rules).
///
/// Inputs per requester `k` (packed LSB-first): `req_valid`, `req_write` (1 bit), `req_addr`
/// (`log2 words` bits), `req_wdata` (`width` bits). Outputs: `grant` (combinational, 1 bit per
/// requester), `rvalid` and `rdata` (registered, the read granted the cycle before; `rdata`
/// lanes are 0 without `rvalid`), `rr_ptr` (the round-robin pointer, `ceil(log2 req)` bits).
/// Round-robin from `rr_ptr`: up to `r` reads and `w` writes are granted; the pointer moves to
/// the first refused requester. Write-before-read within a cycle; of two writes to one
/// address, the later in round-robin order wins. Leaves out: nothing observable.
pub struct SramBank {
    width: u32,
    aw: u32,
    r: usize,
    w: usize,
    req: usize,
    ports: Vec<PortInfo>,
    mem: Vec<u128>,
    ptr: usize,
    rvalid: u32,
    rdata: Vec<u128>,
    rst: bool,
    valid: u32,
    write: u32,
    addr: u128,
    wdata: u128,
    grant: u32,
    ptr_next: usize,
    stale: bool,
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

impl SramBank {
    /// A bank with zeroed words. `words` a power of two >= 2, `req` 2..=32, `r`, `w` >= 1, and
    /// `req * width` and `req * log2 words` at most 128 bits.
    pub fn new(words: usize, width: u32, r: usize, w: usize, req: usize) -> SramBank {
        assert!(words >= 2 && words.is_power_of_two(), "sram_bank: words a power of two >= 2");
        assert!((2..=32).contains(&req) && r >= 1 && w >= 1 && width >= 1, "sram_bank: req 2..=32, r, w, width >= 1");
        let aw = words.trailing_zeros();
        assert!(req as u32 * width <= 128 && req as u32 * aw <= 128, "sram_bank: packed ports over 128 bits");
        let pw = usize::BITS - (req - 1).leading_zeros(); // $clog2(req)
        let q = req as u32;
        let port = |name, input, width| PortInfo { name, input, width };
        let ports = vec![
            port("clk", true, 1),
            port("rst", true, 1),
            port("req_valid", true, q),
            port("req_write", true, q),
            port("req_addr", true, q * aw),
            port("req_wdata", true, q * width),
            port("grant", false, q),
            port("rvalid", false, q),
            port("rdata", false, q * width),
            port("rr_ptr", false, pw),
        ];
        SramBank {
            width,
            aw,
            r,
            w,
            req,
            ports,
            mem: vec![0; words],
            ptr: 0,
            rvalid: 0,
            rdata: vec![0; req],
            rst: false,
            valid: 0,
            write: 0,
            addr: 0,
            wdata: 0,
            grant: 0,
            ptr_next: 0,
            stale: true,
            trace: None,
            cycle: 0,
        }
    }

    /// Requester `k`'s address and write data.
    fn lane(&self, k: usize) -> (usize, u128) {
        let a = (self.addr >> (k as u32 * self.aw)) & mask(self.aw);
        (a as usize, (self.wdata >> (k as u32 * self.width)) & mask(self.width))
    }

    fn is_write(&self, k: usize) -> bool {
        self.write >> k & 1 == 1
    }

    /// The requesters in round-robin order from the pointer.
    fn order(&self) -> impl Iterator<Item = usize> {
        let (p, n) = (self.ptr, self.req);
        (0..n).map(move |o| (p + o) % n)
    }

    fn arbitrate(&mut self) {
        let (mut nr, mut nw) = (0, 0);
        self.grant = 0;
        self.ptr_next = self.ptr;
        let mut refused = false;
        for k in self.order() {
            if self.valid >> k & 1 == 0 || self.rst {
                continue;
            }
            let (used, ports) = if self.is_write(k) { (&mut nw, self.w) } else { (&mut nr, self.r) };
            if *used < ports {
                *used += 1;
                self.grant |= 1 << k;
            } else if !refused {
                refused = true;
                self.ptr_next = k;
            }
        }
        self.stale = false;
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

impl Block for SramBank {
    fn ports(&self) -> &[PortInfo] {
        &self.ports
    }

    fn set_input(&mut self, port: usize, v: u128) {
        let q = self.req as u32;
        match port {
            P::RST => self.rst = v & 1 == 1,
            P::REQ_VALID => self.valid = (v & mask(q)) as u32,
            P::REQ_WRITE => self.write = (v & mask(q)) as u32,
            P::REQ_ADDR => self.addr = v & mask(q * self.aw),
            P::REQ_WDATA => self.wdata = v & mask(q * self.width),
            _ => panic!("sram_bank: port {port} is not a data input"),
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
            P::REQ_VALID => self.valid as u128,
            P::REQ_WRITE => self.write as u128,
            P::REQ_ADDR => self.addr,
            P::REQ_WDATA => self.wdata,
            P::GRANT => self.grant as u128,
            P::RVALID => self.rvalid as u128,
            P::RDATA => (0..self.req)
                .filter(|&k| self.rvalid >> k & 1 == 1)
                .fold(0, |acc, k| acc | self.rdata[k] << (k as u32 * self.width)),
            P::RR_PTR => self.ptr as u128,
            _ => panic!("sram_bank: no port {port}"),
        }
    }

    fn posedge(&mut self) -> Result<(), VltError> {
        if self.stale {
            self.arbitrate();
        }
        if self.rst {
            self.ptr = 0;
            self.rvalid = 0;
            self.mem.iter_mut().for_each(|m| *m = 0);
        } else {
            let writes: Vec<(usize, u128)> =
                self.order().filter(|&k| self.grant >> k & 1 == 1 && self.is_write(k)).map(|k| self.lane(k)).collect();
            self.rvalid = 0;
            for k in 0..self.req {
                if self.grant >> k & 1 == 1 && !self.is_write(k) {
                    let a = self.lane(k).0;
                    // Write-before-read: the last same-cycle write to `a` in round-robin order.
                    let same = writes.iter().rev().find(|&&(wa, _)| wa == a).map(|&(_, d)| d);
                    self.rdata[k] = same.unwrap_or(self.mem[a]);
                    self.rvalid |= 1 << k;
                }
            }
            for (a, d) in writes {
                self.mem[a] = d;
            }
            self.ptr = self.ptr_next;
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
        self.trace = Some(ModelVcd::create(path, "sram_bank", &self.ports, 10 * self.cycle)?);
        Ok(())
    }

    fn close_vcd(&mut self) {
        self.trace = None;
    }
}

impl DiffConfig {
    /// The SRAM bank: every output every cycle. `rdata` lanes would be don't-care while their
    /// `rvalid` bit is low, but the harness qualifies a port by one 1-bit output, which a
    /// per-lane valid is not; so the block drives those lanes to 0 and they are compared.
    pub fn sram_bank(cycles: u64) -> DiffConfig {
        DiffConfig {
            cycles,
            history: 8,
            dont_care: vec![],
            vcd_dir: None,
            name: "sram_bank".into(),
            vcd_window: 2000,
            waves: crate::diff::Waves::Fail,
            coverage: Vec::new(),
            until_coverage: None,
            monitors: Vec::new(),
        }
    }
}

/// Random requests for a `words`-word, `req`-requester bank, in phases of a request rate
/// (little to full contention), a write fraction, and an address mix (mostly a hot set of 1-4
/// words, forcing same-cycle and back-to-back read-after-write hazards, or spread); reset at
/// cycles 0-1 and rarely afterwards. Write data is random.
pub struct SramBankStimulus {
    words: usize,
    req: usize,
    aw: u32,
    width: u32,
    rng: SimRng,
    phase_left: u64,
    p_valid: f64,
    p_write: f64,
    p_hot: f64,
    hot: [usize; 4],
    hot_n: usize,
}

impl SramBankStimulus {
    /// Stimulus from `seed` (the kernel's deterministic RNG, stream 8).
    pub fn new(words: usize, width: u32, req: usize, seed: u64) -> Self {
        SramBankStimulus {
            words,
            req,
            aw: words.trailing_zeros(),
            width,
            rng: SimRng::new(seed, 8),
            phase_left: 0,
            p_valid: 0.5,
            p_write: 0.5,
            p_hot: 0.5,
            hot: [0; 4],
            hot_n: 1,
        }
    }
}

impl Stimulus for SramBankStimulus {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        if self.phase_left == 0 {
            self.p_valid = [0.1, 0.3, 0.6, 0.9, 1.0][self.rng.below(5) as usize];
            self.p_write = [0.1, 0.5, 0.9][self.rng.below(3) as usize];
            self.p_hot = [0.0, 0.5, 0.9, 1.0][self.rng.below(4) as usize];
            self.hot_n = 1 + self.rng.below(4) as usize;
            for h in &mut self.hot {
                *h = self.rng.below(self.words as u64) as usize;
            }
            self.phase_left = 8 + self.rng.below(400);
        }
        self.phase_left -= 1;
        let (mut valid, mut write, mut addr, mut wdata) = (0u128, 0u128, 0u128, 0u128);
        for k in 0..self.req {
            valid |= (self.rng.chance(self.p_valid) as u128) << k;
            write |= (self.rng.chance(self.p_write) as u128) << k;
            let a = if self.rng.chance(self.p_hot) {
                self.hot[self.rng.below(self.hot_n as u64) as usize]
            } else {
                self.rng.below(self.words as u64) as usize
            };
            addr |= (a as u128) << (k as u32 * self.aw);
            wdata |= (self.rng.next_u64() as u128 & mask(self.width)) << (k as u32 * self.width);
        }
        inputs[P::RST] = (cycle < 2 || self.rng.below(4096) == 0) as u128;
        inputs[P::REQ_VALID] = valid;
        inputs[P::REQ_WRITE] = write;
        inputs[P::REQ_ADDR] = addr;
        inputs[P::REQ_WDATA] = wdata;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One cycle of requests `(requester, write, addr, data)`; returns the grants.
    fn step(b: &mut SramBank, reqs: &[(usize, bool, usize, u128)]) -> u128 {
        let (mut v, mut w, mut a, mut d) = (0, 0, 0, 0);
        for &(k, wr, addr, data) in reqs {
            v |= 1 << k;
            w |= (wr as u128) << k;
            a |= (addr as u128) << (k as u32 * b.aw);
            d |= data << (k as u32 * b.width);
        }
        for (p, x) in [(P::REQ_VALID, v), (P::REQ_WRITE, w), (P::REQ_ADDR, a), (P::REQ_WDATA, d)] {
            b.set_input(p, x);
        }
        b.settle().unwrap();
        let g = b.output(P::GRANT);
        b.posedge().unwrap();
        g
    }

    #[test]
    fn sram_bank_grants_up_to_the_port_counts_round_robin_and_moves_to_the_first_refused() {
        let mut b = SramBank::new(16, 8, 1, 2, 4);
        // Four reads, one read port: requester 0 wins, 1 is first refused.
        assert_eq!(step(&mut b, &[(0, false, 1, 0), (1, false, 2, 0), (2, false, 3, 0), (3, false, 4, 0)]), 0b0001);
        assert_eq!(b.output(P::RR_PTR), 1);
        assert_eq!(step(&mut b, &[(0, false, 1, 0), (1, false, 2, 0), (2, true, 3, 7), (3, true, 4, 9)]), 0b1110);
        assert_eq!(b.output(P::RR_PTR), 0, "order 1 2 3 0: read 0 is the first refused");
        assert_eq!(b.output(P::RVALID), 0b0010);
        assert_eq!(step(&mut b, &[(2, false, 1, 0), (3, true, 2, 5)]), 0b1100);
        assert_eq!(b.output(P::RR_PTR), 0, "nothing refused: the pointer stays");
    }

    #[test]
    fn sram_bank_reads_see_same_cycle_writes_and_the_later_write_wins() {
        let mut b = SramBank::new(16, 8, 2, 2, 4);
        assert_eq!(step(&mut b, &[(0, true, 5, 0x11), (1, true, 5, 0x22), (2, false, 5, 0)]), 0b0111);
        assert_eq!((b.output(P::RVALID), b.output(P::RDATA)), (0b0100, 0x22 << 16));
        step(&mut b, &[(3, false, 5, 0)]);
        assert_eq!(b.output(P::RDATA), 0x22 << 24, "the memory holds the later write too");
        assert_eq!(b.ports()[P::RR_PTR].width, 2);
        assert_eq!(SramBank::new(16, 8, 1, 1, 3).ports()[P::REQ_ADDR].width, 12);
    }
}
