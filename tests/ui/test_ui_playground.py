"""The Playground and Tool choice tabs in the real window, against the scripted model endpoints of
tests/model_peers.py (loopback only) with the demo server and server-everything: a request in plain words
that makes the model call a tool (the call checked, run as a manual call, its result rendered by the tool
panel's ResultView), a destructive tool that asks first, every bad answer said in the chat with the
conversation still usable, Stop, sampling answered by the model, token counts, the exchange in the
traffic pane as `model` frames with the key masked; Tool choice's table of picks and an overridden
description; Preferences → Models with its key in the secret store. Screenshots for docs/playground.md."""

from __future__ import annotations

import asyncio

import pytest
import shiboken6
from calling import click, connected
from model_peers import AnthropicPeer, OpenAIPeer
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QComboBox, QDialog, QLabel, QPlainTextEdit, QPushButton
from uikit import demo_cmd, everything_cmd, find, shot, until

from inspector.config import ServerSpec
from inspector.model import ModelConnection
from inspector.model.types import key_name
from inspector.secrets import MASK

KEY = "sk-playground-secret-9"


@pytest.fixture(scope="module")
def peers():
    with OpenAIPeer(key=KEY) as openai_peer, AnthropicPeer(key=KEY) as anthropic_peer:
        yield openai_peer, anthropic_peer


def use_model(window, peer, timeout: float = 5.0) -> ModelConnection:
    connection = ModelConnection("scripted", peer.kind, peer.url, "scripted-small", timeout)
    window.playground.book.save([connection], {peer.url: KEY})
    return connection


async def say(window, text: str, settle: str | None = None) -> None:
    view = window.playground.view
    view.input.setPlainText(text)
    find(window, QPushButton, "playgroundSend").click()
    await until(lambda: view.job is not None and view.job.done(), 20, f"the turn for {text!r}")
    await asyncio.sleep(0.05)


def dialog(name: str):
    for w in QApplication.topLevelWidgets():
        if isinstance(w, QDialog) and shiboken6.isValid(w) and w.objectName() == name and w.isVisible():
            return w
    return None


async def docs_shot(window, name: str) -> None:
    from PySide6.QtWidgets import QDockWidget

    docks = [d for d in window.findChildren(QDockWidget) if d.isVisible()]
    for d in docks:
        d.hide()
    window.resize(1280, 860)
    await shot(window, name)
    for d in docks:
        d.show()


async def test_the_playground_runs_the_models_calls_as_manual_calls_and_survives_bad_answers(open_window, peers):
    peer = peers[0]
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()), mode="legacy")
        await connected(conn)
        use_model(window, peer)
        view = window.playground.view
        window.playground.show(view)
        assert find(window, QComboBox, "playgroundModel").currentText() == "scripted · scripted-small"
        servers = view.servers
        assert servers.count() == 1 and servers.item(0).checkState() == Qt.Checked
        assert "weather" in view.offered.text()

        await say(window, "What's the weather in Paris?")
        card = view.transcript.cards[-1]
        assert card.result is not None and card.result.record.tool == "weather"
        assert card.result.objectName() == "playgroundResult" and card.result.isVisible()
        assert card.result.record.arguments == {"city": "Paris"}
        assert window.calls.last(conn.server_id).tool == "weather"  # in the tool's history, like a manual call
        await docs_shot(window, "playground")
        texts = view.transcript.texts()
        assert any(t.startswith("The tool answered: {") for t in texts)
        assert any(t.startswith("tokens: 42 in · 7 out") for t in texts)
        assert "This chat: 84 tokens in, 14 out" in view.tokens.text()

        # a destructive tool asks first, as a manual call does; no is an answer the model hears
        view.input.setPlainText("delete alpha")
        find(window, QPushButton, "playgroundSend").click()
        confirm = await until(lambda: dialog("confirmDialog"), 10, "the confirmation")
        assert '"id": "alpha"' in confirm.findChild(QPlainTextEdit, "confirmArguments").toPlainText()
        click(confirm, "confirmCancel")
        await until(lambda: view.job.done(), 10, "the turn")
        assert view.transcript.cards[-1].status.text() == "not called: you declined the call in the confirmation"
        view.input.setPlainText("delete alpha")
        find(window, QPushButton, "playgroundSend").click()
        click(await until(lambda: dialog("confirmDialog"), 10, "the confirmation"), "confirmCall")
        await until(lambda: view.job.done(), 10, "the turn")
        assert view.transcript.cards[-1].result.record.outcome == "ok"

        # bad answers: each said in the chat, and the conversation goes on
        await say(window, "call an unknown tool")
        assert "'launch_rockets', which is not one of the tools it was offered" in \
            view.transcript.cards[-1].problems.text()
        await say(window, "broken json please")
        assert "the arguments are not JSON" in view.transcript.cards[-1].problems.text()
        await say(window, "use bad arguments")
        assert "/units" in view.transcript.cards[-1].problems.text()  # shown, and the server judged it
        await say(window, "garbage")
        assert "sent something that could not be read" in view.transcript.errors[-1].text()
        await say(window, "server error")
        assert "answered HTTP 500" in view.transcript.errors[-1].text()
        use_model(window, peer, timeout=0.5)
        await say(window, "slow")
        assert "did not answer within 0.5 s" in view.transcript.errors[-1].text()
        use_model(window, peer)
        view.input.setPlainText("slow")
        find(window, QPushButton, "playgroundSend").click()
        await until(lambda: view.stop_button.isEnabled(), 5, "Stop to be offered")
        await until(lambda: peer.requests[-1]["messages"][-1]["content"] == "slow", 5, "the request to be sent")
        find(window, QPushButton, "playgroundStop").click()
        await until(lambda: view.job.done(), 5, "the stop")
        assert "Stopped." in view.transcript.texts(), view.transcript.texts()[-5:]
        await say(window, "hello")
        assert view.transcript.replies[-1].text().startswith("Hello! I am a scripted model")
        window.playground.book.save([ModelConnection("scripted", "openai", peer.url, "scripted-small", 5)],
                                    {peer.url: "sk-wrong"})
        await say(window, "hello")
        assert "refused the API key (HTTP 401)" in view.transcript.errors[-1].text()
        assert "sk-wrong" not in " ".join(view.transcript.texts())
        await docs_shot(window, "playground-problems")

        # the exchange is in the traffic pane, its own kind, the key masked
        store = window.store
        rows = [store.record(n) for n in range(len(store)) if store.record(n).kind == "model"]
        assert rows and {r.server_id for r in rows} == {"model:scripted"}
        assert {r.direction for r in rows} == {"to-model", "from-model"}
        raw = b"".join(store.raw(r.n) for r in rows).decode("utf-8", "replace") + repr([r.meta for r in rows])
        assert KEY not in raw and f"Bearer {MASK}" in raw
        kind = find(window, QComboBox, "trafficKind")
        kind.setCurrentIndex(kind.findText("Model"))
        pane = window.traffic.pane
        await until(lambda: pane.model.rowCount() == len(rows), 10, "the model rows alone")
        pane.select_record(rows[0].n)
        header = find(window, QLabel, "trafficDetailHeader").text()
        assert header.startswith(f"#{rows[0].n} · → model · /v1/chat/completions") and "model:scripted" in header
        window.resize(1400, 1000)
        await shot(window, "playground-traffic")
        kind.setCurrentIndex(0)
        # the window closing with a turn in flight ends it, and nothing is left running
        use_model(window, peer)
        view.input.setPlainText("slow")
        find(window, QPushButton, "playgroundSend").click()
        asked = len(peer.requests)
        await until(lambda: len(peer.requests) > asked, 5, "the request to be sent")
    assert view.job.done()


async def test_sampling_answered_by_the_model_two_servers_and_the_anthropic_api(open_window, peers):
    peer = peers[1]
    async with open_window("dark") as window:
        conn = window.add_server(ServerSpec(name="everything", command=everything_cmd()), mode="legacy")
        await connected(conn)
        use_model(window, peer)
        view = window.playground.view
        window.playground.show(view)
        find(window, type(view.sampling), "playgroundSampling").setChecked(True)
        await say(window, "try sampling")
        card = view.transcript.cards[-1]
        assert card.result is not None and card.result.record.tool == "trigger-sampling-request"
        assert [r.method for r in card.result.record.rounds] == ["sampling/createMessage"]
        assert any("answered: Roses are red, servers reply." in t for t in view.transcript.texts())
        assert "Roses are red" in view.transcript.replies[-1].text()
        assert dialog("samplingDialog") is None
        # two servers offered at once: a name both have is offered twice, the second under its server's name
        demo = window.add_server(ServerSpec(name="demo", command=demo_cmd()), mode="legacy")
        await connected(demo)
        await until(lambda: view.servers.count() == 2 and "demo__echo" in {t.name for t in view.tools()}, 10,
                    "both servers' tools")
        await say(window, "please echo this")
        offered = {t["name"] for t in peer.requests[-1]["tools"]}
        assert {"echo", "demo__echo", "weather", "trigger-sampling-request"} <= offered
        assert view.transcript.cards[-1].result.record.server_id == conn.server_id  # echo: everything's
        assert "Tool call: echo on everything" in view.transcript.texts()
        await docs_shot(window, "playground-sampling-dark")


async def test_tool_choice_counts_picks_and_an_overridden_description_reaches_only_the_model(open_window, peers,
                                                                                             tmp_path):
    peer = peers[0]
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()), mode="legacy")
        await connected(conn)
        use_model(window, peer)
        choice = window.playground.choice
        window.playground.show(choice)
        await until(lambda: choice.tool.count() > 5, 5, "the demo's tools in the description picker")
        choice.requests.setRowCount(0)
        for text, expected in (("What's the weather in Paris?", "weather"), ("Delete user 42", "none"),
                               ("Say hello", "none"), ("hesitate between two", "weather")):
            choice.add_request(text, expected)
        choice.runs.setValue(2)
        find(window, QPushButton, "toolChoiceRun").click()
        await until(lambda: choice.job is not None and choice.job.done(), 20, "the run")
        table = choice.table
        rows = [[table.item(r, c).text() for c in range(5)] for r in range(table.rowCount())]
        assert [r[2] for r in rows] == ["weather ×2", "delete_item ×2", "none ×2", "weather ×1, none ×1"]
        assert [r[4].split(" (")[0] for r in rows] == ["✓ right", "✗ wrong", "✓ right", "? hesitant"]
        assert rows[0][3] == '{"city": "Paris"}'
        assert table.item(3, 2).toolTip().splitlines()[1] == "2. no tool; it said: Which city do you mean?"
        assert "2 of 4 requests chose wrong or hesitated" in choice.status.text()
        choice.requests.setRowCount(0)
        choice.load_cases("demo")  # kept by the server's name, for the next time it is selected
        assert [c.request for c in choice.cases()][:2] == ["What's the weather in Paris?", "Delete user 42"]
        # a local description: offered to the model, never sent to the server
        choice.tool.setCurrentIndex(choice.tool.findText("weather"))
        choice.description.setPlainText("Only for weather on the Moon.")
        find(window, QPushButton, "toolChoiceOverride").click()
        find(window, QPushButton, "toolChoiceRun").click()
        await until(lambda: choice.job.done(), 20, "the second run")
        offered = {t["function"]["name"]: t["function"]["description"] for t in peer.requests[-1]["tools"]}
        assert offered["weather"] == "Only for weather on the Moon."
        assert conn.session.tools.items[[t["name"] for t in conn.session.tools.items].index("weather")][
            "description"].startswith("Reports invented")
        assert "ask: \"Delete user 42\"" in choice.steps_yaml() and "expect: {tool: \"none\"}" in choice.steps_yaml()
        await docs_shot(window, "tool-choice")
        # the same requests as a collection's ask steps, run in the Collections tab with the Playground's model
        path = tmp_path / "ask.yaml"
        path.write_text(choice.steps_yaml())
        assert window.collections.open_path(path)
        pane = window.collections.pane
        find(window, QPushButton, "collectionRunAll").click()
        await until(lambda: pane.job is None or pane.job.done(), 20, "the collection's run")
        statuses = {name: r.status for name, r in pane.results.items()}
        assert [n for n, status in statuses.items() if status == "failed"] == ["ask 2: Delete user 42"], statuses
        assert len(statuses) == 4 and "delete_item" in pane.results["ask 2: Delete user 42"].messages()[0]
        # an endpoint that refuses the key is said, and the view stays usable
        window.playground.book.save([ModelConnection("scripted", "openai", peer.url, "scripted-small", 5)],
                                    {peer.url: "sk-wrong"})
        find(window, QPushButton, "toolChoiceRun").click()
        await until(lambda: choice.job.done(), 20, "the refused run")
        assert "refused the API key (HTTP 401)" in choice.status.text() and choice.run_button.isEnabled()


async def test_preferences_keep_model_connections_and_their_keys_apart(open_window, peers, settings):
    peer = peers[0]
    async with open_window() as window:
        view = window.playground.view  # nothing is sent anywhere before a model is added
        assert view.model.currentText().startswith("No model yet") and view.model.connection() is None
        view.input.setPlainText("hello")
        before = len(peer.requests)
        view.send()
        assert "No model to ask: add a model connection in File → Preferences… → Models" in \
            view.transcript.errors[-1].text()
        assert len(peer.requests) == before and view.input.toPlainText() == "hello"  # kept, to send later
        window.act_preferences.trigger()
        prefs = await until(lambda: dialog("preferencesDialog"), 5, "the preferences")
        editor = prefs.models
        prefs.tabs.setCurrentWidget(editor)
        find(prefs, QPushButton, "prefModelAdd").click()
        editor.name.setText("ollama-ish")
        editor.name.textEdited.emit("ollama-ish")
        editor.url.setText(peer.url)
        editor.url.textEdited.emit(peer.url)
        editor.key.setText(KEY)
        editor.key.textEdited.emit(KEY)
        find(prefs, QPushButton, "prefModelListModels").click()
        await until(lambda: editor.model.count() == 2, 10, "the endpoint's models")
        assert "2 models at" in editor.note.text()
        editor.model.setCurrentIndex(1)
        await shot(prefs, "preferences-models")
        find(prefs, QPushButton, "prefModelAdd").click()  # a second one, not usable as it is
        editor.url.setText("localhost:1234")
        editor.url.textEdited.emit("localhost:1234")
        prefs.accept()
        assert prefs.isVisible() and "the base URL must start with http:// or https://" in editor.note.text()
        find(prefs, QPushButton, "prefModelRemove").click()
        assert editor.list.count() == 1
        prefs.accept()
        book = window.playground.book
        assert [c.model for c in book.connections] == ["scripted-small"]
        assert KEY not in str(settings.value("models/connections"))
        assert window.catalog.secrets.get(book.connections[0].key_name) == KEY
        assert find(window, QComboBox, "playgroundModel").currentText() == "ollama-ish · scripted-small"
        window.act_preferences.trigger()  # removing the connection forgets its key
        again = await until(lambda: dialog("preferencesDialog"), 5, "the preferences again")
        find(again, QPushButton, "prefModelRemove").click()
        again.accept()
        assert book.connections == [] and window.catalog.secrets.get(key_name(peer.url)) is None
