# Two commands set everything up on a fresh machine:
#   make run    create .venv, install, start the app on http://localhost:8501
#   make test   create .venv, install, run the whole test suite (browser tests included)
# (`make test-fast`: the tests that start no worker process, the inner loop)
# (`make setup` alone installs; the project goes in editable, `pip install -e .`, with the `tlens`
# command in .venv/bin: tlens app | compile | diff | profile)
# and one more for CI:
#   make test-oldest   the core (non-browser) suite against the oldest supported Triton
#                      (3.6.0) in a second virtualenv, .venv-oldest
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
# The CPU build of torch: on this workplace `pip install torch==2.13.0` takes a local CPU wheel.
# Elsewhere without a GPU: make TORCH_SPEC=torch==2.13.0 PIP_TORCH_ARGS="--index-url https://download.pytorch.org/whl/cpu"
TORCH_SPEC     ?= torch==2.13.0
PIP_TORCH_ARGS ?=
PORT ?= 8501
# FlagGems (its kernels as ATen's CUDA implementations: tests/sandbox/test_engine.py), without its
# numpy pin; its other requirements are in requirements.txt
FLAG_GEMS ?= flag-gems==5.0.2
# Helion (a kernel with a fixed config: tests/sandbox/test_engine.py), without its autotuner's requirements
HELION ?= helion==1.5.1
# flash-linear-attention and torchao (library ops: benchmarks/library_ops.py), without their torch pins
FLA ?= fla-core==0.6.0
TORCHAO ?= torchao==0.18.0
# gemlite (a library that asks the GPU's count and name at import: tests/sandbox/test_engine.py), without its triton pin
GEMLITE ?= gemlite==0.6.0.post2
# The oldest Triton in requirements.txt's range, tested by `make test-oldest`.
OLDEST_TRITON ?= triton==3.6.0
VENV_OLDEST   ?= .venv-oldest
PY_OLDEST      = $(VENV_OLDEST)/bin/python

.PHONY: run test test-fast lint test-oldest setup setup-oldest setup-versions bench clean serve-class editor-bundle

$(VENV)/.installed: requirements.txt pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	@# Keep a CUDA torch if there is one (the venv may see it through --system-site-packages);
	@# otherwise install the CPU build before anything can pull a multi-GB CUDA build.
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q $(PIP_TORCH_ARGS) "$(TORCH_SPEC)"
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps "$(FLAG_GEMS)" "$(HELION)" "$(FLA)" "$(TORCHAO)" "$(GEMLITE)"
	@# the project itself, editable: inspectors/, kernels/ and app/ import from anywhere, and `tlens`
	$(PY) -m pip install -q --no-deps -e .
	touch $@

setup: $(VENV)/.installed

run: setup
	$(PY) -m streamlit run app/main.py --server.port $(PORT)

# A server for a class, for an authenticating reverse proxy on this machine to publish (README,
# "Serving a class"); e.g. make serve-class TLENS_USER_HEADER=X-Forwarded-User
# REPLICAS=N (N > 1): N Streamlit processes behind nginx on $(PORT), sticky sessions, the
# machine's compile workers split between them (deploy/serve_class.py, deploy/nginx.conf.template);
# ADDRESS: where nginx listens (a second box: its address on the network the front proxy sees).
REPLICAS ?= 1
ADDRESS ?= 127.0.0.1
serve-class: setup
	TLENS_CLASS=1 $(PY) -m inspectors.process.sandbox --server
ifeq ($(REPLICAS),1)
	TLENS_CLASS=1 $(PY) -m streamlit run app/main.py --server.port $(PORT) --server.address 127.0.0.1
else
	$(PY) deploy/serve_class.py --replicas $(REPLICAS) --port $(PORT) --address $(ADDRESS)
endif

test: setup
	$(PY) -m pytest -q

# The inner loop: every test that starts no process of the project (no compile worker, sandbox,
# CLI or Streamlit server: the `workers` marker, tests/conftest.py), in under two minutes
test-fast: setup
	$(PY) -m pytest -q -m "not workers"

# ruff (pyproject.toml, [tool.ruff]): pyflakes and bugbear's likely bugs; CI runs it before the tests
lint: setup
	$(VENV)/bin/ruff check .

$(VENV_OLDEST)/.installed: requirements.txt pyproject.toml Makefile
	test -x $(PY_OLDEST) || $(PYTHON) -m venv $(VENV_OLDEST)
	$(PY_OLDEST) -m pip install -q --upgrade pip
	$(PY_OLDEST) -c "import torch" 2>/dev/null || $(PY_OLDEST) -m pip install -q $(PIP_TORCH_ARGS) "$(TORCH_SPEC)"
	$(PY_OLDEST) -m pip install -q -r requirements.txt "$(OLDEST_TRITON)"
	$(PY_OLDEST) -m pip install -q --no-deps "$(FLAG_GEMS)" "$(HELION)" "$(FLA)" "$(TORCHAO)" "$(GEMLITE)"
	$(PY_OLDEST) -m pip install -q --no-deps -e .
	touch $@

setup-oldest: $(VENV_OLDEST)/.installed

# The core suite (browser tests are the newest Triton's job) against triton 3.6.0: every test in
# tests/browser/ has "browser" in its file's name, which -k "not browser" leaves out.
test-oldest: setup-oldest
	$(PY_OLDEST) -c "import triton; assert triton.__version__ == '$(subst triton==,,$(OLDEST_TRITON))', triton.__version__"
	$(PY_OLDEST) -m pytest -q -k "not browser"

# Extra Triton versions for the version picker and `diff --triton A --triton B` (README, "Several
# Triton versions"): each is only that version's triton wheel, unpacked with `pip install --target`
# into $(VERSIONS_DIR)/<version>; its compile worker runs the main .venv's Python (torch, numpy,
# everything else shared) with that folder first on PYTHONPATH. The main .venv's own Triton needs
# no folder. e.g. make setup-versions TRITON_VERSIONS="3.6.0 3.9.0"
TRITON_VERSIONS ?= 3.6.0
VERSIONS_DIR    ?= .triton-versions
setup-versions: setup
	@for v in $(TRITON_VERSIONS); do \
	  if [ "$$v" = "$$($(PY) -c 'import importlib.metadata as m; print(m.version("triton"))')" ]; then \
	    echo "triton $$v: the main $(VENV) has it, no folder needed"; continue; fi; \
	  if [ -f $(VERSIONS_DIR)/$$v/.installed ]; then echo "triton $$v: $(VERSIONS_DIR)/$$v"; continue; fi; \
	  rm -rf $(VERSIONS_DIR)/$$v.tmp && \
	  $(PY) -m pip install -q --no-deps --no-compile --target $(VERSIONS_DIR)/$$v.tmp "triton==$$v" && \
	  PYTHONPATH=$(VERSIONS_DIR)/$$v.tmp $(PY) -c "import triton, sys; assert triton.__version__ == '$$v', triton.__version__" && \
	  rm -rf $(VERSIONS_DIR)/$$v && mv $(VERSIONS_DIR)/$$v.tmp $(VERSIONS_DIR)/$$v && touch $(VERSIONS_DIR)/$$v/.installed && \
	  echo "triton $$v: $(VERSIONS_DIR)/$$v ($$(du -sh $(VERSIONS_DIR)/$$v | cut -f1))" || exit 1; \
	done

# Rebuild the kernel editor's bundle (CodeMirror 6) from its source; needs Node 18+ and npm. The
# built file is committed, so `make run` and `make test` need no Node.
EDITOR_DIR = app/components/code_editor/frontend
editor-bundle:
	cd $(EDITOR_DIR) && npm ci --no-audit --no-fund && npm run build

bench: setup
	$(PY) benchmarks/compile_overhead.py

clean:
	rm -rf $(VENV) $(VENV_OLDEST) $(VERSIONS_DIR) .pytest_cache artifacts
