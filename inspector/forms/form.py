"""`SchemaForm`: the generated form of one tool's inputSchema, with a raw-JSON mode. Qt.

Object names (the automation contract, docs/automation.md): the form is `toolForm`; each field's editor
is `field:<json-pointer>`.
Also stable: `formModeButton`, `jsonModeButton`, `rawJson`, `rawProblem`, `formBanner`,
`formProblems`, `formMessages`, `variant:<ptr>`, `null:<ptr>`, `add:<ptr>`, `unset:<ptr>`,
`key:<ptr>/<i>`, `others:<ptr>`, `problem:<ptr>`.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QButtonGroup,
    QFrame,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from .. import schemarefs
from ._base import BuildBudgetExceeded, Context, Field, dumps, hbox
from .registry import Registry
from .schema import SchemaTree, Shape
from .validation import Checker

VALIDATE_DELAY_MS = 120


class SchemaForm(QWidget):
    """A form for `schema` (a tool's inputSchema).

    `set_value(x)` then `value()` returns `x`; `errors()` lists `(json_pointer, message)`;
    `fallback_pointers()` lists the subtrees shown as raw JSON because the form cannot render them.
    Signals: `changed()` on every change, `problemsChanged(int)` after live validation,
    `submitted()` on Ctrl+Enter (the host's Call)."""

    changed = Signal()
    problemsChanged = Signal(int)
    submitted = Signal()

    def __init__(self, schema: Any, parent: QWidget | None = None, registry: Registry | None = None):
        super().__init__(parent)
        self.setObjectName("toolForm")
        self.schema = schema
        self.registry = registry or Registry()
        self.tree = SchemaTree(schema)
        self._checker: Checker | None = None
        self._raw_mode = False
        self._raw_problem = ""
        self._raw_value: Any = None
        self._forced_raw = False
        self._whole_fallback = ""
        self._problem_count = -1
        self._tabs_pending = False
        self._focused_once = False
        self._reveal_all = False
        self._build_ui()
        self.ctx = Context(self.tree, self.registry, self.checker, self._on_edit)
        self.root = self._build_root()
        away = schemarefs.outside(schema)  # said at once, before anything is typed (no IO: never followed)
        if away is not None and not self._whole_fallback:
            self.banner.setText(f"Not checked before sending: {away}.")
            self.banner.show()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(VALIDATE_DELAY_MS)
        self._timer.timeout.connect(self.refresh)
        for seq in ("Ctrl+Return", "Ctrl+Enter"):
            sc = QShortcut(QKeySequence(seq), self)
            sc.setContext(Qt.WidgetWithChildrenShortcut)
            sc.activated.connect(self.submitted.emit)
        self._schedule_tabs()
        self._timer.start()

    # ------------------------------------------------------------------ building
    def _build_ui(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        bar = QWidget()
        bl = hbox(bar)
        self.form_button = QToolButton()
        self.form_button.setText("Form")
        self.form_button.setObjectName("formModeButton")
        self.json_button = QToolButton()
        self.json_button.setText("JSON")
        self.json_button.setObjectName("jsonModeButton")
        group = QButtonGroup(self)
        for b in (self.form_button, self.json_button):
            b.setCheckable(True)
            b.setFocusPolicy(Qt.TabFocus)
            group.addButton(b)
            bl.addWidget(b)
        self.form_button.setChecked(True)
        self.form_button.setToolTip("Edit the arguments in a form")
        self.json_button.setToolTip("Edit the arguments as JSON text")
        self.form_button.clicked.connect(lambda: self.set_raw_mode(False))
        self.json_button.clicked.connect(lambda: self.set_raw_mode(True))
        bl.addStretch(1)
        self.problems_label = QLabel()
        self.problems_label.setObjectName("formProblems")
        bl.addWidget(self.problems_label)
        lay.addWidget(bar)
        self.banner = QLabel()
        self.banner.setObjectName("formBanner")
        self.banner.setTextFormat(Qt.PlainText)
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(
            "#formBanner { background: rgba(255, 185, 0, 0.25); border: 1px solid "
            "rgba(200, 140, 0, 0.8); border-radius: 3px; padding: 6px; }"
        )
        self.banner.hide()
        lay.addWidget(self.banner)
        self.messages = QLabel()
        self.messages.setObjectName("formMessages")
        self.messages.setTextFormat(Qt.PlainText)
        self.messages.setWordWrap(True)
        self.messages.setStyleSheet("color: #d13438;")
        self.messages.hide()
        lay.addWidget(self.messages)
        self.stack = QStackedWidget()
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.NoFrame)
        self.page = QWidget()
        self.page_layout = QVBoxLayout(self.page)
        self.page_layout.setContentsMargins(2, 2, 8, 2)
        self.page_layout.addStretch(1)
        self.scroll.setWidget(self.page)
        self.stack.addWidget(self.scroll)
        raw_page = QWidget()
        rl = QVBoxLayout(raw_page)
        rl.setContentsMargins(0, 0, 0, 0)
        self.raw = QPlainTextEdit()
        self.raw.setObjectName("rawJson")
        self.raw.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.raw.setTabChangesFocus(True)
        self.raw.textChanged.connect(self._raw_changed)
        rl.addWidget(self.raw)
        self.raw_problem_label = QLabel()
        self.raw_problem_label.setObjectName("rawProblem")
        self.raw_problem_label.setTextFormat(Qt.PlainText)
        self.raw_problem_label.setWordWrap(True)
        self.raw_problem_label.setStyleSheet("color: #d13438;")
        self.raw_problem_label.hide()
        rl.addWidget(self.raw_problem_label)
        self.stack.addWidget(raw_page)
        lay.addWidget(self.stack, 1)

    def _build_root(self) -> Field:
        schema = self.schema
        if not isinstance(schema, (dict, bool)):
            return self._fallback_root(f"the tool's inputSchema is a {type(schema).__name__}, not a JSON Schema")
        shape = self.tree.shape(schema)
        if shape.kind == "raw":
            return self._fallback_root(f"the schema cannot be rendered ({shape.reason})")
        if shape.kind == "never":
            return self._fallback_root("the schema is false: no arguments are valid")
        self.ctx.start()
        try:
            root = self.registry.build(self.ctx, shape, (), True, 0)
            root.reset()
        except BuildBudgetExceeded as exc:
            return self._fallback_root(f"the form is too large to build ({exc})")
        except RecursionError:
            return self._fallback_root("the schema nests too deeply to build a form")
        except Exception as exc:  # never a crash: the user can still type JSON
            return self._fallback_root(f"the form could not be built ({type(exc).__name__}: {exc})")
        if shape.kind == "free" and not root.has_value():
            root.put({})
        self._mount(root)
        return root

    def _fallback_root(self, why: str) -> Field:
        self._whole_fallback = why
        self.banner.setText(f"Edit the arguments as JSON: {why}.")
        self.banner.show()
        root = self.registry.fallback(self.ctx, Shape("raw", {}, reason=why), (), True, 0, why)
        root.put({})
        self._mount(root)
        return root

    def _mount(self, root: Field) -> None:
        self.page_layout.insertWidget(0, root)

    # ------------------------------------------------------------------ the contract
    def checker(self) -> Checker:
        if self._checker is None:
            self._checker = Checker(self.schema)
        return self._checker

    def natural_height(self) -> int:
        """The height that shows every field without scrolling (mode buttons and banners included), for a
        caller that sizes the room around the form."""
        extra = sum(w.sizeHint().height() for w in (self.banner, self.messages) if not w.isHidden())
        page = self.page.sizeHint().height() if self.stack.currentWidget() is self.scroll else 160
        return extra + page + 40  # the mode buttons' row and the margins

    def value(self) -> Any:
        """The arguments as they stand (in JSON mode: the text, when it parses)."""
        if self._raw_mode and self._forced_raw and self._raw_value is not None:
            return self._raw_value[0]
        if self.root.has_value():
            return self.root.get()
        return {}

    def set_value(self, instance: Any) -> None:
        self._reveal_all = True
        self._apply(instance)
        if self._raw_mode:
            self._set_raw_text(self.value() if not self._forced_raw else instance)
        self._schedule()
        self.changed.emit()

    def _apply(self, instance: Any) -> None:
        self.ctx.budgeted = False
        try:
            if self.root.fits(instance):
                self.root.put(instance)
                if self._forced_raw:
                    self._forced_raw = False
                    self._raw_value = None
                    self.set_raw_mode(False)
                return
        except Exception:  # a field that cannot take it: keep the value as JSON
            pass
        finally:
            self.ctx.budgeted = True
            self._schedule_tabs()
        self._forced_raw = True
        self._raw_value = (instance,)
        self.set_raw_mode(True, force=True)
        self._set_raw_text(instance)
        self.raw_problem_label.setText("This value cannot be shown in the form; it is kept as JSON.")
        self.raw_problem_label.show()

    def errors(self) -> list[tuple[str, str]]:
        """Problems of the current arguments: `(json_pointer, message)`, sorted."""
        out: list[tuple[str, str]] = []
        if self._raw_mode and self._raw_problem:
            out.append(("", self._raw_problem))
        if not (self._raw_mode and self._forced_raw):
            out += self.root.local_errors()
        out += self.checker().errors(self.value())
        return sorted(dict.fromkeys(out))

    def problem_count(self) -> int:
        return len(self.errors())

    def fallback_pointers(self) -> list[str]:
        """Pointers of the subtrees the schema describes but the form shows as raw JSON."""
        if self._whole_fallback or self._forced_raw:
            return [""]
        return sorted(set(self.root.fallbacks()))

    def fallback_reason(self) -> str:
        """Why the whole form is raw JSON ('' when it is a form)."""
        return self._whole_fallback

    def is_raw_mode(self) -> bool:
        return self._raw_mode

    # ------------------------------------------------------------------ modes
    def set_raw_mode(self, on: bool, force: bool = False) -> bool:
        """Show the JSON editor (on) or the form; False when the JSON must be fixed first."""
        if on == self._raw_mode:
            self._sync_buttons()
            return True
        if on:
            if not force:
                self._set_raw_text(self.value())
            self._raw_mode = True
            self.stack.setCurrentIndex(1)
        else:
            if self._raw_problem or self._forced_raw:
                self.raw_problem_label.setText(
                    (self._raw_problem + "\n" if self._raw_problem else "")
                    + "Fix the JSON to go back to the form; your text is kept as it is."
                )
                self.raw_problem_label.show()
                self._sync_buttons()
                return False
            self._raw_mode = False
            self.stack.setCurrentIndex(0)
            self._schedule_tabs()
        self._sync_buttons()
        self._schedule()
        return True

    def _sync_buttons(self) -> None:
        self.json_button.setChecked(self._raw_mode)
        self.form_button.setChecked(not self._raw_mode)

    def _set_raw_text(self, value: Any) -> None:
        self.raw.blockSignals(True)
        try:
            self.raw.setPlainText(dumps(value))
        finally:
            self.raw.blockSignals(False)
        self._raw_problem = ""
        self.raw_problem_label.hide()

    def _raw_changed(self) -> None:
        text = self.raw.toPlainText()
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            self._raw_problem = f"The JSON text is not valid: {exc}"
            self.raw_problem_label.setText(self._raw_problem)
            self.raw_problem_label.show()
            self._schedule()
            self.changed.emit()
            return
        except RecursionError:
            self._raw_problem = "The JSON text nests too deeply"
            self.raw_problem_label.setText(self._raw_problem)
            self.raw_problem_label.show()
            return
        self._raw_problem = ""
        self.raw_problem_label.hide()
        self._reveal_all = True  # values typed as JSON: show their problems in the form too
        self.ctx.budgeted = False
        try:
            fits = self.root.fits(parsed)
            if fits:
                self.root.put(parsed)
        except Exception:
            fits = False
        finally:
            self.ctx.budgeted = True
        self._forced_raw = not fits
        self._raw_value = None if fits else (parsed,)
        if not fits:
            self.raw_problem_label.setText("This value cannot be shown in the form; it is kept as JSON.")
            self.raw_problem_label.show()
        self._schedule()
        self.changed.emit()

    # ------------------------------------------------------------------ live validation
    def _on_edit(self, quiet: bool = False) -> None:
        self._schedule()
        self._schedule_tabs()
        if not quiet:
            self.changed.emit()

    def _schedule(self) -> None:
        if hasattr(self, "_timer"):
            self._timer.start()

    def refresh(self) -> int:
        """Validate now, show the messages next to their fields; returns the number of problems."""
        self._timer.stop()
        value = self.value()
        shown: list[tuple[str, str]] = []
        if self._raw_mode and self._raw_problem:
            shown.append(("", self._raw_problem))
        local = [] if (self._raw_mode and self._forced_raw) else self.root.local_errors()
        problems = self.checker().problems(value)
        for p in problems:
            if p.missing is not None:
                shown.append((p[0] + "/" + p.missing.replace("~", "~0").replace("/", "~1"), "required"))
            else:
                shown.append((p[0], p[1]))
        shown += local
        warnings = [(p[0], f"warning: {p[1]} (a format is a hint: the value is sent as it is)")
                    for p in self.checker().warnings(value)]
        shown += warnings
        if not self._reveal_all and not self._raw_mode:
            touched = self.ctx.touched
            shown = [(p, m) for p, m in shown if p in touched or any(t.startswith(p + "/") for t in touched)]
        left = self.root.show_problems(shown) if not self._whole_fallback else shown
        if left:
            text = "\n".join(f"{p or 'arguments'}: {m}" if p else m for p, m in left[:6])
            if len(left) > 6:
                text += f"\n… and {len(left) - 6} more"
            self.messages.setText(text)
            self.messages.show()
        else:
            self.messages.hide()
        n = len(
            sorted(
                dict.fromkeys(
                    [
                        *([("", self._raw_problem)] if self._raw_mode and self._raw_problem else []),
                        *local,
                        *[(p[0], p[1]) for p in problems],
                    ]
                )
            )
        )
        text = "No problems" if n == 0 else f"{n} problem" + ("" if n == 1 else "s")
        if warnings:
            text += f" · {len(warnings)} warning{'s' if len(warnings) != 1 else ''}"
        self.problems_label.setText(text)
        self.problems_label.setStyleSheet("" if n == 0 else "color: #d13438;")
        if n != self._problem_count:
            self._problem_count = n
            self.problemsChanged.emit(n)
        return n

    def reveal_problems(self) -> int:
        """Show every problem next to its field, also those of fields nobody touched yet
        (messages are otherwise shown once a field is edited); returns the number of problems."""
        self._reveal_all = True
        return self.refresh()

    # ------------------------------------------------------------------ keyboard
    def focus_widgets(self) -> list[QWidget]:
        """The form's focusable editors in schema order (the tab order)."""
        return [w for w in self.root.focus_widgets() if w is not None]

    def first_field(self) -> QWidget | None:
        ws = self.focus_widgets()
        return ws[0] if ws else None

    def focus_first(self) -> None:
        w = self.first_field()
        if w is not None and not self._raw_mode:
            w.setFocus(Qt.OtherFocusReason)
        elif self._raw_mode:
            self.raw.setFocus(Qt.OtherFocusReason)

    def _schedule_tabs(self) -> None:
        if not self._tabs_pending:
            self._tabs_pending = True
            QTimer.singleShot(0, self._fix_tabs)

    def _fix_tabs(self) -> None:
        self._tabs_pending = False
        try:
            chain = [self.form_button, self.json_button] + self.focus_widgets()
        except RuntimeError:  # a widget went away meanwhile: the next edit fixes it
            return
        first = self.first_field()
        if first is not None:
            self.setFocusProxy(first)
        for a, b in zip(chain, chain[1:], strict=False):
            try:
                QWidget.setTabOrder(a, b)
            except RuntimeError:
                pass

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._focused_once:
            self._focused_once = True
            self._fix_tabs()
            QTimer.singleShot(0, self, self.focus_first)  # not after the form is gone (a tab shown, then rebuilt)
