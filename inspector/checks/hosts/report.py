"""Host verdicts for people (text), scripts (the `hosts` section of the JSON report) and CI dashboards
(a JUnit test case per host), and the tools as each host's model sees them (`--show-tools`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from xml.etree import ElementTree as ET

from ...terminal import one_line, xml_text
from .seen import BLOCKED, DEGRADED, side_by_side
from .verdict import HostVerdict

MARKS = {"works": "ok", DEGRADED: "~", BLOCKED: "x"}


def text(verdicts: list[HostVerdict], show_tools: bool = False) -> str:
    if not verdicts:
        return ""
    lines = ["Hosts"]
    width = max(len(v.profile.id) for v in verdicts)
    for v in verdicts:
        lines.append(f"  {v.profile.id.ljust(width)}  {v.verdict}")
        for r in v.reasons:
            lines.append(f"      {r.level}  {one_line(r.target)}: {one_line(r.message)}")
            lines.append(f"          fix: {one_line(r.fix)}")
    if show_tools:
        for v in verdicts:
            lines.append("")
            lines.append(f"As {v.profile.name}'s model sees the tools (profile {v.profile.version})")
            lines += [one_line(line) for s in v.tools.values() for line in side_by_side(s).splitlines()]
    counts = {level: sum(1 for v in verdicts if v.verdict == level) for level in ("works", DEGRADED, BLOCKED)}
    lines.append(f"{counts['works']} works, {counts[DEGRADED]} degraded, {counts[BLOCKED]} blocked")
    return "\n".join(lines) + "\n"


def as_json(verdicts: list[HostVerdict], show_tools: bool = False) -> dict[str, Any]:
    return {v.profile.id: v.as_json(show_tools) for v in verdicts}


def junit_cases(suite: ET.Element, server: str, verdicts: list[HostVerdict],
                clean: Callable[[str], str] = xml_text) -> int:
    """One case per host added to `suite`: a failure when the host is blocked, the reasons as output when
    it is degraded. `clean` makes server text fit for the file (XML-safe, secrets masked). Returns the
    number of failures."""
    failures = 0
    for v in verdicts:
        case = ET.SubElement(suite, "testcase", classname=f"{server}.hosts", name=f"host {v.profile.id}")
        body = clean("\n".join(f"[{r.level}] {r.target}: {r.message} (fix: {r.fix})" for r in v.reasons))
        if v.verdict == BLOCKED:
            failures += 1
            first = next(r for r in v.reasons if r.level == BLOCKED)
            fail = ET.SubElement(case, "failure", message=clean(f"{v.profile.name}: {first.message}"),
                                 type=BLOCKED)
            fail.text = body
        elif v.reasons:
            ET.SubElement(case, "system-out").text = body
    return failures
