//! Cycle-exact Rust models of the RTL blocks, at the same port boundary.

use crate::block::{Block, ModelVcd, PortInfo, VltError};
use std::path::Path;

mod islip;
pub use islip::{islip_port, ArbMode, IslipArbiter, IslipStimulus};
mod sram_bank;
pub use sram_bank::{sram_bank_port, SramBank, SramBankStimulus};
mod dma_queue;
pub use dma_queue::{dma_queue_port, DmaQueue, DmaQueueStimulus, DMA_PKT_BITS, DMA_TAG_BITS};
mod replay_buf;
pub use replay_buf::{replay_buf_port, ReplayBuf, ReplayBufStimulus};
mod hbm_bank;
pub use hbm_bank::{hbm_bank_port, same_bank_gap, vcode, BankState, HbmBank, HbmBankStimulus, HBM_OPCODES};
mod sbuf_bank;
pub use sbuf_bank::{sbuf_bank_group_bits, sbuf_bank_port, SbufBank, SbufBankClients, SbufBankStimulus};
mod systolic_tile;
pub use systolic_tile::{
    bf16_value, canonical_bits, pe_mac, systolic_tile_port, SystolicTile, SystolicTileStimulus, ValueMix, CANONICAL_NAN,
};

/// The credit-based link receive FIFO (rtl/blocks/link_fifo.sv), cycle for cycle.
///
/// First-word fall-through buffer of `depth` messages of `width` bits: pushes when
/// `in_valid && in_ready`, pops when `out_valid && out_ready`, returns one credit
/// (`credit_ret`, registered) the cycle after each pop; synchronous active-high `rst`.
/// Leaves out: nothing observable at the ports except `out_data` while `out_valid` is low
/// (the RTL shows a stale slot; so does this model, but harnesses should not compare it).
pub struct LinkFifo {
    width: u32,
    depth: usize,
    ports: Vec<PortInfo>,
    mem: Vec<u128>,
    rd: usize,
    wr: usize,
    count: usize,
    credit_ret: bool,
    rst: bool,
    in_valid: bool,
    in_data: u128,
    out_ready: bool,
    trace: Option<ModelVcd>,
    cycle: u64,
}

/// Port indices of [`LinkFifo::ports`], in Verilator's header order.
pub mod link_fifo_port {
    #![allow(missing_docs)]
    pub const CLK: usize = 0;
    pub const RST: usize = 1;
    pub const IN_VALID: usize = 2;
    pub const IN_READY: usize = 3;
    pub const OUT_VALID: usize = 4;
    pub const OUT_READY: usize = 5;
    pub const CREDIT_RET: usize = 6;
    pub const COUNT: usize = 7;
    pub const IN_DATA: usize = 8;
    pub const OUT_DATA: usize = 9;
}
use link_fifo_port as P;

impl LinkFifo {
    /// An empty FIFO. `width` 1..=128 bits, `depth` >= 1 (any, not only powers of two).
    pub fn new(width: u32, depth: usize) -> LinkFifo {
        assert!((1..=128).contains(&width) && depth >= 1, "link_fifo: width 1..=128, depth >= 1");
        let count_w = usize::BITS - depth.leading_zeros(); // $clog2(depth + 1)
        let port = |name, input, width| PortInfo { name, input, width };
        let ports = vec![
            port("clk", true, 1),
            port("rst", true, 1),
            port("in_valid", true, 1),
            port("in_ready", false, 1),
            port("out_valid", false, 1),
            port("out_ready", true, 1),
            port("credit_ret", false, 1),
            port("count", false, count_w),
            port("in_data", true, width),
            port("out_data", false, width),
        ];
        let mem = vec![0; depth];
        LinkFifo {
            width,
            depth,
            ports,
            mem,
            rd: 0,
            wr: 0,
            count: 0,
            credit_ret: false,
            rst: false,
            in_valid: false,
            in_data: 0,
            out_ready: false,
            trace: None,
            cycle: 0,
        }
    }

    fn mask(&self) -> u128 {
        if self.width == 128 {
            u128::MAX
        } else {
            (1 << self.width) - 1
        }
    }

    fn next(&self, p: usize) -> usize {
        if p + 1 == self.depth {
            0
        } else {
            p + 1
        }
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

impl Block for LinkFifo {
    fn ports(&self) -> &[PortInfo] {
        &self.ports
    }

    fn set_input(&mut self, port: usize, v: u128) {
        match port {
            P::RST => self.rst = v & 1 == 1,
            P::IN_VALID => self.in_valid = v & 1 == 1,
            P::OUT_READY => self.out_ready = v & 1 == 1,
            P::IN_DATA => self.in_data = v & self.mask(),
            _ => panic!("link_fifo: port {port} is not a data input"),
        }
    }

    fn settle(&mut self) -> Result<(), VltError> {
        self.dump(false);
        Ok(())
    }

    fn output(&self, port: usize) -> u128 {
        match port {
            P::CLK => 0,
            P::RST => self.rst as u128,
            P::IN_VALID => self.in_valid as u128,
            P::IN_READY => (self.count != self.depth) as u128,
            P::OUT_VALID => (self.count != 0) as u128,
            P::OUT_READY => self.out_ready as u128,
            P::CREDIT_RET => self.credit_ret as u128,
            P::COUNT => self.count as u128,
            P::IN_DATA => self.in_data,
            P::OUT_DATA => self.mem[self.rd],
            _ => panic!("link_fifo: no port {port}"),
        }
    }

    /// [`Block::output`] of every port, without a dispatch per port (the diff's hot loop).
    #[inline]
    fn read_all(&self, values: &mut [u128]) {
        let v: &mut [u128; 10] = (&mut values[..10]).try_into().expect("10 ports");
        *v = [
            0,
            self.rst as u128,
            self.in_valid as u128,
            (self.count != self.depth) as u128,
            (self.count != 0) as u128,
            self.out_ready as u128,
            self.credit_ret as u128,
            self.count as u128,
            self.in_data,
            self.mem[self.rd],
        ];
    }

    fn posedge(&mut self) -> Result<(), VltError> {
        if self.rst {
            (self.rd, self.wr, self.count, self.credit_ret) = (0, 0, 0, false);
        } else {
            let push = self.in_valid && self.count != self.depth;
            let pop = self.out_ready && self.count != 0;
            if push {
                self.mem[self.wr] = self.in_data;
                self.wr = self.next(self.wr);
            }
            if pop {
                self.rd = self.next(self.rd);
            }
            self.count = self.count + push as usize - pop as usize;
            self.credit_ret = pop;
        }
        self.dump(true);
        self.cycle += 1;
        Ok(())
    }

    fn open_vcd(&mut self, path: &Path) -> Result<(), VltError> {
        if self.trace.is_some() {
            return Err(VltError::TraceAlreadyOpen);
        }
        self.trace = Some(ModelVcd::create(path, "link_fifo", &self.ports, 10 * self.cycle)?);
        Ok(())
    }

    fn close_vcd(&mut self) {
        self.trace = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycle(f: &mut LinkFifo, valid: bool, data: u128, ready: bool) {
        f.set_input(P::IN_VALID, valid as u128);
        f.set_input(P::IN_DATA, data);
        f.set_input(P::OUT_READY, ready as u128);
        f.settle().unwrap();
        f.posedge().unwrap();
    }

    #[test]
    fn link_fifo_fills_to_depth_then_refuses_and_keeps_order() {
        let mut f = LinkFifo::new(8, 3);
        for d in 1..=5 {
            cycle(&mut f, true, d, false);
        }
        assert_eq!((f.output(P::COUNT), f.output(P::IN_READY)), (3, 0));
        let mut got = vec![];
        while f.output(P::OUT_VALID) == 1 {
            got.push(f.output(P::OUT_DATA));
            cycle(&mut f, false, 0, true);
            assert_eq!(f.output(P::CREDIT_RET), 1, "one credit per pop, the cycle after");
        }
        assert_eq!(got, [1, 2, 3]);
    }

    #[test]
    fn link_fifo_read_all_matches_output() {
        let mut f = LinkFifo::new(16, 3);
        let mut all = [0u128; 10];
        for k in 0..40u128 {
            cycle(&mut f, k % 3 != 0, k * 977, k % 5 > 1);
            f.read_all(&mut all);
            let each: Vec<u128> = (0..10).map(|i| f.output(i)).collect();
            assert_eq!(all.as_slice(), each.as_slice());
        }
    }

    #[test]
    fn link_fifo_masks_data_to_width_and_count_width_is_clog2_depth_plus_1() {
        let mut f = LinkFifo::new(4, 4);
        assert_eq!(f.ports()[P::COUNT].width, 3);
        assert_eq!(LinkFifo::new(64, 5).ports()[P::COUNT].width, 3);
        assert_eq!(LinkFifo::new(64, 3).ports()[P::COUNT].width, 2);
        cycle(&mut f, true, 0xff, false);
        assert_eq!(f.output(P::OUT_DATA), 0xf);
    }
}
