//! Verilated RTL as a [`Block`]. Generic over [`Verilated`], so it is there without feature
//! `rtl` too (a crate of its own blocks wraps its generated models in it).
//!
//! Beyond the ports: the model's public signals ([`Block::signals`], [`Block::peek`],
//! [`Block::deposit`], [`Block::force`]), its `cover property` counts and the messages of
//! its failing assertions (docs/rtl.md, "Inside the RTL").

use crate::block::{AssertionNote, Block, PortInfo, ResetInfo, SignalInfo, VltError};
use std::path::Path;
use verilator_sys::Verilated;

/// The build's name for the cover property beside assertion `L`: `L__pass` (trnsim-vlt-build).
const PASS_SUFFIX: &str = "__pass";

/// Any Verilated model, driven through the [`Block`] interface.
pub struct Rtl<V: Verilated> {
    model: V,
    /// Forced signals: (index into `signals`, value), written before and after every eval.
    forced: Vec<(usize, u128)>,
}

impl<V: Verilated> Rtl<V> {
    /// A fresh model.
    pub fn new() -> Result<Self, VltError> {
        Ok(Rtl::wrap(V::new()?))
    }
    /// Wraps a model already made.
    pub fn wrap(model: V) -> Self {
        Rtl { model, forced: Vec::new() }
    }
    /// The Verilated model itself (its typed port accessors).
    pub fn model(&mut self) -> &mut V {
        &mut self.model
    }
    fn signal(&self, name: &str) -> Result<usize, String> {
        self.model.signals().iter().position(|s| s.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.model.signals().iter().map(|s| s.name.as_str()).collect();
            format!(
                "{}: no public signal {name} (public: {})",
                V::TOP,
                if names.is_empty() { "none".into() } else { names.join(", ") }
            )
        })
    }
    fn writable(&self, name: &str) -> Result<usize, String> {
        let i = self.signal(name)?;
        if self.model.signals()[i].writable {
            Ok(i)
        } else {
            Err(format!("{}: signal {name} is public read-only (public_flat_rd): declare it public_flat_rw", V::TOP))
        }
    }
    /// Every cover counter of the model: its `cover property` statements and the pass covers
    /// the build adds beside labelled concurrent assertions.
    fn covers(&self) -> impl Iterator<Item = (&'static str, u64)> {
        let mut counts = vec![0u32; V::COVERS.len()];
        self.model.cover_counts(&mut counts);
        V::COVERS.iter().zip(counts).map(|(&(label, _, _), n)| (label, u64::from(n)))
    }
    #[inline]
    fn apply_forces(&mut self) {
        for &(i, v) in &self.forced {
            self.model.poke_signal(i, v);
        }
    }
    #[inline]
    fn eval_forced(&mut self, f: impl FnOnce(&mut V) -> Result<(), VltError>) -> Result<(), VltError> {
        if self.forced.is_empty() {
            return f(&mut self.model);
        }
        self.apply_forces();
        let r = f(&mut self.model);
        self.apply_forces();
        r
    }
}

impl<V: Verilated> Block for Rtl<V> {
    #[inline]
    fn ports(&self) -> &[PortInfo] {
        V::PORTS
    }
    #[inline]
    fn set_input(&mut self, port: usize, v: u128) {
        self.model.set_u128(port, v)
    }
    #[inline]
    fn settle(&mut self) -> Result<(), VltError> {
        self.eval_forced(|m| m.settle())
    }
    #[inline]
    fn output(&self, port: usize) -> u128 {
        self.model.get_u128(port)
    }
    #[inline]
    fn posedge(&mut self) -> Result<(), VltError> {
        self.eval_forced(|m| m.posedge())
    }
    fn open_vcd(&mut self, path: &Path) -> Result<(), VltError> {
        self.model.open_vcd(path)
    }
    fn close_vcd(&mut self) {
        self.model.close_vcd()
    }
    #[inline]
    fn read_all(&self, values: &mut [u128]) {
        self.model.get_all(values)
    }
    fn reset(&self) -> Option<ResetInfo> {
        V::RESET
    }
    fn failed_assertion(&self, e: &VltError) -> Option<(&'static str, String)> {
        verilator_sys::failed_assertion_in(V::ASSERTIONS, e)
    }
    fn signals(&self) -> &[SignalInfo] {
        self.model.signals()
    }
    #[inline]
    fn read_signals(&self, out: &mut [u128]) {
        for (i, v) in out.iter_mut().enumerate() {
            *v = self.model.peek_signal(i);
        }
    }
    fn peek(&self, name: &str) -> Result<u128, String> {
        Ok(self.model.peek_signal(self.signal(name)?))
    }
    fn deposit(&mut self, name: &str, v: u128) -> Result<(), String> {
        let i = self.writable(name)?;
        self.model.poke_signal(i, v);
        Ok(())
    }
    fn force(&mut self, name: &str, v: u128) -> Result<(), String> {
        let i = self.writable(name)?;
        self.forced.retain(|&(j, _)| j != i);
        self.forced.push((i, v));
        self.model.poke_signal(i, v);
        Ok(())
    }
    fn release(&mut self, name: &str) -> Result<(), String> {
        let i = self.signal(name)?;
        self.forced.retain(|&(j, _)| j != i);
        Ok(())
    }
    fn cover_properties(&self) -> Vec<(&'static str, u64)> {
        self.covers().filter(|(l, _)| !l.ends_with(PASS_SUFFIX)).collect()
    }
    fn assertion_passes(&self) -> Vec<(&'static str, u64)> {
        self.covers().filter_map(|(l, n)| l.strip_suffix(PASS_SUFFIX).map(|l| (l, n))).collect()
    }
    fn take_assertion_notes(&mut self) -> Vec<AssertionNote> {
        self.model.take_notes().iter().filter_map(|l| AssertionNote::parse(l)).collect()
    }
}
