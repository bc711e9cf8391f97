//! # trnsim-kernel
//!
//! The deterministic simulation kernel every trnsim model stands on: integer simulated time,
//! clock domains that never drift, components ticked on their clock's edges that sleep when
//! idle, typed credit-based links with latency, two-phase (evaluate/update) semantics,
//! statistics, run control with deadlock detection, and a trace hook.
//!
//! (The tutorial is in progress; see docs/architecture.md.)
#![warn(missing_docs)]

mod builder;
mod component;
mod ctx;
mod error;
mod link;
mod rng;
mod sched;
mod sim;
pub mod stats;
pub mod time;
pub mod trace;
mod trace_state;

pub use builder::SimBuilder;
pub use component::{Activity, Component, ComponentId};
pub use ctx::{Ctx, Tracer};
pub use error::{BlockedComponent, BuildError, DeadlockReport, RunError};
pub use link::{Bandwidth, Blocked, InPort, LinkId, LinkSpec, OutPort, Payload};
pub use rng::SimRng;
pub use sim::{KernelCounters, LinkInfo, LinkSelection, SimOptions, Simulation, Stop, TickOrder, TraceOptions};
pub use stats::{Histogram, StatValue, StatsReport, StatsWriter, TimeWeighted};
pub use time::{Clock, ClockId, Cycles, Dur, EdgeCursor, Frequency, QuantityError, Time, PS_PER_S};
pub use trace::{Arg, Flow, RecordKind, TraceError, TraceRecord, TraceSink, TrackDecl, TrackId, TrackKind};
