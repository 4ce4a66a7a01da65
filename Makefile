# The commands of the README (make kick, repro, verify, test), and a few more. What each does:
# docs/reproducing.md; how long each takes: docs/performance.md. Everything runs from the
# locked venv.
VENV ?= .venv
BIN := $(VENV)/bin
export PATH := $(abspath $(BIN)):$(PATH)
export DVC_NO_ANALYTICS := 1
# The release a command rebuilds: unset, the repository root's (v1.3.0); RELEASE=v1.4.0, the
# pipeline of releases/v1.4.0 (its params.yaml, its imports, its outputs beside them);
# RELEASE=living, the living configuration's in releases/living.
RELEASE ?=
FOLDER := $(if $(RELEASE),releases/$(RELEASE),.)
# How many stages `make repro` runs at once (tools/repro.py --stages). 1: each embedding stage
# already runs `jobs` map jobs side by side, and at 2 the full pipeline took longer (64 min
# against 58-61) holding two stages' memory at once; kick-the-tires' small stages run two at a time.
STAGES ?= 1

.PHONY: venv wiring repro rescore verify verify-main test test-unit test-slow kick exps bench scale lock paper image image-check

venv:                 ## create/refresh .venv from requirements/requirements.lock
	tools/setup-env.sh $(VENV)

wiring: venv          ## write studies.yaml, method_code/ and each release's dvc.yaml from the registries
	python -m drfidelity.studies.run.wiring
	python tools/release_pipeline.py

repro: venv           ## bring in the imports (toorPIA's maps), recompute every stage of RELEASE, compare with git
	-python tools/imports.py
	$(if $(RELEASE),python tools/release_pipeline.py)
	python tools/repro.py --stages $(STAGES) --force $(FOLDER)/dvc.yaml
	dvc status --no-updates $(FOLDER)/dvc.yaml
	git diff --exit-code --stat -- $(addprefix $(FOLDER)/,dvc.lock results figures paper REPORT.md REPORT.html)
	@echo "repro: every committed output came back byte for byte"

rescore: venv         ## restore the maps from the map store (store/), rerun every other stage of RELEASE, compare with git
	-python tools/imports.py
	$(if $(RELEASE),python tools/release_pipeline.py)
	python tools/repro.py --stages $(STAGES) --keep-maps --force $(FOLDER)/dvc.yaml
	dvc status --no-updates $(FOLDER)/dvc.yaml
	git diff --exit-code --stat -- $(addprefix $(FOLDER)/,dvc.lock results figures paper REPORT.md REPORT.html)
	@echo "rescore: every committed output came back byte for byte from the stored maps"

verify: venv          ## the reviewer's verdict: a fresh clone of HEAD rebuilds RELEASE's committed outputs?
	python tools/verify.py $(if $(RELEASE),--release $(RELEASE))

verify-main: venv    ## make verify for the main benchmark only (generate -> figures; what CI runs)
	python tools/verify.py --targets aggregate figures

test: venv            ## the default test suite (what CI runs)
	python -m pytest -q

test-unit: venv       ## the library's unit tests: the inner loop (under 2 minutes)
	python -m pytest -q tests/unit

test-slow: venv       ## the slow end-to-end tests only
	python -m pytest -q -m slow

kick: venv            ## kick-the-tires: the whole pipeline on small data in a throwaway copy
	tools/kick-the-tires.sh

exps: venv            ## the current commit's experiments on one screen: changed params, headline metrics
	python tools/exps.py

bench: venv           ## metric-engine and method timings (see benchmarks/README.md)
	python benchmarks/bench_metrics.py
	python benchmarks/bench_methods.py

scale: venv           ## the scale study of scale.yaml (about an hour; `dvc repro` never runs it)
	drfidelity stage scale
	dvc commit --force scale

lock:                 ## re-resolve requirements/requirements.lock and installer.lock from their .in files
	tools/lock.sh

paper:                ## typeset paper/main.pdf (needs latexmk + TeX Live; dvc repro does not); fails on any LaTeX/BibTeX warning
	python3 tools/compute_cost.py
	cd paper && SOURCE_DATE_EPOCH=0 FORCE_SOURCE_DATE=1 latexmk -pdf -interaction=nonstopmode -halt-on-error main.tex
	python3 tools/paper_check.py paper/main.log paper/main.blg

image:                ## build the Docker image drfidelity:local (docker, else podman; see docker/README.md)
	tools/image.sh

image-check:          ## build the image, then run docker/README.md's commands in it (CI's slow tier)
	tools/image-check.sh
