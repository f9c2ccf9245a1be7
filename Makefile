# phblab's set-up commands.
#
#   make setup   create $(VENV) and install phblab into it (Rust core built with the dist profile)
#   make demo    run scenarios/examples/tcp-udp-red.toml into results/demo
#   make test    Rust tests (release: the TCP tests are heavy) and Python tests
#   make bench   the speed benchmark: each benches/scenarios/*.toml in its own process
#   make clean   remove the venv, build products (cargo clean) and results/demo
#
# Needs python3 (>= 3.11) and cargo; everything else comes from PyPI and crates.io.

VENV ?= .venv
PYTHON ?= python3
VENV_ABS := $(abspath $(VENV))
BIN := $(VENV)/bin

# The extension is rebuilt when any of these change. (The Python package is
# installed in editable mode: edits under python/ need no reinstall.)
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null) Cargo.toml $(wildcard Cargo.lock)

.PHONY: setup demo test bench clean

setup: $(VENV)/.phblab-installed

$(VENV)/.deps-installed: Makefile
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "phblab needs Python >= 3.11; set PYTHON=python3.11 or newer")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip maturin pandas pyarrow tqdm pytest scipy matplotlib "dask[distributed]"
	touch $@

$(VENV)/.phblab-installed: $(VENV)/.deps-installed pyproject.toml $(RUST_SOURCES)
	VIRTUAL_ENV=$(VENV_ABS) PATH=$(VENV_ABS)/bin:$$PATH $(BIN)/maturin develop --profile dist --quiet
	touch $@

demo: setup
	$(BIN)/phblab run scenarios/examples/tcp-udp-red.toml --out results/demo

test: setup
	cargo test --workspace --release
	$(BIN)/pytest -q

bench:
	cargo build --profile dist --example bench
	@for f in benches/scenarios/*.toml; do ./target/dist/examples/bench --repeat 3 $$f; done

clean:
	rm -rf $(VENV) results/demo .pytest_cache
	cargo clean
	find python tests -name __pycache__ -type d -prune -exec rm -rf {} +
	rm -f python/phblab/_core*.so python/phblab/_core*.pyd
