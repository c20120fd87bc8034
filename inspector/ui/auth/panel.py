"""The Authorization tab (`authPanel`): the flow as steps, like a debugger.

Each step (discovery, registration, authorization, token, refresh, step-up) is
a row with its verdict; its HTTP exchanges (secrets already masked by
`inspector.auth`) are child rows, and the detail pane shows the selected step
or exchange in full. "Step by step" pauses before every step until "Next step";
"Run to the end" lets the rest go. A failed step is selected and named at the
top with its cause. Below, the token view. `BrowserDialog` is the sign-in
sheet with the pasted-URL fallback; `WindowAuth` is the window's glue.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QBrush, QFont, QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ... import urlpolicy
from ...auth import KeyringStore
from ...auth.records import FAILED, OK, PENDING, RUNNING, SKIPPED, Exchange, Step
from ...session import uses_oauth
from ..base import design, theme
from ..base.layout import scrolled_page
from ..base.text import plain_tooltip, pretty_json, visible, visible_block
from .session import AuthSession, open_in_browser
from .token_view import TokenView

log = logging.getLogger("spyglass.ui.auth")

STEP_ROLE = Qt.UserRole + 1  # (step index, exchange index or -1)
GLYPHS = {OK: "✓", FAILED: "✗", RUNNING: "◌", PENDING: "○", SKIPPED: "–"}
COLOURS = {OK: "connected", FAILED: "error", RUNNING: "connecting", PENDING: "idle", SKIPPED: "idle"}
KINDS = {"discovery": "discovery", "registration": "registration", "authorization": "authorization",
         "token": "token", "refresh": "refresh", "step-up": "step-up"}


# What each step does, for a person stepping through the flow.
ABOUT = {
    "discovery: protected resource metadata":
        "Ask the MCP server which authorization server protects it (RFC 9728): the URL from its "
        "WWW-Authenticate challenge first, else the well-known URLs in the order the specification gives.",
    "discovery: authorization server metadata":
        "Fetch the authorization server's metadata (RFC 8414, then OpenID discovery), check that its issuer "
        "is exactly the one named, and that it supports PKCE with S256.",
    "registration":
        "Choose the client identity: the client ID you entered, else one registered earlier, else a Client ID "
        "Metadata Document, else dynamic client registration (RFC 7591).",
    "authorization":
        "Open the authorization page in the browser (PKCE S256, state, resource) and wait for the redirect on "
        "a one-time 127.0.0.1 listener; then check state and iss (RFC 9207).",
    "token":
        "Exchange the authorization code (with the PKCE verifier and resource) for tokens at the token endpoint.",
    "refresh": "Use the refresh token for a new access token, before asking you to sign in again.",
    "step-up": "The server answered 403 insufficient_scope: authorize again with the scopes it asks for.",
}


STDIO_WORDS = ("Authorization does not apply to this server: it is started as a command (stdio), and the "
               "specification's OAuth flow is for servers reached over HTTP. A command gets its credentials from "
               "its environment variables or arguments: edit the server to change them.")


def kind_of(step: Step) -> str:
    """The family of a step (discovery, registration, authorization, token, refresh, step-up)."""
    for prefix, name in KINDS.items():
        if step.kind.startswith(prefix):
            return name
    return step.kind


def exchange_text(ex: Exchange, index: int | None = None) -> str:
    head = f"{index}. " if index is not None else ""
    lines = [f"{head}{ex.method} {ex.url}"]
    answer = f"HTTP {ex.status}" if ex.status is not None else f"no answer: {ex.error or 'pending'}"
    lines.append(f"   → {answer}  ({ex.elapsed_ms:.0f} ms)")
    if ex.request_headers:
        lines.append("   Request headers")
        lines += [f"     {k}: {v}" for k, v in ex.request_headers.items()]
    if ex.request_body:
        lines += ["   Request body", *("     " + line for line in _body_lines(ex))]
    if ex.response_headers:
        lines.append("   Response headers")
        lines += [f"     {k}: {v}" for k, v in ex.response_headers.items()]
    if ex.response_body:
        lines += ["   Response body", "     " + ex.response_body.replace("\n", "\n     ")]
    return "\n".join(lines)


def _body_lines(ex: Exchange) -> list[str]:
    """A form body one field a line, decoded (its secrets are already masked); anything else as it is."""
    ctype = next((v for k, v in ex.request_headers.items() if k.lower() == "content-type"), "")
    if "x-www-form-urlencoded" in ctype.lower():
        pairs = parse_qsl(ex.request_body, keep_blank_values=True)
        if pairs:
            return [f"{k}={v}" for k, v in pairs]
    return ex.request_body.splitlines() or [""]


def step_text(step: Step, paused: bool = False) -> str:
    status = "paused: press Next step to run it" if paused else step.status
    took = f"  ({(step.ended - step.started) * 1000:.0f} ms)" if step.started and step.ended else ""
    lines = [step.title, f"Status: {status}{took}"]
    if step.verdict:
        lines.append(("Cause: " if step.status == FAILED else "Verdict: ") + step.verdict)
    about = ABOUT.get(step.kind) or ABOUT.get(kind_of(step))
    if about:
        lines.append(f"What it does: {about}")
    if step.details:
        lines += ["", "Details", *("  " + line for line in pretty_json(step.details).splitlines())]
    if step.exchanges:
        lines += ["", f"HTTP exchanges ({len(step.exchanges)}, secrets masked)"]
        for i, ex in enumerate(step.exchanges, 1):
            lines += [exchange_text(ex, i), ""]
    elif not paused and step.status != PENDING:
        lines += ["", "No HTTP exchange in this step."]
    return visible_block("\n".join(lines).rstrip())


class AuthPanel(QWidget):
    signInAgain = Signal(object)  # the Connection: forget its tokens and connect again

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("authPanel")
        self.conn: Any = None
        self.session: AuthSession | None = None
        self._picked: tuple[int, int] | None = None  # what the user selected (kept across rebuilds)
        self._rebuilding = False
        self.summary = QLabel(self)
        self.summary.setObjectName("authSummary")
        self.summary.setTextFormat(Qt.PlainText)
        self.summary.setWordWrap(True)
        f = self.summary.font()
        f.setBold(True)
        self.summary.setFont(f)
        self.step_mode = QCheckBox("Step by step", self)
        self.step_mode.setObjectName("authStepMode")
        self.step_mode.setToolTip("Pause before each step of the flow until you press Next step")
        self.step_mode.toggled.connect(self._step_mode_toggled)
        self.next_button = QPushButton("Next step", self)
        self.next_button.setObjectName("authNextStep")
        self.next_button.clicked.connect(lambda: self.session and self.session.next_step())
        self.run_button = QPushButton("Run to the end", self)
        self.run_button.setObjectName("authRunAll")
        self.run_button.clicked.connect(self._run_all)
        self.again_button = QPushButton("Sign in again", self)
        self.again_button.setObjectName("authSignInAgain")
        self.again_button.setToolTip("Forget the tokens and connect again: the whole flow runs from the start")
        self.again_button.clicked.connect(self._again)
        controls = QHBoxLayout()
        controls.addWidget(self.step_mode)
        controls.addWidget(self.next_button)
        controls.addWidget(self.run_button)
        controls.addStretch(1)
        controls.addWidget(self.again_button)
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("authSteps")
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Step", "Verdict"])
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setColumnWidth(0, 300)
        self.tree.currentItemChanged.connect(self._current_changed)
        self.detail = QPlainTextEdit(self)
        self.detail.setObjectName("authDetail")
        self.detail.setReadOnly(True)
        self.detail.setLineWrapMode(QPlainTextEdit.WidgetWidth)
        mono = QFontDatabase.systemFont(QFontDatabase.FixedFont)
        mono.setStyleHint(QFont.Monospace)
        self.detail.setFont(mono)
        self.detail.setPlaceholderText("Select a step or an HTTP exchange to see it in full.")
        top = QSplitter(Qt.Horizontal, self)
        top.setObjectName("authSplitter")
        top.addWidget(self.tree)
        top.addWidget(self.detail)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)
        self.token_view = TokenView(self)
        split = QSplitter(Qt.Vertical, self)
        split.addWidget(top)
        split.addWidget(self.token_view)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        split.setSizes([330, 170])
        self.splitter = split
        lay = scrolled_page(self)
        lay.addWidget(self.summary)
        lay.addLayout(controls)
        lay.addWidget(split, 1)
        self.show_connection(None)

    # ------------------------------------------------------------------ which server
    def show_connection(self, conn: Any) -> None:
        session = getattr(conn, "auth", None) if conn is not None else None
        if session is not self.session:
            if self.session is not None:
                try:
                    self.session.changed.disconnect(self.refresh)
                except (RuntimeError, TypeError):
                    pass
            self.session = session
            self._picked = None
            if session is not None:
                session.changed.connect(self.refresh)
        self.conn = conn
        self.refresh()

    # ------------------------------------------------------------------ drawing
    def refresh(self) -> None:
        s = self.session
        self.step_mode.blockSignals(True)
        self.step_mode.setChecked(bool(s and s.step_mode))
        self.step_mode.blockSignals(False)
        for w in (self.step_mode, self.again_button):
            w.setEnabled(s is not None)
        # a server with no OAuth flow (started as a command, or sent a header of the user's) gets the sentence
        # that says why, not an empty flow and token view
        for w in (self.step_mode, self.next_button, self.run_button, self.again_button, self.splitter):
            w.setVisible(s is not None)
        self.next_button.setEnabled(bool(s and s.paused is not None))
        self.run_button.setEnabled(bool(s and (s.paused is not None or s.step_mode)))
        self._fill_tree()
        self._show_summary()
        self.token_view.show_session(s)

    def _show_summary(self) -> None:
        s, conn = self.session, self.conn
        level = "muted"
        if conn is None:
            text = "No server selected."
        elif s is None:
            text = (STDIO_WORDS if not conn.spec.url else
                    "This server is sent the Authorization header you entered, so the OAuth flow is off. "
                    "Remove that header to let Spyglass sign in.")
        elif s.paused is not None:
            text, level = f"Paused before “{s.paused.title}”: press Next step to run it.", "connecting"
        elif s.waiting_for_browser:
            text, level = "Waiting for you to sign in in the browser…", "connecting"
        elif s.running or s.busy_refreshing:
            text, level = "Authorizing…", "connecting"
        elif s.failure:
            step, _, cause = s.failure.partition(": ")
            text, level = f"Authorization failed at step “{step}”: {cause}", "error"
        elif s.describe().get("authorized"):
            steps = s.steps
            text, level = "Authorized." + (f" {len(steps)} steps, all passed." if steps else
                                           " Tokens kept from an earlier sign-in."), "connected"
        elif s.steps:
            text = "The flow has not finished."
        else:
            text = ("No authorization needed so far: the server has not answered 401. Connect to run the flow"
                    + (" (Step by step is on: it will pause before the first step)." if s.step_mode else "."))
        self.summary.setText(visible(text, 1500))
        self.summary.setStyleSheet(f"color: {theme.colour(level).name()};")

    def _fill_tree(self) -> None:
        s = self.session
        steps = s.steps if s is not None else []
        self._rebuilding = True
        try:
            self.tree.clear()
            muted = QBrush(theme.colour("muted"))
            target: QTreeWidgetItem | None = None
            for i, step in enumerate(steps):
                paused = s is not None and s.paused is step
                status = PENDING if paused else step.status
                item = QTreeWidgetItem([f"{GLYPHS.get(status, '?')}  {step.title}",
                                        "paused: press Next step" if paused else
                                        (step.verdict or ("running…" if status == RUNNING else ""))])
                item.setData(0, STEP_ROLE, (i, -1))
                item.setData(0, Qt.UserRole, step.kind)
                colour = QBrush(theme.colour(COLOURS.get(status, "muted")))
                item.setForeground(0, colour)
                if status == FAILED:
                    item.setForeground(1, colour)
                    bold = item.font(0)
                    bold.setBold(True)
                    item.setFont(0, bold)
                    item.setFont(1, bold)
                item.setToolTip(1, plain_tooltip(step.verdict))
                for j, ex in enumerate(step.exchanges):
                    answer = f"HTTP {ex.status}" if ex.status is not None else (ex.error or "…")
                    child = QTreeWidgetItem([f"{ex.method} {visible(ex.url, 300)}", f"{answer}  "
                                                                                   f"{ex.elapsed_ms:.0f} ms"])
                    child.setData(0, STEP_ROLE, (i, j))
                    child.setForeground(1, muted if ex.status is not None and ex.status < 400
                                        else QBrush(theme.colour("warning")))
                    child.setToolTip(0, plain_tooltip(ex.url))
                    item.addChild(child)
                self.tree.addTopLevelItem(item)
                if status in (FAILED, RUNNING) or paused:
                    item.setExpanded(True)
                if self._picked is not None and self._picked[0] == i:
                    target = item if self._picked[1] < 0 else item.child(self._picked[1])
            if target is None and steps:
                # Nothing chosen by the user: follow the flow (the paused, failed or latest step).
                target = self.tree.topLevelItem(len(steps) - 1)
                for i, step in enumerate(steps):
                    if step.status == FAILED:
                        target = self.tree.topLevelItem(i)
                        break
            if target is not None:
                self.tree.setCurrentItem(target)
            self._show_detail(target)
        finally:
            self._rebuilding = False

    def _current_changed(self, current: QTreeWidgetItem | None, _previous: Any) -> None:
        if self._rebuilding:
            return
        self._picked = current.data(0, STEP_ROLE) if current is not None else None
        self._show_detail(current)

    def _show_detail(self, item: QTreeWidgetItem | None) -> None:
        s = self.session
        where = item.data(0, STEP_ROLE) if item is not None else None
        steps = s.steps if s is not None else []
        if not where or where[0] >= len(steps):
            self.detail.setPlainText("")
            return
        step = steps[where[0]]
        if where[1] >= 0 and where[1] < len(step.exchanges):
            text = f"{step.title}: HTTP exchange {where[1] + 1} of {len(step.exchanges)} (secrets masked)\n\n"
            text += exchange_text(step.exchanges[where[1]])
            self.detail.setPlainText(visible_block(text))
        else:
            self.detail.setPlainText(step_text(step, paused=s is not None and s.paused is step))

    # ------------------------------------------------------------------ actions
    def _step_mode_toggled(self, on: bool) -> None:
        if self.session is not None:
            self.session.set_step_mode(on)

    def _run_all(self) -> None:
        if self.session is not None:
            self.session.run_all()

    def _again(self) -> None:
        if self.session is not None and self.conn is not None:
            self.session.forget()
            self._picked = None
            self.signInAgain.emit(self.conn)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.PaletteChange:
            self.refresh()  # verdict colours follow the light or dark theme


class BrowserDialog(QDialog):
    """The sign-in sheet (`authBrowserDialog`): the question before the browser opens, then the wait.

    It shows where the authorization page is (`authBrowserHost`: the host as the browser will show it, a
    look-alike name in its `xn--` form) and the full address (`authBrowserUrl`); nothing opens until the user
    chooses Open in browser (`authBrowserOpen`; Cancel sign-in is `authBrowserCancel`, in the platform's
    order). Pasting the redirect URL is the fallback. Non-modal and opened with show(): no nested event loop.
    Closed by the session when the one-shot listener (or the pasted URL) ends the wait; Cancel abandons the
    sign-in.
    """

    def __init__(self, session: AuthSession, server_name: str, url: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("authBrowserDialog")
        self.setWindowTitle(f"Sign in — {visible(server_name, 60)}")
        self.setMinimumWidth(560)
        self.session = session
        shown = urlpolicy.for_display(url, who="the authorization server")
        self.url = shown.address.wire if shown.address is not None else url
        self._done = False
        self.server_name = server_name
        self.intro = QLabel(f"“{visible(server_name, 80)}” asks you to sign in. Its authorization page is on:",
                            self)
        self.intro.setObjectName("authBrowserIntro")
        self.intro.setTextFormat(Qt.PlainText)
        self.intro.setWordWrap(True)
        self.host = QLabel(shown.host, self)
        self.host.setObjectName("authBrowserHost")
        self.host.setTextFormat(Qt.PlainText)
        self.host.setTextInteractionFlags(Qt.TextSelectableByMouse)
        font = self.host.font()
        font.setPointSizeF(design.size("title", font.pointSizeF()))
        font.setBold(True)
        self.host.setFont(font)
        self.problem = QLabel("The browser could not be opened: open the link below yourself.", self)
        self.problem.setObjectName("authBrowserProblem")
        self.problem.setStyleSheet(f"color: {theme.colour('error').name()};")
        self.problem.setVisible(session.browser_opened is False)
        self.link = QLineEdit(shown.full, self)
        self.link.setObjectName("authBrowserUrl")
        self.link.setReadOnly(True)
        self.link.setCursorPosition(0)
        copy = QPushButton("Copy link", self)
        copy.setObjectName("authCopyUrl")
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.url))
        link_row = QHBoxLayout()
        link_row.addWidget(self.link, 1)
        link_row.addWidget(copy)
        paste_note = QLabel("If the browser ends on a page that does not load (another machine, a blocked port), "
                            "copy the whole address from its address bar and paste it here:", self)
        paste_note.setWordWrap(True)
        self.paste_field = QLineEdit(self)
        self.paste_field.setObjectName("authPasteUrl")
        self.paste_field.setPlaceholderText("http://127.0.0.1:…/callback?code=…&state=…")
        self.paste_field.setEchoMode(QLineEdit.PasswordEchoOnEdit)  # it carries the authorization code
        self.use_button = QPushButton("Continue", self)
        self.use_button.setObjectName("authPasteUse")
        self.use_button.clicked.connect(self._use)
        self.paste_field.returnPressed.connect(self._use)
        paste_row = QHBoxLayout()
        paste_row.addWidget(self.paste_field, 1)
        paste_row.addWidget(self.use_button)
        buttons = QDialogButtonBox(self)
        self.open_button = buttons.addButton("Open in browser", QDialogButtonBox.AcceptRole)
        self.open_button.setObjectName("authBrowserOpen")
        self.open_button.setEnabled(shown.refusal is None)
        self.open_button.clicked.connect(self._open)
        cancel = buttons.addButton("Cancel sign-in", QDialogButtonBox.RejectRole)
        cancel.setObjectName("authBrowserCancel")
        cancel.clicked.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.intro)
        lay.addWidget(self.host)
        lay.addLayout(link_row)
        lay.addWidget(self.problem)
        lay.addSpacing(design.space("m"))
        lay.addWidget(paste_note)
        lay.addLayout(paste_row)
        lay.addWidget(buttons)
        self.open_button.setDefault(True)
        session.changed.connect(self._session_changed)

    def _session_changed(self) -> None:
        self.problem.setVisible(self.session.browser_opened is False)

    def _open(self) -> None:
        self.session.open_now()
        self.intro.setText(f"Spyglass opened the authorization page for “{visible(self.server_name, 80)}” in your "
                           "browser. Sign in there; a one-time listener on 127.0.0.1 receives the answer and this "
                           "window closes by itself.")
        self.open_button.setText("Open again")

    def _use(self) -> None:
        if self.session.paste(self.paste_field.text()):
            self.finish()

    def finish(self) -> None:
        """The wait is over: close without cancelling."""
        self._done = True
        try:
            self.session.changed.disconnect(self._session_changed)
        except (RuntimeError, TypeError):
            pass
        self.close()
        self.deleteLater()

    def reject(self) -> None:
        if not self._done:
            self._done = True
            self.session.cancel_browser()
        super().reject()


class WindowAuth:
    """The window's sign-ins: one token store (the OS keyring; its warning shown once), an AuthSession per
    URL server that uses OAuth, and the sign-in dialog. Tests set `store` (a MemoryStore) and `open_url`
    (a fake browser)."""

    def __init__(self, parent: QWidget, warn: Callable[[str], None] | None = None,
                 client_metadata_url: Callable[[], str] = lambda: "") -> None:
        self.parent = parent
        self.store: Any = None
        self.open_url: Callable[[str], Any] | None = None
        self.warn = warn
        self.warned = False
        self.client_metadata_url = client_metadata_url
        self.dialogs: dict[int, BrowserDialog] = {}

    def _store(self) -> Any:
        if self.store is None:
            self.store = KeyringStore(on_warning=self._warning)
            try:
                _ = self.store.persistent  # looks for a keyring now: its warning shows when the server is added
            except Exception:
                log.exception("keyring check")
        return self.store

    def _warning(self, text: str) -> None:
        if not self.warned and self.warn is not None:
            self.warned = True
            self.warn(text)

    def attach(self, conn: Any) -> AuthSession | None:
        """An AuthSession for a URL server that signs in with OAuth (none for commands, or for a server sent
        an Authorization header as it is)."""
        spec = conn.spec
        if not uses_oauth(spec):
            conn.auth = None
            return None
        store = self._store()
        if getattr(store, "warning", None):
            self._warning(store.warning)
        session = conn.session
        auth = AuthSession(
            spec.url, dict(spec.oauth), store=store, parent=conn,
            open_url=lambda url: (self.open_url or open_in_browser)(url),
            traffic=lambda frame: session.traffic(frame) if session.traffic is not None else None,
            note=lambda text, level: session.log.note(text, level),
            client_metadata_url=self.client_metadata_url)
        auth.browserWaiting.connect(lambda url, a=auth, c=conn: self._browser(a, c, url))
        conn.auth = auth
        return auth

    def _browser(self, session: AuthSession, conn: Any, url: str) -> None:
        old = self.dialogs.pop(id(session), None)
        if old is not None:
            old.finish()
        if url:
            dialog = BrowserDialog(session, conn.name, url, self.parent)
            self.dialogs[id(session)] = dialog
            dialog.finished.connect(lambda _r, s=session, d=dialog: self.dialogs.get(id(s)) is d
                                    and self.dialogs.pop(id(s), None))
            dialog.show()

    def dialog_for(self, conn: Any) -> BrowserDialog | None:
        session = getattr(conn, "auth", None)
        return self.dialogs.get(id(session)) if session is not None else None
