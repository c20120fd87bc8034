"""Collections in the window, against the demo server: a call saved to a collection from the Tools tab and
from History, the Collections tab running one step and all of them with each verdict (expected versus
what came), a step's arguments edited in the generated form and its expectations in the YAML editor,
a commented file written back with its comments and key order, and the files that cannot be run."""

from __future__ import annotations

import asyncio
import os
import textwrap

from calling import call, connected
from PySide6.QtWidgets import QApplication, QDialog, QLabel, QPlainTextEdit, QPushButton, QTabWidget, QTreeWidget
from uikit import demo_cmd, find, shot, until

from inspector.collection.load import load
from inspector.config import ServerSpec
from inspector.ui.collections.save_dialog import SaveCallDialog

COMMENTED = textwrap.dedent("""\
    # Demo checks, kept by hand.
    name: demo by hand
    steps:
      # the first one divides
      - name: a quarter
        call: divide
        arguments: {a: 1, b: 4}   # one over four
        expect:
          text: {contains: "0.25"}   # as text
          isError: false
      - name: echo
        expect: {text: {contains: 'hi'}}
        call: echo
        arguments: {message: hi}
      - name: welcome
        read: demo://docs/welcome.txt
        expect: {text: {contains: Welcome}}
    """)


def steps_of(window) -> list[tuple[str, str, str]]:
    tree = find(window, QTreeWidget, "collectionSteps")
    return [(tree.topLevelItem(i).text(0), tree.topLevelItem(i).text(1), tree.topLevelItem(i).text(2))
            for i in range(tree.topLevelItemCount())]


def select_step(window, name: str) -> None:
    tree = find(window, QTreeWidget, "collectionSteps")
    item = next(tree.topLevelItem(i) for i in range(tree.topLevelItemCount()) if tree.topLevelItem(i).text(1) == name)
    tree.setCurrentItem(item)


async def save_dialog() -> SaveCallDialog:
    def find_it():
        return next((w for w in QApplication.topLevelWidgets() if isinstance(w, SaveCallDialog) and w.isVisible()),
                    None)
    return await until(find_it, 10, "the Save to collection dialog")


async def run_and_wait(window, button: str) -> None:
    pane = window.collections.pane
    find(window, QPushButton, button).click()
    await until(lambda: pane.job is None, 30, "the run to finish")
    await asyncio.sleep(0.05)


async def demo(window):
    conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()), mode="legacy")
    await connected(conn)
    return conn


async def test_a_call_saved_from_the_tools_tab_and_from_history_runs_in_the_collections_tab(open_window, tmp_path):
    target = tmp_path / "demo.collection.yaml"
    async with open_window() as window:
        await demo(window)
        rec = await call(window, "divide", {"a": 10, "b": 4})
        save = find(window, QPushButton, "saveCallButton")
        assert save.isEnabled()
        save.click()
        dialog = await save_dialog()
        dialog.file.setCurrentText(str(target))
        assert "new collection" in find(dialog, QLabel, "saveCollectionNote").text()
        preview = find(dialog, QPlainTextEdit, "saveStepPreview").toPlainText()
        assert preview == ("  - name: divide\n    call: divide\n    arguments: {a: 10, b: 4}\n    expect:\n"
                           "      isError: false\n      text: {contains: 10 / 4 = 2.5}\n"
                           "      content: {types: [text]}\n"), preview
        await shot(dialog, "collections-save-dialog")
        assert dialog.save()
        written = target.read_text()
        assert "server:" in written and "steps:" in written and "name: divide" in written
        assert [s.name for s in load(target).steps] == ["divide"]
        # from History, as a snapshot this time: the answer is stored beside the collection
        rec2 = await call(window, "echo", {"message": "hello"})
        window.tool_detail.result_tabs.setCurrentIndex(1)
        history = find(window, QTreeWidget, "callHistory")
        history.setCurrentItem(history.topLevelItem(0))
        find(window, QPushButton, "historySaveButton").click()
        dialog = await save_dialog()
        assert dialog.file.currentText() == str(target)  # the recent collection is offered first
        assert "Added at the end" in find(dialog, QLabel, "saveCollectionNote").text()
        dialog.snapshot.setChecked(True)
        assert "snapshot: true" in find(dialog, QPlainTextEdit, "saveStepPreview").toPlainText()
        assert dialog.save()
        assert [s.name for s in load(target).steps] == ["divide", "echo"]
        snapshots = (tmp_path / "demo.collection.snapshots.json").read_text()
        assert '"hello"' in snapshots or "hello" in snapshots
        assert rec.outcome == "ok" and rec2.outcome == "ok"
        # the tab shows the collection the dialog wrote; running it passes
        tabs = find(window, QTabWidget, "serverTabs")
        tabs.setCurrentWidget(window.collections.pane)
        assert [s[1] for s in steps_of(window)] == ["divide", "echo"]
        await run_and_wait(window, "collectionRunAll")
        assert [s[0] for s in steps_of(window)] == ["✓", "✓"]
        assert find(window, QLabel, "collectionSummary").text().startswith("2 passed, 0 failed")
        await shot(window, "collections-tab-passed")


async def test_a_failing_step_shows_expected_and_what_came_and_edits_keep_the_comments(open_window, tmp_path):
    path = tmp_path / "by-hand.yaml"
    path.write_text(COMMENTED)
    async with open_window("dark") as window:
        await demo(window)
        assert window.collections.open_path(path)
        pane = window.collections.pane
        assert [s[1:] for s in steps_of(window)] == [("a quarter", "call divide"), ("echo", "call echo"),
                                                     ("welcome", "read demo://docs/welcome.txt")]
        # run the selected step alone
        select_step(window, "echo")
        await run_and_wait(window, "collectionRunStep")
        assert [s[0] for s in steps_of(window)] == ["", "✓", ""]
        # make the first one fail: its expectation edited in the YAML editor (a wrong text)
        select_step(window, "a quarter")
        pane.tabs.setCurrentWidget(pane.expect)
        editor = find(window, QPlainTextEdit, "collectionExpectEditor")
        text = editor.toPlainText()
        assert "# as text" in text and "isError: false" in text
        editor.setPlainText(text.replace('"0.25"', '"0.3"'))
        # a problem is named with its line and column in the editor's own text, and nothing changes
        editor.setPlainText(editor.toPlainText() + "maxMs: soon\n")
        assert not pane.expect.apply()
        problems = find(window, QLabel, "collectionExpectProblems").text()
        assert problems.startswith("line 3, column 8: maxMs is a number of milliseconds"), problems
        editor.setPlainText(editor.toPlainText().replace("maxMs: soon\n", ""))
        assert pane.expect.apply()
        assert "not saved" in find(window, QLabel, "collectionTitle").text()
        await run_and_wait(window, "collectionRunAll")
        assert [s[0] for s in steps_of(window)] == ["✗", "✓", "✓"]
        assert find(window, QLabel, "collectionSummary").text().startswith("2 passed, 1 failed")
        select_step(window, "a quarter")
        pane.tabs.setCurrentWidget(pane.verdict)
        misses = find(window, QTreeWidget, "collectionMisses")
        row = misses.topLevelItem(0)
        assert (row.text(0), row.text(1)) == ("text contains", '"0.3"') and "0.25" in row.text(2)
        expected = find(window, QPlainTextEdit, "collectionSidesA").toPlainText()
        came = find(window, QPlainTextEdit, "collectionSidesB").toPlainText()
        assert '"contains": "0.3"' in expected and "0.25" in came
        assert find(window, QLabel, "collectionVerdictSummary").text().startswith("✗ Failed")
        await shot(window, "collections-tab-failed")
        # the arguments in the generated form: b becomes 5
        pane.tabs.setCurrentWidget(pane.arguments)
        form = pane.arguments.form
        assert form is not None and form.value() == {"a": 1, "b": 4}
        form.set_value({"a": 1, "b": 5})
        assert pane.arguments.apply()
        await shot(window, "collections-tab-arguments")
        assert pane.save()
        saved = path.read_text()
        expected_text = COMMENTED.replace('{a: 1, b: 4}   # one over four', '{a: 1, b: 5}   # one over four') \
            .replace('text: {contains: "0.25"}   # as text', 'text: {contains: "0.3"}   # as text')
        assert saved == expected_text, saved
        assert [s.arguments for s in load(path).steps][0] == {"a": 1, "b": 5}
        assert not list(tmp_path.glob("*.part"))


async def test_files_that_cannot_be_run_are_named_with_each_problem(open_window, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nsteps:\n  - name: a\n    cal: echo\n  - name: b\n    call: echo\n    expect:\n"
                   "      text: {matches: '('}\n")
    async with open_window() as window:
        await demo(window)
        pane = window.collections.pane
        assert not window.collections.open_path(bad)
        text = find(window, QPlainTextEdit, "collectionProblems").toPlainText()
        assert text.startswith(f"{bad} cannot be run until it is fixed:\n\n"), text
        assert "\nbad.yaml:4:5: unknown key 'cal' in step 1 (did you mean 'call'?)\n" in text, text
        assert "\nbad.yaml:8:23: the regular expression does not compile" in text, text
        assert "\nbad.yaml:3:5: a has no target" in text, text  # 'cal' is no target: said too
        assert find(window, QLabel, "collectionTitle").text() == "bad.yaml · 3 problems"
        assert not find(window, QPushButton, "collectionRunAll").isEnabled()
        await shot(window, "collections-tab-problems")
        # fixed on disk, Reload reads it
        bad.write_text("name: x\nsteps:\n  - name: a\n    call: echo\n    arguments: {message: hi}\n")
        assert pane.reload()
        assert [s[1] for s in steps_of(window)] == ["a"]
        # someone else changes the file while it is open: Save does not write over it unasked
        select_step(window, "a")
        pane.tabs.setCurrentWidget(pane.expect)
        find(window, QPlainTextEdit, "collectionExpectEditor").setPlainText("isError: false\n")
        assert pane.expect.apply()
        bad.write_text(bad.read_text() + "# theirs\n")
        os.utime(bad, ns=(1, 1))
        assert not pane.save()
        assert "changed on disk" in find(window, QLabel, "collectionMessage").text()
        assert find(window, QPushButton, "collectionSave").text() == "Save over it"
        assert pane.save(overwrite=True)
        assert "isError: false" in bad.read_text()


async def test_the_collections_tab_without_a_connected_server_says_so(open_window, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(COMMENTED)
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()), mode="legacy", connect=False)
        assert window.collections.open_path(path)
        assert not find(window, QPushButton, "collectionRunAll").isEnabled()
        assert "Connect the server first" in find(window, QLabel, "collectionSummary").text()
        # the tool is not listed: its arguments are YAML text
        select_step(window, "a quarter")
        pane = window.collections.pane
        assert pane.arguments.form is None
        assert "a: 1" in find(window, QPlainTextEdit, "collectionArgumentsText").toPlainText()
        window.tabs.setCurrentWidget(pane)
        await shot(window, "collections-tab-idle")
        assert conn.session.status.value != "connected"
        for w in QApplication.topLevelWidgets():
            if isinstance(w, QDialog) and w.isVisible():
                w.reject()



RUNNING = textwrap.dedent("""\
    name: more
    steps:
      - name: the user answers
        call: ask_user
        elicit: {accept: {name: Ada, colour: blue}}
        expect: {text: {contains: Ada}}
      - name: stable
        call: divide
        arguments: {a: 10, b: 4}
        expect: {snapshot: true}
      - name: greeting
        prompt: greeting
        arguments: {name: Ada}
        expect: {messages: {count: 2}}
      - name: slow
        call: long_task
        arguments: {steps: 50, step_ms: 200}
      - name: after the slow one
        call: echo
        arguments: {message: hi}
    """)


async def test_a_run_answers_as_its_step_says_keeps_snapshots_and_stops(open_window, tmp_path):
    import json

    path = tmp_path / "more.yaml"
    path.write_text(RUNNING)
    (tmp_path / "more.snapshots.json").write_text(json.dumps({"stable": {"content": [
        {"type": "text", "text": "10 / 4 = 2.4"}]}}))
    async with open_window() as window:
        await demo(window)
        assert window.collections.open_path(path)
        pane = window.collections.pane
        # the prompt's arguments in a form made from its declared arguments (once the prompts are listed)
        select_step(window, "greeting")
        pane.tabs.setCurrentWidget(pane.arguments)
        await until(lambda: pane.arguments.form is not None, 10, "the prompt's form")
        assert pane.arguments.form.value() == {"name": "Ada"}
        find(window, QPushButton, "collectionArgumentsAsText").click()
        assert pane.arguments.form is None
        assert find(window, QPlainTextEdit, "collectionArgumentsText").toPlainText() == "name: Ada\n"
        # run everything; stop once the slow step is under way
        find(window, QPushButton, "collectionRunAll").click()
        await until(lambda: "greeting" in pane.results, 30, "the first three steps")
        await until(lambda: steps_of(window)[3][0] == "…", 10, "the slow step to be marked running")
        assert find(window, QPushButton, "collectionStop").isEnabled()
        await shot(window, "collections-tab-running")
        find(window, QPushButton, "collectionStop").click()
        await until(lambda: pane.job is None, 10, "the run to stop")
        marks = [s[0] for s in steps_of(window)]
        assert marks == ["✓", "✗", "✓", "·", "·"], marks
        assert find(window, QLabel, "collectionSummary").text() == "Stopped after 3 of 5 steps."
        assert window.answers.scripts == {}  # the step's answers are gone with the run
        # the drifted snapshot: both sides, the difference marked; accepted, it is the stored answer now
        select_step(window, "stable")
        pane.tabs.setCurrentWidget(pane.verdict)
        assert find(window, QLabel, "collectionSidesATitle").text() == "Stored answer (snapshot)"
        assert pane.verdict.sides.a.marked == ["/content/0/text"]
        accept = find(window, QPushButton, "collectionAcceptSnapshot")
        assert accept.isVisibleTo(pane)
        accept.click()
        stored = json.loads((tmp_path / "more.snapshots.json").read_text())
        assert stored["stable"] == {"content": [{"type": "text", "text": "10 / 4 = 2.5"}]}
        assert steps_of(window)[1][0] == "✓"
        # run the snapshot step again: it matches
        await run_and_wait(window, "collectionRunStep")
        assert steps_of(window)[1][0] == "✓" and pane.results["stable"].snapshot == "matched"


async def test_a_secret_argument_is_written_as_an_environment_reference(open_window, tmp_path):
    from inspector.session import OK, CallRecord

    target = tmp_path / "s.yaml"
    async with open_window() as window:
        conn = await demo(window)
        rec = CallRecord(1, conn.server_id, "login", {"user": "ada", "password": "hunter2"},
                         tool_def={"name": "login", "inputSchema": {"type": "object", "properties": {
                             "user": {"type": "string"}, "password": {"type": "string", "format": "password"}}}})
        rec.outcome, rec.result, rec.ended = OK, {"content": [{"type": "text", "text": "welcome ada"}]}, rec.started
        dialog = window.collections.save_call(rec)
        dialog.file.setCurrentText(str(target))
        assert find(dialog, QLabel, "saveSecretNote").text() == (
            "Secrets are not written: ${LOGIN_PASSWORD} will be read from the environment.")
        assert dialog.save()
        text = target.read_text()
        assert "hunter2" not in text and "arguments: {user: ada, password: '${LOGIN_PASSWORD}'}\n" in text, text
        # a collection that cannot take a step says why, and the dialog stays
        broken = tmp_path / "broken.yaml"
        broken.write_text("name: b\nsteps: []\nextra: 1\n")
        rec2 = CallRecord(2, conn.server_id, "echo", {"message": "x"})
        rec2.outcome, rec2.result, rec2.ended = OK, {"content": []}, rec2.started
        dialog = window.collections.save_call(rec2)
        dialog.file.setCurrentText(str(broken))
        assert not dialog.save()
        error = find(dialog, QLabel, "saveCollectionError").text()
        assert error.startswith("broken.yaml cannot take a step until it is fixed: 3:1: unknown key 'extra'"), error
        assert broken.read_text() == "name: b\nsteps: []\nextra: 1\n"
        dialog.reject()


async def test_with_no_collection_open_the_tab_says_so_whole_with_an_action(open_window):
    """The empty text was cut at "A collection keeps calls with" (a wrapped label laid out at its hint)."""
    async with open_window() as window:
        await demo(window)
        window.resize(1366, 768)
        window.tabs.setCurrentWidget(window.collections.pane)
        words = find(window, QLabel, "collectionEmptyText")
        await until(lambda: words.isVisible(), 5, "the Collections tab")
        await asyncio.sleep(0.05)
        assert words.text().endswith("runs the same file in CI.")
        assert words.heightForWidth(words.width()) <= words.height(), (words.width(), words.height())
        assert find(window, QPushButton, "collectionEmptyOpen").isVisible()
