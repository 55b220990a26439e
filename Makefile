# Fresh machine to green: `make test`.  Everything installs into .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT_PYTHON := $(wildcard ports/python/pyproject.toml)
PYTEST_WORKERS ?= 2
## Job processes of `make check` (check --jobs): one per core this shell may use.
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
CROSSHAIR_BUDGET ?= 4

.PHONY: install source-links node-deps check test lint typecheck pytest crosshair invariants nightly clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml $(PORT_PYTHON) | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ports/python -e '.[dev]'
	$(BIN)/python -c 'import site, sys; open(site.getsitepackages()[0] + "/sessionlog-tools.pth", "w").write(sys.argv[1] + "\n")' "$(CURDIR)/tools"
	touch $@

install: $(STAMP)

## The sources under their import names, for mypy (which cannot follow the editable install's
## import hook): .venv/src/sessionlog_spec links every entry of spec/ and model/ as sessionlog_spec.model.
SOURCE_LINKS := $(VENV)/src/sessionlog_spec
source-links: install
	rm -rf $(VENV)/src && mkdir -p $(SOURCE_LINKS)
	for entry in spec/*; do ln -s "$(CURDIR)/$$entry" $(SOURCE_LINKS)/; done
	ln -s "$(CURDIR)/model" $(SOURCE_LINKS)/model

## The upstream TypeScript ports' pinned packages (npm ci from the lock files).
NODE_STAMP := ports/dsh-session/node_modules/.package-lock.json
$(NODE_STAMP): ports/dsh-session/package-lock.json
	cd ports/dsh-session && npm ci --no-audit --no-fund

FORMAT_STAMP := ports/dsh-format/node_modules/.package-lock.json
$(FORMAT_STAMP): ports/dsh-format/package-lock.json
	cd ports/dsh-format && npm ci --no-audit --no-fund

node-deps: $(NODE_STAMP) $(FORMAT_STAMP)

## The main job: the conformance suite (ci profile) against the bundled Python port, on every core.
check: install
	$(BIN)/python -m sessionlog_spec check --port python --profile ci --jobs $(CHECK_JOBS)

## The whole test suite: lint, types, the traceability catalogue, pytest (the upstream port included), CrossHair.
test: install node-deps lint typecheck pytest crosshair

lint: install
	$(BIN)/ruff check model spec ports tests tools

typecheck: source-links
	$(BIN)/mypy

pytest: install
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) -q

crosshair: install
	$(BIN)/python -m sessionlog_spec.crosshair_check --per-condition-timeout $(CROSSHAIR_BUDGET)

## Regenerate invariants.md after adding invariants, contracts or tests.
invariants: install
	$(BIN)/python -m sessionlog_spec catalogue

## The deep profile against seqlog, then the slow tests: seqlog's crash run, the 100k-event vectors
## and every question of both divergence catalogues (a test run asks a quarter of them).
nightly: install node-deps
	$(BIN)/python -m sessionlog_spec check --port python --profile nightly
	SESSIONLOG_SLOW=1 $(BIN)/python -m pytest -n $(PYTEST_WORKERS) -q -m slow

clean:
	rm -rf $(VENV) .hypothesis .mypy_cache .ruff_cache reports

## The published upstream TypeScript packages against the suite: @deepseek-ai/dsh-session with its JSONL
## backend and compaction (ports/dsh-session, Node 22 from the npm registry) and the v0-to-v1 format edge
## (ports/dsh-format).  Their known divergences are expected failures, and every question of the divergence
## catalogue is pinned: the run is green on today's divergences and turns red when upstream or the model
## changes either way (docs/conformance/dsh-session.md, dsh-format.md, deviations.md).
UPSTREAM_DSH := ports/dsh-session

UPSTREAM_FORMAT := ports/dsh-format
## The fuzz group's findings against the released packages are not classified into the divergence
## catalogues yet (docs/conformance/dsh-session.md, dsh-format.md): the upstream runs take the nine
## capability groups, whose divergences are.
CAPABILITY_GROUPS := session,surface,header,repair,jsonl,read,legacy,compaction,storage

.PHONY: check-upstream
check-upstream: install node-deps
	$(BIN)/python -m sessionlog_spec check --driver "$(UPSTREAM_DSH)/node_modules/.bin/node $(UPSTREAM_DSH)/driver.mjs" --profile ci --only $(CAPABILITY_GROUPS) --expect-fail $(UPSTREAM_DSH)/expected-failures.json
	$(BIN)/python -m sessionlog_spec check --driver "node $(UPSTREAM_FORMAT)/driver.mjs" --profile ci --only $(CAPABILITY_GROUPS) --any-code --expect-fail $(UPSTREAM_FORMAT)/expected-failures.json

## The JavaScript/TypeScript driver kit (kits/js): its pinned packages (npm ci from the lock file), its own
## tests (node --test), then its example port against the suite's session group.  KIT_JS_EXAMPLES caps the
## ci profile's examples so that CI stays near a minute; run the target with KIT_JS_EXAMPLES= for the whole profile.
KIT_JS := kits/js
KIT_JS_STAMP := $(KIT_JS)/node_modules/.package-lock.json
KIT_JS_EXAMPLES ?= 12
$(KIT_JS_STAMP): $(KIT_JS)/package-lock.json
	cd $(KIT_JS) && npm ci --no-audit --no-fund

.PHONY: kit-js
kit-js: install $(KIT_JS_STAMP)
	cd $(KIT_JS) && npm test --silent
	$(BIN)/python -m sessionlog_spec check --port 'node $(KIT_JS)/example/driver.mjs' --only session --profile ci --quiet $(if $(KIT_JS_EXAMPLES),--max-examples $(KIT_JS_EXAMPLES))
