"""The window's side of authorization, against tests/auth/fake_as.py.

The "browser" is an HTTP client the test drives: it loads the authorization URL
and follows the redirect to Spyglass's one-shot loopback listener, as a browser
would. Tokens live in a MemoryStore here (never the developer's keyring).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path

import httpx
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QLabel, QLineEdit, QMessageBox, QPlainTextEdit, QPushButton, QTreeWidget
from uikit import find, shot, until

from inspector.auth import MemoryStore
from inspector.auth.flow import STEP_ASM, STEP_AUTHORIZATION, STEP_PRM, STEP_REGISTRATION, STEP_TOKEN
from inspector.config import ServerSpec
from inspector.session import Status
from inspector.ui.auth.session import client_key
from inspector.ui.servers.add_dialog import AddServerDialog, describe_spec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "auth"))
import fake_as

pytestmark = pytest.mark.timeout(60)
FLOW = [STEP_PRM, STEP_ASM, STEP_REGISTRATION, STEP_AUTHORIZATION, STEP_TOKEN]


async def browser(url: str) -> bool:
    """What the system browser does: load the page and follow the redirect to the listener."""
    async with httpx.AsyncClient(follow_redirects=True, timeout=5) as client:
        page = await client.get(url)
    assert page.status_code == 200 and b"You can close this tab" in page.content
    return True


def tree_steps(window) -> list[tuple[str, str, str]]:
    """(kind, glyph+title, verdict) of each top-level row of the steps list."""
    tree = find(window, QTreeWidget, "authSteps")
    return [(tree.topLevelItem(i).data(0, Qt.UserRole), tree.topLevelItem(i).text(0), tree.topLevelItem(i).text(1))
            for i in range(tree.topLevelItemCount())]


def show_auth_tab(window) -> None:
    window.tabs.setCurrentWidget(window.auth_panel)


def everything_shown(window) -> str:
    """The text of every label, line edit and text view in the window (what a screenshot could show)."""
    parts = [w.text() for w in window.findChildren(QLabel)]
    parts += [w.text() for w in window.findChildren(QLineEdit)]
    parts += [w.toPlainText() for w in window.findChildren(QPlainTextEdit)]
    tree = find(window, QTreeWidget, "authSteps")
    for i in range(tree.topLevelItemCount()):
        item = tree.topLevelItem(i)
        parts += [item.text(0), item.text(1), item.toolTip(1)]
        parts += [item.child(j).text(c) for j in range(item.childCount()) for c in (0, 1)]
    return "\n".join(parts)


async def open_sign_in(window, conn):
    """The user chooses Open in browser in the sign-in dialog (nothing opens before)."""
    await until(lambda: window.auth.dialog_for(conn) is not None
                and find(window.auth.dialog_for(conn), QPushButton, "authBrowserOpen").text() == "Open in browser",
                20, "the sign-in dialog")
    find(window.auth.dialog_for(conn), QPushButton, "authBrowserOpen").click()


async def connected(conn, timeout=30):
    await until(lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, timeout,
                f"{conn.name} to connect (status: {conn.session.status_text()})")


async def test_connect_signs_in_through_the_browser_and_shows_each_step(open_window, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    opened: list[str] = []
    with fake_as.running(scopes_supported=["mcp:read"], jwt_tokens=True) as server:
        async with open_window() as window:
            store = MemoryStore()
            window.auth.store = store
            window.auth.open_url = lambda url: opened.append(url) or True
            conn = window.add_server(ServerSpec(name="protected", url=server.mcp_url))
            show_auth_tab(window)
            await open_sign_in(window, conn)
            await until(lambda: opened and window.auth.dialog_for(conn) is not None, 20, "the browser to open")
            dialog = window.auth.dialog_for(conn)
            assert dialog.isVisible() and find(dialog, QLineEdit, "authBrowserUrl").text() == opened[0]
            assert find(dialog, QLineEdit, "authPasteUrl").echoMode() == QLineEdit.PasswordEchoOnEdit
            summary = find(window, QLabel, "authSummary")
            assert "sign in in the browser" in summary.text()
            kinds = [k for k, _, _ in tree_steps(window)]
            assert kinds == [STEP_PRM, STEP_ASM, STEP_REGISTRATION, STEP_AUTHORIZATION]
            await shot(window, "auth-midflow-light")
            dialog.grab().save(str(Path(shot.__globals__["ARTIFACTS"]) / "auth-browser-dialog-light.png"))
            # the browser follows the authorization URL to the one-shot listener
            assert await browser(opened[0])
            await connected(conn)
            await until(lambda: window.auth.dialog_for(conn) is None, 5, "the sign-in dialog to close")
            assert [t["name"] for t in conn.session.tools.items] == ["whoami"]
            # every step, with a verdict
            steps = tree_steps(window)
            assert [k for k, _, _ in steps] == FLOW
            assert all(title.startswith("✓") and verdict for _, title, verdict in steps), steps
            assert "registered as client-1" in steps[2][2] and "issuer" in steps[3][2]
            assert summary.text().startswith("Authorized.")
            # each step has its HTTP exchanges as child rows; the detail shows them masked
            tree = find(window, QTreeWidget, "authSteps")
            token_row = tree.topLevelItem(4)
            assert token_row.childCount() == 1 and token_row.child(0).text(0).startswith("POST ")
            tree.setCurrentItem(token_row.child(0))
            detail = find(window, QPlainTextEdit, "authDetail").toPlainText()
            assert "code=••••••" in detail and "code_verifier=••••••" in detail and '"access_token": "••••••"' in detail
            # the token view: expiry, scopes, claims; not the raw token
            token = conn.auth.provider.flow.tokens.access_token
            assert token in server.tokens
            assert find(window, QLabel, "token:scopes").text() == "mcp:read"
            assert "(in 59 min)" in find(window, QLabel, "token:expires").text() \
                or "(in 60 min)" in find(window, QLabel, "token:expires").text()
            claims = json.loads(find(window, QPlainTextEdit, "tokenClaims").toPlainText())
            assert claims["sub"] == "user-42" and claims["aud"] == server.mcp_url
            assert not find(window, QLineEdit, "tokenRaw").isVisible()
            assert token not in everything_shown(window)
            await shot(window, "auth-success-light")
            window.set_theme("dark")
            await shot(window, "auth-success-dark")
            window.set_theme("light")
            # Reveal asks first; Cancel shows nothing, Yes shows the token until Hide
            find(window, QPushButton, "tokenReveal").click()
            box = window.findChild(QMessageBox, "revealConfirm")
            assert box is not None and box.isVisible()
            box.button(QMessageBox.Cancel).click()
            await asyncio.sleep(0.05)
            assert token not in everything_shown(window)
            find(window, QPushButton, "tokenReveal").click()
            window.findChild(QMessageBox, "revealConfirm").button(QMessageBox.Yes).click()
            await asyncio.sleep(0.05)
            raw = find(window, QLineEdit, "tokenRaw")
            assert raw.isVisible() and raw.text() == token
            find(window, QPushButton, "tokenHide").click()
            assert not raw.isVisible() and raw.text() == ""
            # refresh: a new access token from the refresh token
            find(window, QPushButton, "tokenRefresh").click()
            await until(lambda: conn.auth.provider.flow.tokens.access_token != token, 10, "the refresh")
            await until(lambda: tree_steps(window)[-1][0] == "refresh" and tree_steps(window)[-1][1].startswith("✓"),
                        5, "the refresh step")
            refreshed = conn.auth.provider.flow.tokens.access_token
            # nothing secret in the traffic store, its export, the server log or Python's logs
            window.store.flush(wait=True)
            export = tmp_path / "traffic.jsonl"
            window.store.export_jsonl(export)
            exported = export.read_text()
            stored = "\n".join(window.store.text(n) for n in range(len(window.store)))
            assert '"auth_step"' in stored  # the flow's exchanges are in the traffic, masked
            log_text = "\n".join(e.text for e in conn.session.log)
            assert "authorization · token: ok" in log_text
            secrets = [token, refreshed, *server.clients.values(), *[r.get("code") for r in server.token_requests
                                                                    if r.get("code")]]
            # (httpx's own INFO lines are left out: the test's "browser" logs the redirect it follows)
            ours = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith(("httpx", "httpcore")))
            assert caplog.records  # the logs were captured (DEBUG and up)
            assert token not in caplog.text and refreshed not in caplog.text
            for secret in filter(None, secrets):
                for where, text in (("traffic", stored), ("export", exported), ("server log", log_text),
                                    ("python log", ours), ("window", everything_shown(window))):
                    assert secret not in text, f"a secret reached the {where}"
            # Forget: gone from the session and from the store; the view says so. (The button is off while the
            # refresh closes its HTTP client, after the new token and its step are already shown.)
            await until(lambda: find(window, QPushButton, "tokenForget").isEnabled(), 5, "the refresh to end")
            find(window, QPushButton, "tokenForget").click()
            assert conn.auth.describe() == {"authorized": False}
            assert find(window, QLabel, "token:status").text() == "none"
            assert not any(refreshed in v for v in store._items.values())
            window.save_settings()
        assert token not in Path(window.settings.fileName()).read_text()


async def test_step_by_step_waits_for_next(open_window):
    with fake_as.running() as server:
        async with open_window() as window:
            window.auth.store = MemoryStore()
            window.auth.open_url = browser
            conn = window.add_server(ServerSpec(name="stepwise", url=server.mcp_url), connect=False)
            show_auth_tab(window)
            find(window, QCheckBox, "authStepMode").setChecked(True)
            assert conn.auth.step_mode
            assert "pause before the first step" in find(window, QLabel, "authSummary").text()
            conn.session.start()
            next_button = find(window, QPushButton, "authNextStep")
            await until(lambda: conn.auth.paused is not None, 10, "the first pause")
            assert conn.auth.paused.kind == STEP_PRM and next_button.isEnabled()
            await asyncio.sleep(0.3)
            assert conn.auth.paused.kind == STEP_PRM and not conn.auth.paused.exchanges, "ran without Next"
            assert tree_steps(window)[0][2] == "paused: press Next step"
            assert "Paused before" in find(window, QLabel, "authSummary").text()
            await shot(window, "auth-paused-light")
            window.set_theme("dark")
            await shot(window, "auth-paused-dark")
            window.set_theme("light")
            next_button.click()
            await until(lambda: conn.auth.paused is not None and conn.auth.paused.kind == STEP_ASM, 10, "pause 2")
            assert tree_steps(window)[0][1].startswith("✓") and len(conn.auth.steps) == 2
            assert server.requests.count(("GET", "/.well-known/oauth-authorization-server")) == 0
            next_button.click()
            await until(lambda: conn.auth.paused is not None and conn.auth.paused.kind == STEP_REGISTRATION, 10,
                        "pause 3")
            assert not server.registrations
            find(window, QPushButton, "authRunAll").click()
            await open_sign_in(window, conn)
            await connected(conn)
            assert [k for k, _, _ in tree_steps(window)] == FLOW
            assert not next_button.isEnabled() and not conn.auth.step_mode
            # Sign in again: the tokens are forgotten and the whole flow runs anew
            first = conn.auth.provider
            find(window, QPushButton, "authSignInAgain").click()
            await until(lambda: conn.auth.provider is not first, 10, "a new sign-in")
            await open_sign_in(window, conn)
            await until(lambda: conn.auth.provider is not first and conn.session.status is Status.CONNECTED
                        and conn.session.tools.loaded, 20, "the second sign-in")
            assert len(server.authorization_requests) == 2
            assert [k for k, _, _ in tree_steps(window)] == FLOW


@pytest.mark.parametrize("mode, step, words", [
    ("token-500", STEP_TOKEN, "HTTP 500"),
    ("wrong-state", STEP_AUTHORIZATION, "state"),
])
async def test_a_failed_step_is_named_with_its_cause(open_window, mode, step, words):
    with fake_as.running(mode) as server:
        async with open_window() as window:
            window.auth.store = MemoryStore()
            window.auth.open_url = browser
            conn = window.add_server(ServerSpec(name=f"broken ({mode})", url=server.mcp_url))
            show_auth_tab(window)
            await open_sign_in(window, conn)
            await until(lambda: conn.session.status is Status.ERROR, 20, "the connection to fail")
            assert f"'{step}'" in conn.session.reason and words in conn.session.reason
            summary = find(window, QLabel, "authSummary").text()
            assert summary.startswith(f"Authorization failed at step “{step}”") and words in summary
            steps = tree_steps(window)
            assert steps[-1][0] == step and steps[-1][1].startswith("✗") and words in steps[-1][2]
            assert all(title.startswith("✓") for _, title, _ in steps[:-1])
            tree = find(window, QTreeWidget, "authSteps")
            assert tree.currentItem() is tree.topLevelItem(len(steps) - 1), "the failed step is selected"
            detail = find(window, QPlainTextEdit, "authDetail").toPlainText()
            assert detail.startswith(step) and "Cause: " in detail and words in detail
            if mode == "token-500":
                assert "Internal Server Error" in detail and "→ HTTP 500" in detail
                await shot(window, "auth-failed-light")
                window.set_theme("dark")
                await shot(window, "auth-failed-dark")
                window.set_theme("light")
            else:
                assert not server.token_requests


async def test_pasted_redirect_url_when_the_browser_cannot_open(open_window):
    with fake_as.running() as server:
        async with open_window() as window:
            window.auth.store = MemoryStore()
            opened: list[str] = []
            window.auth.open_url = lambda url: opened.append(url) is not None  # False: no browser
            conn = window.add_server(ServerSpec(name="pasted", url=server.mcp_url))
            await open_sign_in(window, conn)
            await until(lambda: window.auth.dialog_for(conn) is not None and opened, 20, "the sign-in dialog")
            dialog = window.auth.dialog_for(conn)
            await until(lambda: find(dialog, QLabel, "authBrowserProblem").isVisible(), 5, "the browser problem")
            async with httpx.AsyncClient() as user:  # the user opens the link and copies the address bar
                location = (await user.get(opened[0])).headers["location"]
            find(dialog, QLineEdit, "authPasteUrl").setText(location)
            find(dialog, QPushButton, "authPasteUse").click()
            await connected(conn)
            assert tree_steps(window)[3][1].startswith("✓")


async def test_cancelling_the_sign_in_names_the_step(open_window):
    with fake_as.running() as server:
        async with open_window() as window:
            window.auth.store = MemoryStore()
            window.auth.open_url = lambda url: True  # the user never signs in
            conn = window.add_server(ServerSpec(name="abandoned", url=server.mcp_url))
            await until(lambda: window.auth.dialog_for(conn) is not None, 20, "the sign-in dialog")
            find(window.auth.dialog_for(conn), QPushButton, "authBrowserCancel").click()
            await until(lambda: conn.session.status is Status.ERROR, 10, "the connection to fail")
            assert "'authorization'" in conn.session.reason and "cancelled" in conn.session.reason
            assert tree_steps(window)[-1][1].startswith("✗")


async def test_entered_client_id_secret_and_scope(open_window):
    with fake_as.running("confidential") as server:
        server.clients["pre-registered"] = "s3cret-value"
        dialog = AddServerDialog(spec=ServerSpec(name="mine", url=server.mcp_url))
        assert dialog.client_secret.echoMode() == QLineEdit.Password
        dialog.client_id.setText("pre-registered")
        dialog.client_secret.setText("s3cret-value")
        dialog.scope.setText("mcp:read  mcp:write")
        spec = dialog.spec()
        dialog.deleteLater()
        assert spec.transport is None  # automatic: Streamable HTTP, else HTTP+SSE
        assert spec.oauth == {"client_id": "pre-registered", "client_secret": "s3cret-value",
                              "scope": "mcp:read mcp:write"}
        assert "s3cret-value" not in json.dumps(describe_spec(spec))
        async with open_window() as window:
            store = MemoryStore()
            window.auth.store = store
            window.auth.open_url = browser
            conn = window.add_server(spec)
            await open_sign_in(window, conn)
            await connected(conn)
            assert not server.registrations, "an entered client is used, not registered"
            assert server.authorization_requests[0]["client_id"] == "pre-registered"
            assert server.authorization_requests[0]["scope"] == "mcp:read mcp:write"
            assert store.load(client_key(server.mcp_url)) == {"client_id": "pre-registered",
                                                              "client_secret": "s3cret-value"}
            assert "using the client ID you entered" in tree_steps(window)[2][2]
            window.save_settings()
        assert "s3cret-value" not in Path(window.settings.fileName()).read_text()


async def test_no_keyring_is_said_once(open_window, monkeypatch):
    keyring = pytest.importorskip("keyring")
    from keyring.backends import fail

    monkeypatch.setattr(keyring, "get_keyring", lambda: fail.Keyring())
    async with open_window() as window:
        window.add_server(ServerSpec(name="a", url="http://127.0.0.1:9/mcp"), connect=False)
        window.add_server(ServerSpec(name="b", url="http://127.0.0.1:9/other"), connect=False)
        assert window.banner.isVisible() and "in memory for this session only" in window.banner.label.text()
        assert window.auth.warned
        stdio = window.add_server(ServerSpec(name="cmd", command=["true"]), connect=False)
        with_header = window.add_server(ServerSpec(name="h", url="http://127.0.0.1:9/mcp",
                                                   headers={"Authorization": "Bearer x"}), connect=False)
        assert stdio.auth is None and with_header.auth is None
        window.select_connection(with_header)
        assert "Authorization header you entered" in find(window, QLabel, "authSummary").text()


async def test_disconnecting_while_signing_in_closes_the_listener_and_the_dialog(open_window):
    with fake_as.running() as server:
        async with open_window() as window:
            window.auth.store = MemoryStore()
            window.auth.open_url = lambda url: True
            conn = window.add_server(ServerSpec(name="left", url=server.mcp_url))
            await until(lambda: window.auth.dialog_for(conn) is not None, 20, "the sign-in dialog")
            authorizer = conn.auth.provider.flow.authorizer
            assert authorizer.listening
            await conn.session.disconnect()
            await until(lambda: window.auth.dialog_for(conn) is None, 5, "the dialog to close")
            assert not authorizer.listening
            assert conn.session.status is Status.DISCONNECTED


async def test_url_server_falls_back_to_http_sse(open_window):
    import http_peers

    from inspector.transport.factory import open_transport

    forced = ServerSpec(name="forced", url="http://127.0.0.1:9/mcp", transport="http")
    assert open_transport(forced).fallback is None
    with http_peers.everything("sse") as url:
        async with open_window() as window:
            window.auth.store = MemoryStore()
            conn = window.add_server(ServerSpec(name="sse only", url=url + "?client=spyglass"))
            await connected(conn, 40)
            assert type(conn.session.client.transport).__name__ == "SseTransport"
            assert conn.auth is not None and conn.auth.steps == []
            window.tabs.setCurrentWidget(window.auth_panel)
            assert "has not answered 401" in find(window, QLabel, "authSummary").text()
            await conn.session.disconnect()


async def test_a_server_started_as_a_command_says_why_authorization_does_not_apply(open_window):
    from uikit import demo_cmd

    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await connected(conn)
        show_auth_tab(window)
        panel = window.auth_panel
        summary = find(window, QLabel, "authSummary")
        await until(lambda: summary.isVisible(), 5, "the Authorization tab")
        assert "does not apply" in summary.text() and "stdio" in summary.text()
        for hidden in (find(window, QTreeWidget, "authSteps"), panel.token_view,
                       find(window, QCheckBox, "authStepMode"), find(window, QPushButton, "authSignInAgain")):
            assert not hidden.isVisible(), hidden.objectName()
        await shot(window, "auth-stdio-says-why")
