"""A check's report, for people (text), scripts (JSON) and CI dashboards (JUnit XML); and the ignores
that a project keeps next to its code.

Ignores are `RULE` or `RULE:TARGET` (TARGET may use shell wildcards: `description-vague:tool:legacy_*`),
from `--ignore`, from `[tool.spyglass.check]` in `pyproject.toml` and from `.spyglass-check.toml`
(both read from the current folder: `ignore = [...]`, `fail-on = "warning"`).
"""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree as ET

from .. import errors as E
from ..secrets import Tally, mask_text
from ..terminal import one_line, xml_text
from .hosts.report import junit_cases
from .rules import ERROR, INFO, RULES, SEVERITIES, WARNING, Finding
from .run import Report

if TYPE_CHECKING:
    from .hosts.verdict import HostVerdict

PROJECT_FILE = ".spyglass-check.toml"
HEADINGS = {ERROR: "Errors", WARNING: "Warnings", INFO: "Info"}


@dataclass
class Settings:
    ignore: list[str] = field(default_factory=list)
    fail_on: str = ERROR

    def ignored(self, f: Finding) -> bool:
        for item in self.ignore:
            rule, _, target = item.partition(":")
            if rule == f.rule and (not target or fnmatch.fnmatchcase(f.target, target)):
                return True
        return False

    def fails(self, report: Report) -> bool:
        bar = SEVERITIES.index(self.fail_on)
        return any(SEVERITIES.index(f.severity) <= bar for f in report.findings)


def project_settings(folder: Path) -> Settings:
    """The ignores and the failure bar a project keeps in `folder`. Raises UsageError for a broken file."""
    settings = Settings()
    for path, table in ((folder / "pyproject.toml", ("tool", "spyglass", "check")), (folder / PROJECT_FILE, ())):
        if not path.is_file():
            continue
        try:
            data: Any = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise E.UsageError(f"{path}: cannot be read as TOML ({exc})") from None
        for key in table:
            data = data.get(key) if isinstance(data, dict) else None
        if not isinstance(data, dict):
            continue
        where = f"{path}" + (f" [{'.'.join(table)}]" if table else "")
        ignore = data.get("ignore", [])
        if not isinstance(ignore, list) or not all(isinstance(i, str) for i in ignore):
            raise E.UsageError(f"{where}: ignore must be a list of \"RULE\" or \"RULE:TARGET\" strings")
        settings.ignore += validated_ignores(ignore, where)
        if "fail-on" in data:
            settings.fail_on = fail_on(data["fail-on"], where)
    return settings


def validated_ignores(items: list[str], where: str) -> list[str]:
    for item in items:
        rule = item.partition(":")[0]
        if rule not in RULES:
            raise E.UsageError(f"{where}: unknown rule {rule!r} in ignore {item!r} "
                               f"(rules: spyglass check --list-rules)")
    return list(items)


def fail_on(value: Any, where: str) -> str:
    if value not in (ERROR, WARNING, INFO):
        raise E.UsageError(f"{where}: fail-on must be \"error\", \"warning\" or \"info\", not {value!r}")
    return str(value)


def text(report: Report, *, width: int = 100) -> str:
    server = report.server
    name = " ".join(str(server[k]) for k in ("name", "version") if isinstance(server.get(k), (str, int)))
    lines = [f"{name or 'server'} (protocol {server.get('protocolVersion')})", ""]
    for severity in SEVERITIES:
        found = [f for f in report.findings if f.severity == severity]
        if not found:
            continue
        lines.append(f"{HEADINGS[severity]} ({len(found)})")
        for f in found:
            lines.append(f"  {f.rule}  {one_line(f.target)}")
            lines.append(f"      {one_line(f.message)}")
        lines.append("")
    if report.cost is not None:
        heaviest = sorted(report.cost.tools.items(), key=lambda kv: -kv[1][1])[:3]
        top = ", ".join(f"{n} {t:,}" for n, (_b, t) in heaviest)
        lines.append(f"Tool list: {report.cost.count} tools, {report.cost.bytes:,} bytes, about "
                     f"{report.cost.tokens:,} tokens" + (f" (largest: {top})" if top else ""))
    if report.called:
        lines.append(f"Called with made-up arguments: {', '.join(report.called)}")
    for note in report.notes:
        lines.append(f"Note: {note}")
    counts = report.summary()
    lines.append(", ".join(f"{counts[s]} {'info' if s == INFO else s + ('s' if counts[s] != 1 else '')}"
                           for s in SEVERITIES))
    return "\n".join(lines) + "\n"


def _xml(text: str, masked: Tally | None = None) -> str:
    """Server text as XML 1.0 can carry it (`terminal.xml_text`), with its secrets masked (`secrets.mask_text`)
    when `masked` is given."""
    return xml_text(mask_text(text, masked) if masked is not None else text)


def junit_properties(masked: Tally) -> ET.Element:
    """A JUnit suite's `<properties>` saying what was masked, as a session file's header does."""
    props = ET.Element("properties")
    ET.SubElement(props, "property", name="spyglass.masked", value="true")
    for kind, n in masked.counts().items():
        ET.SubElement(props, "property", name=f"spyglass.masked_values.{kind}", value=str(n))
    return props


def junit(report: Report, settings: Settings, hosts: list[HostVerdict] | None = None) -> bytes:
    """One test case per rule and target: a failure for what fails the check, a passing case (with the
    message as output) for the rest, and one passing case for each rule that found nothing; with `hosts`,
    one case per host too (a failure when it is blocked)."""
    masked = Tally()
    server = _xml(str(report.server.get("name") or "server"), masked)
    bar = SEVERITIES.index(settings.fail_on)
    suite = ET.Element("testsuite", name=f"spyglass check {server}")
    failures = 0
    by_case: dict[tuple[str, str], list[Finding]] = {}
    for f in report.findings:
        by_case.setdefault((f.rule, f.target), []).append(f)
    for rule in RULES:
        cases = {k: v for k, v in by_case.items() if k[0] == rule}
        if not cases:
            ET.SubElement(suite, "testcase", classname=f"{server}.{rule}", name=rule)
            continue
        for (_rule, target), found in cases.items():
            case = ET.SubElement(suite, "testcase", classname=f"{server}.{rule}",
                                 name=_xml(f"{rule} {target}", masked))
            worst = min(found, key=lambda f: SEVERITIES.index(f.severity))
            body = _xml("\n".join(f"[{f.severity}] {f.message} ({f.spec})" for f in found), masked)
            if SEVERITIES.index(worst.severity) <= bar:
                failures += 1
                fail = ET.SubElement(case, "failure", message=_xml(worst.message, masked), type=worst.severity)
                fail.text = body
            else:
                ET.SubElement(case, "system-out").text = body
    if hosts:
        failures += junit_cases(suite, server, hosts, lambda t: _xml(t, masked))
    suite.set("tests", str(len(suite)))
    suite.insert(0, junit_properties(masked))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    return bytes(ET.tostring(suite, encoding="utf-8", xml_declaration=True))
