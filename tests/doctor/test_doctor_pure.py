"""The doctor's pure parts: reading each era's answer, certificate names and fingerprints, the checklist's
text and JSON."""

from __future__ import annotations

import pytest

from inspector.config import ServerSpec
from inspector.doctor import FAILED, NOT_REACHED, PASSED, Report, Step, plan
from inspector.doctor.eras import read_discover, read_initialize
from inspector.doctor.tls import name_matches, normal_pin, shown_fingerprint
from inspector.protocol import jsonrpc as rpc


def error(code: int, message: str = "m", data=None) -> rpc.ErrorResponse:
    return rpc.ErrorResponse("x", rpc.RpcError(code, message, data))


@pytest.mark.parametrize(("msg", "speaks", "text"), [
    (None, None, "no answer"),
    (error(-32022, "Unsupported", {"supported": ["2026-07-28"]}), "2026-07-28", "it offers 2026-07-28"),
    (error(-32022, "Unsupported", {"supported": ["2025-06-18"]}), None, "it offers 2025-06-18"),
    (error(-32022, "Unsupported"), None, "it offers nothing named"),
    (error(-32020, "Header mismatch"), "2026-07-28", "a 2026-07-28 error code"),
    (rpc.Response("x", []), None, "the result is not an object"),
    (rpc.Response("x", {"supportedVersions": ["2025-11-25"]}), None, "it supports only 2025-11-25"),
    (rpc.Response("x", {"_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s"}}}), "2026-07-28",
     "answered from s"),
    (rpc.Malformed(b"{", "bad JSON"), None, "not an answer: bad JSON"),
])
def test_discover_answers(msg, speaks, text):
    answer = read_discover(msg)
    assert answer.speaks == speaks and text in answer.text


@pytest.mark.parametrize(("msg", "speaks", "text"), [
    (None, None, "no answer"),
    (error(-32603, "database locked"), None, "refused, error -32603 database locked"),
    (rpc.Response("x", "no"), None, "the result is not an object"),
    (rpc.Response("x", {"protocolVersion": "1999-01-01"}), None, "chose protocol version '1999-01-01'"),
    (rpc.Response("x", {"protocolVersion": "2025-11-25", "serverInfo": {"name": "s", "version": "2"}}),
     "2025-11-25", "answered from s 2"),
    (rpc.Notification("ping"), None, "not an answer: Notification"),
])
def test_initialize_answers(msg, speaks, text):
    answer = read_initialize(msg)
    assert answer.speaks == speaks and text in answer.text


def test_certificate_names():
    assert name_matches("127.0.0.1", ["localhost", "127.0.0.1"])
    assert not name_matches("127.0.0.1", ["localhost"]) and not name_matches("localhost", ["127.0.0.1"])
    assert name_matches("api.example.com", ["*.example.com"]) and not name_matches("a.b.example.com", ["*.example.com"])
    assert name_matches("[::1]", ["::1"]) and name_matches("Example.COM.", ["example.com"])


def test_fingerprints():
    digest = "ab" * 32
    assert normal_pin(shown_fingerprint(digest.upper()).lower()) == digest.upper()
    assert normal_pin(" ".join(digest[i:i + 2] for i in range(0, 64, 2))) == digest.upper()
    with pytest.raises(ValueError, match="not a SHA-256 fingerprint"):
        normal_pin("AB:CD")
    with pytest.raises(ValueError):
        normal_pin("G" * 64)


def test_plan_and_report_shapes():
    report = plan(ServerSpec(name="x", url="https://user:pw@example.com/mcp?token=abc"))
    assert report.transport == "http" and "pw" not in report.target and "abc" not in report.target
    assert [s.outcome for s in report.steps] == [NOT_REACHED] * len(report.steps)
    assert report.exit_code == 4 and report.failed is None
    stdio = plan(ServerSpec(name="x", command=["npx", "-y", "a b"]))
    assert stdio.target == "npx -y 'a b'" and stdio.step("command").title == "command found"
    with pytest.raises(KeyError):
        stdio.step("nope")


def test_the_text_of_a_report():
    report = Report("t", "stdio", [Step("a", "first", PASSED, ["ok\x1b[31m"], 1.2),
                                   Step("b", "second", FAILED, ["bad\nline two"], 3.0, "do\x07this\nthen that", 7),
                                   Step("c", "third")], notes=["a\u202enote"])
    text = report.as_text()
    assert "✓ first: passed (1 ms)\n    ok\\x1b[31m\n" in text
    assert "✗ second: failed (3 ms)\n    bad\n    line two\n    fix: do\\x07this\n         then that\n" in text
    assert "· third: not reached\n" in text and "note: a<U+202E>note" in text
    assert text.endswith('result: failed at "second" (exit 7)\n')
    data = report.as_json()
    assert data["failed_step"] == "b" and data["exit_code"] == 7 and data["steps"][2] == {
        "id": "c", "title": "third", "outcome": "not reached", "seen": []}
