# Two commands from a fresh clone:
#   make demo   train and dissect the demo's two models (`ssm-mech demo`)
#   make test   the test suite, exactly as CI runs it
# Both create the project virtualenv `.venv` on first use and reuse it afterwards; it is
# re-installed only when pyproject.toml changes. `make env` does the set-up alone.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
# The CPU wheel of torch: an unpinned `torch` pulls a multi-GB CUDA build on a CPU-only machine.
TORCH ?= torch==2.13.0
DEMO_ARGS ?=
TEST_ARGS ?= -n 2

# A torch that the base interpreter already imports (Colab, a GPU image) is used as it is.
SYSTEM_TORCH := $(shell $(PYTHON) -c "import torch" >/dev/null 2>&1 && echo yes)
# The stamp names pyproject.toml's content, so an edit (not just a touch) triggers a re-install.
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: env demo test clean-env

env: $(STAMP)

$(STAMP):
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(if $(SYSTEM_TORCH),--system-site-packages) $(VENV)
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
	@$(VENV)/bin/python -c "import torch" >/dev/null 2>&1 || $(VENV)/bin/python -m pip install -q $(TORCH)
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check -e ".[dev]"
	@rm -f $(VENV)/.installed-*
	@touch $@
	@echo "environment ready: $(VENV) (torch $$($(VENV)/bin/python -c 'import torch; print(torch.__version__)'))"

demo: env
	$(VENV)/bin/ssm-mech demo $(DEMO_ARGS)

test: env
	$(VENV)/bin/python -m pytest $(TEST_ARGS)

clean-env:
	rm -rf $(VENV)
