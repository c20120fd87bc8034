"""`resultView`: the outcome of one tool call, in order: status, the conversation (server requests
answered during the call, MRTR rounds included), then the error (`result:error`) or the content blocks
(`result:<kind>`) and the structured content (`result:structured`), with the raw JSON one click away.

A tool error (`isError: true`) reads "the tool ran and failed"; a JSON-RPC error reads "the request
was rejected" with the code's name and its data. They look different.
"""

from __future__ import annotations

import json
import time
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ... import errors as E
from ... import schemarefs
from ...forms.big_check import valid_in_steps
from ...forms.validation import Checker, pointer
from ...protocol.jsonrpc import code_name
from ...protocol.tasks import describe as describe_task
from ...session import CANCELLED, FAILED, OK, REJECTED, RUNNING, TIMEOUT, TOOL_ERROR, CallRecord
from ..base import design, fit, theme
from ..base.highlight import json_lexer
from ..base.layout import text_label
from ..base.text import pretty_json, visible, visible_block
from .json_tree import json_tree
from .results import ContentView, Reader
from .text import JSON_PARSE_MAX, TextView, fill_one_text, mono_font, try_json

# Structured content of up to this many values is checked against the outputSchema as it is shown; more
# (a table of thousands of records) by the Rust validator in a turn of its own, once the result is shown
SYNC_CHECK_NODES = 5_000
CHECK_DELAY_MS = 30
CHECK_SLICE_S = 0.008  # how long one turn of that check may take (it is judged in parts where the schema allows)
TASK_TRAIL_SHOWN = 40  # the last task states listed under "Ran as task"


def _frame(name: str, parent: QWidget, border: str | None = None) -> tuple[QFrame, QVBoxLayout]:
    f = QFrame(parent)
    f.setObjectName(name)
    f.setFrameShape(QFrame.StyledPanel)
    if border:
        c = theme.colour(border)
        f.setStyleSheet(design.outline_css(f'QFrame[objectName="{name}"]', c.name(), bar=True))
    lay = QVBoxLayout(f)
    lay.setContentsMargins(design.margins("m", "s", "m", "m"))
    lay.setSpacing(design.space("xs"))
    return f, lay


def _bold(lab: QLabel, role: str = "body") -> QLabel:
    lab.setFont(design.font(role, lab.font(), bold=True))
    return lab


def structured_problems(structured: Any, output_schema: Any) -> list[tuple[str, str]]:
    if output_schema is None:
        return []
    return list(Checker(output_schema).problems(structured))  # (a Problem keeps its keyword: "schema" unusable)


def _values(value: Any, limit: int) -> int:
    """How many values `value` holds, counting no further than just past `limit`."""
    n, stack = 0, [value]
    while stack and n <= limit:
        v = stack.pop()
        n += 1
        if isinstance(v, (dict, list)):
            if n + len(stack) + len(v) > limit:  # (a list of 300,000 records: not copied to be counted)
                return limit + 1
            stack.extend(v.values() if isinstance(v, dict) else v)
    return n


def big_structured_problems(structured: Any, output_schema: Any, limit: int = 21) -> list[tuple[str, str]]:
    """`structured_problems` for a big value, by the Rust validator (50 MB judged in ~35 ms where the Python one
    takes seconds), its first `limit` problems in its own words. In the window's thread: a thread of its own
    would take the interpreter by turns and slow every paint of the window more than the check itself."""
    try:
        validator = schemarefs.rust_validator(output_schema)
    except Exception:  # a schema the Rust validator cannot take: the usual checker says what is wrong
        return structured_problems(structured, output_schema)
    if validator.is_valid(structured):
        return []
    out = []
    for e in validator.iter_errors(structured):
        out.append((pointer(e.instance_path), e.message))
        if len(out) >= limit:
            break
    return sorted(out)


def _schema_verdict(f: QFrame, problems: list[tuple[str, str]]) -> QLabel:
    unusable = [m for p in problems if getattr(p, "keyword", "") == "schema" for m in p[1:]]
    if unusable:  # (a $ref that leaves the schema among them: never followed)
        return text_label(f"✗ Not checked against the tool's outputSchema: {unusable[0]}", f, name="structuredErrors",
                          role="error")
    if problems:
        text = "\n".join(f"• {p or '(root)'}: {m}" for p, m in problems[:20])
        if len(problems) > 20:
            text += f"\n… and {len(problems) - 20} more"
        return text_label(f"✗ Does not match the tool's outputSchema ({len(problems)} problem"
                          f"{'s' if len(problems) != 1 else ''}):\n{text}", f, name="structuredErrors", role="error")
    return text_label("✓ Matches the tool's outputSchema.", f, name="structuredValid", role="connected")


def text_matches(structured: Any, blocks: Any) -> bool:
    """Whether some text block carries the same data as the structured content (as JSON)."""
    for b in blocks if isinstance(blocks, list) else []:
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
            ok, value = try_json(b["text"])
            if ok and value == structured:
                return True
            if not ok and isinstance(structured, (str, int, float)) and b["text"].strip() == str(structured):
                return True
    return False


def structured_widget(structured: Any, output_schema: Any, blocks: Any, parent: QWidget | None = None) -> QFrame:
    f, lay = _frame("result:structured", parent)
    head = QHBoxLayout()
    head.addWidget(_bold(text_label("structured content", f, wrap=False, selectable=False)))
    head.addStretch(1)
    raw = QToolButton(f)
    raw.setText("{ }")
    raw.setObjectName("blockRawButton")
    raw.setToolTip("Show the structured content as JSON")
    raw.setCheckable(True)
    head.addWidget(raw)
    lay.addLayout(head)
    problems: list[tuple[str, str]] = []
    f.problems = problems  # type: ignore[attr-defined]
    if output_schema is None:
        lay.addWidget(text_label("The tool declares no outputSchema: not validated.", f, name="structuredSchemaNote",
                             role="muted"))
    elif _values(structured, SYNC_CHECK_NODES) <= SYNC_CHECK_NODES:
        problems = structured_problems(structured, output_schema)
        f.problems = problems  # type: ignore[attr-defined]
        lay.addWidget(_schema_verdict(f, problems))
    else:
        pending = text_label("Checking against the tool's outputSchema…", f, name="structuredChecking", role="muted")
        lay.addWidget(pending)

        steps = valid_in_steps(output_schema, structured)

        def check() -> None:
            until = time.monotonic() + CHECK_SLICE_S
            try:
                while time.monotonic() < until:
                    next(steps)
            except StopIteration as done:
                # valid: said; not valid (or not to be judged in parts): the whole check, in its words
                found = [] if done.value else big_structured_problems(structured, output_schema)
                f.problems = found  # type: ignore[attr-defined]
                lay.replaceWidget(pending, _schema_verdict(f, found))
                pending.deleteLater()
                return
            QTimer.singleShot(0, pending, check)

        # in turns of their own, once the result is laid out and painted (the label is their context: a result
        # closed meanwhile is not checked further)
        QTimer.singleShot(CHECK_DELAY_MS, pending, check)
    if not text_matches(structured, blocks):
        big = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"
               and isinstance(b.get("text"), str) and len(b["text"]) > JSON_PARSE_MAX
               and b["text"].lstrip()[:1] in ("{", "[")] if isinstance(blocks, list) else []
        if big:
            lay.addWidget(text_label(f"A text block of {len(big[0]) / 1e6:.1f} MB may carry the same data: it is too "
                                     "large to compare here.", f, name="structuredTextUnchecked", role="muted"))
        else:
            lay.addWidget(text_label("⚠ No text block carries the same data (the spec asks tools that return "
                                     "structured content to also return it serialized as text, for clients that "
                                     "read only text).", f, name="structuredTextWarning", role="warning"))
    lay.addWidget(json_tree(structured, f))
    view: list[TextView] = []

    def toggle(on: bool) -> None:
        if not view:
            view.append(TextView(pretty_json(structured), f, lexer=json_lexer(), name="structuredRaw", wrap=False,
                                 max_height=260))
            lay.addWidget(view[0])
        view[0].setVisible(on)
    raw.toggled.connect(toggle)
    return f


class ResultView(QWidget):
    """The container of the last result (`resultView`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultView")
        self.record: CallRecord | None = None
        self.reader: Reader | None = None
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        self.status = text_label("No call yet. Fill in the arguments and press Call (Ctrl+Enter).", self,
                             name="resultStatus")
        _bold(self.status)
        top.addWidget(self.status, 1)
        self.raw_button = QToolButton(self)
        self.raw_button.setObjectName("rawResultButton")
        self.raw_button.setText("Raw JSON")
        self.raw_button.setToolTip("Show the whole answer as JSON")
        self.raw_button.setCheckable(True)
        self.raw_button.setEnabled(False)
        self.raw_button.toggled.connect(self._toggle_raw)
        top.addWidget(self.raw_button)
        self.meta_button = QToolButton(self)
        self.meta_button.setObjectName("resultMetaButton")
        self.meta_button.setText("_meta")
        self.meta_button.setToolTip("Show the result's _meta")
        self.meta_button.setCheckable(True)
        self.meta_button.hide()
        self.meta_button.toggled.connect(lambda on: self.meta_view is not None and self.meta_view.setVisible(on))
        top.insertWidget(1, self.meta_button)
        outer.addLayout(top)
        # as wide as the answer's blocks need at least (their headers, a table's key column): the window and
        # the form's column give way before the result scrolls sideways (at 200 % on a laptop it did)
        self.holder = QWidget()
        self.scroll = fit.scroll_column(self.holder, "resultScroll", self, sideways=True)
        outer.addWidget(self.scroll, 1)
        # What stays above the result blocks while the page below is rebuilt (an MCP App's `result:app`):
        # widgets put there are kept, one shown at a time.
        self.holder.setObjectName("resultHolder")
        self._holder_layout = QVBoxLayout(self.holder)
        self._holder_layout.setContentsMargins(0, 0, 0, 0)
        self._holder_layout.setSpacing(design.space("s"))
        self.above = QWidget(self.holder)
        self.above.setObjectName("resultAbove")
        self._above_layout = QVBoxLayout(self.above)
        self._above_layout.setContentsMargins(design.margins("none", "none", "s", "none"))
        self.above.hide()
        self._holder_layout.addWidget(self.above)
        self.page: QWidget | None = None
        self.raw_view: TextView | None = None
        self.meta_view: TextView | None = None
        self.content: ContentView | None = None
        self._new_page()

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        if event.size().height() != event.oldSize().height():
            QTimer.singleShot(0, self.fit_text)

    def fit_text(self) -> None:
        """An answer that is one text fills the viewport, as tall as the text needs, so the text's own
        scroll bar is the only one (answers of several blocks keep each box and the page scrolls)."""
        if self.page is not None:
            fill_one_text(self.page, self.scroll.viewport().height(), self.holder)

    def show_above(self, widget: QWidget | None) -> None:
        """Show `widget` above the result blocks (None: nothing); the others put there stay, hidden."""
        if widget is not None and widget.parent() is not self.above:
            self._above_layout.addWidget(widget)
        for i in range(self._above_layout.count()):
            other = self._above_layout.itemAt(i).widget()
            if other is not None and other is not widget:
                other.hide()
        if widget is not None:
            widget.show()
        self.above.setVisible(widget is not None)

    def _new_page(self) -> QVBoxLayout:
        old = self.page
        if old is not None:
            self._holder_layout.removeWidget(old)
            old.hide()
            old.setParent(None)  # out of the window at once: lookups by name find the new page only
            old.deleteLater()
        self.page = QWidget(self.holder)
        self.page.setObjectName("resultPage")
        lay = QVBoxLayout(self.page)
        lay.setContentsMargins(design.margins("none", "none", "s", "none"))
        lay.setSpacing(design.space("s"))
        self._holder_layout.addWidget(self.page, 1)
        self.raw_view = None
        self.meta_view = None
        self.content = None
        if hasattr(self, "meta_button"):
            self.meta_button.hide()
        return lay

    def clear(self, text: str = "") -> None:
        self.record = None
        lay = self._new_page()
        lay.addStretch(1)
        self.status.setText(text or "No call yet. Fill in the arguments and press Call (Ctrl+Enter).")
        self.status.setStyleSheet("")
        self.raw_button.setChecked(False)
        self.raw_button.setEnabled(False)

    # ------------------------------------------------------------------ showing a call
    def show_record(self, rec: CallRecord, reader: Reader | None = None) -> None:
        self.record = rec
        self.reader = reader
        self.raw_button.blockSignals(True)
        self.raw_button.setChecked(False)
        self.raw_button.blockSignals(False)
        lay = self._new_page()
        self.update_status()
        if rec.task_id is not None:
            lay.addWidget(self._task(rec))
        if rec.rounds:
            lay.addWidget(self._conversation(rec))
        if rec.outcome == RUNNING:
            lay.addWidget(text_label("Waiting for the server's answer. Cancel stops the call; you can call other "
                                 "tools meanwhile.", self.page, name="resultWaiting", role="muted"))
            lay.addStretch(1)
            self.raw_button.setEnabled(False)
            return
        self.raw_button.setEnabled(True)
        result = rec.result if isinstance(rec.result, dict) else None
        output_schema = rec.tool_def.get("outputSchema") if isinstance(rec.tool_def, dict) else None
        if rec.outcome == REJECTED and isinstance(rec.error, E.RemoteError):
            lay.addWidget(self._rpc_error(rec.error))
        elif rec.outcome in (CANCELLED, TIMEOUT, FAILED):
            lay.addWidget(self._local_failure(rec))
        elif result is not None:
            blocks = result.get("content")
            if rec.outcome == TOOL_ERROR:
                lay.addWidget(self._tool_error(result, reader))
            else:
                if not isinstance(blocks, list):
                    lay.addWidget(text_label("⚠ The result has no content list" +
                                         (f" (content is {type(blocks).__name__})" if blocks is not None else "") +
                                         ".", self.page, name="resultWarning", role="warning"))
                self.content = ContentView(self.page)
                self.content.set_blocks(blocks if isinstance(blocks, list) else [], reader=reader)
                lay.addWidget(self.content)
            if "structuredContent" in result:
                lay.addWidget(structured_widget(result["structuredContent"], output_schema, blocks, self.page))
            elif output_schema is not None and rec.outcome == OK:
                lay.addWidget(text_label("⚠ The tool declares an outputSchema but returned no structuredContent.",
                                     self.page, name="structuredMissing", role="warning"))
            meta = result.get("_meta")
            self.meta_button.setVisible(meta is not None)
            if meta is not None:
                view = TextView(pretty_json(meta), self.page, lexer=json_lexer(), name="resultMeta", wrap=False,
                                max_height=200)
                view.setVisible(self.meta_button.isChecked())
                lay.insertWidget(0, view)
                self.meta_view = view
        else:
            lay.addWidget(text_label(f"⚠ The result is not an object: {visible(pretty_json(rec.result), 500)}",
                                 self.page, name="resultWarning", role="warning"))
        lay.addStretch(1)
        self.page.show()  # at once, with what is on it (a layout shows a new widget a loop turn later)
        QTimer.singleShot(0, self.fit_text)

    def update_status(self) -> None:
        rec = self.record
        if rec is None:
            return
        words = {RUNNING: "Running", OK: "Done", TOOL_ERROR: "The tool ran and failed",
                 REJECTED: "The request was rejected", CANCELLED: "Cancelled", TIMEOUT: "Timed out",
                 FAILED: "Failed"}[rec.outcome]
        colour = {OK: "connected", TOOL_ERROR: "warning", REJECTED: "error", CANCELLED: "warning",
                  TIMEOUT: "warning", FAILED: "error", RUNNING: "connecting"}[rec.outcome]
        secs = rec.elapsed
        text = f"{words} · {visible(rec.tool, 80)} · {secs:.2f} s" if secs < 60 else \
            f"{words} · {visible(rec.tool, 80)} · {int(secs // 60)} min {secs % 60:.0f} s"
        if rec.validated_anyway:
            text += " · called with arguments that fail the inputSchema"
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {theme.colour(colour).name()};")

    def _toggle_raw(self, on: bool) -> None:
        rec = self.record
        if rec is None or self.page is None:
            return
        if self.raw_view is None:
            if isinstance(rec.error, E.RemoteError):
                raw: Any = {"error": {"code": rec.error.code, "message": rec.error.rpc_message,
                                      **({"data": rec.error.data} if rec.error.data is not None else {})}}
            elif rec.result is not None:
                raw = {"result": rec.result}
            else:
                raw = {"outcome": rec.outcome, "error": rec.error_text}
            text = pretty_json(raw, limit=60_000_000)
            self.raw_view = TextView(text, self.page, lexer=json_lexer() if len(text) < 100_000 else None,
                                     name="rawResult", wrap=False, max_height=600)
            lay = self.page.layout()
            lay.insertWidget(0, self.raw_view)
        self.raw_view.setVisible(on)

    # ------------------------------------------------------------------ pieces
    def _rpc_error(self, err: E.RemoteError) -> QFrame:
        f, lay = _frame("result:error", self.page, "error")
        f.setProperty("errorKind", "rejected")
        lay.addWidget(_bold(text_label("The request was rejected", f, name="errorTitle", role="error"), "heading"))
        lay.addWidget(text_label("The server refused the tools/call request itself (a JSON-RPC error): the tool did "
                             "not run, or did not get as far as producing a result.", f, role="muted"))
        lay.addWidget(_bold(text_label(f"{err.code} {code_name(err.code)}", f, name="errorCode")))
        lay.addWidget(text_label(visible_block(err.rpc_message, 4000), f, name="errorMessage"))
        if err.data is not None:
            lay.addWidget(text_label("data:", f, role="muted"))
            lay.addWidget(TextView(pretty_json(err.data), f, lexer=json_lexer(), name="errorData", wrap=False,
                                   max_height=200))
        return f

    def _tool_error(self, result: dict[str, Any], reader: Reader | None) -> QFrame:
        f, lay = _frame("result:error", self.page, "warning")
        f.setProperty("errorKind", "tool")
        lay.addWidget(_bold(text_label("The tool ran and failed", f, name="errorTitle", role="warning"), "heading"))
        lay.addWidget(text_label("The server ran the tool and reported an error in its result (isError: true). "
                             "Its message:", f, role="muted"))
        blocks = result.get("content")
        self.content = ContentView(f)
        self.content.set_blocks(blocks if isinstance(blocks, list) else [], reader=reader)
        lay.addWidget(self.content)
        return f

    def _local_failure(self, rec: CallRecord) -> QFrame:
        f, lay = _frame("result:failure", self.page, "warning" if rec.outcome != FAILED else "error")
        title = {CANCELLED: "Cancelled", TIMEOUT: "No answer in time", FAILED: "The call failed"}[rec.outcome]
        lay.addWidget(_bold(text_label(title, f, name="failureTitle"), "heading"))
        lay.addWidget(text_label(visible_block(rec.error_text, 4000), f, name="failureMessage"))
        if rec.outcome == CANCELLED and rec.task_id is None:
            lay.addWidget(text_label("Spyglass told the server to stop (notifications/cancelled, or by closing the "
                                 "request's stream on HTTP); any answer that still arrives is ignored.", f,
                                 role="muted"))
        return f

    def _task(self, rec: CallRecord) -> QFrame:
        """The task a call ran as (2025-11-25 tasks): its id and every status it went through."""
        f, lay = _frame("callTask", self.page)
        lay.addWidget(_bold(text_label(f"Ran as task {visible(rec.task_id, 120)}", f, name="taskTitle")))
        lay.addWidget(text_label("The server answered the call with a task at once; Spyglass followed it with "
                             "tasks/get and fetched the result with tasks/result.", f, role="muted"))
        # one row per state: the time in its own column, so that a long message wraps under itself
        trail = QWidget(f)
        trail.setObjectName("taskTrail")
        grid = QGridLayout(trail)
        grid.setContentsMargins(design.margins("none", "hair", "none", "none"))
        grid.setHorizontalSpacing(design.space("m"))
        grid.setVerticalSpacing(design.space("hair"))
        grid.setColumnStretch(1, 1)
        if len(rec.task_trail) > TASK_TRAIL_SHOWN:
            grid.addWidget(text_label(f"… {len(rec.task_trail) - TASK_TRAIL_SHOWN} earlier states", trail,
                                  role="muted"), 0, 1)
        for row, (secs, status, message) in enumerate(rec.task_trail[-TASK_TRAIL_SHOWN:], 1):
            at = text_label(f"{secs:.1f} s", trail, name="taskStateTime", role="muted", wrap=False)
            at.setFont(mono_font())
            at.setAlignment(Qt.AlignRight | Qt.AlignTop)
            grid.addWidget(at, row, 0)
            grid.addWidget(text_label(visible(describe_task({"status": status, "statusMessage": message}), 300), trail,
                                  name="taskState"), row, 1)
        lay.addWidget(trail)
        return f

    def _conversation(self, rec: CallRecord) -> QFrame:
        f, lay = _frame("callConversation", self.page)
        lay.addWidget(_bold(text_label(f"Conversation: the server asked {len(rec.rounds)} question"
                                   f"{'s' if len(rec.rounds) != 1 else ''} during this call", f)))
        for i, r in enumerate(rec.rounds, 1):
            p = r.params if isinstance(r.params, dict) else {}
            if r.method == "elicitation/create":
                ask = p.get("message") if isinstance(p.get("message"), str) else ""
                if p.get("mode") == "url":
                    ask += f"  (open {visible(p.get('url'), 300)})"
                q = f"asked for input: {visible(ask, 600)}"
            elif r.method == "sampling/createMessage":
                q = "asked for a model reply"
                msgs = p.get("messages")
                if isinstance(msgs, list) and msgs and isinstance(msgs[-1], dict):
                    c = msgs[-1].get("content")
                    if isinstance(c, dict) and isinstance(c.get("text"), str):
                        q += f": {visible(c['text'], 300)}"
            elif r.method == "roots/list":
                q = "asked for the roots"
            else:
                q = f"sent {visible(r.method, 80)}"
            lay.addWidget(text_label(f"{i}. Server {q}", f, name="roundQuestion"))
            if r.error:
                a = f"   ↳ {r.error}"
            elif not r.answered:
                a = "   ↳ waiting for your answer…"
            elif isinstance(r.response, dict) and "action" in r.response:
                a = f"   ↳ you chose {r.response['action']}"
                if r.response.get("content") is not None:
                    a += ": " + visible(json.dumps(r.response["content"], ensure_ascii=False), 400)
            elif isinstance(r.response, dict) and isinstance(r.response.get("content"), dict):
                a = "   ↳ you replied: " + visible(r.response["content"].get("text"), 400)
            elif isinstance(r.response, dict) and "roots" in r.response:
                roots = r.response["roots"]
                a = f"   ↳ answered {len(roots)} root{'s' if len(roots) != 1 else ''} from the server's settings"
            else:
                a = "   ↳ " + visible(json.dumps(r.response, ensure_ascii=False), 300)
            lay.addWidget(text_label(a, f, name="roundAnswer", role="muted"))
        if rec.outcome != RUNNING:
            lay.addWidget(text_label(f"{len(rec.rounds) + 1}. Server answered the call (below).", f, role="muted"))
        return f
