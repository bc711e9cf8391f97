//! trnsim's integration tests: one binary, one file per behaviour, named for the rule it checks.

mod cli_errors_are_one_line;
mod common;
mod config_errors_are_located;
mod e2e_llm_layer_matches_its_analytic_estimate;
mod hbm_checker_finds_no_violations_in_random_traffic;
mod hbm_cli_runs_traces_and_rejects_bad_ones;
mod hbm_runs_are_deterministic;
mod hbm_trace_loads_in_perfetto;
mod hbm_trn3_streams_near_spec_bandwidth;
mod kernel_clock_edges_are_exact;
mod kernel_partitioned_runs_match_serial;
mod kernel_random_graphs_are_order_independent;
mod kernel_ring_deadlock_is_reported;
mod kernel_ring_matches_systemc_hop_counts;
mod nc_gemm_sweep_pays_fill_and_drain_once;
mod nc_matmul_reaches_spec_tflops;
mod nc_runs_are_deterministic;
mod nc_trace_loads_in_perfetto;
mod parallel_allreduce_nl72x2_matches_serial;
mod trace_loads_in_perfetto;
mod vcd_reads_back;
