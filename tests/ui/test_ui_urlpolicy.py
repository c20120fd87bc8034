"""The URL policy in the window: a server (tests/hostile/auth_server.py), an elicitation, a presented question
or an MCP App (tests/hostile/app_server.py `open-links`) naming an address no browser should get. Nothing reaches
the opener (replaced by recorders), the refusal is said in the policy's sentence, and a look-alike host
(`gооgle.com` in Cyrillic o's) is shown as the browser will show it, `xn--ggle-55da.com`, before anything
opens, and only after the user chooses to."""

from __future__ import annotations

import http_peers
import pytest
from calling import call
from http_peers import REFUSED
from PySide6.QtWidgets import QAbstractButton, QDialogButtonBox, QLabel, QLineEdit, QPushButton, QWidget
from test_ui_apps import ready_block, top_dialog
from test_ui_apps_hostile import app_log, hostile, refused
from uikit import find, shot, until

from inspector.auth import MemoryStore
from inspector.config import ServerSpec
from inspector.session import Status
from inspector.ui.apps.consent import LinkDialog
from inspector.ui.calls.questions import ElicitationDialog
from inspector.ui.present.question import QuestionCard

pytestmark = pytest.mark.timeout(60)
LOOKALIKE = "https://g\u043e\u043egle.com"  # the o's are Cyrillic
PUNY = "xn--ggle-55da.com"
ENDING = "only https (or http to this machine) is ever opened"
NOT_OPENED = [("http://evil.example/x", "an http: address on another machine (evil.example), unencrypted"),
              ("https://bank.example@evil.example/", "an https: address with a user name before its host"),
              ("file://host/share", "a file: address"), ("vscode://vscode.git/clone?url=x", "a vscode: address")]


@pytest.fixture
def opened(monkeypatch):
    """The system opener, replaced by a recorder (everything the window opens goes through it)."""
    got: list[str] = []
    monkeypatch.setattr("inspector.ui.base.opening.system_open", lambda url: got.append(url) or True)
    return got


def texts(widget: QWidget) -> str:
    return "\n".join([w.text() for w in widget.findChildren(QLabel)] + [w.text() for w in
                                                                         widget.findChildren(QLineEdit)])


@pytest.mark.parametrize("case", list(REFUSED))
async def test_signing_in_refuses_a_planted_address_and_opens_nothing(open_window, opened, case):
    with http_peers.hostile_auth(case) as url:
        async with open_window() as window:
            window.auth.store = MemoryStore()
            browser: list[str] = []
            window.auth.open_url = lambda u: browser.append(u) or True
            conn = window.add_server(ServerSpec(name=f"hostile {case}", url=url))
            window.tabs.setCurrentWidget(window.auth_panel)
            await until(lambda: conn.session.status is Status.ERROR, 20, "the sign-in to be refused")
            sentence = f"the authorization server asked Spyglass to open {REFUSED[case]}; {ENDING}"
            assert sentence in conn.session.reason
            assert sentence in find(window, QLabel, "authSummary").text()
            assert window.auth.dialog_for(conn) is None
            assert browser == [] and opened == []


async def test_signing_in_asks_first_and_shows_a_look_alike_host_as_the_browser_will(open_window, opened):
    with http_peers.hostile_auth("lookalike") as url:
        async with open_window() as window:
            window.auth.store = MemoryStore()
            browser: list[str] = []
            window.auth.open_url = lambda u: browser.append(u) or True
            conn = window.add_server(ServerSpec(name="look-alike", url=url))
            dialog = await until(lambda: window.auth.dialog_for(conn), 20, "the sign-in dialog")
            assert find(dialog, QLabel, "authBrowserHost").text() == PUNY
            assert find(dialog, QLineEdit, "authBrowserUrl").text().startswith(f"https://{PUNY}/authorize?")
            assert "\u043e" not in texts(dialog)
            open_button = find(dialog, QPushButton, "authBrowserOpen")
            cancel = find(dialog, QPushButton, "authBrowserCancel")
            box = open_button.parent()
            assert isinstance(box, QDialogButtonBox) and cancel.parent() is box  # the platform's order
            assert box.buttonRole(open_button) == QDialogButtonBox.AcceptRole
            assert box.buttonRole(cancel) == QDialogButtonBox.RejectRole
            assert browser == [] and opened == [], "opened before the user chose to"
            await shot(dialog, "urlpolicy-sign-in-look-alike")
            open_button.click()
            assert len(browser) == 1 and browser[0].startswith(f"https://{PUNY}/authorize?")
            cancel.click()
            await until(lambda: conn.session.status is Status.ERROR, 10, "the sign-in to be cancelled")
            assert "cancelled" in conn.session.reason


def test_url_elicitation_shows_a_look_alike_as_the_browser_will_and_refuses_what_the_policy_refuses(
        qapp, opened):
    d = ElicitationDialog("srv", {"mode": "url", "message": "Sign in", "url": f"{LOOKALIKE}/login?x=1",
                                  "elicitationId": "e1"})
    assert d.findChild(QLabel, "elicitUrlHost").text() == PUNY
    assert f"https://{PUNY}/login?x=1" in d.findChild(QLabel, "elicitUrl").text()
    assert "\u043e" not in texts(d) and d.findChild(QLabel, "elicitUrlRefused") is None
    assert opened == []
    d.findChild(QPushButton, "elicitOpenUrl").click()
    assert opened == [f"https://{PUNY}/login?x=1"]
    d.deleteLater()
    for url, what in NOT_OPENED:
        bad = ElicitationDialog("srv", {"mode": "url", "message": "x", "url": url})
        button = bad.findChild(QPushButton, "elicitOpenUrl")
        assert not button.isEnabled(), url
        said = bad.findChild(QLabel, "elicitUrlRefused").text()
        assert f"the server asked Spyglass to open {what}" in said and ENDING in said
        bad._open_url()  # even asked directly, nothing opens
        bad.deleteLater()
    assert opened == [f"https://{PUNY}/login?x=1"]


async def test_a_presented_page_to_open_shows_a_look_alike_as_the_browser_will(qapp, opened):
    card = QuestionCard("url", {"mode": "url", "message": "Sign in to your calendar.", "url": f"{LOOKALIKE}/cal"})
    assert find(card, QLabel, "presentQuestionHost").text() == PUNY
    assert f"https://{PUNY}/cal" in find(card, QLabel, "presentQuestionAddress").text()
    assert "\u043e" not in texts(card)
    assert opened == []
    find(card, QAbstractButton, "presentQuestionOpen").click()
    assert opened == [f"https://{PUNY}/cal"]
    card.deleteLater()
    for url, _what in NOT_OPENED:
        odd = QuestionCard("url", {"mode": "url", "message": "Open this.", "url": url})
        assert not find(odd, QAbstractButton, "presentQuestionOpen").isEnabled(), url
        assert find(odd, QLabel, "presentQuestionNotWeb").text().startswith("⚠ This")
        odd.open_page()
        odd.deleteLater()
    assert opened == [f"https://{PUNY}/cal"]


def test_the_apps_link_dialog_shows_a_look_alike_as_the_browser_will(qapp):
    d = LinkDialog(f"{LOOKALIKE}/", "Calendar")
    assert d.findChild(QLabel, "appOpenLinkHost").text() == PUNY
    assert d.findChild(QLineEdit, "appOpenLinkUrl").text() == f"https://{PUNY}/"
    assert d.findChild(QPushButton, "appOpenLinkOpen").isEnabled()
    assert "\u043e" not in texts(d)
    d.deleteLater()
    for url, what in NOT_OPENED:
        bad = LinkDialog(url, "Calendar")
        assert not bad.findChild(QPushButton, "appOpenLinkOpen").isEnabled()
        assert f"the app asked Spyglass to open {what}" in bad.findChild(QLabel, "appOpenLinkRefused").text()
        bad.deleteLater()


async def test_an_app_asking_to_open_links_gets_the_policy(open_window, expect_log):
    expect_log("spyglass.session", "app ui://hostile/")  # each refusal is also a warning in the server's log
    async with open_window() as window:
        links: list[str] = []
        window.apps.opener = lambda url: links.append(url.toString()) or True
        await hostile(window)
        rec = await call(window, "open-links")
        block = await ready_block(window, rec)
        dlg = await top_dialog("appOpenLinkDialog")  # only the look-alike, which https allows, is asked about
        assert dlg.findChild(QWidget, "appOpenLinkHost").text() == PUNY
        assert dlg.findChild(QWidget, "appOpenLinkUrl").text() == f"https://{PUNY}/sign-in"
        dlg.findChild(QPushButton, "appOpenLinkCancel").click()
        log = await app_log(block, "links done")
        for url, what in [("http://evil.example/x", "an http: address on another machine (evil.example)"),
                          ("mailto:someone@example.com", "a mailto: address"),
                          ("https://bank.example@evil.example/", "an https: address with a user name")]:
            assert f"link {url}: refused Link not opened: the app asked Spyglass to open {what}" in log, log
        assert f"link {LOOKALIKE}/sign-in: refused Link opening denied by user" in log
        assert "the app asked Spyglass to open a mailto: address" in refused(block)
        assert links == []
