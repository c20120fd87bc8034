"""Writing a previewed import into the catalog: all of it, or (on any failure) none of it."""

from __future__ import annotations

from collections.abc import Mapping

from ..catalog import Catalog
from ._model import ACTIONS, Choice, ImportEntry, ImportPreview, ImportResult, MissingAnswers, Placeholder
from ._placeholders import has_placeholder, substitute
from ._preview import check_conflicts


def apply(preview: ImportPreview, catalog: Catalog, choices: Mapping[str, Choice | str] | None = None,
          answers: Mapping[str, str] | None = None, *, save: bool = True) -> ImportResult:
    """Add the previewed servers to `catalog` and save it.

    `choices` maps an entry's `key` to a Choice (or just its action): "add", "rename" (to
    `Choice.name`, default the entry's `suggested_name`), "replace" (the conflicting server,
    keeping its id and place), "skip". Entries without a choice get their `default_action`.
    `answers` maps a placeholder token (`ImportPreview.questions`) to its value; a question
    left unanswered takes its default, and one without a default raises MissingAnswers.
    Nothing is written unless everything succeeds: a failure leaves the catalog as it was.
    """
    choices = dict(choices or {})
    answers = dict(answers or {})
    unknown = set(choices) - {e.key for e in preview.entries}
    if unknown:
        raise KeyError(f"no such entries in the preview: {', '.join(sorted(unknown))}")
    check_conflicts(preview, catalog)  # the catalog may have changed since the preview
    plan: list[tuple[ImportEntry, Choice]] = []
    result = ImportResult()
    for entry in preview.entries:
        choice = _choice(choices.get(entry.key), entry)
        if choice.action == "skip" or not entry.importable:
            if choice.action != "skip":
                result.warnings.append(f"server {entry.name!r} cannot be imported: {entry.error}")
            result.skipped.append(entry.key)
            continue
        if choice.action == "replace" and entry.conflict is None:
            choice = Choice("add")
        plan.append((entry, choice))

    missing: dict[str, Placeholder] = {}
    values: dict[str, dict[str, str]] = {}
    for entry, _ in plan:
        values[entry.key] = filled = {}
        for ph in entry.placeholders:
            if ph.token in answers and answers[ph.token] is not None:
                filled[ph.token] = str(answers[ph.token])
            elif ph.default is not None:
                filled[ph.token] = ph.default
            elif not ph.required and ph.kind == "argument":
                filled[ph.token] = ""
            else:
                missing.setdefault(ph.token, ph)
    if missing:
        raise MissingAnswers(list(missing.values()))

    before = catalog.snapshot()
    try:
        for entry, choice in plan:
            assert entry.spec is not None
            spec = substitute(entry.spec, values[entry.key])
            leftovers = [f for f in (*spec.command, *spec.env.values(), *spec.headers.values(), spec.url or "")
                         if has_placeholder(f)]
            if leftovers:
                result.warnings.append(f"server {entry.name!r}: kept as written: {', '.join(leftovers)}")
            source = {"file": entry.source, "entry": entry.entry, "format": preview.format}
            mode = entry.mode or "auto"
            if choice.action == "replace":
                assert entry.conflict is not None
                target = catalog.get(entry.conflict.existing_id)
                spec.name = target.name if choice.name is None else choice.name
                catalog.replace(target.id, spec, mode=mode, timeout=entry.timeout, secret_marks=entry.secret_marks)
                target.source = source
                result.replaced.append(target)
                continue
            if choice.action == "rename":
                spec.name = choice.name or entry.suggested_name or entry.name
            added = catalog.add(spec, secret_marks=entry.secret_marks, source=source, mode=mode,
                                timeout=entry.timeout)
            if added.name != spec.name:
                result.warnings.append(f"server {spec.name!r} was added as {added.name!r}: the name was taken")
            result.added.append(added)
        if save:
            catalog.save()
    except BaseException:
        catalog.restore(before)
        raise
    return result


def _choice(raw: Choice | str | None, entry: ImportEntry) -> Choice:
    if raw is None:
        return Choice(entry.default_action)
    choice = Choice(raw) if isinstance(raw, str) else raw
    if choice.action not in ACTIONS:
        raise ValueError(f"unknown import action {choice.action!r} for {entry.key!r} (expected "
                         f"{', '.join(ACTIONS)})")
    return choice

