//! # trnsim-kernel
//!
//! The deterministic simulation kernel every trnsim model stands on: integer simulated time,
//! clock domains that never drift, components ticked on their clock's edges that sleep when
//! idle, typed credit-based links with latency, two-phase (evaluate/update) semantics,
//! statistics, run control with deadlock detection, and a trace hook.
//!
//! ## A first simulation
//!
//! A component is plain data plus a `tick` on its clock's rising edges. It sees only its own
//! ports: it may receive what has arrived, send within its credits, set timers, and record
//! trace events. Returning [`Activity::Idle`] puts it to sleep (it costs nothing) until a
//! message arrives, a credit returns on an output it was blocked on, or a timer fires.
//!
//! ```text
//!   ┌──────────┐  "out" ── LinkSpec { latency 3 cycles, depth 2 } ──► "in"  ┌──────────┐
//!   │ Producer │  OutPort<u64>                                 InPort<u64>  │ Consumer │
//!   │ (1 GHz)  │◄──────────────── credits return after 1 cycle ────────────│ (500 MHz)│
//!   └──────────┘                                                            └──────────┘
//! ```
//!
//! ```
//! use trnsim_kernel::*;
//!
//! /// Sends the numbers 0..n, one per cycle while credits allow.
//! struct Producer { out: OutPort<u64>, next: u64, n: u64 }
//! impl Component for Producer {
//!     fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
//!         if self.next == self.n {
//!             return Activity::Idle; // done: never ticked again
//!         }
//!         match cx.send(self.out, self.next) {
//!             Ok(()) => self.next += 1,
//!             Err(_) => return Activity::Idle, // no credit: woken when one returns
//!         }
//!         Activity::Busy
//!     }
//! }
//!
//! /// Adds up what it receives.
//! struct Consumer { inp: InPort<u64>, sum: u64 }
//! impl Component for Consumer {
//!     fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
//!         while let Some(v) = cx.recv(self.inp) {
//!             self.sum += v;
//!         }
//!         Activity::Idle // woken by the next arrival
//!     }
//!     fn report(&self, out: &mut StatsWriter<'_>) {
//!         out.count("sum", self.sum);
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut b = SimBuilder::new();
//! let fast = b.clock("fast", "1GHz".parse()?)?;
//! let slow = b.clock("slow", "500MHz".parse()?)?;
//! // Reserve both ends first, then wire them: a typed link of 3 cycles and 2 credits.
//! let p = b.reserve("producer", fast)?;
//! let c = b.reserve("consumer", slow)?;
//! let spec = LinkSpec { latency: Cycles(3), depth: 2, ..LinkSpec::default() };
//! let (out, inp) = b.link::<u64>(p, "out", c, "in", spec)?;
//! b.install(p, Producer { out, next: 0, n: 100 })?;
//! b.install(c, Consumer { inp, sum: 0 })?;
//! let mut sim = b.build()?;
//!
//! // Run until nothing is scheduled (or a limit), then read the statistics.
//! sim.run_until_idle(Dur::from_us(10))?;
//! let report = sim.report();
//! assert_eq!(report.int("consumer", "sum"), Some(99 * 100 / 2));
//! // Every link reports its traffic too, under "link:<src.port -> dst.port>".
//! assert_eq!(report.int("link:producer.out -> consumer.in", "msgs"), Some(100));
//! // With 2 credits, a 3 ns link and a 2 ns consumer, the producer is credit-bound.
//! assert!(sim.now() > Time::from_ps(100 * 1_000));
//! # Ok(()) }
//! ```
//!
//! A component that passes messages on (receive, transform, send) does it with
//! [`Ctx::forward`]: one lookup of each link, and a [`Forward`] saying whether another could
//! go at this edge.
//!
//! To see the run in Perfetto, attach a sink before running:
//! `sim.attach_trace(Box::new(trnsim_traces::PerfettoWriter::create("x.pftrace")?), &TraceOptions::default())`
//! (the `traces` crate), and call `sim.finish_trace()` after. Same inputs give the same
//! statistics and trace bytes whatever order components are ticked in within a step
//! ([`TickOrder`] exists to prove it). More: docs/architecture.md (code map, how a step works,
//! invariants).
#![warn(missing_docs)]

pub mod alloc_count;
mod builder;
mod component;
mod ctx;
mod error;
pub mod host;
pub mod input;
mod link;
pub mod parallel;
pub mod partition;
mod rng;
mod sched;
mod sim;
pub mod stats;
pub mod time;
pub mod trace;
mod trace_state;
mod wakeq;

pub use builder::{BlockMark, BlockShape, BuildScope, PortName, SimBuilder};
pub use component::{Activity, Component, ComponentId};
pub use ctx::{Ctx, Forward, PendingInputs, Tracer};
pub use error::{BlockedComponent, BuildError, DeadlockReport, RunError};
pub use link::{
    Bandwidth, Blocked, InPort, InputIndex, InputKey, LinkHook, LinkId, LinkSpec, OutPort, Payload, MAX_LINK_CYCLES,
    MAX_LINK_DEPTH,
};
pub use parallel::{
    run_threads, run_transport, LoopbackTransport, ParallelConfig, ParallelError, ParallelRun, PartitionTiming,
    ReportFilter, Transport, WindowHook,
};
pub use partition::{PartitionError, PartitionPlan, PartitionRule};
pub use rng::SimRng;
pub use sim::{KernelCounters, LinkInfo, LinkSelection, SimOptions, Simulation, Stop, TickOrder, TraceOptions};
pub use stats::{Histogram, StatValue, StatsReport, StatsWriter, TimeWeighted};
pub use time::{Clock, ClockId, Cycles, Dur, EdgeCursor, Frequency, QuantityError, Time, PS_PER_S};
pub use trace::{Arg, Flow, RecordKind, TraceError, TraceRecord, TraceSink, TrackDecl, TrackId, TrackKind};
