"""The "Add server" dialog (`addServerDialog`; `editServerDialog` when it edits a server): a command over
stdio, or a URL with headers and a token.

What is pasted into Command is read as a server (inspector.importers.read_pasted): a whole command line is
split as a shell splits it (leading `NAME=value` go to the environment), a URL becomes an HTTP server, and a
server's JSON entry from a host's config fills the dialog; *Paste from clipboard* (`pasteServerButton`)
does the same with the clipboard. A server left without a name is named by what it reports once connected.

Secrets are masked: values of environment variables named like
*TOKEN*, *KEY*, *SECRET*, *PASSWORD* and of Authorization headers show as ••••
and are edited in password fields; the bearer token field is a password field.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...config import ServerSpec, url_problem
from ...importers import PasteError, looks_pasted, read_pasted
from ...protocol.versions import SUPPORTED_VERSIONS
from ...secrets import mask_url
from ..base import fit, theme
from ..base.text import MASK, is_secret_name, masked

# "" = automatic (Streamable HTTP, else the 2024-11-05 HTTP+SSE transport)
TRANSPORTS = (("Automatic (Streamable HTTP, else HTTP+SSE)", ""), ("Streamable HTTP", "http"),
              ("HTTP+SSE (2024-11-05)", "sse"))

_RUNNERS = {"python", "python3", "node", "npx", "uvx", "uv", "bun", "bunx", "deno", "sh", "bash", "pipx", "docker"}


def guess_name(command: list[str]) -> str:
    """A sidebar name for a command: the script or package rather than the interpreter."""
    if not command:
        return "server"
    first = os.path.basename(command[0])
    base = first.removesuffix(".exe")
    if base.rstrip("0123456789.") in _RUNNERS or base in _RUNNERS:
        args = command[1:]
        if args[:1] == ["-m"] and len(args) > 1:
            return args[1]
        for arg in args:
            if not arg.startswith("-") and arg not in ("run", "exec", "x", "stdio"):
                return os.path.basename(arg.rstrip("/")) or first
    return first


def http_available() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("inspector.transport.http") is not None
    except (ImportError, ValueError):
        return False


class SecretValueDelegate(QStyledItemDelegate):
    """Column 1 of a name/value table: masked when column 0 names a secret."""

    def _secret(self, index: QModelIndex) -> bool:
        name = str(index.sibling(index.row(), 0).data(Qt.DisplayRole) or "")
        value = str(index.data(Qt.DisplayRole) or "")
        return is_secret_name(name) or masked(name, value) != value

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        super().initStyleOption(option, index)
        if not option.text:
            return
        name = str(index.sibling(index.row(), 0).data(Qt.DisplayRole) or "")
        # a secret by name shows nothing of itself; one by shape keeps its shape (scheme, host, user)
        option.text = MASK if is_secret_name(name) else masked(name, option.text)

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: QModelIndex) -> QWidget:
        editor = super().createEditor(parent, option, index)
        if isinstance(editor, QLineEdit) and self._secret(index):
            editor.setEchoMode(QLineEdit.Password)
        return editor


class PairsTable(QWidget):
    """An editable NAME / VALUE table with add and remove buttons."""

    def __init__(self, name_header: str, object_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(0, 2, self)
        self.table.setObjectName(object_name)
        self.table.setHorizontalHeaderLabels([name_header, "Value"])
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().hide()
        self.table.setItemDelegateForColumn(1, SecretValueDelegate(self.table))
        self.table.setMinimumHeight(90)
        add = QPushButton("Add", self)
        add.clicked.connect(lambda: self.add_pair("", ""))
        remove = QPushButton("Remove", self)
        remove.clicked.connect(self._remove)
        buttons = QVBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(remove)
        buttons.addStretch(1)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.table, 1)
        lay.addLayout(buttons)

    def merge(self, pairs: dict[str, str]) -> None:
        """Set these names to these values: a row of that name changes, a new name gets a row."""
        rows = {(self.table.item(r, 0).text() if self.table.item(r, 0) else "").strip(): r
                for r in range(self.table.rowCount())}
        for name, value in pairs.items():
            if name in rows:
                self.table.setItem(rows[name], 1, QTableWidgetItem(value))
            else:
                self.add_pair(name, value)

    def add_pair(self, name: str, value: str) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        self.table.setItem(row, 0, QTableWidgetItem(name))
        self.table.setItem(row, 1, QTableWidgetItem(value))

    def _remove(self) -> None:
        rows = sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True)
        for row in rows or ([self.table.rowCount() - 1] if self.table.rowCount() else []):
            self.table.removeRow(row)

    def pairs(self) -> dict[str, str]:
        out = {}
        for row in range(self.table.rowCount()):
            name = (self.table.item(row, 0).text() if self.table.item(row, 0) else "").strip()
            value = self.table.item(row, 1).text() if self.table.item(row, 1) else ""
            if name:
                out[name] = value
        return out

    def displayed(self, row: int) -> str:
        """What a person sees in the value cell of `row` (masked for secrets)."""
        index = self.table.model().index(row, 1)
        option = QStyleOptionViewItem()
        self.table.itemDelegateForColumn(1).initStyleOption(option, index)
        return option.text


class AddServerDialog(QDialog):
    """`spec`, `mode`: what it starts filled with. `editing`: it changes a server (Save and reconnect).
    `check(spec)`: a reason the server cannot be saved as it is (a name taken), shown in the dialog."""

    def __init__(self, parent: QWidget | None = None, spec: ServerSpec | None = None, mode: str = "auto", *,
                 editing: bool = False, check: Callable[[ServerSpec], str | None] | None = None) -> None:
        super().__init__(parent)
        self.editing = editing
        self.check = check
        self.setObjectName("editServerDialog" if editing else "addServerDialog")
        self.setWindowTitle("Edit server" if editing else "Add server")
        self.name = QLineEdit(self)
        self.name.setObjectName("serverName")
        self.name.setPlaceholderText("A name for the sidebar (default: the name the server reports)")
        self.protocol = QComboBox(self)
        self.protocol.setObjectName("serverProtocol")
        self.protocol.addItems(["auto", "legacy", "modern", *SUPPORTED_VERSIONS])
        fields = QWidget(self)  # all but the buttons: it scrolls where the screen is short (large text, a laptop)
        self.trace_context = QCheckBox(fields)
        self.trace_context.setObjectName("serverTraceContext")
        self.trace_context.setToolTip("A new trace for each tool call, so a server that traces itself joins "
                                      "the traces of an OpenTelemetry export of this session. Off by default: "
                                      "it adds a field to every request.")
        tracing = fit.wrapped_check(self.trace_context, "Send W3C trace context (traceparent in every request's "
                                    "_meta)", fields)
        self.pin = QLineEdit(self)
        self.pin.setObjectName("serverPin")
        self.pin.setPlaceholderText("(none) a lock file written by spyglass pin: changes since are marked")
        self.tabs = QTabWidget(fields)
        # stdio
        stdio = QWidget(self)
        self.command = QLineEdit(stdio)
        self.command.setObjectName("serverCommand")
        self.command.setPlaceholderText("npx, uvx, python, /path/to/server… or a whole command line")
        self.command.textEdited.connect(self._command_edited)
        self.command.editingFinished.connect(self._command_finished)
        self._command_was = ""
        self.args = QLineEdit(stdio)
        self.args.setObjectName("serverArgs")
        self.args.setPlaceholderText("arguments, quoted as in a shell")
        self.env = PairsTable("Variable", "serverEnv", stdio)
        self.cwd = QLineEdit(stdio)
        self.cwd.setObjectName("serverCwd")
        self.cwd.setPlaceholderText("(inherit Spyglass's working directory)")
        browse = QPushButton("Browse…", stdio)
        browse.clicked.connect(self._browse)
        cwd_row = QHBoxLayout()
        cwd_row.addWidget(self.cwd, 1)
        cwd_row.addWidget(browse)
        self.sandbox = QCheckBox(stdio)
        self.sandbox.setObjectName("serverSandbox")
        self.sandbox.setToolTip("Run sandboxed: no network, the home folder hidden, writes only to a temporary "
                                "folder that goes with the server.\n"
                                "To try a server you do not trust yet: Linux uses bubblewrap or unshare, macOS "
                                "sandbox-exec; elsewhere the server will not start and says why. What the server "
                                "could not do shows in its log (stderr).")
        sandboxed = fit.wrapped_check(self.sandbox, "Run sandboxed: no network, no home folder", stdio)
        f = QFormLayout(stdio)
        f.addRow("Command:", self.command)
        f.addRow("Arguments:", self.args)
        f.addRow("Environment:", self.env)
        f.addRow("Working directory:", cwd_row)
        f.addRow("Sandbox:", sandboxed)
        self.tabs.addTab(stdio, "Command (stdio)")
        # url
        remote = QWidget(self)
        self.url = QLineEdit(remote)
        self.url.setObjectName("serverUrl")
        self.url.setPlaceholderText("https://example.com/mcp")
        self.headers = PairsTable("Header", "serverHeaders", remote)
        self.token = QLineEdit(remote)
        self.token.setObjectName("serverToken")
        self.token.setEchoMode(QLineEdit.Password)
        self.token.setPlaceholderText("sent as Authorization: Bearer …")
        # transport choice and the OAuth client (used when the server answers 401)
        self.transport = QComboBox(remote)
        self.transport.setObjectName("serverTransport")
        for text, value in TRANSPORTS:
            self.transport.addItem(text, value)
        # its longest choice made the dialog 890 px wide at 200 %: the list shows them whole when opened
        self.transport.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.transport.setMinimumContentsLength(16)
        self.client_id = QLineEdit(remote)
        self.client_id.setObjectName("oauthClientId")
        self.client_id.setPlaceholderText("(none: Spyglass registers itself when the server allows it)")
        self.client_secret = QLineEdit(remote)
        self.client_secret.setObjectName("oauthClientSecret")
        self.client_secret.setEchoMode(QLineEdit.Password)
        self.client_secret.setPlaceholderText("(for a confidential client; kept in the OS keyring)")
        self.scope = QLineEdit(remote)
        self.scope.setObjectName("oauthScope")
        self.scope.setPlaceholderText("(none: the scopes the server asks for)")
        g = QFormLayout(remote)
        g.addRow("URL:", self.url)
        g.addRow("Transport:", self.transport)
        g.addRow("Headers:", self.headers)
        g.addRow("Bearer token:", self.token)
        oauth_note = QLabel("OAuth: when the server answers 401, Spyglass signs in through your browser. Fill "
                            "these only for a client registered in advance or to ask for specific scopes.",
                            remote)
        oauth_note.setWordWrap(True)
        oauth_note.setObjectName("oauthNote")
        g.addRow(oauth_note)
        g.addRow("Client ID:", self.client_id)
        g.addRow("Client secret:", self.client_secret)
        g.addRow("Scope:", self.scope)
        if not http_available():
            note = QLabel("This build cannot connect to HTTP servers yet; the server will be added but "
                          "will show an error until HTTP support lands.", remote)
            note.setWordWrap(True)
            g.addRow(note)
        self.tabs.addTab(remote, "URL (HTTP)")
        self.note = QLabel(self)
        self.note.setObjectName("addServerNote")
        self.note.setTextFormat(Qt.PlainText)
        self.note.setWordWrap(True)
        self.note.hide()
        self.error = QLabel(self)
        self.error.setObjectName("addServerError")
        self.error.setTextFormat(Qt.PlainText)
        self.error.setStyleSheet(f"color: {theme.colour('error').name()};")
        self.error.hide()
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel, self)
        self.ok_button = buttons.button(QDialogButtonBox.Ok)
        self.ok_button.setText("Save and reconnect" if editing else "Add and connect")
        self.ok_button.setObjectName("addServerOk")
        self.paste_button = QPushButton("Paste from clipboard", self)
        self.paste_button.setObjectName("pasteServerButton")
        self.paste_button.setToolTip("Fill the dialog from a command line, a URL or a server's JSON entry "
                                     "(Claude Desktop, Cursor, VS Code) on the clipboard")
        self.paste_button.clicked.connect(self.paste_clipboard)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        paste_hint = QLabel("a command line, a URL or a host's JSON entry (also when pasted into Command)", self)
        paste_hint.setToolTip("A JSON entry as Claude Desktop, Cursor or VS Code write one: bare, as its "
                              "\"name\": {…} member, or inside mcpServers / servers")
        paste_hint.setObjectName("pasteServerHint")
        paste_hint.setWordWrap(True)
        paste_hint.setEnabled(False)  # the muted look of a hint
        paste_row = QHBoxLayout()
        paste_row.addWidget(self.paste_button)
        paste_row.addWidget(paste_hint, 1)
        top = QFormLayout(fields)
        top.setContentsMargins(0, 0, 0, 0)
        top.addRow("Fill from:", paste_row)
        top.addRow("Name:", self.name)
        top.addRow("Protocol:", self.protocol)
        top.addRow("Tracing:", tracing)
        top.addRow("Pin file:", self.pin)
        top.addRow(self.tabs)
        lay = QVBoxLayout(self)
        lay.addWidget(fit.scroll_column(fields, "serverFields", self, whole=True), 1)
        lay.addWidget(self.note)
        lay.addWidget(self.error)
        lay.addWidget(buttons)
        # as large as its fields ask, within the screen's area under its panels: the fields scroll there, the
        # buttons stay in sight (at 200 % on a 1366x768 laptop it asked for 709 px of 680)
        screen = self.screen()
        if screen is not None:
            fit.fit_to_available(self, screen.availableGeometry())
        if spec is not None:
            self.set_spec(spec, mode)

    def _pin(self) -> str | None:
        """The pin file, as an absolute path: the catalog keeps it, and a window started from another folder
        must find the same file (`~` is the home folder)."""
        text = self.pin.text().strip()
        return os.path.abspath(os.path.expanduser(text)) if text else None

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Working directory", self.cwd.text() or os.getcwd())
        if path:
            self.cwd.setText(path)

    def set_spec(self, spec: ServerSpec, mode: str = "auto") -> None:
        self.name.setText(spec.name)
        i = self.protocol.findText(mode)
        self.protocol.setCurrentIndex(max(0, i))
        self.trace_context.setChecked(spec.trace_context)
        self.sandbox.setChecked(spec.sandbox)
        self.pin.setText(spec.pin or "")
        self._pinned = (spec.url, spec.tls_pin) if spec.url and spec.tls_pin else None
        self._fill(spec)

    def _fill(self, spec: ServerSpec) -> None:
        """The transport's fields from `spec` (tables merged: what is typed there stays)."""
        if spec.url:
            self.tabs.setCurrentIndex(1)
            self.url.setText(spec.url)
            self.transport.setCurrentIndex(max(0, self.transport.findData(spec.transport or "")))
            self.client_id.setText(spec.oauth.get("client_id", ""))
            self.client_secret.setText(spec.oauth.get("client_secret", ""))
            self.scope.setText(spec.oauth.get("scope", ""))
            headers = dict(spec.headers)
            for k, v in spec.headers.items():
                if k.lower() == "authorization" and v.lower().startswith("bearer "):
                    self.token.setText(v[7:])
                    del headers[k]
            self.headers.merge(headers)
        else:
            self.tabs.setCurrentIndex(0)
            if spec.command:
                self.command.setText(spec.command[0])
                self._command_was = spec.command[0]
                self.args.setText(shlex.join(spec.command[1:]))
            self.env.merge(spec.env)
            if spec.cwd:
                self.cwd.setText(spec.cwd)

    # -- pasting -------------------------------------------------------------------------------
    def _command_edited(self, text: str) -> None:
        grew = len(text) - len(self._command_was) > 1  # a paste, not a key
        self._command_was = text
        if grew and looks_pasted(text):
            self.take_paste(text)

    def _command_finished(self) -> None:
        if looks_pasted(self.command.text()):
            self.take_paste(self.command.text())

    def paste_clipboard(self) -> bool:
        return self.take_paste(QGuiApplication.clipboard().text())

    def take_paste(self, text: str) -> bool:
        """Fill the dialog from pasted text (a command line, a URL, a server's JSON entry); False, with the
        reason shown, when it reads as no server."""
        try:
            got = read_pasted(text)
        except PasteError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return False
        self.error.hide()
        if got.named and not self.name.text().strip():
            self.name.setText(got.spec.name)
        if got.mode and self.protocol.findText(got.mode) >= 0:
            self.protocol.setCurrentIndex(self.protocol.findText(got.mode))
        self._fill(got.spec)
        said = {"command": "Read as a command line", "url": "Read as the URL of an HTTP server",
                "json": "Read from a server's JSON entry"}[got.kind]
        if got.spec.env and got.kind == "command":
            said += f" (its {', '.join(got.spec.env)} set in Environment)"
        self.note.setText(". ".join([said, *got.notes]) + ".")
        self.note.show()
        return True

    def named(self) -> bool:
        """Whether the user gave the server a name (else it is named by what it reports)."""
        return bool(self.name.text().strip())

    def mode(self) -> str:
        return self.protocol.currentText()

    def spec(self) -> ServerSpec:
        """The server described by the form; ValueError says what is missing."""
        name = self.name.text().strip()
        if self.tabs.currentIndex() == 1:
            url = self.url.text().strip()
            problem = url_problem(url)
            if problem:
                raise ValueError(problem)
            headers = self.headers.pairs()
            if self.token.text():
                headers["Authorization"] = f"Bearer {self.token.text()}"
            oauth = {k: v for k, v in (("client_id", self.client_id.text().strip()),
                                       ("client_secret", self.client_secret.text()),
                                       ("scope", " ".join(self.scope.text().split()))) if v}
            if "client_secret" in oauth and "client_id" not in oauth:
                raise ValueError("a client secret needs the client ID it belongs to")
            return ServerSpec(name=name or mask_url(url), url=url, headers=headers,
                              transport=self.transport.currentData() or None, oauth=oauth,
                              trace_context=self.trace_context.isChecked(), pin=self._pin(),
                              tls_pin=self._kept_pin(url))
        if looks_pasted(self.command.text()) and not self.take_paste(self.command.text()):
            raise ValueError(self.error.text())
        if self.tabs.currentIndex() == 1:
            return self.spec()  # the paste was a URL
        command = self.command.text().strip()
        if not command:
            raise ValueError("enter the command that starts the server")
        try:
            args = shlex.split(self.args.text())
        except ValueError as exc:
            raise ValueError(f"the arguments are not quoted correctly: {exc}") from None
        cwd = self.cwd.text().strip() or None
        return ServerSpec(name=name or guess_name([command, *args]), command=[command, *args],
                          env=self.env.pairs(), cwd=cwd, transport="stdio",
                          trace_context=self.trace_context.isChecked(), sandbox=self.sandbox.isChecked(),
                          pin=self._pin())

    def _kept_pin(self, url: str) -> str:
        """A certificate trusted for this server stays trusted while it is the same host and port."""
        pinned = getattr(self, "_pinned", None)
        if pinned is None or urlsplit(url).netloc.lower() != urlsplit(pinned[0]).netloc.lower():
            return ""
        return str(pinned[1])

    def _accept(self) -> None:
        try:
            spec = self.spec()
        except ValueError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        problem = self.check(spec) if self.check is not None else None
        if problem:
            self.error.setText(problem)
            self.error.show()
            return
        self.accept()


def describe_spec(spec: ServerSpec) -> dict[str, Any]:
    """A spec for settings and display, with secret values removed (they belong in a keyring)."""
    return {"name": spec.name, "command": list(spec.command), "cwd": spec.cwd, "url": spec.url,
            "transport": spec.transport,
            "env": {k: ("" if is_secret_name(k) else v) for k, v in spec.env.items()},
            "headers": {k: ("" if is_secret_name(k) else v) for k, v in spec.headers.items()},
            "oauth": {k: v for k, v in spec.oauth.items() if k != "client_secret"},  # the secret: keyring only
            "trace_context": spec.trace_context, "sandbox": spec.sandbox, "pin": spec.pin}
