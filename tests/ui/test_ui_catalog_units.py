"""Issue 7's pieces without a server: completion checks, roots as URIs, log filters, the argument form."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtWidgets import QLabel
from uikit import until

from inspector import errors as E
from inspector.session import Completion, LogEntry, check_completion, path_to_root, root_to_path
from inspector.ui.library.arg_form import ArgumentForm
from inspector.ui.library.resources import granted_text
from inspector.ui.servers.log_controls import entry_passes


def test_completion_results_are_checked():
    ok = check_completion({"completion": {"values": ["a", "b"], "total": 2, "hasMore": False}})
    assert (ok.values, ok.total, ok.has_more, ok.note) == (["a", "b"], 2, False, None)
    many = check_completion({"completion": {"values": [str(i) for i in range(150)]}})
    assert len(many.values) == 100 and "at most 100" in many.note
    mixed = check_completion({"completion": {"values": ["a", 1, None]}})
    assert mixed.values == ["a"] and "not strings" in mixed.note
    for bad in (None, {}, {"completion": {"values": "nope"}}):
        with pytest.raises(E.InvalidResponse):
            check_completion(bad)


def test_roots_are_file_uris(tmp_path):
    folder = tmp_path / "a b"
    folder.mkdir()
    root = path_to_root(str(folder))
    assert root == {"uri": folder.as_uri(), "name": "a b"}
    assert root_to_path(root["uri"]) == str(folder)


def test_log_filters():
    def e(level, logger=None):
        return LogEntry(0.0, level, "text", logger)
    assert entry_passes(e("error"), "warning", "")
    assert not entry_passes(e("info"), "warning", "")
    assert entry_passes(e("stderr"), "emergency", "")  # stderr always passes the level filter
    assert entry_passes(e("info", "db.pool"), None, "DB")
    assert not entry_passes(e("info", "http"), None, "db")
    assert entry_passes(e("stderr"), None, "stderr")


def test_granted_filter_in_words():
    assert granted_text({"toolsListChanged": True, "resourceSubscriptions": ["x://1"]}) == \
        "tool list changes; updates of x://1"
    assert granted_text({}) == "nothing"
    assert granted_text({"futureThing": {"a": 1}}) == 'futureThing={"a": 1}'


async def test_argument_form_debounces_sends_context_and_drops_stale_answers(qapp):
    calls = []

    async def complete(name, value, earlier):
        calls.append((name, value, dict(earlier)))
        await asyncio.sleep(0.2 if value == "slow" else 0.01)
        return Completion([f"{value}-1", f"{value}-2"])

    form = ArgumentForm(name="promptForm")
    form.set_arguments([{"name": "first", "required": True, "description": "The first"},
                        {"name": "second"}, {"name": "", "required": True}, {"name": "second"}], complete)
    assert [f.name for f in form.fields] == ["first", "second"]
    assert "without a name" in form.problems.text() and "listed twice" in form.problems.text()
    assert form.findChild(QLabel, "argLabel:first").text() == "first *"
    assert form.missing() == ["first"]
    form.debounce_ms = 50
    first, second = form.field("first"), form.field("second")
    first.setText("x")
    for text in ("s", "sl", "slo"):  # typed quickly: one request after the pause
        second.setText(text)
        second.textEdited.emit(text)
    await until(lambda: calls, 5, "the debounced request")
    await asyncio.sleep(0.1)
    assert calls == [("second", "slo", {"first": "x"})]
    # a slow answer overtaken by a newer request is dropped
    second.setText("slow")
    form.request_completion("second")
    second.setText("fast")
    form.request_completion("second")
    await until(lambda: form.suggestions("second") == ["fast-1", "fast-2"], 5, "the newer answer")
    await asyncio.sleep(0.3)
    assert form.suggestions("second") == ["fast-1", "fast-2"]
    assert form.values() == {"first": "x", "second": "fast"}
    form.deleteLater()


async def test_argument_form_shows_completion_errors(qapp):
    async def broken(name, value, earlier):
        raise E.RemoteError("completion/complete", -32602, "no such argument")

    form = ArgumentForm()
    form.set_arguments([{"name": "a"}], broken)
    form.request_completion("a")
    hint = form.findChild(QLabel, "argSuggestions:a")
    await until(lambda: "Completion failed" in hint.text(), 5, "the error")
    assert "no such argument" in hint.text() and form.suggestions("a") == []
    form.deleteLater()
