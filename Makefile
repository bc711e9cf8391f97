# trnsim's front door. `make run` and `make test` work on a fresh machine: each installs what it
# needs first (scripts/install-deps.sh).
CARGO ?= cargo
OUT   ?= traces/out
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
PERFETTO_UI_DIR ?= $(CURDIR)/target/perfetto-ui
export PERFETTO_UI_DIR

.PHONY: run test bench compare-systemc trace lint fmt deps clean-out mutate diff mpi parallel-bench fuzz

## run: the default microbenchmark suite; results table on stdout, JSON, plots and traces in traces/out/
run: deps
	$(CARGO) build --release -p trnsim-harness
	@mkdir -p $(OUT) && rm -f $(OUT)/suite.*.pftrace $(OUT)/tp-matmul-4.pftrace
	./target/release/trnsim run --jobs $(JOBS) --json $(OUT)/results.json --plots $(OUT)
	./target/release/trnsim run tp-matmul-4 --trace $(OUT)/tp-matmul-4.pftrace > /dev/null
	@echo "results: $(OUT)/results.json; plots: $(OUT)/*.svg; trace of the end-to-end run (4 chips: engines, DMA queues, HBM pseudo-channels, NeuronLinks): $(OUT)/tp-matmul-4.pftrace (open in https://ui.perfetto.dev)"

## test: format and lint checks, then every test of the workspace
test: deps
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p trnsim-rtl -p trnsim-harness --all-targets --features trnsim-rtl/rtl,trnsim-harness/rtl -- -D warnings
	$(CARGO) clippy -p trnsim-harness --all-targets --features mpi -- -D warnings
	$(CARGO) build -p trnsim-harness --bin trnsim
	$(CARGO) test --workspace
	$(CARGO) test -p trnsim-rtl --features rtl
	$(CARGO) test -p trnsim-harness --features rtl --test diff_cli
	$(CARGO) test -p trnsim-harness --features mpi --test mpi_cli
	$(CARGO) build --release -p trnsim-harness && TRNSIM=$${CARGO_TARGET_DIR:-./target}/release/trnsim scripts/suite-determinism.sh

## fuzz: the hostile-input property tests for longer (docs/validation.md, "Hostile input"):
##       TRNSIM_FUZZ_CASES cases per test (default 20000), TRNSIM_FUZZ_SEED, TRNSIM_FUZZ_SECONDS
TRNSIM_FUZZ_CASES ?= 20000
fuzz:
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

deps:
	@scripts/install-deps.sh

clean-out:
	rm -rf $(OUT)

## diff: one block's model against its RTL, e.g. `make diff BLOCK=islip_n8_i1 ARGS="--cycles 10000000 --vcd out"`
##       (`make diff BLOCK=--list` lists them; `ARGS="--swap sw" BLOCK=` runs the switch swap-in check)
BLOCK ?= --list
diff: deps
	$(CARGO) run --release -p trnsim-harness --features rtl -- diff $(BLOCK) $(ARGS)

## mutate: plant bugs in the RTL blocks (rtl/scripts/mutate.sh) and show the lock-step diff catches each
mutate: deps
	CARGO_TARGET_DIR=target bash rtl/scripts/mutate.sh

## mpi: trnsim with the MPI backend; then e.g. `scripts/mpirun.sh -np 2 target/release/trnsim run --mpi fabric-allreduce-nl72x2-nodes`
mpi: deps
	$(CARGO) build --release -p trnsim-harness --features mpi

## parallel-bench: serial vs 2 threads vs 2 MPI ranks on the 144-chip all-reduce (results checked equal)
parallel-bench: mpi
	./target/release/trnsim bench parallel --threads 2 --reps 3
	scripts/mpirun.sh -np 2 ./target/release/trnsim run --mpi fabric-allreduce-nl72x2-nodes
