//! HBM stacks: organization, timing, address mapping, controllers and the stack component.
//!
//! ```text
//!  requests ──► HbmStack (kernel component, CK clock)
//!                 │ AddressMap: byte address → channel / pc / sid / bank group / bank / row / column
//!                 ▼
//!               Channel ×16 ── row command bus, column command bus (shared by its 2 PCs)
//!                 ├─ PcController: read queue, write queue, scheduler, refresh, bank state
//!                 └─ PcController
//!                       │ every issued command ──► CommandSink (trace file, checker)
//!  responses ◄── completions (RD: issue + CL + BL; WR: issue + CWL + BL)
//! ```

pub mod bankq;
pub mod channel;
pub mod checker;
pub mod cmdtrace;
pub mod command;
pub mod config;
pub mod controller;
pub mod data;
mod due;
pub mod energy;
pub mod fast;
pub mod mapping;
pub mod org;
pub mod presets;
pub mod refresh;
pub mod sched;
pub mod stack;
pub mod state;
pub mod stats;
pub mod timing;
pub mod traffic;

#[cfg(test)]
mod tests;

pub use command::{CmdSet, Command, CommandRecord, CommandSink};
pub use config::{ControllerConfig, PagePolicy};
pub use mapping::{AddressMap, Bursts, MapError};
pub use org::{Location, Organization};
pub use presets::Preset;
pub use stack::{Fidelity, HbmStack, MemReq, MemResp, StackConfig, StackDecl, StackSetup};
pub use timing::{constraints, Constraint, Scope, TimingParams};
