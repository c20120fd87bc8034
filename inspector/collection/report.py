"""A collection run as JUnit XML for CI systems: one test case per step, a failure with its message and
both values (expected and actual) for each step that failed."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from ..terminal import xml_text
from .expect import short
from .run import RunReport


def junit(report: RunReport) -> bytes:
    suite = ET.Element("testsuite", name=xml_text(f"spyglass test {report.collection}"),
                       tests=str(len(report.results)), failures=str(report.failed), errors="0",
                       skipped=str(len(report.results) - report.passed - report.failed),
                       time=f"{report.seconds:.3f}")
    for r in report.results:
        case = ET.SubElement(suite, "testcase", classname=xml_text(report.collection), name=xml_text(r.step.name),
                             time=f"{r.ms / 1000:.3f}")
        if r.status == "failed":
            first = r.reason or (r.misses[0].line() if r.misses else "failed")
            failure = ET.SubElement(case, "failure", message=xml_text(first), type="assertion" if r.misses else "error")
            body = [f"{m.what}\n  expected: {short(m.expected, 2000)}\n  actual:   {short(m.actual, 2000)}"
                    for m in r.misses]
            failure.text = xml_text("\n".join(([r.reason] if r.reason else []) + body))
        elif r.status == "skipped":
            ET.SubElement(case, "skipped")
    return bytes(ET.tostring(suite, encoding="utf-8", xml_declaration=True))
