# The two commands: `make run` serves the product with demo data; `make test` runs the suite.
# Each does its own setup from nothing but Python 3.11+.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=

.PHONY: run test venv venv-dev lint format typecheck contracts audit-deps bench-check bench-update clean

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -r requirements-dev.txt
	touch $(VENV)/.installed $@

venv: $(VENV)/.installed
venv-dev: $(VENV)/.installed-dev

run: venv
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_demo
	@echo ""
	@echo "  Open:   http://$(HOST):$(PORT)/api/docs/         API docs"
	@echo "          http://$(HOST):$(PORT)/admin/            staff dashboard (staff / demo-password)"
	@echo "          http://$(HOST):$(PORT)/fairness/verify/  verify a round"
	@echo "          http://$(HOST):$(PORT)/healthz           health"
	@echo "  Logins: alice, bob, carol (players), staff, reviewer, manager, auditor; password demo-password"
	@echo ""
	$(PY) manage.py serve --host $(HOST) --port $(PORT)

test: venv-dev
	$(PY) -m pytest $(PYTEST_ARGS)

lint: venv-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: venv-dev
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

typecheck: venv-dev
	$(VENV)/bin/mypy

contracts: venv-dev
	$(VENV)/bin/lint-imports

# Known vulnerabilities in the pinned requirements (pip-audit). Offline it prints
# "SKIPPED: offline (reason)" and succeeds; a real finding fails. See scripts/audit_deps.py.
audit-deps: venv-dev
	$(PY) scripts/audit_deps.py requirements.txt requirements-dev.txt

# Instruction counts under callgrind against their budgets in bench/budgets.json (bench/_budgets.py):
# the engine per simulated round for each rule set, the verifier per 3-player round with the proof
# of play, the server per game and per bare-transaction request (bench apicost). Exit 1 naming
# every figure over its budget, and when valgrind, DATABASE_URL on PostgreSQL or REDIS_URL is
# missing. `make bench-update` sets every budget at today's figure + 5% (printing old -> new).
bench-check: venv-dev
	$(PY) -m bench._budgets

bench-update: venv-dev
	$(PY) -m bench._budgets --update

clean:
	rm -rf $(VENV) db.sqlite3 test-db.sqlite3 staticfiles
