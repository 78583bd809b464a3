# vitbench — every command goes through the project's environment, created by `make install`: .venv, or the
# virtualenv / conda environment VITBENCH_VENV names (tools/install.sh installs into it).
PYTHON := $(or $(VITBENCH_VENV),.venv)/bin/python
DEMO_DATA := data/demo

.PHONY: install demo test test-demo test-fast bench gpu-check env clean-demo

install:            ## create .venv and install the locked stack, trackers included (first time ~10 min: mmcv compiles)
	bash tools/install.sh

demo: install       ## the benchmark pipeline on generated demo data -> work_dirs/demo/leaderboard.{md,html}
	$(PYTHON) tools/env_check.py
	$(PYTHON) tools/pipeline.py configs/pipelines/demo.py

test: install       ## the test suite, key end-to-end tests included (~30 min on 2 cores: 4180 tests, 29 min 26 s measured alone); CI adds test-demo
	$(PYTHON) -m pytest -q -m "not demo_pipeline"

test-demo: install  ## the demo and zoo pipelines end to end, as make demo runs them (~10-12 min)
	$(PYTHON) -m pytest -q -m demo_pipeline --durations=3

test-fast: install  ## the test suite without the slow end-to-end tests
	$(PYTHON) -m pytest -q -m "not slow"

bench: install      ## speed/memory ratios vs reference implementations
	$(PYTHON) tools/benchmark.py all

gpu-check: install  ## on a GPU machine: env, benchmarks (eager + compiled), dense steps, --compile, the demo (~10 min)
	$(PYTHON) tools/gpu_check.py

env: install        ## versions, mmcv ops, hardware
	$(PYTHON) tools/env_check.py

clean-demo:
	rm -rf $(DEMO_DATA) work_dirs/demo
