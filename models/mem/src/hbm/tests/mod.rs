//! Validation of the stack against first principles (unit-level; cross-crate tests live in
//! tests/).

mod energy;
mod fast;
mod frontend;
mod gates;
mod latency;
mod refresh_schedule;
mod run_end;
mod stepping;
