"""Model connections: the endpoints a user added in Preferences (any OpenAI-compatible chat-completions
API, or the Anthropic Messages API), kept in the window's settings without their keys; each key is in
the OS keyring (the catalog's secret store, under `model-key:<base URL>`: the entry `spyglass test`
reads too). `ModelBook` is the window's list; `ConnectionsEditor` is its part of the Preferences dialog
(`prefModels`). Nothing is sent anywhere until the user lists a model or sends a message."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...model import APIS, OPENAI, ModelConnection, ModelError
from ...secrets import MASK
from ..base import design
from ..base.layout import text_label

if TYPE_CHECKING:  # the providers' clients load when a chat opens, not with the window
    from ...model.providers import ChatModel

log = logging.getLogger("spyglass.model")
SETTING = "models/connections"
EXAMPLE_URLS = {OPENAI: "http://localhost:11434/v1", "anthropic": "https://api.anthropic.com"}


class ModelBook(QObject):
    """The window's model connections, and their keys (never in the settings file)."""

    changed = Signal()

    def __init__(self, settings: Any, secrets: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.secrets = secrets
        self.connections: list[ModelConnection] = self._load()
        self.record: Any = None  # the traffic recorder's hook maker: (server id) -> frame hook

    def _load(self) -> list[ModelConnection]:
        raw = self.settings.value(SETTING, "[]") if self.settings is not None else "[]"
        try:
            items = json.loads(raw) if isinstance(raw, str) else []
        except ValueError:
            items = []
        found = [ModelConnection.from_json(item) for item in items] if isinstance(items, list) else []
        return [c for c in found if c is not None]

    def save(self, connections: list[ModelConnection], keys: dict[str, str | None]) -> None:
        """Keep `connections`; `keys`: base URL -> a new key ("" forgets it, None leaves it as it is)."""
        self.connections = list(connections)
        if self.settings is not None:
            self.settings.setValue(SETTING, json.dumps([c.as_json() for c in connections]))
        for url, key in keys.items():
            name = ModelConnection("", OPENAI, url, "").key_name
            try:
                if key:
                    self.secrets.set(name, key)
                elif key == "":
                    self.secrets.delete(name)
            except Exception:  # a keyring that fails: the connection works for this run without its key
                log.exception("keeping a model key")
        self.changed.emit()

    def key(self, connection: ModelConnection) -> str | None:
        try:
            value = self.secrets.get(connection.key_name)
        except Exception:
            log.exception("reading a model key")
            return None
        return value if isinstance(value, str) and value else None

    def find(self, label: str) -> ModelConnection | None:
        return next((c for c in self.connections if c.label == label or c.name == label), None)

    def open(self, connection: ModelConnection) -> ChatModel:
        """A chat with `connection` whose every exchange is recorded in the traffic pane."""
        from ...model.providers import open_chat

        hook = self.record(f"model:{connection.name}") if self.record is not None else None
        return open_chat(connection, self.key(connection), hook)


class ConnectionsEditor(QWidget):
    """The Preferences dialog's model connections: a list, and the selected one's fields."""

    def __init__(self, book: ModelBook, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("prefModels")
        self.book = book
        self.items: list[ModelConnection] = list(book.connections)
        self.keys: dict[str, str | None] = {}
        self.listing: asyncio.Future[Any] | None = None
        self.list = QListWidget(self)
        self.list.setObjectName("prefModelList")
        self.list.setMaximumHeight(90)
        self.add_button = QPushButton("Add", self)
        self.add_button.setObjectName("prefModelAdd")
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setObjectName("prefModelRemove")
        self.name = QLineEdit(self)
        self.name.setObjectName("prefModelName")
        self.api = QComboBox(self)
        self.api.setObjectName("prefModelApi")
        for key, label in APIS.items():
            self.api.addItem(label, key)
        self.url = QLineEdit(self)
        self.url.setObjectName("prefModelUrl")
        self.model = QComboBox(self)
        self.model.setObjectName("prefModelModel")
        self.model.setEditable(True)
        self.model.setToolTip("The model's name at the endpoint; List models asks the endpoint for its list")
        self.list_models = QPushButton("List models", self)
        self.list_models.setObjectName("prefModelListModels")
        self.key = QLineEdit(self)
        self.key.setObjectName("prefModelKey")
        self.key.setEchoMode(QLineEdit.Password)
        self.timeout = QDoubleSpinBox(self)
        self.timeout.setObjectName("prefModelTimeout")
        self.timeout.setRange(1, 3600)
        self.timeout.setDecimals(0)
        self.timeout.setSuffix(" s")
        self.note = text_label("", self, name="prefModelNote", role="muted")
        buttons = QVBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        top = QHBoxLayout()
        top.addWidget(self.list, 1)
        top.addLayout(buttons)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(self.list_models)
        self.form = QFormLayout()
        self.form.addRow("Name:", self.name)
        self.form.addRow("API:", self.api)
        self.form.addRow("Base URL:", self.url)
        self.form.addRow("Model:", model_row)
        self.form.addRow("API key:", self.key)
        self.form.addRow("Timeout:", self.timeout)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("m"))
        lay.addLayout(top)
        lay.addLayout(self.form)
        lay.addWidget(self.note)
        lay.addStretch(1)
        for item in self.items:
            self.list.addItem(item.label)
        self.add_button.clicked.connect(self.add)
        self.remove_button.clicked.connect(self.remove)
        self.list.currentRowChanged.connect(self._show)
        self.list_models.clicked.connect(self.ask_models)
        for edit in (self.name, self.url, self.key):
            edit.textEdited.connect(lambda _t: self._store())
        self.model.editTextChanged.connect(lambda _t: self._store())
        self.api.currentIndexChanged.connect(lambda _i: self._api_changed())
        self.timeout.valueChanged.connect(lambda _v: self._store())
        self._showing = False
        self.list.setCurrentRow(0 if self.items else -1)
        self._show(self.list.currentRow())

    # ------------------------------------------------------------------ editing
    def add(self) -> None:
        taken = {c.name for c in self.items}
        name, n = "Local model", 2
        while name in taken:
            name, n = f"Local model {n}", n + 1
        self.items.append(ModelConnection(name, OPENAI, EXAMPLE_URLS[OPENAI], ""))
        self.list.addItem(self.items[-1].label)
        self.list.setCurrentRow(len(self.items) - 1)
        self.name.setFocus()
        self.name.selectAll()

    def remove(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self.items):
            del self.items[row]
            self.list.takeItem(row)
            self._show(self.list.currentRow())

    def _show(self, row: int) -> None:
        self._showing = True
        try:
            item = self.items[row] if 0 <= row < len(self.items) else None
            for w in (self.name, self.api, self.url, self.model, self.key, self.timeout, self.list_models,
                      self.remove_button):
                w.setEnabled(item is not None)
            self.name.setText(item.name if item else "")
            self.api.setCurrentIndex(max(0, self.api.findData(item.api if item else OPENAI)))
            self.url.setText(item.base_url if item else "")
            self.url.setPlaceholderText(EXAMPLE_URLS.get(item.api if item else OPENAI, ""))
            self.model.clear()
            self.model.setEditText(item.model if item else "")
            self.timeout.setValue(item.timeout if item else 60)
            known = item is not None and (self.keys.get(item.base_url) or (
                self.keys.get(item.base_url) is None and self.book.key(item)))
            self.key.clear()
            self.key.setPlaceholderText(f"{MASK} (kept in the OS keyring)" if known else
                                        "none (local endpoints such as Ollama need none)")
            self.note.setText("" if item is not None else "No model connection yet: Add one to use the "
                                                            "Playground and Tool choice tabs.")
        finally:
            self._showing = False

    def _api_changed(self) -> None:
        if not self._showing:
            self.url.setPlaceholderText(EXAMPLE_URLS.get(self.api.currentData(), ""))
            self._store()

    def _store(self) -> None:
        row = self.list.currentRow()
        if self._showing or not 0 <= row < len(self.items):
            return
        item = ModelConnection(self.name.text().strip() or f"Model {row + 1}", self.api.currentData(),
                               self.url.text().strip(), self.model.currentText().strip(),
                               float(self.timeout.value()))
        self.items[row] = item
        self.list.item(row).setText(item.label)
        if self.key.text():
            self.keys[item.base_url] = self.key.text()

    def problem(self) -> str | None:
        """Why the connections cannot be kept as they are (said in the note), or None."""
        names = [c.name for c in self.items]
        for c in self.items:
            if not c.base_url.startswith(("http://", "https://")):
                return f"{c.name}: the base URL must start with http:// or https://"
            if not c.model:
                return f"{c.name}: give the model's name (List models asks the endpoint)"
            if names.count(c.name) > 1:
                return f"two connections are named {c.name!r}"
        return None

    def apply(self) -> bool:
        problem = self.problem()
        if problem:
            self.note.setText(problem)
            return False
        kept = {c.base_url for c in self.items}
        gone = {c.base_url: "" for c in self.book.connections if c.base_url not in kept}  # their keys go too
        self.book.save(self.items, {**gone, **self.keys})
        return True

    # ------------------------------------------------------------------ listing the endpoint's models
    def ask_models(self) -> None:
        row = self.list.currentRow()
        if not 0 <= row < len(self.items) or (self.listing is not None and not self.listing.done()):
            return
        self._store()
        item = self.items[row]
        if not item.base_url.startswith(("http://", "https://")):
            self.note.setText("Give the base URL first (http:// or https://).")
            return
        self.note.setText(f"Asking {item.base_url} for its models…")
        self.listing = asyncio.ensure_future(self._list(item))
        self.listing.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def _list(self, item: ModelConnection) -> None:
        from ...model.providers import open_chat

        key = self.keys.get(item.base_url) or self.book.key(item)
        hook = self.book.record(f"model:{item.name}") if self.book.record is not None else None
        chat = open_chat(item, key, hook)
        try:
            names = await chat.models()
        except ModelError as exc:
            names, problem = [], exc.message
        else:
            problem = None
        finally:
            await chat.aclose()
        try:
            self._listed(item, names, problem)
        except RuntimeError:  # the dialog was closed meanwhile: nothing to show it in
            pass

    def _listed(self, item: ModelConnection, names: list[str], problem: str | None) -> None:
        if problem is not None:
            self.note.setText(f"No list of models: {problem}. Type the model's name instead.")
            return
        current = self.model.currentText()
        self.model.clear()
        self.model.addItems(names)
        self.model.setEditText(current or (names[0] if names else ""))
        self.note.setText(f"{len(names)} model{'s' if len(names) != 1 else ''} at {item.base_url}."
                          if names else f"{item.base_url} lists no models: type the model's name.")
