//! Verilated RTL as a [`Block`]. Generic over [`Verilated`], so it is there without feature
//! `rtl` too (a crate of its own blocks wraps its generated models in it).

use crate::block::{Block, PortInfo, ResetInfo, VltError};
use std::path::Path;
use verilator_sys::Verilated;

/// Any Verilated model, driven through the [`Block`] interface.
pub struct Rtl<V: Verilated>(pub V);

impl<V: Verilated> Rtl<V> {
    /// A fresh model.
    pub fn new() -> Result<Self, VltError> {
        Ok(Rtl(V::new()?))
    }
}

impl<V: Verilated> Block for Rtl<V> {
    #[inline]
    fn ports(&self) -> &[PortInfo] {
        V::PORTS
    }
    #[inline]
    fn set_input(&mut self, port: usize, v: u128) {
        self.0.set_u128(port, v)
    }
    #[inline]
    fn settle(&mut self) -> Result<(), VltError> {
        self.0.settle()
    }
    #[inline]
    fn output(&self, port: usize) -> u128 {
        self.0.get_u128(port)
    }
    #[inline]
    fn posedge(&mut self) -> Result<(), VltError> {
        self.0.posedge()
    }
    fn open_vcd(&mut self, path: &Path) -> Result<(), VltError> {
        self.0.open_vcd(path)
    }
    fn close_vcd(&mut self) {
        self.0.close_vcd()
    }
    #[inline]
    fn read_all(&self, values: &mut [u128]) {
        self.0.get_all(values)
    }
    fn reset(&self) -> Option<ResetInfo> {
        V::RESET
    }
    fn failed_assertion(&self, e: &VltError) -> Option<(&'static str, String)> {
        verilator_sys::failed_assertion_in(V::ASSERTIONS, e)
    }
}
