"""The official JSON Schemas of every MCP revision Spyglass speaks, shipped as package data (see README.md
in this folder for their provenance and licence), and the 2026-07-28 specification's example messages.

`schema(revision)` is the parsed `schema.json` of one revision; `definition(revision, name)` a schema for
one of its `$defs` (with the document's definitions, so references resolve); `examples()` every example
message as (type name, file name, parsed JSON). Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
EXAMPLES_REVISION = "2026-07-28"


def folder() -> Traversable:
    return resources.files(__name__)


@cache
def schema(revision: str) -> dict[str, Any]:
    if revision not in REVISIONS:
        raise KeyError(f"no schema for protocol revision {revision!r} (known: {', '.join(REVISIONS)})")
    data: dict[str, Any] = json.loads(folder().joinpath(revision, "schema.json").read_text(encoding="utf-8"))
    return data


def definition(revision: str, name: str) -> dict[str, Any]:
    """A schema for `$defs/<name>` of `revision`, carrying the document's definitions and dialect."""
    doc = schema(revision)
    key = "$defs" if "$defs" in doc else "definitions"
    if name not in doc[key]:
        raise KeyError(f"protocol {revision} defines no {name!r}")
    out: dict[str, Any] = {"$ref": f"#/{key}/{name}", key: doc[key]}
    if "$schema" in doc:
        out["$schema"] = doc["$schema"]
    return out


def examples() -> Iterator[tuple[str, str, Any]]:
    """(type name, file name, message) for every example of the 2026-07-28 specification."""
    root = folder().joinpath(EXAMPLES_REVISION, "examples")
    for type_dir in sorted(root.iterdir(), key=lambda p: p.name):
        if not type_dir.is_dir():
            continue
        for item in sorted(type_dir.iterdir(), key=lambda p: p.name):
            if item.name.endswith(".json"):
                yield type_dir.name, item.name, json.loads(item.read_text(encoding="utf-8"))
