"""Choosing the checklist for a server and running it."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from ..config import ServerSpec
from ..secrets import mask_args, mask_url, secrets_of
from . import stdio, web
from .report import OnStep, Report, Step

DEFAULT_TIMEOUT = 10.0


@dataclass(frozen=True)
class DoctorOptions:
    """`timeout` bounds every wait (a DNS answer, a connection, a handshake, an answer); what else the
    user gave: a bearer token, a pre-registered OAuth client ID."""

    timeout: float = DEFAULT_TIMEOUT
    auth_token: str | None = None
    client_id: str | None = None


def plan(spec: ServerSpec) -> Report:
    """The steps `diagnose` will run for `spec`, all `not reached` yet (the window shows them at once)."""
    if spec.url is not None:
        steps, transport, target = web.STEPS, "http", mask_url(spec.url)
    else:
        steps, transport, target = stdio.STEPS, "stdio", shlex.join(mask_args(spec.command)) or spec.name
    report = Report(target=target, transport=transport, steps=[Step(i, title) for i, title in steps])
    report.secrets.learn(secrets_of(spec))
    return report


async def diagnose(spec: ServerSpec, options: DoctorOptions | None = None, on_step: OnStep | None = None,
                   report: Report | None = None) -> Report:
    """Run the checklist of `spec`; never raises for what the server does (a failed step says it)."""
    options = options or DoctorOptions()
    report = report or plan(spec)
    report.on_step = on_step
    if options.auth_token:
        report.secrets.learn([options.auth_token])
    if spec.url is not None:
        await web.HttpDoctor(spec, options.timeout, options.auth_token, options.client_id).run(report)
    else:
        await stdio.StdioDoctor(spec, options.timeout).run(report)
    return report
