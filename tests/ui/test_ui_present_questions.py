"""Presentation mode: a question the server asks during a presented call is asked on the stage, in words — a form
to fill (elicitation), a reply to write (sampling), folders to share (roots), a page to open (URL elicitation) —
never in the developer's dialog with its JSON switch; leaving the mode with a question on the stage gives it back
to that dialog. Against the demo server (its ask_user) and the seed tools (an SDK server)."""

from __future__ import annotations

from calling import click, dialog
from PySide6.QtWidgets import QAbstractButton, QComboBox, QLabel, QLineEdit, QPlainTextEdit, QWidget
from support import PEERS, PY
from test_ui_present import SEED_NAMES, assert_plain, present, visible_texts
from uikit import demo_cmd, find, shot, until

from inspector.ui.calls.questions import HANDED_BACK
from inspector.ui.present.question import QuestionCard

SEED = [PY, str(PEERS / "seed_server.py")]
DEMO_NAMES = ("ask_user", "toggle_bonus_tool", "create_event")


async def question(view, timeout: float = 20):
    await until(lambda: view.question is not None and view.question.isVisible(), timeout, "the question")
    return view.question


async def test_a_form_question_on_the_stage(open_window):
    async with open_window() as window:
        conn, view = await present(window, demo_cmd(), "demo")
        assert view.open_tool("ask_user")
        rec = view.run()
        card = await question(view)
        assert view.stack.currentIndex() == 2 and not view.back.isVisible()
        assert view.heading.text() == "“Ask the user” needs something from you"
        assert "favourite colour" in find(card, QLabel, "presentQuestionText").text()
        # the friendly form: labels from titles, the enum as a picker, no JSON switch
        name = find(card, QLineEdit, "field:/name")
        assert find(card, QComboBox, "field:/colour").count() >= 6
        text = assert_plain(window, names=DEMO_NAMES)
        assert "Your name" in text and "Favourite colour" in text and "JSON" not in text
        assert not [w for w in window.findChildren(QWidget, "elicitationDialog") if w.isVisible()]
        # the clicker does not answer it
        view.forward()
        assert view.question is card and rec.running
        # Send with the name missing: said in words, nothing sent
        find(card, QAbstractButton, "presentQuestionSend").click()
        assert find(card, QLabel, "presentQuestionNote").isVisible()
        assert find(card, QLabel, "problem:/name").text() == "⚠ Please enter your name."
        assert rec.running
        assert_plain(window, names=DEMO_NAMES)
        for look in ("dark", "high-contrast", "light"):
            view.set_look(look)
            await shot(window, f"present-question-{look}")
        name.setText("Ada")
        find(card, QAbstractButton, "presentQuestionSend").click()
        await until(lambda: view.card is not None, 20, "the answer")
        assert "Nice to meet you, Ada!" in view.card.text()
        assert view.stack.currentIndex() == 1 and view.back.isVisible()
        assert view.heading.text() == "Ask the user"
        assert_plain(window, names=DEMO_NAMES)
        # No thanks: the server hears a decline
        view.run()
        card = await question(view)
        find(card, QAbstractButton, "presentQuestionDecline").click()
        await until(lambda: view.card is not None, 20, "the answer")
        assert "You declined to answer" in view.card.text()
        assert view.rec.rounds[-1].response == {"action": "decline"}


async def test_leaving_gives_the_question_back_to_its_dialog(open_window):
    async with open_window() as window:
        conn, view = await present(window, demo_cmd(), "demo")
        assert view.open_tool("ask_user")
        rec = view.run()
        await question(view)
        window.present.leave()
        assert window.answers.stage is None
        await until(lambda: view.question is None, 5, "the stage's question gone")
        dlg = await dialog(window, "elicitationDialog")
        dlg.form.set_value({"name": "Grace"})
        click(dlg, "elicitAccept")
        await until(lambda: not rec.running, 20, "the call")
        assert "Nice to meet you, Grace!" in str(rec.result)
        # and back on the stage, the next question is asked there again
        window.present.enter()
        assert window.answers.stage is view
        view.open_tool("ask_user")
        view.run()
        card = await question(view)
        find(card, QLineEdit, "field:/name").setText("Linus")
        find(card, QAbstractButton, "presentQuestionSend").click()
        await until(lambda: view.card is not None, 20, "the answer")
        assert "Linus" in view.card.text()


async def test_a_reply_and_folders_asked_on_the_stage(open_window, tmp_path):
    async with open_window() as window:
        conn, view = await present(window, SEED, "seed")
        assert view.open_tool("write_poem")
        find(view, QLineEdit, "field:/subject").setText("the sea")
        view.run()
        card = await question(view)
        said = "\n".join(visible_texts(card))
        assert "It asks for a written reply to this:" in said
        assert "How to answer: You are a poet. Answer with four short lines." in said
        assert "Asked: Write a poem about the sea." in said
        assert_plain(window, names=SEED_NAMES)
        await shot(window, "present-question-reply-light")
        find(card, QPlainTextEdit, "presentQuestionReply").setPlainText("Waves come in,\nwaves go out.")
        find(card, QAbstractButton, "presentQuestionSend").click()
        await until(lambda: view.card is not None, 20, "the poem")
        assert "A poem about the sea:" in view.card.text() and "waves go out." in view.card.text()
        assert_plain(window, names=SEED_NAMES)
        # the folders, when the preferences say to ask each time
        window.preferences.roots_policy = "ask"
        shared = tmp_path / "Holiday photos"
        shared.mkdir()
        await conn.session.set_roots([{"uri": shared.as_uri(), "name": "Photos"}])
        assert view.open_tool("count_folders")
        view.run()
        card = await question(view)
        said = "\n".join(visible_texts(card))
        assert "It would like to work in these folders:" in said and str(shared) in said
        assert_plain(window, names=SEED_NAMES)
        find(card, QAbstractButton, "presentQuestionSend").click()
        await until(lambda: view.card is not None, 20, "the count")
        assert "You shared 1 folder." in view.card.text()


async def test_a_page_to_open_is_said_by_its_host(qapp):
    card = QuestionCard("url", {"mode": "url", "message": "Sign in to your calendar.",
                                "url": "https://calendar.example.com:8443/connect?id=7"})
    opened: list[str] = []
    card.open_page = lambda: opened.append(card.url)  # (never a real browser in a test)
    assert find(card, QLabel, "presentQuestionHost").text() == "calendar.example.com:8443"
    assert "https://calendar.example.com:8443/connect?id=7" in find(card, QLabel, "presentQuestionAddress").text()
    assert find(card, QAbstractButton, "presentQuestionOpen").isEnabled()
    find(card, QAbstractButton, "presentQuestionSend").click()
    assert card.future.result() == {"action": "accept"}
    # not a web page: said, and it cannot be opened
    odd = QuestionCard("url", {"mode": "url", "message": "Run this.", "url": "javascript:alert(1)"})
    assert not find(odd, QAbstractButton, "presentQuestionOpen").isEnabled()
    assert find(odd, QLabel, "presentQuestionNotWeb").text().startswith("⚠ This isn't a web page")
    find(odd, QAbstractButton, "presentQuestionDecline").click()
    assert odd.future.result() == {"action": "decline"}
    # a reply not given, folders not shared, a question handed back
    reply = QuestionCard("reply", {"messages": [{"role": "user", "content": {"type": "image", "data": "AAAA"}}]})
    assert [w.text() for w in reply.findChildren(QLabel, "presentQuestionMessage")] == ["Asked: (a picture)"]
    find(reply, QAbstractButton, "presentQuestionDecline").click()
    assert reply.future.result() is None
    folders = QuestionCard("folders", {}, folders=[])
    assert any("none are shared" in w.text() for w in folders.findChildren(QLabel))
    find(folders, QAbstractButton, "presentQuestionDecline").click()
    assert folders.future.result() is False
    late = QuestionCard("form", {"message": "?", "requestedSchema": {"type": "object", "properties": {}}})
    late.settle(HANDED_BACK)
    late.settle({"action": "accept"})  # the first answer stands
    assert late.future.result() is HANDED_BACK
    for c in (card, odd, reply, folders, late):
        c.deleteLater()
