# make book : execute every chapter (CCL_SCALE=standard) and build the HTML book in _build/html/
# make test : ruff, unit tests + notebook hygiene, the paper dry run (tests/paper_run.py --steps 2), nbval on
#             every chapter and its fresh record compared with results/standard/, book build from the stored outputs
# make outputs : re-execute the notebooks in place (refreshes the stored outputs that nbval compares with,
#                the chapters' records in results/standard/ and the scorecard page)
# make scorecard : the scorecard page (book/scorecard.md) from the records in results/standard/
# make bench : the benchmarks (benchmarks/run_all.py), table printed and written to benchmarks/results.md and benchmarks/README.md
# make paper : on a GPU, execute every chapter at CCL_SCALE=paper into _build/paper/ (stored outputs untouched); each writes results/paper/NN_topic.json
# make profile SCALE=smoke|standard|paper : execute every notebook at SCALE, print its time and its slowest
#                cells, store the times in results/times.json and rewrite the page book/running_times.md
# make running-times : the running-times page (book/running_times.md) from results/times.json
# make release : tag this commit v<ccl_helpers.__version__>, the version the notebooks' Colab cells
#                install (clean tree and a new tag required); then `git push origin v<version>`
# make clean : remove the build and the virtual environment
# Each target sets itself up: .venv is created and installed once (again when pyproject.toml or the
# constraints change), and FashionMNIST is found or installed (python -m ccl_helpers.data fetch).

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DELETE_ON_ERROR:

VENV  := .venv
BIN   := $(CURDIR)/$(VENV)/bin
STAMP := $(VENV)/.installed
CONSTRAINTS := .ci/constraints.txt
PIP   := $(BIN)/python -m pip install -c $(CONSTRAINTS)
# The venv first on PATH, so the notebooks' "python3" kernel is the venv's interpreter.
export PATH := $(BIN):$(PATH)
export JUPYTER_PLATFORM_DIRS := 1
# glibc's malloc keeps freed blocks under 32 MB for reuse instead of handing them back
# to the kernel, which maps and zeroes them anew at the next step: 3× less time in the
# conv nets' evaluations on a CPU, the same numbers (README, Two commands)
export MALLOC_MMAP_THRESHOLD_ := 33554432
export MALLOC_TRIM_THRESHOLD_ := 1073741824

.PHONY: all data lint book test outputs scorecard running-times paper bench profile render-check release clean
all: test

$(STAMP): pyproject.toml $(CONSTRAINTS)
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(PIP) torch  # first and alone: the pinned version, the CPU build where one is at hand
	$(PIP) -e '.[book,test]'
	$(BIN)/python -c 'import matplotlib.pyplot'  # build matplotlib's font cache now, not inside a notebook
	touch $@

data: $(STAMP)
	python -m ccl_helpers.data fetch

lint: $(STAMP)
	ruff check .
	ruff format --check .

# The chapters' fresh records go to _build/: the committed ones (results/standard/) change
# only with `make outputs`.
book: $(STAMP) data
	CCL_SCALE=standard CCL_RECORDS_DIR=$(CURDIR)/_build/records-book \
	    jupyter-book build . --all -W -n --keep-going
	@echo "The book: $(CURDIR)/_build/html/index.html"

# Both cores, each on one thread: the unit tests split over two pytest-xdist workers; the
# paper dry run two chapters at a time; nbval two notebooks at a time (--dist loadfile
# keeps a notebook on one worker; --no-loadscope-reorder sends them out in name order,
# not by their number of cells, so Chapter 1, the longest, starts first). nbval
# compares the exact cells strictly; the cells tagged nbval-ignore-output hold trained
# numbers, which each chapter's fresh record carries with
# their standard errors: `verdicts compare` checks them and requires the same verdict
# words. chapter_times.py fails when the nbval step took over NBVAL_MINUTES.
ONE_THREAD := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 CCL_THREADS=1
NBVAL_MINUTES := 40
test: lint data
	$(ONE_THREAD) python -m pytest -q -n 2 tests
	$(ONE_THREAD) python tests/paper_run.py --steps 2 --jobs 2  # the paper dry run
	rm -rf _build/records && mkdir -p _build/records
	$(ONE_THREAD) CCL_SCALE=standard CCL_RECORDS_DIR=$(CURDIR)/_build/records \
	    python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --nbval \
	    --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
	    --junitxml=_build/nbval.xml book/
	python tests/chapter_times.py _build/nbval.xml --top 3 --limit $(NBVAL_MINUTES)
	python -m ccl_helpers.verdicts compare results/standard _build/records
	python tests/book_config.py _build/_config_stored.yml
	jupyter-book build . --config _build/_config_stored.yml --all -W -n --keep-going
	python tests/check_book_pages.py

# Two notebooks at a time, one thread each, as make test's nbval runs them (Chapter 1,
# the longest, first).
outputs: $(STAMP) data
	ls book/*.ipynb | $(ONE_THREAD) CCL_SCALE=standard xargs -P 2 -n 1 \
	    jupyter nbconvert --to notebook --execute --inplace \
	    --ExecutePreprocessor.timeout=1800 --ExecutePreprocessor.kernel_name=python3 \
	    --ExecutePreprocessor.record_timing=False \
	    --ExecutePreprocessor.store_widget_state=False
	$(MAKE) scorecard

scorecard: $(STAMP)
	python -m ccl_helpers.verdicts scorecard results/standard book/scorecard.md

running-times: $(STAMP)
	python tests/running_times.py

# The copies run in book/ (nbconvert's default), so relative paths resolve as in the book.
paper: $(STAMP) data
	mkdir -p _build/paper results/paper
	CCL_SCALE=paper CCL_RESULTS_DIR=$(CURDIR)/results/paper CCL_PAPER_COMMAND='make paper' \
	    jupyter nbconvert --to notebook --execute --output-dir _build/paper \
	    --ExecutePreprocessor.timeout=3600 --ExecutePreprocessor.kernel_name=python3 \
	    book/*.ipynb
	ls -l results/paper/ | grep '\.json$$' || echo 'no chapter wrote results/paper/*.json'

bench: $(STAMP)
	$(PIP) -e '.[bench]'
	python benchmarks/run_all.py --full

SCALE ?= standard
profile: $(STAMP) data
	mkdir -p _build
	CI=1 CCL_SCALE=$(SCALE) python -m pytest -q --nbval-lax --nbval-current-env \
	    --junitxml=_build/profile-$(SCALE).xml book/
	python tests/chapter_times.py _build/profile-$(SCALE).xml --top 3 --scale $(SCALE) \
	    --store results/times.json

# Every page in headless Chromium at 1400 and 412 px: page scroll, content wider than the
# column without a scroll box, figure fonts, verdict tables; screenshots in _build/render-check/.
render-check: $(STAMP)
	command -v chromium >/dev/null || { test "$$(id -u)" = 0 && apt-get update -q \
	    && apt-get install -y -q chromium; }
	python tests/render_check.py

VERSION = $(shell sed -n 's/^__version__ = "\(.*\)"$$/\1/p' ccl_helpers/__init__.py)
release:
	@test -n "$(VERSION)" || { echo "release: no __version__ in ccl_helpers/__init__.py"; exit 1; }
	@test -z "$$(git status --porcelain)" || { echo "release: the working tree has changes"; exit 1; }
	@if git rev-parse -q --verify "refs/tags/v$(VERSION)" >/dev/null; then \
	    echo "release: tag v$(VERSION) exists; raise __version__ first"; exit 1; fi
	git tag -a "v$(VERSION)" -m "ccl_helpers $(VERSION)"
	@echo "Tagged v$(VERSION). Publish it: git push origin v$(VERSION)"

clean:
	rm -rf _build $(VENV) *.egg-info .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
