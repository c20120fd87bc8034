"""Structural differences between JSON values, and between two servers' surfaces (`spyglass diff`).

A difference is a JSON pointer (RFC 6901) into the value with what each side has there: added (only B
has it), removed (only A), changed. Objects are compared key by key, arrays index by index, except
arrays whose entries all carry a distinct `name`, `uri` or `uriTemplate` (tools, prompts, resources):
those are matched by it. Left out of
every comparison: `_meta` (wherever it is: it carries ids and timings), the paths given to ignore (a
pointer and everything under it), and two strings that are both timestamps (ISO 8601), which say when,
not what.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .surface import ServerSurface

_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
ALWAYS_IGNORED = ("_meta",)
MAX_DEPTH = 200  # a value deeper than this is compared as a whole (a hostile server can nest deeply)


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Change:
    path: str  # JSON pointer; "" is the whole value
    a: Any  # MISSING when only B has it
    b: Any  # MISSING when only A has it

    @property
    def kind(self) -> str:
        return "added" if self.a is MISSING else "removed" if self.b is MISSING else "changed"

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "kind": self.kind}
        if self.a is not MISSING:
            out["a"] = self.a
        if self.b is not MISSING:
            out["b"] = self.b
        return out


def pointer_part(key: str | int) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def valid_pointer(text: str) -> bool:
    return text == "" or (text.startswith("/") and not re.search(r"~[^01]|~$", text))


def diff_values(a: Any, b: Any, ignore: Iterable[str] = (), *, path: str = "") -> list[Change]:
    """Every difference between `a` and `b`, in document order."""
    out: list[Change] = []
    _diff(a, b, path, tuple(ignore), out, 0)
    return out


def _ignored(path: str, ignore: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p + "/") for p in ignore)


def _diff(a: Any, b: Any, path: str, ignore: tuple[str, ...], out: list[Change], depth: int) -> None:
    if _ignored(path, ignore):
        return
    if isinstance(a, dict) and isinstance(b, dict) and depth < MAX_DEPTH:
        for key in list(a) + [k for k in b if k not in a]:
            if key in ALWAYS_IGNORED:
                continue
            sub = f"{path}/{pointer_part(key)}"
            _diff(a.get(key, MISSING), b.get(key, MISSING), sub, ignore, out, depth + 1)
        return
    if isinstance(a, list) and isinstance(b, list) and depth < MAX_DEPTH:
        key = _identity(a, b)
        if key is not None:
            _diff_keyed(a, b, key, path, ignore, out, depth)
            return
        for i in range(max(len(a), len(b))):
            _diff(a[i] if i < len(a) else MISSING, b[i] if i < len(b) else MISSING, f"{path}/{i}", ignore, out,
                  depth + 1)
        return
    if a is MISSING and b is MISSING:
        return
    if _same(a, b):
        return
    out.append(Change(path, a, b))


IDENTITIES = ("name", "uri", "uriTemplate")


def _identity(a: list[Any], b: list[Any]) -> str | None:
    """The key that names every entry of both lists (tools and prompts by name, resources by uri), if any:
    such entries are matched by it, so one tool added in the middle is one difference, not a shift."""
    if not a or not b:
        return None
    for key in IDENTITIES:
        names_a = [e.get(key) if isinstance(e, dict) else None for e in a]
        names_b = [e.get(key) if isinstance(e, dict) else None for e in b]
        if (all(isinstance(n, str) for n in names_a + names_b) and len(set(names_a)) == len(names_a)
                and len(set(names_b)) == len(names_b)):
            return key
    return None


def _diff_keyed(a: list[Any], b: list[Any], key: str, path: str, ignore: tuple[str, ...], out: list[Change],
                depth: int) -> None:
    """Entries matched by `key`; a path names the entry's index in B (in A for one that is gone)."""
    where_a = {e[key]: i for i, e in enumerate(a)}
    where_b = {e[key]: i for i, e in enumerate(b)}
    for i, entry in enumerate(b):
        j = where_a.get(entry[key])
        if j is None:
            if not _ignored(f"{path}/{i}", ignore):
                out.append(Change(f"{path}/{i}", MISSING, entry))
        else:
            _diff(a[j], entry, f"{path}/{i}", ignore, out, depth + 1)
    for j, entry in enumerate(a):
        if entry[key] not in where_b and not _ignored(f"{path}/{j}", ignore):
            out.append(Change(f"{path}/{j}", entry, MISSING))


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                       and not isinstance(a, bool) and not isinstance(b, bool)):
        return False
    if isinstance(a, str) and a != b and _ISO.match(a) and _ISO.match(b):
        return True  # two moments: when, not what
    if isinstance(a, (dict, list)):
        return _equal_deep(a, b)
    return bool(a == b)


def _equal_deep(a: Any, b: Any) -> bool:
    """Equality of two JSON values without recursion: a hostile server can nest deeper than Python's
    own comparison (or json.dumps) can go."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, dict):
            if not isinstance(y, dict) or x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if not isinstance(y, list) or len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(y, (dict, list)) or not (x == y and (type(x) is type(y) or (
                isinstance(x, (int, float)) and isinstance(y, (int, float))
                and not isinstance(x, bool) and not isinstance(y, bool)))):
            return False
    return True


# ---------------------------------------------------------------------------- servers
# the listings compared, with the key naming an entry
KEYED = (("tools", "name"), ("resources", "uri"), ("resourceTemplates", "uriTemplate"), ("prompts", "name"))


def _keyed(entries: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for entry in entries:
        name = entry.get(key)
        if isinstance(name, str) and name not in out:
            out[name] = entry
    return out


def diff_surfaces(a: ServerSurface, b: ServerSurface) -> dict[str, Any]:
    """What changed from server A to server B, as `spyglass diff --format json` prints it."""
    report: dict[str, Any] = {"a": a.name, "b": b.name, "same": True}
    report["revision"] = None if a.revision == b.revision else {"a": a.revision, "b": b.revision}
    caps = diff_values(a.capabilities or {}, b.capabilities or {})
    report["capabilities"] = [c.as_json() for c in caps]
    report["instructions"] = None if (a.instructions or "") == (b.instructions or "") else {
        "a": a.instructions, "b": b.instructions}
    same = report["revision"] is None and not caps and report["instructions"] is None
    for listing, key in KEYED:
        if (listing in a.listings) != (listing in b.listings):  # one side never listed it: nothing to compare
            report[listing] = {"added": [], "removed": [], "changed": {},
                               "unknown": f"{'A' if listing not in a.listings else 'B'} never listed them"}
            continue
        left = _keyed(a.listings.get(listing, []), key)
        right = _keyed(b.listings.get(listing, []), key)
        changed = {}
        for name in left.keys() & right.keys():
            found = diff_values(left[name], right[name])
            if found:
                changed[name] = [c.as_json() for c in found]
        part = {"added": [n for n in right if n not in left], "removed": [n for n in left if n not in right],
                "changed": {n: changed[n] for n in left if n in changed}}
        report[listing] = part
        same = same and not (part["added"] or part["removed"] or part["changed"])
    report["same"] = same
    return report


def short(value: Any, limit: int = 80) -> str:
    """A value in a line of a report."""
    if value is MISSING:
        return "(absent)"
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def change_line(change: dict[str, Any]) -> str:
    path = change["path"] or "(the whole value)"
    kind = change["kind"]
    if kind == "added":
        return f"{path}: added {short(change['b'])}"
    if kind == "removed":
        return f"{path}: removed (was {short(change['a'])})"
    return f"{path}: {short(change['a'])} → {short(change['b'])}"


TITLES = {"tools": "Tools", "resources": "Resources", "resourceTemplates": "Resource templates",
          "prompts": "Prompts"}


def diff_text(report: dict[str, Any]) -> str:
    """`spyglass diff`'s text report."""
    lines = [f"A: {report['a']}", f"B: {report['b']}", ""]
    if report["same"]:
        lines.append("No differences: the two servers offer the same.")
        return "\n".join(lines) + "\n"
    if report["revision"]:
        lines.append(f"Protocol revision: {report['revision']['a']} → {report['revision']['b']}")
    if report["capabilities"]:
        lines.append("Capabilities:")
        lines += [f"  {change_line(c)}" for c in report["capabilities"]]
    if report["instructions"]:
        lines.append(f"Instructions: {short(report['instructions']['a'])} → {short(report['instructions']['b'])}")
    for listing, _key in KEYED:
        part = report[listing]
        if part.get("unknown"):
            lines.append(f"{TITLES[listing]}: not compared ({part['unknown']})")
        if not (part["added"] or part["removed"] or part["changed"]):
            continue
        lines.append(f"{TITLES[listing]}:")
        lines += [f"  + {name}" for name in part["added"]]
        lines += [f"  - {name}" for name in part["removed"]]
        for name, changes in part["changed"].items():
            lines.append(f"  ~ {name}")
            lines += [f"      {change_line(c)}" for c in changes]
    counts = summary_counts(report)
    lines += ["", f"{counts} difference{'s' if counts != 1 else ''}."]
    return "\n".join(lines) + "\n"


def summary_counts(report: dict[str, Any]) -> int:
    total = (report["revision"] is not None) + len(report["capabilities"]) + (report["instructions"] is not None)
    for listing, _key in KEYED:
        part = report[listing]
        total += len(part["added"]) + len(part["removed"]) + sum(len(c) for c in part["changed"].values())
    return total
