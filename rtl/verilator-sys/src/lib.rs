//! # verilator-sys
//!
//! The SystemVerilog blocks of `rtl/blocks`, Verilated and linked as Rust structs (feature
//! `rtl`; without it the crate holds only the shared types and [`models`] is empty).
//!
//! Each model is a `!Send` struct (Verilator wants construction and `eval` on one thread)
//! whose port accessors are plain loads and stores through pointers into the C++ model: only
//! [`Verilated::eval`] crosses the FFI. Ports up to 64 bits are `u8`..`u64`; wider ones are
//! `[u32; N]`, word 0 holding bits 31:0. Setters mask bits above the port width (Verilator
//! assumes they are zero). `$finish` becomes [`VltError::Finish`]; `$stop` and `$fatal`
//! become [`VltError::Rtl`]: the process never exits or aborts.
//!
//! What it leaves out: FST, `--timing` (delays in RTL), multi-threaded models, DPI.
#![warn(missing_docs)]

use std::fmt;
use std::path::Path;

/// A port of a Verilated top module, as Verilator elaborated it (parameters resolved).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// Port name, as in the SystemVerilog.
    pub name: &'static str,
    /// True for inputs.
    pub input: bool,
    /// Width in bits.
    pub width: u32,
}

/// An internal signal a model exposes (Verilator public: `public_flat_rw` or `_rd`), named by
/// its path below the top module (`cnt`, `u_core.acc`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignalInfo {
    /// Path below the top module.
    pub name: String,
    /// Width in bits (at most 128; wider signals are not listed).
    pub width: u32,
    /// Whether the testbench may write it (`public_flat_rw`).
    pub writable: bool,
}

/// What went wrong inside a Verilated model.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VltError {
    /// The RTL executed `$finish`: the model may not be evaluated further.
    Finish,
    /// `$stop`, `$fatal` or another Verilator runtime error, with Verilator's message.
    Rtl(String),
    /// `open_vcd` on a model whose VCD is already open (Verilator allows one per model).
    TraceAlreadyOpen,
    /// The VCD file could not be created.
    TraceOpen(String),
}

impl VltError {
    /// The message the C++ side left for this thread.
    pub fn last() -> VltError {
        #[cfg(feature = "rtl")]
        let msg = {
            extern "C" {
                fn vlt_last_error() -> *const std::os::raw::c_char;
            }
            // SAFETY: the runtime shim returns a NUL-terminated thread-local string.
            unsafe { std::ffi::CStr::from_ptr(vlt_last_error()) }.to_string_lossy().into_owned()
        };
        #[cfg(not(feature = "rtl"))]
        let msg = String::from("verilator-sys built without feature `rtl`");
        VltError::Rtl(msg)
    }
}

impl fmt::Display for VltError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VltError::Finish => write!(f, "the rtl executed $finish"),
            VltError::Rtl(m) => write!(f, "rtl error: {m}"),
            VltError::TraceAlreadyOpen => write!(f, "a vcd is already open on this model"),
            VltError::TraceOpen(p) => write!(f, "cannot create vcd {p}"),
        }
    }
}

impl std::error::Error for VltError {}

/// A block's reset input as declared to the build (trnsim-vlt-build's `Reset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResetInfo {
    /// Port name.
    pub name: &'static str,
    /// Asserted at 0.
    pub active_low: bool,
    /// Acts without a clock edge.
    pub asynchronous: bool,
}

impl ResetInfo {
    /// The value that asserts it.
    pub fn asserted(&self) -> u128 {
        u128::from(!self.active_low)
    }
}

/// What every generated model offers, so harnesses can drive any block by port index.
///
/// Clocking convention (two evals per cycle): set inputs, [`Verilated::settle`] (clk low,
/// eval: combinational outputs now reflect this cycle's inputs), read outputs, then
/// [`Verilated::posedge`]. Simulated time advances 10 units (ns in the VCD) per cycle.
pub trait Verilated: Sized {
    /// Top module name.
    const TOP: &'static str;
    /// Ports, in the order the port-index methods use. The clock is `clk` whatever its RTL
    /// name.
    const PORTS: &'static [PortInfo];
    /// The reset input (`rst`, synchronous active-high, unless the build declared another).
    const RESET: Option<ResetInfo> = None;
    /// Labelled assertions of the sources it was built from: (file name, line, label).
    const ASSERTIONS: &'static [(&'static str, u32, &'static str)] = &[];
    /// The RTL's `cover property` statements: (path below the top: the label, or
    /// `u_core.c_x` in a submodule; file name; line), in [`Verilated::cover_counts`]' order.
    const COVERS: &'static [(&'static str, &'static str, u32)] = &[];
    /// A fresh model (own `VerilatedContext`, so own time and `$finish` state).
    fn new() -> Result<Self, VltError>;
    /// Evaluates the model; errors on `$finish`, `$stop`, `$fatal`.
    fn eval(&mut self) -> Result<(), VltError>;
    /// Drives the clock (`true`: the active edge's level).
    fn set_clk(&mut self, v: bool);
    /// Sets input `port` (an index into `PORTS`) to the low bits of `v`. Panics on an output.
    fn set_u128(&mut self, port: usize, v: u128);
    /// Reads port `port` (its low 128 bits).
    fn get_u128(&self, port: usize) -> u128;
    /// Reads every port (`out[i]` = `get_u128(i)`; `out` has one slot per port).
    #[inline]
    fn get_all(&self, out: &mut [u128]) {
        for (i, v) in out.iter_mut().enumerate() {
            *v = self.get_u128(i);
        }
    }
    /// Starts a VCD of every signal; one per model.
    fn open_vcd(&mut self, path: &Path) -> Result<(), VltError>;
    /// Writes the signals' values at time `t` to the VCD, if open.
    fn dump(&mut self, t: u64);
    /// Flushes and closes the VCD, if open.
    fn close_vcd(&mut self);
    /// Simulated time, in VCD units (10 per cycle).
    fn time(&self) -> u64;
    /// Sets simulated time.
    fn set_time(&mut self, t: u64);
    /// The public internal signals (none unless the build or the sources made some public).
    fn signals(&self) -> &[SignalInfo] {
        &[]
    }
    /// The value of signal `i` (an index into [`Verilated::signals`]).
    fn peek_signal(&self, _i: usize) -> u128 {
        0
    }
    /// Writes signal `i` (masked to its width). The model sees it at its next evaluation; a
    /// register keeps it until the logic assigns it again.
    fn poke_signal(&mut self, _i: usize, _v: u128) {}
    /// How often each `cover property` matched so far (`out[k]` for `COVERS[k]`).
    fn cover_counts(&self, _out: &mut [u32]) {}
    /// The messages of assertions that failed since the last call, oldest first, as Verilator
    /// wrote them (`[T] %Warning: FILE:LINE: Assertion failed in HIER: TEXT`; see
    /// [`AssertionNote::parse`]).
    fn take_notes(&mut self) -> Vec<String> {
        Vec::new()
    }

    /// clk low, eval, dump: outputs reflect this cycle's inputs.
    fn settle(&mut self) -> Result<(), VltError> {
        self.set_clk(false);
        self.eval()?;
        let t = self.time();
        self.dump(t);
        Ok(())
    }
    /// clk high, eval, dump; the clock falls at the next settle. Advances time one cycle.
    fn posedge(&mut self) -> Result<(), VltError> {
        self.set_clk(true);
        self.eval()?;
        let t = self.time();
        self.dump(t + 5);
        self.set_time(t + 10);
        Ok(())
    }
    /// The index of the port called `name`.
    fn port(name: &str) -> Option<usize> {
        Self::PORTS.iter().position(|p| p.name == name)
    }
}

/// What generated wrappers use (not a stable API): [`include_models!`] imports it.
#[doc(hidden)]
pub mod codegen {
    #![allow(missing_docs)]
    pub use super::{PortInfo, ResetInfo, SignalInfo, Verilated, VltError};
    use std::ffi::CString;
    use std::path::Path;

    #[allow(dead_code)]
    pub fn mask(width: u32) -> u64 {
        if width >= 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        }
    }

    #[allow(dead_code)]
    pub fn word_mask(width: u32, word: usize) -> u32 {
        let lo = 32 * word as u32;
        if width >= lo + 32 {
            u32::MAX
        } else if width <= lo {
            0
        } else {
            (1u32 << (width - lo)) - 1
        }
    }

    #[allow(dead_code)]
    pub fn u128_to_words<const N: usize>(v: u128) -> [u32; N] {
        std::array::from_fn(|k| if k < 4 { (v >> (32 * k)) as u32 } else { 0 })
    }

    #[allow(dead_code)]
    pub fn words_to_u128(w: &[u32]) -> u128 {
        w.iter().take(4).enumerate().fold(0, |acc, (k, &x)| acc | (x as u128) << (32 * k))
    }

    /// Moves the runtime's pending assertion messages of this thread into `into`.
    #[cfg(feature = "rtl")]
    #[allow(dead_code)]
    pub fn take_notes(into: &mut Vec<String>) {
        extern "C" {
            fn vlt_note_count() -> std::os::raw::c_int;
            fn vlt_note(i: std::os::raw::c_int) -> *const std::os::raw::c_char;
            fn vlt_notes_clear();
        }
        // SAFETY: the runtime shim's thread-local list, read then cleared on this thread.
        unsafe {
            for i in 0..vlt_note_count() {
                into.push(std::ffi::CStr::from_ptr(vlt_note(i)).to_string_lossy().into_owned());
            }
            vlt_notes_clear();
        }
        // Bounded: a model that fails an assertion every cycle keeps the first 4096 messages
        // not yet taken; the count of those dropped is not kept.
        into.truncate(4096);
    }

    /// Reads a public signal of `width` bits stored as `bytes`-byte integers (0: 32-bit words).
    ///
    /// # Safety
    /// `p` points at the signal's storage in a live model.
    #[allow(dead_code)]
    pub unsafe fn read_signal(p: *mut std::os::raw::c_void, bytes: u32, width: u32) -> u128 {
        match bytes {
            1 => u128::from(*(p as *const u8)),
            2 => u128::from(*(p as *const u16)),
            4 => u128::from(*(p as *const u32)),
            8 => u128::from(*(p as *const u64)),
            _ => {
                let words = width.div_ceil(32).min(4) as usize;
                (0..words).fold(0u128, |a, k| a | u128::from(*(p as *const u32).add(k)) << (32 * k))
            }
        }
    }

    /// Writes a public signal (masked to `width`; see [`read_signal`]).
    ///
    /// # Safety
    /// `p` points at the signal's storage in a live model.
    #[allow(dead_code)]
    pub unsafe fn write_signal(p: *mut std::os::raw::c_void, bytes: u32, width: u32, v: u128) {
        let v = if width >= 128 { v } else { v & ((1u128 << width) - 1) };
        match bytes {
            1 => *(p as *mut u8) = v as u8,
            2 => *(p as *mut u16) = v as u16,
            4 => *(p as *mut u32) = v as u32,
            8 => *(p as *mut u64) = v as u64,
            _ => {
                for k in 0..width.div_ceil(32).min(4) as usize {
                    *(p as *mut u32).add(k) = (v >> (32 * k)) as u32;
                }
            }
        }
    }

    #[allow(dead_code)]
    pub fn path_cstring(p: &Path) -> Result<CString, VltError> {
        CString::new(p.as_os_str().as_encoded_bytes()).map_err(|_| VltError::TraceOpen(p.display().to_string()))
    }
}

/// Includes the wrappers that trnsim-vlt-build's `build_models` generated in this crate's
/// build script (`$OUT_DIR/vlt_models.rs`): use it inside a module of the crate that owns the
/// blocks, e.g. `#[cfg(trnsim_rtl)] pub mod models { verilator_sys::include_models!(); }`.
#[macro_export]
macro_rules! include_models {
    () => {
        #[allow(unused_imports)]
        use $crate::codegen::*;
        include!(concat!(env!("OUT_DIR"), "/vlt_models.rs"));
    };
}

/// The Verilated blocks (empty without feature `rtl`).
pub mod models {
    #[cfg(feature = "rtl")]
    crate::include_models!();
    /// Labelled assertions of the Verilated sources (none without feature `rtl`).
    #[cfg(not(feature = "rtl"))]
    pub const ASSERTIONS: &[(&str, u32, &str)] = &[];
}

/// The assertion a Verilator `$stop` comes from: `Some((label, "file:line"))` when the error is
/// `FILE:LINE: Verilog $stop` at a labelled assertion of a Verilated source.
pub fn failed_assertion(e: &VltError) -> Option<(&'static str, String)> {
    failed_assertion_in(models::ASSERTIONS, e)
}

/// [`failed_assertion`] against another table (a model's [`Verilated::ASSERTIONS`], e.g. of a
/// block built outside this crate).
pub fn failed_assertion_in(
    table: &'static [(&'static str, u32, &'static str)],
    e: &VltError,
) -> Option<(&'static str, String)> {
    let VltError::Rtl(msg) = e else { return None };
    let head = msg.strip_suffix(": Verilog $stop")?;
    let (file, line) = head.rsplit_once(':')?;
    let line: u32 = line.parse().ok()?;
    let name = Path::new(file).file_name()?.to_string_lossy();
    table.iter().find(|(f, l, _)| *f == name && *l == line).map(|&(_, _, label)| (label, format!("{name}:{line}")))
}

/// Severity of a failing assertion's action (`$info`, `$warning`, `$error`; Verilator 5.006
/// reports an assertion's `$fatal` as an error, and an assertion without an action block as an
/// error).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// `$info`: counted, the run goes on.
    Info,
    /// `$warning`: counted, the run goes on.
    Warning,
    /// `$error` (and the default action): the model stops (`$stop`).
    Error,
}

/// One failing assertion, from the message Verilator writes for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssertionNote {
    /// Its severity.
    pub severity: Severity,
    /// `file:line` of the assertion (file name only).
    pub at: String,
    /// The assertion's label (the last part of its hierarchy: `a_count_bounded`), or the
    /// hierarchy's last scope when it has none.
    pub label: String,
    /// The action's text (`$warning("...")`), empty when none.
    pub message: String,
}

impl AssertionNote {
    /// Parses `[T] %Warning: FILE:LINE: Assertion failed in HIER: TEXT` (`%Info`, `%Error`).
    pub fn parse(line: &str) -> Option<AssertionNote> {
        // `[T] %Warning: ...`, `[T] %Error: ...`; `$info` is `[T] -Info: ...`.
        let rest = line.trim_end().split_once("] ")?.1;
        let rest = rest.strip_prefix('%').or_else(|| rest.strip_prefix('-'))?;
        let (sev, rest) = rest.split_once(": ")?;
        let severity = match sev {
            "Info" => Severity::Info,
            "Warning" => Severity::Warning,
            "Error" | "Fatal" => Severity::Error,
            _ => return None,
        };
        let (at, rest) = rest.split_once(": Assertion failed in ")?;
        let (hier, message) = rest.split_once(": ").unwrap_or((rest, ""));
        let (file, line) = at.rsplit_once(':')?;
        let file = Path::new(file).file_name()?.to_string_lossy();
        let label = hier.rsplit('.').next().unwrap_or(hier).to_string();
        Some(AssertionNote { severity, at: format!("{file}:{line}"), label, message: message.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assertion_messages_parse_by_severity_and_label() {
        let w =
            AssertionNote::parse("[30] %Warning: /x/t.sv:12: Assertion failed in TOP.t.a_warn: cnt is 7\n").unwrap();
        assert_eq!(
            w,
            AssertionNote {
                severity: Severity::Warning,
                at: "t.sv:12".into(),
                label: "a_warn".into(),
                message: "cnt is 7".into()
            }
        );
        let e = AssertionNote::parse("[0] %Error: t.sv:15: Assertion failed in TOP.t.a_imm").unwrap();
        assert_eq!((e.severity, e.label.as_str(), e.message.as_str()), (Severity::Error, "a_imm", ""));
        let i = AssertionNote::parse("[600] -Info: d.sv:23: Assertion failed in d.a_60: ticks reached 60").unwrap();
        assert_eq!((i.severity, i.label.as_str()), (Severity::Info, "a_60"));
        assert!(AssertionNote::parse("hello from $display").is_none());
    }
}
