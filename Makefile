# Spyglass: `make run` launches the inspector on its demo server,
# `make test` installs everything the tests need, then runs the quality gate — lint (ruff), strict types
# of the Qt-free code (mypy), the whole suite headless under coverage (the bundle test included) and the
# coverage floors of every package (docs/development.md),
# `make package` builds the one-folder bundle dist/spyglass/ with PyInstaller.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PEERS  := tests/peers

.PHONY: run test venv peers bench clean package gallery

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,package,locust]'
	touch $@

venv: $(VENV)/.installed

$(PEERS)/node_modules/.installed: $(PEERS)/package.json $(PEERS)/package-lock.json
	cd $(PEERS) && npm ci --no-audit --no-fund --loglevel=error
	# source maps: no test reads them, and they name the packages' own source folders (../shared and the like)
	find $(PEERS)/node_modules -name '*.map' -type f -delete
	touch $@

peers: $(PEERS)/node_modules/.installed

run: venv
	$(VENV)/bin/spyglass

test: venv peers
	$(VENV)/bin/ruff check inspector tests bench packaging
	$(VENV)/bin/mypy
	rm -rf .coverage-data
	# the suite starts hundreds of Python processes (servers, --cli runs): each reuses compiled modules, also
	# where the environment says not to write them (PYTHONDONTWRITEBYTECODE), instead of compiling its sources
	PYTHONDONTWRITEBYTECODE= $(PY) -m compileall -q -x node_modules inspector tests bench > /dev/null
	PYTHONDONTWRITEBYTECODE= QT_QPA_PLATFORM=offscreen $(VENV)/bin/coverage run -m pytest -n auto --maxprocesses 4 \
		--dist worksteal --durations=25
	$(PY) tests/coverage_floors.py

# A one-folder bundle in dist/spyglass/ (run dist/spyglass/spyglass); prints its size.
package: venv
	$(VENV)/bin/pyinstaller --noconfirm --clean --log-level WARN --distpath dist --workpath build/pyinstaller \
		packaging/spyglass.spec
	@du -sh dist/spyglass | sed 's/\t.*/ dist\/spyglass/'

# The window's gallery in docs/images/gallery/ (every state, two screen sizes, three themes, three text sizes)
gallery: venv peers
	QT_QPA_PLATFORM=offscreen $(PY) packaging/gallery.py

bench: venv peers
	$(PY) bench/cli_oneshot.py
	$(PY) bench/check_many_tools.py

clean:
	rm -rf $(VENV) $(PEERS)/node_modules build dist .coverage-data
