"""Each host profile as a Markdown table, for docs/hosts.md (between its `hosts:begin` and `hosts:end`
marks; a test checks that the page matches the shipped profiles).

    python -m inspector.checks.hosts.table docs/hosts.md     rewrites the tables in the page
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ...private import write_atomic
from .profile import FACTS, Fact, Profile, shipped

PIPE = "\\|"  # a | inside a table cell
BEGIN, END = "<!-- hosts:begin (generated from inspector/checks/hosts/data) -->", "<!-- hosts:end -->"


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(f"`{v}`" for v in value) if value else "none"
    if isinstance(value, str):
        return f"`{value}`" if value else "(none)"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _where(fact: Fact) -> str:
    if fact.source:
        sure = f", {fact.confidence}" if fact.confidence != "high" else ""
        said = f": {fact.why}" if fact.why else ""  # what the source says, where the link alone is not enough
        return f"[source]({fact.source}) (read {fact.read}{sure}){said}"
    return f"{fact.confidence} confidence: {fact.why}"


def host_table(profile: Profile) -> str:
    lines = [f"### {profile.name} (`{profile.id}`)", "",
             f"{profile.kind}; profile checked {profile.version}.", "",
             "| fact | value | where from |", "|---|---|---|"]
    for key in FACTS:
        fact = profile.facts.get(key)
        if fact is not None:
            value, where = (text.replace("|", PIPE) for text in (_value(fact.value), _where(fact)))
            lines.append(f"| `{key}` | {value} | {where} |")
    return "\n".join(lines)


def markdown(profiles: dict[str, Profile]) -> str:
    return "\n\n".join(host_table(p) for p in profiles.values())


def rewrite(page: str) -> str:
    """`page` with the text between the marks replaced by the tables of the shipped profiles."""
    head, sep, rest = page.partition(BEGIN)
    _old, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise ValueError(f"the page has no {BEGIN} … {END} block")
    return f"{head}{BEGIN}\n\n{markdown(shipped())}\n\n{END}{tail}"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m inspector.checks.hosts.table docs/hosts.md\n")
        return 1
    path = Path(argv[0])
    write_atomic(path, rewrite(path.read_text(encoding="utf-8")), keep_mode=True)  # a page of the docs: its mode kept
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
