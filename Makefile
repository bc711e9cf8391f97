# trnsim's front door. `make run` needs only cargo; `make test` first installs what the tests
# need beyond it (scripts/install-test-deps.sh says what and why).
#
# Builds with features go to their own target folder, so `target/release/trnsim` is always the
# default build: `make diff`/`make mutate` (feature rtl) build target/rtl/release/trnsim,
# `make mpi` (feature mpi) builds target/mpi/release/trnsim.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
CARGO ?= cargo
OUT   ?= traces/out
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
PERFETTO_UI_DIR ?= $(CURDIR)/target/perfetto-ui
RTL_TARGET ?= $(CURDIR)/target/rtl
MPI_TARGET ?= $(CURDIR)/target/mpi
# Tests that cannot run for want of a tool append themselves here; the summary counts them.
TRNSIM_SKIP_LOG ?= $(CURDIR)/target/test-skips.log
TEST_LOG := $(CURDIR)/target/test-output.log
# The suite's determinism check (run twice, traced, compared byte for byte) leaves out its four
# multi-chip runs, most of its time: tests/multichip_* run their code on small shapes under a
# shuffled tick order and compare statistics (and the TP run's trace bytes).
# `scripts/suite-determinism.sh` with no argument checks the whole suite.
DETERMINISM_LEAVE_OUT ?= tp-matmul-4|tp-matmul-16|tp-matmul-64|moe-alltoall-144
# Its first run's results JSON is also compared with tests/baselines/suite-results.json
# (scripts/suite-baseline.sh: `update` rewrites it when a model change is meant to move figures).
export PERFETTO_UI_DIR TRNSIM_SKIP_LOG DETERMINISM_LEAVE_OUT

.PHONY: run test test-deps docs bench compare-systemc trace lint fmt clean-out mutate diff mpi parallel-bench fuzz

## run: the default microbenchmark suite; results table on stdout, JSON, plots and a trace in traces/out/
run:
	$(CARGO) build --release -p trnsim-harness
	@mkdir -p $(OUT) && rm -f $(OUT)/suite.*.pftrace $(OUT)/tp-matmul-4.pftrace
	./target/release/trnsim run --jobs $(JOBS) --json $(OUT)/results.json --plots $(OUT)
	./target/release/trnsim run tp-matmul-4 --trace $(OUT)/tp-matmul-4.pftrace > /dev/null
	@echo "results: $(OUT)/results.json; plots: $(OUT)/*.svg; trace of the end-to-end run (4 chips: engines, DMA queues, HBM pseudo-channels, NeuronLinks): $(OUT)/tp-matmul-4.pftrace (open in https://ui.perfetto.dev)"

## test: format and lint checks, every test of the workspace with features rtl and mpi (one
##       build for all: the RTL co-simulation and the MPI transport are tested in the same pass),
##       the default-feature dev build (linted), its `diff` and `--mpi` messages and the suite's
##       determinism checked on it;
##       ends with `tests: P passed, F failed, S skipped`
FEATURES_ALL := trnsim-rtl/rtl,trnsim-harness/rtl,trnsim-harness/mpi
# Lint while building: clippy-driver (what `cargo clippy` runs) compiles the workspace's own
# crates for the tests and lints them in the same compile, so there is no separate check build
# of every crate and dependency (2 of CI's 10 minutes). The arguments are `cargo clippy -- -D
# warnings`'s, in the form cargo-clippy hands them to the driver. Every cargo command of `test`
# runs with it: the wrapper is part of cargo's fingerprint, so a command without it would
# rebuild the workspace. The default-feature build is linted too. `make lint` is plain clippy.
LINTED = RUSTC_WORKSPACE_WRAPPER="$(CLIPPY_DRIVER)" CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
CLIPPY_DRIVER = $(shell command -v clippy-driver)
test: test-deps
	@mkdir -p target && rm -f $(TRNSIM_SKIP_LOG) $(TEST_LOG)
	@[ -n "$(CLIPPY_DRIVER)" ] || { echo "make test: clippy-driver not found (rustup component add clippy)" >&2; exit 1; }
	$(CARGO) fmt --all -- --check
	$(LINTED) $(CARGO) test --workspace --all-targets --features $(FEATURES_ALL) --no-run
	$(LINTED) $(CARGO) test --workspace --features $(FEATURES_ALL) 2>&1 | tee -a $(TEST_LOG)
	$(LINTED) $(CARGO) build -p trnsim-harness
	scripts/default-build-check.sh ./target/debug/trnsim 2>&1 | tee -a $(TEST_LOG)
	BASELINE=1 TRNSIM=./target/debug/trnsim scripts/suite-determinism.sh $$(./target/debug/trnsim list | awk '{ print $$1 }' | grep -vxE '$(DETERMINISM_LEAVE_OUT)')
	@scripts/test-summary.sh $(TEST_LOG) $(TRNSIM_SKIP_LOG)

## test-deps: what the tests need beyond cargo (rustfmt/clippy, node and Perfetto's trace processor, Verilator, Open MPI)
test-deps:
	@scripts/install-test-deps.sh all

## docs: only the docs' commands and figures (README.md, "Docs are executed"), on the dev build;
##       `make test` runs them with every other test
docs:
	$(CARGO) build -p trnsim-harness
	$(CARGO) test -p trnsim-tests --test integration docs_commands_run_and_figures_hold

## fuzz: the hostile-input property tests for longer (docs/validation.md, "Hostile input"):
##       TRNSIM_FUZZ_CASES cases per test (default 20000), TRNSIM_FUZZ_SEED, TRNSIM_FUZZ_SECONDS
TRNSIM_FUZZ_CASES ?= 20000
fuzz:
	$(CARGO) build --release -p trnsim-harness
	TRNSIM_FUZZ_CASES=$(TRNSIM_FUZZ_CASES) $(CARGO) test --release -p trnsim-tests --test integration -- fuzz_

## bench: criterion benchmarks of the kernel, plus the kernel-ring figures
bench:
	$(CARGO) bench -p trnsim-harness --bench kernel_ring
	$(CARGO) build --release -p trnsim-harness
	taskset -c 0 ./target/release/trnsim bench kernel-ring --modules 64 --tokens 16 --depth 4 --cycles 1000000
	taskset -c 0 ./target/release/trnsim bench kernel-ring --modules 64 --tokens 2 --depth 4 --cycles 1000000

## compare-systemc: the same ring in SystemC and trnsim, side by side (installs libsystemc-dev)
compare-systemc:
	$(CARGO) build --release -p trnsim-harness
	scripts/compare-systemc.sh

## trace: the demo system's Perfetto trace and VCD in traces/out/
trace:
	@mkdir -p $(OUT)
	$(CARGO) run --release -p trnsim-harness -- run demo --trace $(OUT)/demo.pftrace --vcd $(OUT)/demo.vcd

lint:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

clean-out:
	rm -rf $(OUT)

## diff: one block's model against its RTL, e.g. `make diff BLOCK=islip_n8_i1 ARGS="--cycles 10000000 --vcd traces/out/vcd"`
##       (`make diff BLOCK=--list` lists them; `ARGS="--swap sw" BLOCK=` runs the switch swap-in check);
##       the binary is target/rtl/release/trnsim
BLOCK ?= --list
diff:
	@scripts/install-test-deps.sh rtl
	CARGO_TARGET_DIR=$(RTL_TARGET) $(CARGO) run --release -p trnsim-harness --features rtl -- diff $(BLOCK) $(ARGS)

## mutate: plant bugs in the RTL blocks (rtl/scripts/mutate.sh) and show the lock-step diff catches each
mutate:
	@scripts/install-test-deps.sh rtl
	CARGO_TARGET_DIR=$(RTL_TARGET) bash rtl/scripts/mutate.sh

## mpi: trnsim with the MPI backend, as target/mpi/release/trnsim; then e.g.
##      `scripts/mpirun.sh -np 2 target/mpi/release/trnsim run --mpi fabric-allreduce-nl72x2-nodes`
mpi:
	@scripts/install-test-deps.sh mpi
	CARGO_TARGET_DIR=$(MPI_TARGET) $(CARGO) build --release -p trnsim-harness --features mpi

## parallel-bench: serial vs 2 threads vs 2 MPI ranks on the 144-chip all-reduce (results checked equal)
parallel-bench: mpi
	$(MPI_TARGET)/release/trnsim bench parallel --threads 2 --reps 3
	scripts/mpirun.sh -np 2 $(MPI_TARGET)/release/trnsim run --mpi fabric-allreduce-nl72x2-nodes
