"""Shared test helpers: where the spec schemas and the peer servers live, and how to start them.

Import from `support` (not from `conftest`: several conftest modules exist)."""

from __future__ import annotations

import os
import shutil
import sys
from functools import cache
from pathlib import Path

import pytest

from inspector.protocol import schemas

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
SPEC = Path(str(schemas.folder()))  # the MCP schemas shipped inside the package
PEERS = ROOT / "tests" / "peers"
EVERYTHING = PEERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
HOSTILE = ROOT / "tests" / "hostile" / "server.py"
SDK_SERVER = PEERS / "sdk_server.py"
PY = sys.executable
# Coverage (or a debugger) traces every line and slows the code two to three times: the freeze guards of
# the tests (not the speed targets, which the benchmarks in bench/ measure) allow for it.
SLOWDOWN = 3.0 if sys.gettrace() is not None else 1.0


def everything_cmd() -> list[str]:
    if not EVERYTHING.exists():
        pytest.fail(f"server-everything is not installed at {EVERYTHING}: run `make test` (npm ci in tests/peers)")
    node = shutil.which("node")
    assert node, "node is required for the server-everything peer"
    return [node, str(EVERYTHING), "stdio"]


def demo_cmd() -> list[str]:
    return [PY, "-m", "inspector.demo"]


def hostile_cmd(*cases: str) -> list[str]:
    return [PY, str(HOSTILE), *cases]


def spec_schema(revision: str) -> dict:
    return schemas.schema(revision)


@cache
def spec_validator(revision: str, type_name: str):
    """A validator for `$defs/<type_name>` of one revision, refs resolved in its document."""
    import jsonschema

    sub = schemas.definition(revision, type_name)
    return jsonschema.validators.validator_for(sub)(sub)



APP_PEERS = PEERS / "node_modules" / "@modelcontextprotocol"
HOSTILE_APPS = ROOT / "tests" / "hostile" / "app_server.py"


def app_cmd(name: str, *extra: str) -> list[str]:
    """An MCP Apps example server from npm (`basic-vanillajs`, `debug`) over stdio."""
    script = APP_PEERS / f"server-{name}" / "dist" / "index.js"
    if not script.exists():
        pytest.fail(f"server-{name} is not installed at {script}: run `make peers` (npm ci in tests/peers)")
    node = shutil.which("node")
    assert node, "node is required for the MCP Apps peers"
    return [node, str(script), "--stdio", *extra]


def hostile_apps_cmd() -> list[str]:
    return [PY, str(HOSTILE_APPS)]
