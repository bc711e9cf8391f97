//! Switch parameters: one declaration per parameter, with its unit and meaning, checked by
//! [`SwitchConfig::validate`] (the error names the field).

use super::arbiter;
use serde::{Deserialize, Serialize};
use std::fmt;
use trnsim_kernel::{Bandwidth, Clock, Cycles, Frequency, LinkSpec, PS_PER_S};

/// When a packet may leave: once its header cell has arrived, or once all of it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Forwarding {
    /// A packet may be switched once its first (header) cell has arrived and the port-to-port
    /// latency has passed.
    CutThrough,
    /// A packet may be switched only once its last cell has arrived and the port-to-port
    /// latency has passed: adds the serialization of the cells behind the header.
    StoreAndForward,
}

/// How an input buffer is organized.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Queueing {
    /// Virtual output queues: one FIFO per output at every input, sharing the input's buffer;
    /// an input may request every output it holds a packet for.
    Voq,
    /// One FIFO per input: only the head packet may request its output (head-of-line blocking,
    /// Karol, Hluchyj and Morgan 1987).
    Fifo,
}

/// Everything that defines a switch. Time advances in *port cycles*: the time one cell takes
/// through a port at the port's raw rate (see [`SwitchConfig::cell_clock`]). Read from a file
/// every field must be written: a missing one is an error naming it, never a silent default.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Ports (each one input and one output), 2..=4096.
    pub ports: u16,
    /// Bytes of one cell, the switching unit (a PCIe Gen6 flit is 256 B, a UALink TL flit
    /// 64 B). A packet of `b` bytes is `ceil(b / cell_bytes)` cells.
    pub cell_bytes: u32,
    /// Raw bandwidth of one port per direction, bytes per second (PCIe Gen6 x8: 64e9).
    pub port_bytes_per_s: u64,
    /// Port-to-port latency in picoseconds: header in to header out at zero load, rounded up
    /// to whole port cycles (spec §8: ~100-150 ns).
    pub port_to_port_ps: u64,
    /// Cut-through or store-and-forward.
    pub forwarding: Forwarding,
    /// Virtual output queues or a single FIFO per input.
    pub queueing: Queueing,
    /// Crossbar arbiter (see [`arbiter::ARBITERS`]).
    pub arbiter: String,
    /// Request-grant-accept iterations per crossbar cycle, >= 1.
    pub iterations: u32,
    /// Crossbar cycles per port cycle, >= 1 (with speedup > 1 cells wait in output queues).
    pub speedup: u32,
    /// Cells each input can hold, from header arrival until they cross the crossbar, including
    /// the cells in the port-to-port pipeline (as in BookSim, where flits sit in the input
    /// buffer through the router pipeline); must exceed the pipeline's cycles to sustain line
    /// rate. Credits to the upstream sender are its link's depth.
    pub input_buffer_cells: u32,
    /// Cells each output queue can hold between the crossbar and the output link, >= 1.
    pub output_buffer_cells: u32,
}

impl Default for SwitchConfig {
    /// The 160-lane, 20-port PCIe Gen6 switch: the values of its file
    /// (models/configs/fabric/switch/pcie6-160l-20p.ron; `default_is_the_first_preset` holds
    /// them equal), for code that builds a switch; files never fall back on it.
    fn default() -> Self {
        SwitchConfig {
            ports: 20,
            cell_bytes: 256,
            port_bytes_per_s: 64_000_000_000,
            port_to_port_ps: 120_000,
            forwarding: Forwarding::CutThrough,
            queueing: Queueing::Voq,
            arbiter: "islip".into(),
            iterations: 4,
            speedup: 1,
            input_buffer_cells: 96,
            output_buffer_cells: 4,
        }
    }
}

/// A configuration value out of range; fatal (fix the configuration).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// `field` holds `value`, which is not `allowed`.
    BadField {
        /// The field's name, as in the configuration.
        field: &'static str,
        /// The offending value.
        value: String,
        /// What would be accepted.
        allowed: String,
    },
    /// The switch was put on a clock that is not its cell clock.
    ClockMismatch {
        /// The clock's name.
        clock: String,
        /// Its frequency, in hertz.
        have_hz: u64,
        /// The cell clock, in hertz.
        want_hz: u64,
    },
}

impl ConfigError {
    /// Every configuration error stops assembly.
    pub fn is_fatal(&self) -> bool {
        true
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::BadField { field, value, allowed } => {
                write!(f, "switch config field `{field}` = {value}: expected {allowed}")
            }
            ConfigError::ClockMismatch { clock, have_hz, want_hz } => {
                write!(f, "switch on clock `{clock}` at {have_hz} Hz: its cell clock is {want_hz} Hz")
            }
        }
    }
}

impl std::error::Error for ConfigError {}

fn bad(field: &'static str, value: impl fmt::Display, allowed: impl Into<String>) -> ConfigError {
    ConfigError::BadField { field, value: value.to_string(), allowed: allowed.into() }
}

impl SwitchConfig {
    /// The port cycle: `port_bytes_per_s / cell_bytes` hertz (PCIe Gen6 x8 with 256 B flits:
    /// 250 MHz, 4 ns per cell).
    pub fn cell_clock(&self) -> Frequency {
        Frequency::from_hz(self.port_bytes_per_s / u64::from(self.cell_bytes.max(1)))
    }
    /// The port-to-port latency in port cycles (rounded up).
    pub fn latency_cycles(&self) -> u64 {
        let hz = u128::from(self.cell_clock().as_hz());
        (u128::from(self.port_to_port_ps) * hz).div_ceil(u128::from(PS_PER_S)) as u64
    }
    /// One port cycle in picoseconds (exact when the cell clock divides 1 THz).
    pub fn cycle_ps(&self) -> f64 {
        PS_PER_S as f64 / self.cell_clock().as_hz().max(1) as f64
    }
    /// Cells in a packet of `bytes` bytes (at least one).
    pub fn cells(&self, bytes: u32) -> u32 {
        bytes.div_ceil(self.cell_bytes.max(1)).max(1)
    }
    /// A link spec for a port's input or output: one cell per port cycle (so a packet's tail
    /// arrives `cells - 1` cycles after its header, which the switch's timing relies on),
    /// `latency` port cycles (>= 1) of wire and PHY, `depth` packets of credits.
    pub fn port_link(&self, latency: u64, depth: u32) -> LinkSpec {
        LinkSpec {
            latency: Cycles(latency),
            depth,
            credit_latency: Cycles(1),
            bandwidth: Bandwidth::BytesPerCycle(self.cell_bytes.max(1)),
        }
    }
    /// Checks that `clock` runs at the cell clock (the switch counts time in port cycles).
    pub fn check_clock(&self, clock: &Clock) -> Result<(), ConfigError> {
        let (have_hz, want_hz) = (clock.frequency().as_hz(), self.cell_clock().as_hz());
        if have_hz != want_hz {
            return Err(ConfigError::ClockMismatch { clock: clock.name().to_string(), have_hz, want_hz });
        }
        Ok(())
    }
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(2..=4096).contains(&self.ports) {
            return Err(bad("ports", self.ports, "2..=4096"));
        }
        if self.cell_bytes == 0 {
            return Err(bad("cell_bytes", 0, ">= 1 byte"));
        }
        if self.cell_clock().as_hz() == 0 {
            return Err(bad("port_bytes_per_s", self.port_bytes_per_s, ">= cell_bytes (at least one cell per second)"));
        }
        if arbiter::by_name(&self.arbiter, 2, 1).is_none() {
            return Err(bad("arbiter", format!("{:?}", self.arbiter), format!("one of: {}", arbiter::names())));
        }
        if !(1..=64).contains(&self.iterations) {
            return Err(bad("iterations", self.iterations, "1..=64"));
        }
        if !(1..=16).contains(&self.speedup) {
            return Err(bad("speedup", self.speedup, "1..=16"));
        }
        let pipe = self.latency_cycles();
        if u64::from(self.input_buffer_cells) <= pipe {
            let allowed = format!("more than the {pipe} cells of the port-to-port pipeline");
            return Err(bad("input_buffer_cells", self.input_buffer_cells, allowed));
        }
        if self.output_buffer_cells == 0 {
            return Err(bad("output_buffer_cells", 0, ">= 1 cell"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_quantities() {
        let c = SwitchConfig::default();
        assert_eq!(c.cell_clock(), Frequency::from_mhz(250));
        assert_eq!(c.latency_cycles(), 30);
        assert_eq!(c.cycle_ps(), 4000.0);
        assert_eq!((c.cells(1), c.cells(256), c.cells(257), c.cells(0)), (1, 1, 2, 1));
        let odd = SwitchConfig { port_to_port_ps: 121_000, ..c };
        assert_eq!(odd.latency_cycles(), 31, "rounded up to whole cycles");
    }

    #[test]
    fn errors_name_the_field() {
        let c = SwitchConfig::default();
        let field = |c: SwitchConfig| match c.validate() {
            Err(ConfigError::BadField { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(field(SwitchConfig { ports: 1, ..c.clone() }), "ports");
        assert_eq!(field(SwitchConfig { arbiter: "pim".into(), ..c.clone() }), "arbiter");
        assert_eq!(field(SwitchConfig { speedup: 0, ..c.clone() }), "speedup");
        assert_eq!(field(SwitchConfig { iterations: 0, ..c.clone() }), "iterations");
        assert_eq!(field(SwitchConfig { input_buffer_cells: 30, ..c.clone() }), "input_buffer_cells");
        assert_eq!(field(SwitchConfig { output_buffer_cells: 0, ..c.clone() }), "output_buffer_cells");
        assert_eq!(field(SwitchConfig { port_bytes_per_s: 10, ..c.clone() }), "port_bytes_per_s");
        let msg = SwitchConfig { arbiter: "pim".into(), ..c }.validate().unwrap_err().to_string();
        assert!(msg.contains("`arbiter`") && msg.contains("islip"), "{msg}");
    }

    #[test]
    fn a_missing_or_unknown_field_is_an_error_not_a_default() {
        let full = serde_json::to_value(SwitchConfig::default()).unwrap();
        assert_eq!(serde_json::from_value::<SwitchConfig>(full.clone()).unwrap(), SwitchConfig::default());
        let mut partial = full.clone();
        partial.as_object_mut().unwrap().remove("speedup");
        let e = serde_json::from_value::<SwitchConfig>(partial).unwrap_err().to_string();
        assert!(e.contains("missing field `speedup`"), "{e}");
        let e = serde_json::from_str::<SwitchConfig>(r#"{"ports": 8, "queueing": "fifo"}"#).unwrap_err().to_string();
        assert!(e.contains("missing field"), "{e}");
        let mut unknown = full;
        unknown.as_object_mut().unwrap().insert("portz".into(), 8.into());
        assert!(serde_json::from_value::<SwitchConfig>(unknown).is_err());
    }
}
