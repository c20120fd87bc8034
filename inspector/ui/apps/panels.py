"""The side of an app's block: what the app would have told the conversation (`appMessages`), the host it
believes it runs in (`appHostContext`, to emulate another host) and its sandbox (`appSandbox`).

There is no model in Spyglass: `ui/message` and `ui/update-model-context` are answered and shown here,
as what a chat host would have added to the conversation (the latest model context replaces the one
before, as hosts send only the last). The host context panel edits settings every open app shares: a
change reaches each as `ui/notifications/host-context-changed`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPlainTextEdit,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ...session.apps import PRESETS, HostSettings
from ..base import design
from ..base.layout import text_label
from ..base.text import pretty_json, visible, visible_block
from ..render.results import ContentView

MESSAGES_KEPT = 100
REFUSED_SHOWN = 200
LOCALES = ("en-US", "en-GB", "fr-FR", "de-DE", "ja-JP", "ar-EG", "pt-BR", "zh-CN")
TIME_ZONES = ("UTC", "Europe/Paris", "America/New_York", "America/Los_Angeles", "Asia/Tokyo", "Australia/Sydney")
CONTAINERS = (("desktop", "Desktop (the block's width)"), ("tablet", "Tablet (768 × up to 1024)"),
              ("phone", "Phone (390 × up to 844)"), ("custom", "Custom size"))
THEMES = (("spyglass", "Spyglass's theme"), ("light", "Light"), ("dark", "Dark"))


def _bold(label: QLabel) -> QLabel:
    f = label.font()
    f.setBold(True)
    label.setFont(f)
    return label


class AppMessages(QWidget):
    """`appMessages`: each `ui/message`, and the latest `ui/update-model-context`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("appMessages")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("xs"))
        lay.addWidget(text_label("No model here: what the app would have told the conversation is shown, and the "
                                 "app is told it was accepted.", self, role="muted"))
        self.context_box = QFrame(self)
        self.context_box.setObjectName("appModelContext")
        self.context_box.setFrameShape(QFrame.StyledPanel)
        cl = QVBoxLayout(self.context_box)
        cl.setContentsMargins(design.margins("xs", "s"))
        self.context_title = _bold(text_label("Model context: none yet", self.context_box, name="appModelContextTitle"))
        cl.addWidget(self.context_title)
        self.context_body = QWidget(self.context_box)
        self.context_layout = QVBoxLayout(self.context_body)
        self.context_layout.setContentsMargins(0, 0, 0, 0)
        cl.addWidget(self.context_body)
        lay.addWidget(self.context_box)
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.NoFrame)
        self.list = QWidget()
        self.list.setObjectName("appMessageList")
        self.list_layout = QVBoxLayout(self.list)
        self.list_layout.setContentsMargins(0, 0, 0, 0)
        self.list_layout.addStretch(1)
        self.scroll.setWidget(self.list)
        lay.addWidget(self.scroll, 1)
        self.messages: list[dict[str, Any]] = []
        self.context: dict[str, Any] | None = None

    def add_message(self, role: Any, content: list[dict[str, Any]]) -> None:
        self.messages.append({"role": role, "content": content})
        box = QFrame(self.list)
        box.setObjectName("appMessage")
        box.setFrameShape(QFrame.StyledPanel)
        bl = QVBoxLayout(box)
        bl.setContentsMargins(design.margins("xs", "s"))
        bl.addWidget(text_label(f"{time.strftime('%H:%M:%S')} · the app would say, as {visible(role, 20)}:", box,
                                role="muted"))
        view = ContentView(box)
        view.set_blocks(content)
        bl.addWidget(view)
        self.list_layout.insertWidget(self.list_layout.count() - 1, box)
        while len(self.messages) > MESSAGES_KEPT:
            self.messages.pop(0)
            old = self.list_layout.takeAt(0).widget()
            if old is not None:
                old.deleteLater()

    def set_context(self, params: dict[str, Any]) -> None:
        """The latest model context replaces the previous one (empty: cleared)."""
        self.context = params
        while self.context_layout.count():
            old = self.context_layout.takeAt(0).widget()
            if old is not None:
                old.deleteLater()
        content = params.get("content") if isinstance(params.get("content"), list) else []
        structured = params.get("structuredContent")
        if not content and structured in (None, {}):
            self.context_title.setText(f"Model context: cleared at {time.strftime('%H:%M:%S')}")
            return
        self.context_title.setText(f"Model context (latest, {time.strftime('%H:%M:%S')})")
        if content:
            view = ContentView(self.context_body)
            view.set_blocks([b for b in content if isinstance(b, dict)])
            self.context_layout.addWidget(view)
        if structured is not None:
            text = QPlainTextEdit(self.context_body)
            text.setObjectName("appModelContextStructured")
            text.setReadOnly(True)
            text.setPlainText(pretty_json(structured))
            text.setMaximumHeight(160)
            self.context_layout.addWidget(text)


class HostContextPanel(QWidget):
    """`appHostContext`: the host an app believes it runs in; `changed` when the user edits it."""

    changed = Signal()

    def __init__(self, settings: HostSettings, theme_source: Callable[[], str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("appHostContext")
        self.settings = settings
        self.theme_source = theme_source  # "spyglass", "light" or "dark"
        self._loading = False
        outer = QVBoxLayout(self)
        outer.setContentsMargins(design.margins("xs"))
        form = QFormLayout()
        outer.addLayout(form)
        outer.addStretch(1)
        self.theme = self._combo("appTheme", THEMES)
        form.addRow("Theme", self.theme)
        self.locale = self._editable("appLocale", LOCALES)
        form.addRow("Locale", self.locale)
        self.time_zone = self._editable("appTimeZone", TIME_ZONES)
        form.addRow("Time zone", self.time_zone)
        self.container = self._combo("appContainer", CONTAINERS)
        form.addRow("Container", self.container)
        size = QHBoxLayout()
        self.width = QSpinBox(self)
        self.width.setObjectName("appWidth")
        self.height_box = QSpinBox(self)
        self.height_box.setObjectName("appHeight")
        for box in (self.width, self.height_box):
            box.setRange(120, 4000)
            box.setSuffix(" px")
            box.valueChanged.connect(self._edited)
            size.addWidget(box)
        form.addRow("Custom size", size)
        self.platform = self._combo("appPlatform", (("desktop", "desktop"), ("web", "web"), ("mobile", "mobile")))
        form.addRow("Platform", self.platform)
        self.touch = QCheckBox("Touch screen (no hover)", self)
        self.touch.setObjectName("appTouch")
        self.touch.toggled.connect(self._edited)
        form.addRow("", self.touch)
        self.stream = QCheckBox("Stream the arguments (tool-input-partial, next load)", self)
        self.stream.setObjectName("appStreamInput")
        self.stream.setToolTip("Send the arguments as a model streams them, one key at a time "
                               "(ui/notifications/tool-input-partial), before the complete tool-input")
        form.addRow("", self.stream)
        self.json = QPlainTextEdit(self)
        self.json.setObjectName("appContextJson")
        self.json.setReadOnly(True)
        self.json.setMaximumHeight(180)
        form.addRow("Sent", self.json)
        self.load()

    def _combo(self, name: str, items: tuple[tuple[str, str], ...]) -> QComboBox:
        box = QComboBox(self)
        box.setObjectName(name)
        for value, text in items:
            box.addItem(text, value)
        box.currentIndexChanged.connect(self._edited)
        return box

    def _editable(self, name: str, items: tuple[str, ...]) -> QComboBox:
        box = QComboBox(self)
        box.setObjectName(name)
        box.setEditable(True)
        box.addItems(items)
        box.currentTextChanged.connect(self._edited)
        return box

    def load(self) -> None:
        """Show the shared settings (another block's panel may have changed them)."""
        self._loading = True
        s = self.settings
        self.theme.setCurrentIndex(max(0, self.theme.findData(self.theme_source())))
        self.locale.setCurrentText(s.locale)
        self.time_zone.setCurrentText(s.time_zone)
        self.container.setCurrentIndex(max(0, self.container.findData(s.container)))
        self.width.setValue(s.width)
        self.height_box.setValue(s.height)
        self.platform.setCurrentIndex(max(0, self.platform.findData(s.platform)))
        self.touch.setChecked(s.touch)
        custom = s.container == "custom"
        self.width.setEnabled(custom)
        self.height_box.setEnabled(custom)
        self._loading = False

    def show_context(self, context: dict[str, Any]) -> None:
        shown = dict(context)
        if "toolInfo" in shown:
            shown["toolInfo"] = "…"
        if "styles" in shown:
            shown["styles"] = f"{len((shown['styles'] or {}).get('variables') or {})} CSS variables"
        self.json.setPlainText(json.dumps(shown, indent=1, ensure_ascii=False))

    def theme_choice(self) -> str:
        return str(self.theme.currentData())

    def _edited(self, *_: Any) -> None:
        if self._loading:
            return
        s = self.settings
        s.locale = self.locale.currentText().strip() or "en-US"
        s.time_zone = self.time_zone.currentText().strip() or "UTC"
        s.container = str(self.container.currentData())
        s.width, s.height = self.width.value(), self.height_box.value()
        s.platform = str(self.platform.currentData())
        s.touch = self.touch.isChecked()
        custom = s.container == "custom"
        self.width.setEnabled(custom)
        self.height_box.setEnabled(custom)
        self.changed.emit()


class SandboxPanel(QWidget):
    """`appSandbox`: the CSP applied, the permissions asked (allowed per server), and every refused attempt."""

    permissionToggled = Signal(str, bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("appSandbox")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("xs"))
        self.summary = text_label("", self, name="appSandboxSummary")
        lay.addWidget(self.summary)
        self.csp = QPlainTextEdit(self)
        self.csp.setObjectName("appCsp")
        self.csp.setReadOnly(True)
        self.csp.setMaximumHeight(110)
        lay.addWidget(self.csp)
        self.permissions = QWidget(self)
        self.permissions.setObjectName("appPermissions")
        self.perm_layout = QVBoxLayout(self.permissions)
        self.perm_layout.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.permissions)
        self.problems = text_label("", self, name="appMetaProblems", role="warning")
        self.problems.hide()
        lay.addWidget(self.problems)
        lay.addWidget(_bold(text_label("Stopped attempts", self, selectable=False)))
        self.refused = QListWidget(self)
        self.refused.setObjectName("appRefused")
        self.refused.setWordWrap(True)
        self.refused.setUniformItemSizes(False)
        lay.addWidget(self.refused, 1)

    def show_document(self, *, csp: str, outside: tuple[str, ...], asked: tuple[str, ...], granted: set[str],
                      problems: tuple[str, ...]) -> None:
        self.summary.setText((("It may reach: " + ", ".join(outside)) if outside else
                              "It may reach nothing outside itself (the spec's restrictive default).")
                             + " WebRTC is not available to apps.")
        self.csp.setPlainText(csp.replace("; ", ";\n"))
        while self.perm_layout.count():
            old = self.perm_layout.takeAt(0).widget()
            if old is not None:
                old.deleteLater()
        if asked:
            self.perm_layout.addWidget(text_label("It asks for these; each is denied unless you allow it for this "
                                                  "server (the app reloads):", self.permissions, role="muted"))
        for feature in asked:
            box = QCheckBox(f"Allow {feature}", self.permissions)
            box.setObjectName(f"appPermission:{feature}")
            box.setChecked(feature in granted)
            box.toggled.connect(lambda on, f=feature: self.permissionToggled.emit(f, on))
            self.perm_layout.addWidget(box)
        self.problems.setText("_meta.ui: " + "; ".join(visible(p, 200) for p in problems) if problems else "")
        self.problems.setVisible(bool(problems))

    def add_refused(self, text: str) -> None:
        self.refused.addItem(f"{time.strftime('%H:%M:%S')} · {visible_block(text, 600)}")
        while self.refused.count() > REFUSED_SHOWN:
            self.refused.takeItem(0)
        self.refused.scrollToBottom()


def preset_size(settings: HostSettings) -> tuple[int | None, int | None]:
    """(fixed width, fixed height) of the view the settings ask for (None: the block decides)."""
    if settings.container == "custom":
        return settings.width, settings.height
    width, _max = PRESETS.get(settings.container, PRESETS["desktop"])
    return width, None

