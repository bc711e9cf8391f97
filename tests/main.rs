//! trnsim's integration tests: one binary, one file per behaviour, named for the rule it checks.

mod cli_errors_are_one_line;
mod common;
mod config_errors_are_located;
mod kernel_clock_edges_are_exact;
mod kernel_random_graphs_are_order_independent;
mod kernel_ring_deadlock_is_reported;
mod kernel_ring_matches_systemc_hop_counts;
mod trace_loads_in_perfetto;
mod vcd_reads_back;
