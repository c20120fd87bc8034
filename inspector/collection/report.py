"""A collection run as JUnit XML for CI systems: one test case per step, a failure with its message and
both values (expected and actual) for each step that failed."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from ..secrets import Tally, mask_text
from ..terminal import xml_text
from .expect import short
from .run import RunReport


def _xml(text: str, masked: Tally) -> str:
    """Text XML can hold (`terminal.xml_text`: a server can send control characters and lone surrogates), with
    its secrets masked (`secrets.mask_text`)."""
    return xml_text(mask_text(text, masked))


def junit(report: RunReport) -> bytes:
    masked = Tally()
    suite = ET.Element("testsuite", name=_xml(f"spyglass test {report.collection}", masked),
                       tests=str(len(report.results)), failures=str(report.failed), errors="0",
                       skipped=str(len(report.results) - report.passed - report.failed),
                       time=f"{report.seconds:.3f}")
    for r in report.results:
        case = ET.SubElement(suite, "testcase", classname=_xml(report.collection, masked),
                             name=_xml(r.step.name, masked),
                             time=f"{r.ms / 1000:.3f}")
        if r.status == "failed":
            first = r.reason or (r.misses[0].line() if r.misses else "failed")
            failure = ET.SubElement(case, "failure", message=_xml(first, masked),
                                    type="assertion" if r.misses else "error")
            body = [f"{m.what}\n  expected: {short(m.expected, 2000)}\n  actual:   {short(m.actual, 2000)}"
                    for m in r.misses]
            failure.text = _xml("\n".join(([r.reason] if r.reason else []) + body), masked)
        elif r.status == "skipped":
            ET.SubElement(case, "skipped")
    # what was masked, as a session file's header says it
    props = ET.Element("properties")
    ET.SubElement(props, "property", name="spyglass.masked", value="true")
    for kind, n in masked.counts().items():
        ET.SubElement(props, "property", name=f"spyglass.masked_values.{kind}", value=str(n))
    suite.insert(0, props)
    return bytes(ET.tostring(suite, encoding="utf-8", xml_declaration=True))
