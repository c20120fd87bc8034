"""A collection's steps as a Locust scenario (`spyglass test COLLECTION --locust FILE`): each step a task, weighted
(`--weight STEP=N`, 1 by default), its `expect` judged on every answer (`expectations.py`).

A step that cannot run on its own under load is left out, with the reason: an `ask` step (it needs a model), a step
that uses `${…}` (a value an earlier step saved, or the environment's, which is not written into the file), a step
that answers the server's questions (`elicit`, `sampling`: the HTTP user has no stream for them). A `snapshot`
expectation is left out of a step's checks (one stored answer, for one run).
"""

from __future__ import annotations

import json
from typing import Any

from .. import errors as E
from ..collection.load import Collection
from ..collection.load import Step as CollectionStep
from .locustfile import Scenario, Step


def params_of(step: CollectionStep) -> dict[str, Any]:
    if step.kind == "call":
        return {"name": step.target, "arguments": step.arguments or {}}
    if step.kind == "read":
        return {"uri": step.target}
    if step.kind == "prompt":
        out: dict[str, Any] = {"name": step.target}
        if step.arguments:
            out["arguments"] = {k: v if isinstance(v, str) else json.dumps(v) for k, v in step.arguments.items()}
        return out
    return {}


def why_left_out(step: CollectionStep) -> str | None:
    if step.kind == "ask":
        return "an ask step needs a model"
    if "${" in json.dumps([step.target, step.arguments]):
        return "it uses ${…}: a value saved by an earlier step or taken from the environment"
    if step.elicit is not None or step.sampling is not None:
        return "it answers the server's questions (elicit, sampling), which the Locust user cannot"
    return None


def collection_scenario(collection: Collection, url: str, protocol: str, *, users: int, duration_s: float | None,
                        rate: float | None, weights: dict[str, int], headers: dict[str, str] | None = None,
                        only: list[str] | None = None) -> tuple[Scenario, list[str]]:
    """The scenario, and a sentence for each step left out."""
    steps, notes = [], []
    for step in collection.steps:
        if only and step.name not in only:
            continue
        why = why_left_out(step)
        if why:
            notes.append(f"step {step.name!r} left out: {why}")
            continue
        expect = {k: v for k, v in step.expect.items() if k != "snapshot"}
        steps.append(Step(step.name, step.method, params_of(step), weights.get(step.name, 1), expect or None))
    if not steps:
        raise E.UsageError(f"no step of {collection.path.name} can run under Locust ({'; '.join(notes)})")
    return Scenario(url=url, protocol=protocol, steps=tuple(steps), users=users, duration_s=duration_s, rate=rate,
                    headers=dict(headers or {}), title=f"A Locust load test from the collection {collection.name!r}",
                    source=f"spyglass test {collection.path.name} --locust"), notes
