"""The rules a server is judged by: each with a stable id, a severity and the part of the specification
(or guidance) it comes from; and the finding one of them makes about one thing a server sent.

Targets name what a finding is about: "server", "tool:NAME", "resource:URI", "prompt:NAME",
"list:tools" (a whole listing) or "frame:N" (the N-th frame of the session, counted from 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ERROR, WARNING, INFO = "error", "warning", "info"
SEVERITIES = (ERROR, WARNING, INFO)  # worst first

SPEC = "https://modelcontextprotocol.io/specification"
TOOLS = f"{SPEC}/2025-11-25/server/tools"
TRUST = f"{TOOLS}#security-considerations"


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str
    title: str  # what the rule checks, in a few words
    spec: str


_ALL = [
    Rule("schema-violation", ERROR, "a server message breaks its revision's schema",
         f"{SPEC}/2025-11-25/schema"),
    Rule("tool-name-invalid", ERROR, "tool names are 1-128 characters of A-Z a-z 0-9 _ - .",
         f"{TOOLS}#tool-names"),
    Rule("tool-name-duplicate", ERROR, "tool names are unique", f"{TOOLS}#tool-names"),
    Rule("description-missing", WARNING, "every tool says what it does", f"{TOOLS}#tool"),
    Rule("description-vague", WARNING, "a description tells a model what the tool does and when to use it",
         "https://modelcontextprotocol.io/docs/develop/build-server#tool-descriptions"),
    Rule("param-description-missing", WARNING, "every parameter is described", f"{TOOLS}#tool"),
    Rule("input-schema-invalid", ERROR, "inputSchema is a valid JSON Schema of type object", f"{TOOLS}#tool"),
    Rule("annotations-contradict", WARNING, "tool annotations agree with each other",
         f"{SPEC}/2025-11-25/schema#toolannotations"),
    Rule("list-order-unstable", WARNING, "a list comes back in the same order every time",
         f"{TOOLS}#listing-tools"),
    Rule("pagination-cursor-loop", WARNING, "pagination ends", f"{SPEC}/2025-11-25/server/utilities/pagination"),
    Rule("capability-undeclared", WARNING, "a server uses only what it declared",
         f"{SPEC}/2025-11-25/basic/lifecycle#capability-negotiation"),
    Rule("structured-content-missing", ERROR, "a tool with an outputSchema returns structuredContent",
         f"{TOOLS}#output-schema"),
    Rule("structured-content-mismatch", ERROR, "structuredContent matches the tool's outputSchema",
         f"{TOOLS}#output-schema"),
    Rule("structured-text-missing", INFO, "structured content is also given as text for older clients",
         f"{TOOLS}#structured-content"),
    Rule("unknown-tool-not-protocol-error", WARNING, "calling a tool that does not exist is error -32602",
         f"{TOOLS}#error-handling"),
    Rule("tool-error-as-protocol-error", WARNING, "a tool that ran and failed answers isError: true",
         f"{TOOLS}#error-handling"),
    Rule("schema-unportable", ERROR, "tool schemas use only what model providers' tool calling reads",
         "https://json-schema.org/understanding-json-schema"),
    Rule("tool-list-cost", INFO, "the tool list stays small enough for a model to read on every turn",
         f"{TOOLS}#listing-tools"),
    # trust: what a model reads that a person would miss, and what a server does that its words deny
    Rule("hidden-tag-characters", ERROR, "no Unicode tag characters (invisible ASCII) in what a model reads",
         TRUST),
    Rule("hidden-variation-selectors", ERROR, "no runs of variation selectors (invisible bytes)", TRUST),
    Rule("hidden-zero-width", WARNING, "no zero-width characters outside emoji and joining scripts", TRUST),
    Rule("hidden-bidi-controls", ERROR, "no bidirectional controls that reorder what a person sees", TRUST),
    Rule("hidden-fillers", WARNING, "no invisible fillers (U+00AD, U+3164, U+115F, U+1160, U+FFA0)", TRUST),
    Rule("hidden-control-characters", WARNING, "no C0 / C1 controls or U+2028 / U+2029", TRUST),
    Rule("hidden-html-comment", WARNING, "no HTML comments (a Markdown view hides them)", TRUST),
    Rule("hidden-after-blank-lines", ERROR, "no text pushed out of sight by blank lines or spaces", TRUST),
    Rule("model-instruction", ERROR, "descriptions and results describe; they do not instruct the model", TRUST),
    Rule("secret-reference", ERROR, "descriptions do not point the model at keys, credentials or private files",
         TRUST),
    Rule("tool-name-lookalike", WARNING, "a tool name does not read like another one, nor mix scripts",
         f"{TOOLS}#tool-names"),
    Rule("tool-name-shadowing", WARNING, "a tool name is not another server's tool name", TRUST),
    Rule("foreign-tool-reference", WARNING, "a description does not name another server's tools", TRUST),
    Rule("read-only-hint-contradicted", ERROR, "a tool marked read-only changes no listing and no resource",
         f"{SPEC}/2025-11-25/schema#toolannotations"),
    Rule("definition-changed", WARNING, "a tool's definition stays as it was first listed (no rug pull)", TRUST),
]
RULES: dict[str, Rule] = {rule.id: rule for rule in _ALL}
# the rules that judge whether a server can be trusted (docs/security.md#trust-rules)
TRUST_RULES = frozenset(r.id for r in _ALL[_ALL.index(RULES["hidden-tag-characters"]):])


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    target: str
    message: str
    spec: str

    def as_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "severity": self.severity, "target": self.target, "message": self.message,
                "spec": self.spec}


def finding(rule: str, target: str, message: str, severity: str | None = None) -> Finding:
    """A finding of `rule` (at its own severity unless one is given) about `target`."""
    spec = RULES[rule]
    return Finding(rule, severity or spec.severity, target, message, spec.spec)


def mistake(f: Finding) -> tuple[str, str]:
    """What makes two findings one mistake: the same rule and words, about the same thing (frames aside:
    the same broken message in many frames is one mistake)."""
    return (f.rule, f.message if f.target.startswith("frame:") else f"{f.target}\0{f.message}")


def times(f: Finding, count: int) -> str:
    """How often one mistake was made, in words: in frames for a frame's, else times."""
    return f"in {count} frames" if f.target.startswith("frame:") else f"{count} times"


def worst_first(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (SEVERITIES.index(f.severity), f.rule, f.target))
