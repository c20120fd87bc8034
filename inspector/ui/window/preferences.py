"""Preferences: what they are (QSettings keys), how they apply, and the dialog that edits them.

Keys (QSettings("Spyglass", "Spyglass"), read by other parts of the window too):

| key | values | default |
|---|---|---|
| `theme` | system, light, dark | system |
| `fontSize` | point size of the whole interface; 0 = the system's | 0 |
| `requestTimeout` | seconds per request (progress resets it) | 60 |
| `confirmPolicy` | never, destructive, not-read-only: when a tool call asks first | destructive |
| `protocolMode` | auto, legacy, modern: for servers added without one | auto |
| `traffic/maxMessageMiB` | largest message read from a stdio server | 64 |
| `traffic/keepSessionsMiB` | disk for saved traffic sessions (older ones deleted at start); 0 = no limit | 1024 |
| `rootsPolicy` | settings (answer roots/list from the server's Roots tab), ask (ask each time) | settings |
| `auth/clientMetadataUrl` | Spyglass's Client ID Metadata Document URL (https, with a path), for OAuth | empty |
"""

from __future__ import annotations

import logging
import urllib.parse
from dataclasses import dataclass, fields
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpacerItem,
    QSpinBox,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ..base import design, theme
from ..calls.questions import ROOTS_ASK, ROOTS_FROM_SETTINGS
from ..playground.connections import ConnectionsEditor

log = logging.getLogger("spyglass.ui.preferences")

CONFIRM_POLICIES = {
    "never": "Never ask",
    "destructive": "Ask for tools marked destructive",
    "not-read-only": "Ask for every tool not marked read-only",
}
ROOTS_POLICIES = {
    ROOTS_FROM_SETTINGS: "Answer from its Roots tab",
    ROOTS_ASK: "Ask me each time",
}
PROTOCOL_MODES = {
    "auto": "Auto (probe, then fall back)",
    "legacy": "Legacy (initialize handshake)",
    "modern": "Modern (2026-07-28 only)",
}
LARGE_TEXT = 14  # the "large text" preset: readable on a projector


@dataclass
class Preferences:
    theme: str = "system"
    font_size: int = 0
    timeout: float = 60.0
    confirm_policy: str = "destructive"
    protocol_mode: str = "auto"
    max_message_mib: int = 64
    keep_sessions_mib: int = 1024
    client_metadata_url: str = ""
    roots_policy: str = ROOTS_FROM_SETTINGS

    KEYS = {
        "theme": "theme",
        "font_size": "fontSize",
        "timeout": "requestTimeout",
        "confirm_policy": "confirmPolicy",
        "protocol_mode": "protocolMode",
        "max_message_mib": "traffic/maxMessageMiB",
        "keep_sessions_mib": "traffic/keepSessionsMiB",
        "client_metadata_url": "auth/clientMetadataUrl",
        "roots_policy": "rootsPolicy",
    }

    @classmethod
    def load(cls, settings: QSettings) -> Preferences:
        """What is saved, each value checked; anything unreadable takes its default."""
        out = cls()
        for f in fields(cls):
            raw = settings.value(cls.KEYS[f.name])
            if raw is None or raw == "":
                continue
            default = getattr(out, f.name)
            try:
                value = type(default)(raw)
            except (TypeError, ValueError):
                continue
            setattr(out, f.name, value)
        if out.theme not in theme.THEMES:
            out.theme = "system"
        if out.confirm_policy not in CONFIRM_POLICIES:
            out.confirm_policy = "destructive"
        if out.protocol_mode not in PROTOCOL_MODES:
            out.protocol_mode = "auto"
        out.font_size = out.font_size if 6 <= out.font_size <= 40 else 0
        out.timeout = out.timeout if 0 < out.timeout <= 24 * 3600 else 60.0
        out.max_message_mib = min(max(out.max_message_mib, 1), 1024)
        out.keep_sessions_mib = max(out.keep_sessions_mib, 0)
        if out.roots_policy not in ROOTS_POLICIES:
            out.roots_policy = ROOTS_FROM_SETTINGS
        if client_metadata_problem(out.client_metadata_url):
            out.client_metadata_url = ""
        return out

    def save(self, settings: QSettings) -> None:
        for f in fields(self):
            settings.setValue(self.KEYS[f.name], getattr(self, f.name))
        settings.sync()


def client_metadata_problem(url: str) -> str | None:
    """Why `url` cannot be a Client ID Metadata Document URL (an https URL with a path), or None."""
    if not url:
        return None
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "https" or not parts.netloc:
        return "it must be an https:// URL"
    if parts.path in ("", "/"):
        return "it must have a path (the document's own address, e.g. https://example.com/spyglass.json)"
    if parts.fragment or "@" in parts.netloc:
        return "it must not have a fragment or user information"
    return None


# ---------------------------------------------------------------------- applying
_system_font: dict[str, QFont] = {}


def apply_font(app: QApplication, size: int) -> None:
    """The whole interface at `size` points (0: the system's size). Widgets follow the app font;
    those with a font of their own (headings, monospace message views) are scaled by the same ratio."""
    base = _system_font.setdefault("font", QFont(app.font()))
    before = app.font().pointSizeF()
    font = QFont(base)
    if size > 0:
        font.setPointSize(size)
    app.setFont(font)
    after = font.pointSizeF()
    if base.pointSizeF() > 0:  # what is laid out from now on is spaced for the text size (design.space)
        design.set_text_scale(after / base.pointSizeF())
    if before <= 0 or after <= 0 or abs(after - before) < 0.01:
        return
    ratio = after / before
    widgets = app.allWidgets()
    for widget in widgets:
        if widget.testAttribute(Qt.WA_SetFont):
            own = widget.font()
            if own.pointSizeF() > 0:
                own.setPointSizeF(max(own.pointSizeF() * ratio, design.MIN_POINTS))
                widget.setFont(own)
    for widget in widgets:  # fixed row heights (the traffic table, the timeline's): set from the font once
        if isinstance(widget, QTableView):
            rows = widget.verticalHeader()
            rows.setDefaultSectionSize(max(widget.fontMetrics().height() + 6,
                                           round(rows.defaultSectionSize() * ratio)))


def prune_sessions(limit_mib: int, folder: str | Path | None = None, *, keep: set[Path] = frozenset()) -> list[Path]:
    """Delete the oldest saved traffic sessions until they use at most `limit_mib` MiB (0: no limit)."""
    if limit_mib <= 0:
        return []
    from ...traffic.sessions import list_sessions

    sessions = list_sessions(folder)  # newest first
    total, removed = 0, []
    for s in sessions:
        total += s.size
        if total > limit_mib * 1024 * 1024 and s.path not in keep:
            for suffix in ("", "-wal", "-shm"):
                try:
                    Path(str(s.path) + suffix).unlink()
                except OSError:
                    pass
            removed.append(s.path)
    if removed:
        log.info("removed %d old traffic sessions (limit %d MiB)", len(removed), limit_mib)
    return removed


# ---------------------------------------------------------------------- the dialog
class PreferencesDialog(QDialog):
    """Edit the preferences; OK saves them and emits `applied` (the window re-applies them)."""

    applied = Signal(object)  # Preferences

    def __init__(self, settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("preferencesDialog")
        self.setWindowTitle("Preferences")
        self.settings = settings
        prefs = Preferences.load(settings)

        def combo(name: str, items: dict[str, str], current: str) -> QComboBox:
            box = QComboBox(self)
            box.setObjectName(name)
            for key, label in items.items():
                box.addItem(label, key)
            box.setCurrentIndex(max(0, box.findData(current)))
            return box

        self.theme = combo("prefTheme", dict(theme.THEME_NAMES), prefs.theme)
        self.font_size = QSpinBox(self)
        self.font_size.setObjectName("prefFontSize")
        self.font_size.setRange(0, 40)
        self.font_size.setSpecialValueText("System size")
        self.font_size.setSuffix(" pt")
        self.font_size.setValue(prefs.font_size)
        self.font_size.setToolTip(f"Large text for presentations: {LARGE_TEXT} pt or more")
        self.timeout = QDoubleSpinBox(self)
        self.timeout.setObjectName("prefTimeout")
        self.timeout.setRange(1, 24 * 3600)
        self.timeout.setDecimals(0)
        self.timeout.setSuffix(" s")
        self.timeout.setValue(prefs.timeout)
        self.timeout.setToolTip("How long to wait for an answer; progress notifications reset the clock")
        self.confirm = combo("prefConfirmPolicy", CONFIRM_POLICIES, prefs.confirm_policy)
        self.confirm.setToolTip("Tool annotations are hints from the server, not guarantees")
        self.protocol = combo("prefProtocolMode", PROTOCOL_MODES, prefs.protocol_mode)
        self.roots_policy = combo("prefRootsPolicy", ROOTS_POLICIES, prefs.roots_policy)
        self.roots_policy.setToolTip(
            "What a server's roots/list gets: the folders of its Roots tab, at once or after you agree"
        )
        self.max_message = QSpinBox(self)
        self.max_message.setObjectName("prefMaxMessage")
        self.max_message.setRange(1, 1024)
        self.max_message.setSuffix(" MiB")
        self.max_message.setValue(prefs.max_message_mib)
        self.max_message.setToolTip("A longer line from a stdio server is recorded as malformed, not read")
        self.keep_sessions = QSpinBox(self)
        self.keep_sessions.setObjectName("prefKeepSessions")
        self.keep_sessions.setRange(0, 1024 * 1024)
        self.keep_sessions.setSingleStep(256)
        self.keep_sessions.setSpecialValueText("No limit")
        self.keep_sessions.setSuffix(" MiB")
        self.keep_sessions.setValue(prefs.keep_sessions_mib)
        self.keep_sessions.setToolTip("Older traffic sessions are deleted at start beyond this size")
        self.client_metadata = QLineEdit(prefs.client_metadata_url, self)
        self.client_metadata.setObjectName("prefClientMetadataUrl")
        self.client_metadata.setPlaceholderText("https://example.com/spyglass-client.json (optional)")
        self.client_metadata.setToolTip(
            "Where you publish a Client ID Metadata Document for Spyglass. Authorization "
            "servers that accept such documents take this URL as Spyglass's client ID; "
            "others get dynamic registration or ask for a client ID."
        )
        self.client_metadata_note = QLabel("", self)
        self.client_metadata_note.setObjectName("prefClientMetadataProblem")
        self.client_metadata_note.setWordWrap(True)
        self.client_metadata_note.hide()
        self.client_metadata.textChanged.connect(lambda _t: self._check_client_metadata())

        # one form for every section, headings as spanning rows: its fields share one column at every text
        # size (a group box per section gave each its own label column: fields at four different x)
        general = QWidget(self)
        form = QFormLayout(general)
        form.setRowWrapPolicy(QFormLayout.DontWrapRows)
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        self.form = form

        def section(title: str) -> None:
            heading = QLabel(title, general)
            heading.setObjectName(f"prefSection{title.split()[0]}")
            f = heading.font()
            f.setBold(True)
            heading.setFont(f)
            if form.rowCount():
                form.addItem(QSpacerItem(0, heading.fontMetrics().height() // 2))
            form.addRow(heading)

        section("Appearance")
        form.addRow("Theme:", self.theme)
        form.addRow("Text size:", self.font_size)
        hint = QLabel(f"Use {LARGE_TEXT} pt or more when showing tools to an audience.", general)
        hint.setObjectName("prefFontHint")
        hint.setEnabled(False)
        hint.setWordWrap(True)
        form.addRow("", hint)
        section("Servers and calls")
        form.addRow("Request timeout:", self.timeout)
        form.addRow("Confirm before calling:", self.confirm)
        form.addRow("Protocol for new servers:", self.protocol)
        form.addRow("When a server asks for roots:", self.roots_policy)
        section("Traffic")
        form.addRow("Largest message:", self.max_message)
        form.addRow("Keep saved sessions up to:", self.keep_sessions)
        section("Authorization")
        form.addRow("Client metadata URL:", self.client_metadata)
        form.addRow("", self.client_metadata_note)
        buttons = QDialogButtonBox(
            QDialogButtonBox.Ok | QDialogButtonBox.Cancel | QDialogButtonBox.RestoreDefaults, self
        )
        buttons.setObjectName("prefButtons")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.RestoreDefaults).clicked.connect(lambda: self.show_values(Preferences()))
        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("prefTabs")
        self.tabs.addTab(general, "General")
        book = getattr(parent, "model_book", None)  # the window's model connections (the playground)
        self.models = ConnectionsEditor(book, self) if book is not None else None
        if self.models is not None:
            self.tabs.addTab(self.models, "Models")
        lay = QVBoxLayout(self)
        lay.addWidget(self.tabs)
        lay.addWidget(buttons)
        # at least 560 px, and never narrower than its fields at the text size (a fixed minimum width overrode
        # the layout's own, and at 200 % the labels were cut)
        self.resize(max(560, self.sizeHint().width()), self.sizeHint().height())

    def show_values(self, prefs: Preferences) -> None:
        self.theme.setCurrentIndex(max(0, self.theme.findData(prefs.theme)))
        self.font_size.setValue(prefs.font_size)
        self.timeout.setValue(prefs.timeout)
        self.confirm.setCurrentIndex(max(0, self.confirm.findData(prefs.confirm_policy)))
        self.protocol.setCurrentIndex(max(0, self.protocol.findData(prefs.protocol_mode)))
        self.max_message.setValue(prefs.max_message_mib)
        self.keep_sessions.setValue(prefs.keep_sessions_mib)
        self.client_metadata.setText(prefs.client_metadata_url)
        self.roots_policy.setCurrentIndex(max(0, self.roots_policy.findData(prefs.roots_policy)))

    def _check_client_metadata(self) -> str | None:
        problem = client_metadata_problem(self.client_metadata.text().strip())
        self.client_metadata_note.setText(f"Not usable: {problem}." if problem else "")
        self.client_metadata_note.setStyleSheet(f"color: {theme.colour('error').name()};")
        self.client_metadata_note.setVisible(bool(problem))
        return problem

    def values(self) -> Preferences:
        return Preferences(
            theme=self.theme.currentData(),
            font_size=self.font_size.value(),
            timeout=float(self.timeout.value()),
            confirm_policy=self.confirm.currentData(),
            protocol_mode=self.protocol.currentData(),
            max_message_mib=self.max_message.value(),
            keep_sessions_mib=self.keep_sessions.value(),
            client_metadata_url=self.client_metadata.text().strip(),
            roots_policy=self.roots_policy.currentData(),
        )

    def accept(self) -> None:
        if self._check_client_metadata():
            self.client_metadata.setFocus()
            return  # the note says why; nothing is saved until it is mended or emptied
        if self.models is not None and not self.models.apply():
            self.tabs.setCurrentWidget(self.models)
            return  # its note says what to mend
        prefs = self.values()
        prefs.save(self.settings)
        super().accept()
        self.applied.emit(prefs)
