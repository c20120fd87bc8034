"""Confirmation before calling a tool that may change things (annotations are hints, so the user decides).

The policy is the QSettings key `confirmPolicy`: `never`, `destructive` (default: tools whose
`destructiveHint` is true, with the spec's default of true when a tool is not read-only and says
nothing: those are badged "may change things (not declared)"), or `not-read-only` (every tool not
marked read-only). The badges of the tool list and this question agree (`session.tools.may_destroy`).
The dialog (`confirmDialog`) names the tool, its annotations and the arguments, with Call
(`confirmCall`) and Cancel (`confirmCancel`). The arguments are shown as the tool's form shows them
(`confirmForm`: the generated form of its inputSchema, filled and read-only; its JSON button shows the text);
only when there is no schema, or the arguments do not fit the form, as JSON text (`confirmArguments`, which
always holds that text).
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from ...forms import SchemaForm
from ...session.tools import HINTS_NOTE, display_name, hints, may_destroy
from ..base.text import visible

SETTING = "confirmPolicy"
NEVER, DESTRUCTIVE, NOT_READ_ONLY = "never", "destructive", "not-read-only"
POLICIES = {NEVER: "Never ask", DESTRUCTIVE: "Ask for tools marked destructive",
            NOT_READ_ONLY: "Ask for every tool not marked read-only"}
DEFAULT = DESTRUCTIVE


def policy_from(settings: Any) -> str:
    value = settings.value(SETTING, DEFAULT) if settings is not None else DEFAULT
    return value if value in POLICIES else DEFAULT


def needs_confirmation(tool: dict[str, Any] | None, policy: str) -> bool:
    """Whether calling `tool` asks first, under `policy` (spec defaults applied to missing hints)."""
    if not isinstance(tool, dict) or policy == NEVER:
        return False
    if policy == NOT_READ_ONLY:
        return not hints(tool)["readOnlyHint"][0]
    # destructiveHint is meaningful only when the tool is not read-only; unsaid, it is true (the spec's default)
    return may_destroy(tool)


class ConfirmDialog(QDialog):
    def __init__(self, tool: dict[str, Any], arguments: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("confirmDialog")
        self.setWindowTitle("Call this tool?")
        self.setModal(True)
        name = visible(tool.get("name"), 200)
        title = QLabel(f"Call “{visible(display_name(tool), 200)}” ({name})?", self)
        title.setTextFormat(Qt.PlainText)
        title.setWordWrap(True)
        f = title.font()
        f.setBold(True)
        title.setFont(f)
        h = hints(tool)
        said = [f"{k}: {'true' if v else 'false'}" + ("" if stated else " (spec default)")
                for k, (v, stated) in h.items()]
        ann = QLabel("Annotations: " + ", ".join(said) + f"\n{HINTS_NOTE}", self)
        ann.setObjectName("confirmAnnotations")
        ann.setTextFormat(Qt.PlainText)
        ann.setWordWrap(True)
        args = QPlainTextEdit(self)
        args.setObjectName("confirmArguments")
        args.setReadOnly(True)
        try:
            text = json.dumps(arguments, indent=2, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(arguments)
        args.setPlainText(text if len(text) < 200_000 else text[:200_000] + "\n…")
        args.setMaximumHeight(220)
        self.form = _filled_form(tool.get("inputSchema"), arguments, self)
        args.setVisible(self.form is None)
        buttons = QDialogButtonBox(self)
        self.call_button = buttons.addButton("Call", QDialogButtonBox.AcceptRole)
        self.call_button.setObjectName("confirmCall")
        self.cancel_button = buttons.addButton(QDialogButtonBox.Cancel)
        self.cancel_button.setObjectName("confirmCancel")
        self.cancel_button.setDefault(True)  # Enter does not destroy anything by accident
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(title)
        lay.addWidget(ann)
        lay.addWidget(QLabel("Arguments:", self))
        lay.addWidget(args)
        if self.form is not None:
            lay.addWidget(self.form, 1)
        lay.addWidget(buttons)
        self.resize(520 if self.form is not None else 460, 480 if self.form is not None else 360)


def _filled_form(schema: Any, arguments: Any, parent: QWidget) -> SchemaForm | None:
    """The tool's form filled with `arguments`, to read (None: no schema, or the arguments do not fit it)."""
    if not isinstance(schema, dict) or not isinstance(arguments, dict):
        return None
    try:
        form = SchemaForm(schema, parent)
    except Exception:  # a schema the form engine cannot take: the JSON text shows the arguments
        return None
    try:
        form.set_value(arguments)
        fits = form.value() == arguments  # a key the form cannot hold would be hidden from the person
    except Exception:
        fits = False
    if not fits:
        form.deleteLater()
        return None
    form.setObjectName("confirmForm")
    form.page.setEnabled(False)  # read-only: to read, not to edit (it still scrolls)
    form.raw.setReadOnly(True)
    return form
