"""A server's schema that refers outside itself, in the window (tests/hostile/server.py `schema-refs`): the tool's
form, the verdict on its result and the elicitation dialog each say that the reference was not followed; no
connection reaches the listener, the fake token of a `file:` reference is in no widget, a port that never answers
holds nothing up. And SIGTERM ends the window promptly, its servers' whole process groups with it, whatever it
is waiting for."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import refs_peers
from calling import call, click, connected, dialog, select_tool, shown_in_result
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QPlainTextEdit, QTextEdit
from refs_peers import SENTENCE
from support import HOSTILE, PY, ROOT, SLOWDOWN
from test_no_orphans import survivors, tagged_server, wait_gone
from uikit import until

from inspector.config import ServerSpec


def every_text() -> str:
    """What every widget of the application shows (labels, editors, tooltips)."""
    out = []
    for w in QApplication.allWidgets():
        if isinstance(w, (QLabel, QLineEdit)):
            out.append(w.text())
        elif isinstance(w, (QPlainTextEdit, QTextEdit)):
            out.append(w.toPlainText())
        out.append(w.toolTip())
    return "\n".join(out)


@pytest.mark.parametrize("kind", ["remote", "file", "stall"])
async def test_the_window_never_follows_a_servers_ref(open_window, kind, listener, staller, tmp_path):
    ref = refs_peers.hostile_refs(listener, staller, refs_peers.token_file(tmp_path))[kind]
    said = f"refers to {ref.split('#')[0]} {SENTENCE}"
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="refs", command=[PY, str(HOSTILE), "schema-refs"],
                                            env={"HOSTILE_REF": ref}), mode="legacy")
        await connected(conn)
        started = time.monotonic()

        select_tool(window, "ref_input")  # the form: at once, and among its problems
        form = window.tool_detail.form
        banner = form.findChild(QLabel, "formBanner")
        await until(lambda: banner.isVisibleTo(window), 10, "the form's banner to be shown")
        assert said in banner.text(), banner.text()
        form.set_value({"x": "FAKE"})
        assert form.reveal_problems() == 1
        assert said in form.findChild(QLabel, "formMessages").text()

        await call(window, "ref_output", {}, timeout=20)  # the verdict on the result
        verdict = await until(lambda: shown_in_result(window, QLabel, "structuredErrors"), 10, "the verdict")
        assert said in verdict[0].text() and "Not checked" in verdict[0].text(), verdict[0].text()

        rec = await call(window, "ref_elicit", {}, wait=False)  # the elicitation dialog
        dlg = await dialog(window, "elicitationDialog")
        shown = dlg.form.findChild(QLabel, "formBanner")
        assert shown.isVisibleTo(dlg) and said in shown.text(), shown.text()
        dlg.form.set_value({"x": "FAKE"})
        dlg.form.reveal_problems()
        assert refs_peers.TOKEN not in every_text()
        click(dlg, "elicitAccept")  # not checked, as the banner says: the answer is the user's to give
        await until(lambda: not rec.running, 20, "the elicitation's call to end")
        assert '"action": "accept", "content": {"x": "FAKE"}' in rec.result["content"][0]["text"]

        assert time.monotonic() - started < 15 * SLOWDOWN  # nothing waited on a port that never answers
        assert refs_peers.TOKEN not in every_text()
        assert listener.connections == 0 and staller.connections == 0


def isolated_env(tmp_path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_DATA_HOME=str(tmp_path / "data"), HOME=str(tmp_path), **extra)
    env.pop("SPYGLASS_LOG", None)
    return env


@pytest.mark.parametrize("waiting", ["a connection", "a call", "a dialog", "a stalled $ref"])
def test_sigterm_ends_the_window_whatever_it_waits_for(tmp_path, staller, waiting):
    """`--screenshot --call TOOL` starts a call from the command line: the window then waits for its answer, for
    the user to answer its elicitation, or (before references stayed in their schema) on a port that never
    answers, where Python's signal handlers never ran and SIGTERM was ignored."""
    cases, args, ref, method = {
        "a connection": (("no-reply-all",), (), "#/x", ""),
        "a call": (("no-reply",), ("--call", "echo"), "#/x", "tools/call"),
        "a dialog": (("schema-refs",), ("--call", "ref_elicit"), "#/x", "tools/call"),
        "a stalled $ref": (("schema-refs",), ("--call", "ref_output"), staller.url("never.json"), "tools/call"),
    }[waiting]
    seen = tmp_path / "seen.txt"  # what the server was sent (tests/hostile/server.py writes it)
    command, tag = tagged_server(*cases)
    shot = ("--screenshot", str(tmp_path / "shot.png"), *args) if args else ()
    proc = subprocess.Popen([sys.executable, "-m", "inspector", *shot, "--", *command], cwd=ROOT,
                            env=isolated_env(tmp_path, HOSTILE_REF=ref, HOSTILE_SEEN=str(seen)),
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30 * SLOWDOWN
        while not survivors(tag) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert survivors(tag), "the server did not start"
        while time.monotonic() < deadline and not (seen.exists() and method in seen.read_text()):
            time.sleep(0.05)  # the server has the request the window now waits on (any, for a connection)
        assert seen.exists() and method in seen.read_text(), f"the server was not sent {method or 'anything'}"
        sent = time.monotonic()
        if waiting == "a stalled $ref":
            # nothing is waited on any more: the reference is refused, the answer shown, the screenshot taken and
            # the window ends by itself (before, it waited on the port for ever and ignored SIGTERM)
            try:
                code = proc.wait(timeout=10 * SLOWDOWN)
            except subprocess.TimeoutExpired:
                pytest.fail(f"the window still waits {10 * SLOWDOWN:g} s after a $ref to a port that never answers")
        else:
            time.sleep(0.3)  # its answer, if any, on its way: the window is then in the state named
            sent = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(timeout=10 * SLOWDOWN)
            except subprocess.TimeoutExpired:
                pytest.fail(f"the window ignored SIGTERM for {10 * SLOWDOWN:g} s while waiting for {waiting}")
        assert time.monotonic() - sent < 5 * SLOWDOWN
        assert code == 0
        err = proc.stderr.read()
        assert "Traceback" not in err, err
        assert not wait_gone(tag), f"processes outlived the window (waiting for {waiting})"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for left in survivors(tag):
            os.kill(int(left.split(":")[0]), signal.SIGKILL)
