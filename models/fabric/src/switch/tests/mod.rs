//! Acceptance tests of the switch: saturation throughput against the classic
//! results, latency against first principles, conservation and determinism.

mod assembly;
mod conservation;
mod latency;
mod saturation;
