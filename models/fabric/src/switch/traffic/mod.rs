//! Traffic for switch studies: a Bernoulli [`Injector`] per input, a latency-recording [`Sink`]
//! per output, a single-switch [`Bench`] that wires them, and the BookSim-style offered-load
//! [`sweep`] (warm-up, sample windows until accepted rate and latency converge, saturation when
//! accepted load stops tracking offered load or latency passes a threshold).
//!
//! Offered load is in cells per port cycle (1.0 = every input busy every cycle); accepted load
//! is cells delivered to sinks per port cycle, per port.

mod bench;
mod injector;
mod pattern;
mod sink;
mod sweep;

pub use bench::{study_config, Bench, BenchError, BenchParams};
pub use injector::{Injector, InjectorParams};
pub use pattern::Pattern;
pub use sink::{Sink, Window};
pub use sweep::{run_point, saturation_load, saturation_throughput, sweep, LoadPoint, SweepParams};
