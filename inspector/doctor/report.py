"""The doctor's checklist: steps run in order, the first failure stops the run, each step with what was seen,
how long it took and, for a failure, what to do. Qt-free; the command line prints it, the window shows it live.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .. import errors as E
from ..secrets import Tally, mask_text
from ..terminal import one_line, visible

PASSED = "passed"
FAILED = "failed"
SKIPPED = "skipped"  # does not apply to this server (TLS for an http:// URL, authorization without a 401)
NOT_REACHED = "not reached"
OUTCOMES = (PASSED, FAILED, SKIPPED, NOT_REACHED)
MARKS = {PASSED: "✓", FAILED: "✗", SKIPPED: "–", NOT_REACHED: "·"}


class StepFailed(Exception):
    """Raised by a step: what went wrong, what to do, and the exit code of the command line."""

    def __init__(self, seen: str, fix: str, code: int = E.EXIT_CONNECT) -> None:
        super().__init__(seen)
        self.seen = seen
        self.fix = fix
        self.code = code


class StepSkipped(Exception):
    """Raised by a step that does not apply: why."""


@dataclass
class Step:
    """One step of the checklist."""

    id: str
    title: str
    outcome: str = NOT_REACHED
    seen: list[str] = field(default_factory=list)
    ms: float | None = None
    fix: str | None = None
    code: int | None = None  # the exit code a failure here means

    def saw(self, text: str) -> None:
        self.seen.append(text)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "title": self.title, "outcome": self.outcome, "seen": list(self.seen)}
        if self.ms is not None:
            out["ms"] = round(self.ms, 1)
        if self.fix is not None:
            out["fix"] = self.fix
        if self.code is not None:
            out["code"] = self.code
        return out


OnStep = Callable[[Step], None]


@dataclass
class Report:
    """The whole checklist of one server."""

    target: str
    transport: str  # "stdio" | "http"
    steps: list[Step]
    on_step: OnStep | None = None  # told when a step starts and when it ends (the window's live checklist)
    connected: bool = False
    notes: list[str] = field(default_factory=list)
    # the server's own secrets (its env values, headers, a token given): masked wherever a step saw them,
    # with every secret shape besides, since the report is meant to be pasted into a bug report
    secrets: Tally = field(default_factory=Tally)

    def step(self, step_id: str) -> Step:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)

    @property
    def failed(self) -> Step | None:
        return next((s for s in self.steps if s.outcome == FAILED), None)

    @property
    def exit_code(self) -> int:
        failed = self.failed
        if failed is not None:
            return failed.code if failed.code is not None else E.EXIT_CONNECT
        return E.EXIT_OK if self.connected else E.EXIT_CONNECT

    async def run(self, step_id: str, body: Callable[[Step], Awaitable[None]]) -> bool:
        """Run one step unless an earlier one failed; False once the run has stopped."""
        step = self.step(step_id)
        if self.failed is not None:
            return False
        begun = time.monotonic()
        if self.on_step is not None:
            self.on_step(step)
        try:
            await body(step)
            step.outcome = PASSED
        except StepSkipped as why:
            step.outcome = SKIPPED
            step.saw(str(why))
        except StepFailed as failure:
            step.outcome, step.fix, step.code = FAILED, failure.fix, failure.code
            step.saw(failure.seen)
        finally:
            step.seen = [mask_text(seen, self.secrets) for seen in step.seen]
            step.fix = mask_text(step.fix, self.secrets) if step.fix else step.fix
            step.ms = (time.monotonic() - begun) * 1000.0
            if self.on_step is not None:
                self.on_step(step)
        return step.outcome != FAILED

    def as_json(self) -> dict[str, Any]:
        failed = self.failed
        return {"target": self.target, "transport": self.transport, "connected": self.connected,
                "exit_code": self.exit_code, "failed_step": failed.id if failed is not None else None,
                "steps": [s.as_json() for s in self.steps], "notes": list(self.notes)}

    def as_text(self) -> str:
        """The checklist as a person reads it (and pastes into a bug report); every control escaped."""
        lines = [f"Spyglass connection doctor: {one_line(self.target)} ({self.transport})"]
        for s in self.steps:
            took = f" ({s.ms:.0f} ms)" if s.ms is not None and s.outcome in (PASSED, FAILED) else ""
            lines.append(f"{MARKS[s.outcome]} {s.title}: {s.outcome}{took}")
            for seen in s.seen:
                lines.extend(f"    {one_line(part)}" for part in seen.splitlines() or [""])
            if s.fix:
                lines.append("    fix: " + visible(s.fix).replace("\n", "\n         "))
        lines.extend(f"note: {one_line(n)}" for n in self.notes)
        failed = self.failed
        if failed is not None:
            lines.append(f"result: failed at \"{failed.title}\" (exit {self.exit_code})")
        else:
            lines.append("result: connected" if self.connected else f"result: not connected (exit {self.exit_code})")
        return "\n".join(lines) + "\n"
