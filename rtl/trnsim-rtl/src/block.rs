//! The port-level cycle interface shared by Rust models and Verilated RTL.
//!
//! ```text
//!   set_input(..)* ─► settle() ─► output(..)* ─► posedge() ─► next cycle
//! ```
//!
//! Contract: `settle` makes outputs reflect the current inputs and state (combinational
//! paths); `posedge` is one rising clock edge (state updates) and does not change inputs.
//! Ports are identified by index into [`Block::ports`]; harnesses match two blocks' ports by
//! name. Values are the port's low 128 bits; inputs ignore bits above the port width.

use crate::vcd_out::VcdOut;
use std::path::Path;
pub use verilator_sys::{AssertionNote, PortInfo, ResetInfo, Severity, SignalInfo, VltError};

/// `signals` as port descriptions (outputs), for cover points on them: each distinct name is
/// kept once for the whole process (cover points and reports hold `&'static str` names).
pub fn signal_ports(signals: &[SignalInfo]) -> Vec<PortInfo> {
    static NAMES: std::sync::Mutex<std::collections::BTreeSet<&'static str>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    signals
        .iter()
        .map(|s| {
            let name = match names.get(s.name.as_str()) {
                Some(&n) => n,
                None => {
                    let n: &'static str = Box::leak(s.name.clone().into_boxed_str());
                    names.insert(n);
                    n
                }
            };
            PortInfo { name, input: false, width: s.width }
        })
        .collect()
}

/// A clocked block seen at its ports (`clk` itself is implicit in `posedge`).
pub trait Block {
    /// The ports, `clk` included (it is never driven through `set_input`).
    fn ports(&self) -> &[PortInfo];
    /// Sets an input port (index into `ports`).
    fn set_input(&mut self, port: usize, v: u128);
    /// Evaluates combinational logic for the current inputs.
    fn settle(&mut self) -> Result<(), VltError>;
    /// Reads a port (index into `ports`); valid after `settle`.
    fn output(&self, port: usize) -> u128;
    /// One rising clock edge.
    fn posedge(&mut self) -> Result<(), VltError>;
    /// Starts a VCD of the block's signals from now on.
    fn open_vcd(&mut self, path: &Path) -> Result<(), VltError>;
    /// Flushes and closes the VCD, if open.
    fn close_vcd(&mut self);
    /// The reset input: by default `rst` (synchronous, active-high) if there is one. A block
    /// with another reset says so here; the diff checks both sides declare the same.
    fn reset(&self) -> Option<ResetInfo> {
        self.ports().iter().any(|p| p.name == "rst" && p.input).then_some(ResetInfo {
            name: "rst",
            active_low: false,
            asynchronous: false,
        })
    }
    /// The labelled SystemVerilog assertion an error comes from, as `(label, "file:line")`
    /// (by default: looked up among trnsim's own blocks).
    fn failed_assertion(&self, e: &VltError) -> Option<(&'static str, String)> {
        verilator_sys::failed_assertion(e)
    }
    /// Internal signals the block exposes (the RTL's Verilator public signals; none by
    /// default). Cover points name them with `Expr::signal`.
    fn signals(&self) -> &[SignalInfo] {
        &[]
    }
    /// Reads every signal of [`Block::signals`] into `out` (one slot each), after `settle`.
    fn read_signals(&self, _out: &mut [u128]) {}
    /// The value of internal signal `name`.
    fn peek(&self, name: &str) -> Result<u128, String> {
        Err(format!("no internal signal {name}: the block exposes none"))
    }
    /// Writes internal signal `name` once: the logic sees it at the next `settle` or
    /// `posedge`, and a register keeps it until the logic assigns it again.
    fn deposit(&mut self, name: &str, _v: u128) -> Result<(), String> {
        Err(format!("no internal signal {name}: the block exposes none"))
    }
    /// Holds internal signal `name` at `v` (written before and after every evaluation) until
    /// [`Block::release`].
    fn force(&mut self, name: &str, _v: u128) -> Result<(), String> {
        Err(format!("no internal signal {name}: the block exposes none"))
    }
    /// Ends a [`Block::force`]; the signal keeps its value until the logic assigns it.
    fn release(&mut self, name: &str) -> Result<(), String> {
        Err(format!("no internal signal {name}: the block exposes none"))
    }
    /// The RTL's `cover property` statements and how often each matched: (label, count).
    fn cover_properties(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// How often each labelled concurrent assertion (`LABEL: assert property`) passed:
    /// evaluations not disabled where the property held, vacuous ones included.
    fn assertion_passes(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// The assertions that failed since the last call (warnings and infos, which do not stop
    /// the RTL, and the error that did), oldest first.
    fn take_assertion_notes(&mut self) -> Vec<AssertionNote> {
        Vec::new()
    }

    /// Sets input `ports[k]` to `values[ports[k]]` for each `k` (`values` has one slot per
    /// port). The same as calling [`Block::set_input`] for each; a harness's hot loop calls
    /// this once per cycle instead (one dynamic call for a `Box<dyn Block>`).
    #[inline]
    fn set_inputs(&mut self, ports: &[usize], values: &[u128]) {
        for &i in ports {
            self.set_input(i, values[i]);
        }
    }
    /// Reads every port into `values` (one slot per port): the same as calling
    /// [`Block::output`] for each.
    #[inline]
    fn read_all(&self, values: &mut [u128]) {
        for (i, v) in values.iter_mut().enumerate() {
            *v = self.output(i);
        }
    }
}

impl<B: Block + ?Sized> Block for Box<B> {
    fn ports(&self) -> &[PortInfo] {
        (**self).ports()
    }
    fn set_input(&mut self, port: usize, v: u128) {
        (**self).set_input(port, v)
    }
    fn settle(&mut self) -> Result<(), VltError> {
        (**self).settle()
    }
    fn output(&self, port: usize) -> u128 {
        (**self).output(port)
    }
    fn posedge(&mut self) -> Result<(), VltError> {
        (**self).posedge()
    }
    fn open_vcd(&mut self, path: &Path) -> Result<(), VltError> {
        (**self).open_vcd(path)
    }
    fn close_vcd(&mut self) {
        (**self).close_vcd()
    }
    fn set_inputs(&mut self, ports: &[usize], values: &[u128]) {
        (**self).set_inputs(ports, values)
    }
    fn read_all(&self, values: &mut [u128]) {
        (**self).read_all(values)
    }
    fn reset(&self) -> Option<ResetInfo> {
        (**self).reset()
    }
    fn failed_assertion(&self, e: &VltError) -> Option<(&'static str, String)> {
        (**self).failed_assertion(e)
    }
    fn signals(&self) -> &[SignalInfo] {
        (**self).signals()
    }
    fn read_signals(&self, out: &mut [u128]) {
        (**self).read_signals(out)
    }
    fn peek(&self, name: &str) -> Result<u128, String> {
        (**self).peek(name)
    }
    fn deposit(&mut self, name: &str, v: u128) -> Result<(), String> {
        (**self).deposit(name, v)
    }
    fn force(&mut self, name: &str, v: u128) -> Result<(), String> {
        (**self).force(name, v)
    }
    fn release(&mut self, name: &str) -> Result<(), String> {
        (**self).release(name)
    }
    fn cover_properties(&self) -> Vec<(&'static str, u64)> {
        (**self).cover_properties()
    }
    fn assertion_passes(&self) -> Vec<(&'static str, u64)> {
        (**self).assertion_passes()
    }
    fn take_assertion_notes(&mut self) -> Vec<AssertionNote> {
        (**self).take_assertion_notes()
    }
}

/// Writes a VCD of a Rust model's ports with the same timing as Verilator's (clk low at
/// `10c`, high at `10c + 5`), so the two files line up in a waveform viewer: what a model's
/// [`Block::open_vcd`] needs. `create` in `open_vcd`; `dump(clk, values, false)` in `settle`,
/// `dump(clk, values, true)` in `posedge` (values: every port's, `output(i)`).
pub struct ModelVcd {
    vcd: VcdOut,
    time: u64,
}

impl ModelVcd {
    /// A VCD of `ports` under scope `TOP.top`, starting at VCD time `time` (10 per cycle).
    pub fn create(path: &Path, top: &str, ports: &[PortInfo], time: u64) -> Result<Self, VltError> {
        let vcd =
            VcdOut::create(path, top, ports).map_err(|e| VltError::TraceOpen(format!("{}: {e}", path.display())))?;
        Ok(ModelVcd { vcd, time })
    }
    /// Dumps `values` (one per port; clk is overridden) at this cycle's low (`high = false`)
    /// or high phase; the high phase advances the cycle.
    pub fn dump(&mut self, clk: usize, values: &mut [u128], high: bool) {
        values[clk] = high as u128;
        let t = self.time + if high { 5 } else { 0 };
        // A model's VCD is a debugging aid: an I/O error stops it rather than the diff.
        if self.vcd.dump(t, values).is_err() {
            self.vcd.disable();
        }
        if high {
            self.time += 10;
        }
    }
}
