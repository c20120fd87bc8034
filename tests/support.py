"""Shared test helpers: where the spec schemas and the peer servers live, and how to start them.

Import from `support` (not from `conftest`: several conftest modules exist)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from functools import lru_cache
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
SPEC = Path(os.environ.get("SPYGLASS_SPEC_DIR", ROOT.parent / "shared" / "spec"))
PEERS = ROOT / "tests" / "peers"
EVERYTHING = PEERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
HOSTILE = ROOT / "tests" / "hostile" / "server.py"
SDK_SERVER = PEERS / "sdk_server.py"
PY = sys.executable


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


@lru_cache(maxsize=None)
def spec_schema(revision: str) -> dict:
    path = SPEC / revision / "schema.json"
    if not path.exists():
        pytest.fail(f"the MCP spec schemas are missing: {path} (expected ../shared/spec beside the repo)")
    return json.loads(path.read_text())


def spec_validator(revision: str, type_name: str):
    """A validator for `$defs/<type_name>` of one revision, refs resolved in its document."""
    import jsonschema

    schema = spec_schema(revision)
    defs_key = "$defs" if "$defs" in schema else "definitions"
    cls = jsonschema.validators.validator_for(schema)
    sub = {"$ref": f"#/{defs_key}/{type_name}", defs_key: schema[defs_key]}
    if "$schema" in schema:
        sub["$schema"] = schema["$schema"]
    return cls(sub)

