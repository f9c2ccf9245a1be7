# phblab's set-up commands.
#
#   make setup   create $(VENV) and install phblab into it (Rust core built with the dist profile)
#   make demo    the flagship run: the Vukadinović thesis' Section 7 (FIFO vs BPR vs
#                BPR with PLC) reproduced into results/demo, with its HTML report
#   make test    Rust tests (release: the TCP tests are heavy) and Python tests, against the
#                extension built with the same `release` profile (one compilation)
#   make lint    rustfmt, clippy (warnings are errors) and ruff (check and format), as CI runs them
#   make bench   the speed benchmark: each benches/scenarios/*.toml in its own process, in the
#                core alone and through `phblab run` (benches/front_end.py: the front end's cost),
#                then JoBS' cost per packet beside the Christin et al. paper's Table 7
#                (crates/phb-sim/examples/jobs_bench.rs, on Experiment 3's arrivals), ns per
#                packet of every qdisc family and meter (qdisc_bench.rs), and the scale
#                benchmark: dumbbells of 1k, 10k and 100k NewReno pairs (scale_bench.rs)
#   make bench-emu  the emulator's fidelity (needs root): departure scheduling error at 10 and
#                100 Mb/s and added latency per hop (the router sleeping, and polling in the
#                last 50 µs), packets/s of 64 and 1500 bytes through one FIFO or DRR link
#   make clean   remove the venv, build products (cargo clean) and results/demo
#
# Needs python3 (>= 3.11) and cargo; everything else comes from PyPI and crates.io.

VENV ?= .venv
PYTHON ?= python3
VENV_ABS := $(abspath $(VENV))
BIN := $(VENV)/bin
# ruff is pinned so that a new release's rules cannot turn CI red overnight.
RUFF := ruff==0.17.6

# The extension is rebuilt when any of these change. (The Python package is
# installed in editable mode: edits under python/ need no reinstall.)
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null) Cargo.toml $(wildcard Cargo.lock)

.PHONY: setup demo test lint bench bench-emu emulator clean

setup: $(VENV)/.phblab-installed emulator

# The router of `phblab emulate` (found by the Python package in target/release).
emulator:
	cargo build --release -p phb-emu

$(VENV)/.deps-installed: Makefile
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "phblab needs Python >= 3.11; set PYTHON=python3.11 or newer")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip maturin pandas pyarrow tqdm pytest dpkt scipy matplotlib "dask[distributed]" $(RUFF)
	touch $@

# Users and the demo get the extension built with the `dist` profile
# (whole-program optimisation); `make test` builds it with `release`, the
# profile of cargo's tests, so that CI compiles the crates once, not twice.
# Each marker says which build is installed.
$(VENV)/.phblab-installed: $(VENV)/.deps-installed pyproject.toml $(RUST_SOURCES)
	VIRTUAL_ENV=$(VENV_ABS) PATH=$(VENV_ABS)/bin:$$PATH $(BIN)/maturin develop --profile dist --quiet
	rm -f $(VENV)/.phblab-installed-release
	touch $@

$(VENV)/.phblab-installed-release: $(VENV)/.deps-installed pyproject.toml $(RUST_SOURCES)
	VIRTUAL_ENV=$(VENV_ABS) PATH=$(VENV_ABS)/bin:$$PATH $(BIN)/maturin develop --release --quiet
	rm -f $(VENV)/.phblab-installed
	touch $@

# The thesis' Section 7 entries (Figs. 22–27), then the report of what ran.
# `reproduce` exits with 3 when a value misses its tolerance or a claim
# fails: a finding the report shows, not an error of the run.
DEMO_ENTRIES := vukadinovic-2004/section-7 vukadinovic-2004/section-7-delta vukadinovic-2004/section-7-udp-load

demo: setup
	$(BIN)/phblab reproduce $(DEMO_ENTRIES) --results results/demo/reproduce; status=$$?; test $$status -eq 0 -o $$status -eq 3
	$(BIN)/phblab report $(DEMO_ENTRIES) --results results/demo/reproduce --out results/demo/report

test: $(VENV)/.phblab-installed-release emulator
	cargo test --workspace --release
	$(BIN)/pytest -q

lint: $(VENV)/.deps-installed
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(BIN)/ruff check python tests scripts benches
	$(BIN)/ruff format --check python tests scripts benches

bench: setup
	cargo build --profile dist --example bench --example jobs_bench --example qdisc_bench --example scale_bench
	@for f in benches/scenarios/*.toml; do ./target/dist/examples/bench --repeat 3 $$f; done
	@echo
	$(BIN)/python benches/front_end.py --bench target/dist/examples/bench --phblab $(BIN)/phblab benches/scenarios/*.toml
	@echo
	./target/dist/examples/jobs_bench --repeat 3 scenarios/christin-2001/experiment-3.toml
	@echo
	./target/dist/examples/qdisc_bench
	@echo
	./target/dist/examples/scale_bench benches/scale/dumbbell.toml --pairs 1000,10000,100000

bench-emu: setup
	$(BIN)/python benches/emulate_fidelity.py

clean:
	rm -rf $(VENV) results/demo .pytest_cache
	cargo clean
	find python tests -name __pycache__ -type d -prune -exec rm -rf {} +
	rm -f python/phblab/_core*.so python/phblab/_core*.pyd
