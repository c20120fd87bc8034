"""Shared test fixtures: where the spec schemas and the peer servers live."""

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


from hypothesis import settings as _hsettings

# CI machines are small and shared: judge properties, not speed.
_hsettings.register_profile("spyglass", deadline=None)
_hsettings.load_profile("spyglass")


def _live_children() -> list[str]:
    """Processes whose parent is this test process and that are not zombies."""
    me = str(os.getpid())
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may contain spaces, so split after the last ')'
        head, _, rest = text.rpartition(")")
        fields = rest.split()
        if len(fields) >= 2 and fields[1] == me and fields[0] != "Z":
            out.append(head.split(" (", 1)[1] if " (" in head else head)
    return out


@pytest.fixture(autouse=True)
def no_orphan_processes():
    """Every test must end every process it started (DESIGN §4: never an orphan)."""
    yield
    if not Path("/proc").exists():
        return
    import time

    deadline = time.monotonic() + 3
    left = _live_children()
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = _live_children()
    assert not left, f"test left processes running: {left}"
