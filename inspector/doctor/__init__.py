"""The connection doctor: the steps of a connection run in order, stopping at the first that fails, each
with what was seen, how long it took and what to do (`spyglass doctor`, the window's *Diagnose*). Qt-free.

    report = await diagnose(spec, DoctorOptions(timeout=5.0))
    print(report.as_text())
"""

from __future__ import annotations

from .report import FAILED, NOT_REACHED, OUTCOMES, PASSED, SKIPPED, OnStep, Report, Step
from .run import DoctorOptions, diagnose, plan

__all__ = ["FAILED", "NOT_REACHED", "OUTCOMES", "PASSED", "SKIPPED", "DoctorOptions", "OnStep", "Report", "Step",
           "diagnose", "plan"]
