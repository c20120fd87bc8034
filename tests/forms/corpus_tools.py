"""The corpus of real tool schemas (tests/forms/corpus/*.json) and helpers to generate instances."""

from __future__ import annotations

import copy
import json
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus"


def corpus(unique: bool = False) -> list[tuple[str, dict]]:
    """(id, inputSchema) of every tool in the corpus, in a stable order (`unique`: one per schema)."""
    out, seen = [], set()
    for path in sorted(CORPUS.glob("*.json")):
        for tool in json.loads(path.read_text())["tools"]:
            key = json.dumps({k: v for k, v in tool["inputSchema"].items() if k != "$schema"}, sort_keys=True)
            if unique and key in seen:
                continue
            seen.add(key)
            out.append((f"{path.stem}:{tool['name']}", tool["inputSchema"]))
    return out


def for_generation(schema: dict, depth: int = 3, closed: bool = True) -> dict:
    """A copy of `schema` that hypothesis-jsonschema can generate from: local `$ref` inlined
    (recursion unrolled `depth` times, then `false`), `prefixItems` in draft-07 form, and (when
    `closed`) no undeclared keys in objects that declare properties: the form contract covers the
    properties a schema declares (extra keys are tested separately)."""
    root = schema

    def resolve(ref: str):
        node = root
        for part in ref[2:].split("/") if ref.startswith("#/") else []:
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def walk(node, seen: tuple):
        if isinstance(node, list):
            return [walk(n, seen) for n in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            ref = node["$ref"]
            if seen.count(ref) >= depth:
                return False
            target = walk(resolve(ref), seen + (ref,))
            rest = {k: walk(v, seen) for k, v in node.items() if k not in ("$ref",)}
            if not rest:
                return target
            return {"allOf": [rest, target]}
        out = {}
        for k, v in node.items():
            if k in ("$defs", "definitions", "$schema", "discriminator"):
                continue
            if k in ("enum", "const", "default", "examples"):
                out[k] = v
            elif k in ("properties", "patternProperties") and isinstance(v, dict):
                out[k] = {pk: walk(pv, seen) for pk, pv in v.items()}
            else:
                out[k] = walk(v, seen)
        if closed and isinstance(out.get("properties"), dict) and "additionalProperties" not in out \
                and "patternProperties" not in out:
            out["additionalProperties"] = False
        if "prefixItems" in out:
            out["items"], extra = out.pop("prefixItems"), out.get("items", True)
            out["additionalItems"] = extra
        return out

    return walk(copy.deepcopy(schema), ())
