"""The traffic pane, driven by object names: selection, detail, filters, pairs, export, screenshots."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableView,
    QToolButton,
    QWidget,
)
from test_traffic_filter import reference
from traffic_helpers import ROOT, filled_store

from inspector.traffic import Frame, TrafficStore
from inspector.ui.traffic import model as tm
from inspector.ui.traffic.pane import TrafficPane

ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture
def pane(qtbot):
    store = filled_store()
    widget = TrafficPane(store)
    qtbot.addWidget(widget)
    widget.resize(1280, 800)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    widget.close()
    store.close()


def parts(pane: TrafficPane):
    view = pane.findChild(QTableView, "trafficView")
    detail = pane.findChild(QWidget, "trafficDetail")
    assert view is not None and detail is not None
    return view, detail


def find(store: TrafficStore, kind: str, method: str | None = None) -> int:
    return next(n for n in range(len(store)) if store.kind(n) == kind and (method is None or store.method(n) == method))


def click_record(qtbot, view: QTableView, n: int) -> None:
    model = view.model()
    row = model.row_of(n)
    index = model.index(row, tm.COL_SUMMARY)
    view.scrollTo(index)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(index).center())


def test_selecting_a_row_shows_highlighted_json_and_the_raw_text(pane, qtbot):
    view, detail = parts(pane)
    store = pane.store
    assert view.model().rowCount() == len(store)
    n = find(store, "response", "tools/list")
    click_record(qtbot, view, n)
    assert pane.selected_record() == n
    pretty = detail.findChild(QPlainTextEdit, "trafficDetailPretty")
    raw = detail.findChild(QPlainTextEdit, "trafficDetailRaw")
    header = detail.findChild(QLabel, "trafficDetailHeader")
    assert json.loads(pretty.toPlainText()) == json.loads(store.raw(n))
    assert detail.toPlainText() == pretty.toPlainText()
    assert pretty.toPlainText().startswith("{\n  ")
    assert raw.toPlainText() == store.raw(n).decode()
    assert f"#{n}" in header.text() and "tools/list" in header.text() and "ms" in header.text()
    # highlighted: the lines of the document carry pygments colours
    doc = pretty.document()
    coloured = sum(1 for b in range(min(doc.blockCount(), 20)) if doc.findBlockByNumber(b).layout().formats())
    assert coloured >= 5 and detail.highlighted
    # Copy raw / Copy pretty
    detail.findChild(QPushButton, "trafficCopyRaw").click()
    assert QGuiApplication.clipboard().text() == store.raw(n).decode()
    detail.findChild(QPushButton, "trafficCopyPretty").click()
    assert QGuiApplication.clipboard().text() == pretty.toPlainText()


def test_the_pair_is_marked_and_ctrl_j_jumps_to_it(pane, qtbot):
    view, detail = parts(pane)
    store = pane.store
    request = find(store, "request", "tools/list")
    response = store.pair(request)
    click_record(qtbot, view, request)
    model = view.model()
    bg = Qt.ItemDataRole.BackgroundRole
    assert model.data(model.index(model.row_of(response), 0), bg) is tm.PAIR_BRUSH
    button = detail.findChild(QPushButton, "trafficPairButton")
    assert button.isEnabled() and f"#{response}" in button.text()
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_J, Qt.KeyboardModifier.ControlModifier)
    assert pane.selected_record() == response
    assert model.data(model.index(model.row_of(request), 0), bg) is tm.PAIR_BRUSH
    button.click()
    assert pane.selected_record() == request
    # a row without a pair
    note = find(store, "notification")
    pane.select_record(note)
    assert not button.isEnabled() and pane.jump_to_pair() is False
    # a server's request and our answer pair up too
    ping = next(n for n in range(len(store)) if store.kind(n) == "request" and store.direction(n) == "in")
    pane.select_record(ping)
    assert pane.jump_to_pair() and store.direction(pane.selected_record()) == "out"


def test_filter_bar_narrows_the_rows(pane, qtbot):
    view, _detail = parts(pane)
    store = pane.store
    model = view.model()
    edit = pane.findChild(QLineEdit, "trafficFilter")
    qtbot.keyClicks(edit, "tools/call")
    qtbot.waitUntil(lambda: model.filter.text == "tools/call", timeout=3000)
    rows = [model.record_at(r) for r in range(model.rowCount())]
    assert 0 < len(rows) < len(store)
    assert rows == reference(store, model.filter)
    assert all(store.method(n) == "tools/call" or b"tools/call" in store.raw(n) for n in rows)
    edit.clear()
    pane.apply_filter()
    assert model.rowCount() == len(store)
    kind = pane.findChild(QComboBox, "trafficKind")
    kind.setCurrentIndex(kind.findText("Malformed"))
    assert model.rowCount() == sum(1 for n in range(len(store)) if store.kind(n) == "malformed")
    pane.select_row(0)
    problem = pane.findChild(QLabel, "trafficDetailProblem")
    assert problem.isVisible() and problem.text().startswith("Malformed: ")
    assert store.malformed(pane.selected_record()) in problem.text()
    kind.setCurrentIndex(0)
    direction = pane.findChild(QComboBox, "trafficDirection")
    direction.setCurrentIndex(direction.findText("→ Sent"))
    assert {store.direction(model.record_at(r)) for r in range(model.rowCount())} == {"out"}
    direction.setCurrentIndex(0)
    pane.set_server_filter("hostile")
    assert pane.findChild(QComboBox, "trafficServer").currentText() == "hostile"
    assert {store.server_id(model.record_at(r)) for r in range(model.rowCount())} == {"hostile"}
    pane.set_server_filter(None)
    assert model.rowCount() == len(store)
    pane.set_server_filter("not-yet-seen")
    assert model.rowCount() == 0


def test_selection_survives_a_filter_change(pane, qtbot):
    store = pane.store
    n = find(store, "response", "prompts/list")
    pane.select_record(n)
    pane.set_filter_text("prompts")
    assert pane.selected_record() == n


def test_live_rows_pause_clear_and_autoscroll(pane, qtbot):
    view, _detail = parts(pane)
    store = pane.store
    model = view.model()
    total = len(store)
    pane.findChild(QToolButton, "trafficClear").click()
    assert model.rowCount() == 0 and len(store) == total
    data = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"live"}}'
    for i in range(300):
        store.add("demo", Frame("in", data, 1000 + i, 1e9))
    qtbot.waitUntil(lambda: model.rowCount() == 300, timeout=3000)
    assert model.record_at(0) == total
    qtbot.waitUntil(lambda: view.verticalScrollBar().value() == view.verticalScrollBar().maximum(), timeout=2000)
    assert view.verticalScrollBar().maximum() > 0
    pause = pane.findChild(QToolButton, "trafficPause")
    pause.click()
    store.add("demo", Frame("in", data, 2000, 1e9))
    qtbot.wait(200)
    assert model.rowCount() == 300 and "paused" in pane.findChild(QLabel, "trafficCount").text()
    pause.click()
    assert model.rowCount() == 301
    # fixed row heights, never resized to contents
    heights = {view.rowHeight(r) for r in range(0, 301, 50)}
    assert len(heights) == 1
    assert view.verticalHeader().sectionResizeMode(0).name == "Fixed"


def test_export_writes_the_shown_rows(pane, tmp_path):
    store = pane.store
    pane.set_server_filter("hostile")
    count = pane.export_jsonl(tmp_path / "shown.jsonl")
    lines = [json.loads(x) for x in (tmp_path / "shown.jsonl").read_text(encoding="utf-8").splitlines()]
    assert count == len(lines) == pane.model.rowCount()
    assert {line["server"] for line in lines} == {"hostile"}
    assert pane.export_jsonl(tmp_path / "all.jsonl", shown_only=False) == len(store)


def _palettes():
    try:
        from inspector.ui.base.theme import dark_palette, light_palette
        return {"light": light_palette(), "dark": dark_palette()}
    except ImportError:  # pragma: no cover - the theme module belongs to the main window
        from PySide6.QtGui import QColor, QPalette
        dark = QPalette(QColor("#2a2e35"), QColor("#16181c"))
        return {"light": QPalette(), "dark": dark}


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_screenshot_with_real_traffic(qtbot, theme):
    app = QApplication.instance()
    old_style, old_palette = app.style().name(), app.palette()
    app.setStyle("Fusion")
    app.setPalette(_palettes()[theme])
    store = filled_store()
    try:
        pane = TrafficPane(store)
        qtbot.addWidget(pane)
        pane.resize(1400, 900)
        pane.show()
        qtbot.waitExposed(pane)
        pane.findChild(QToolButton, "trafficAutoScroll").setChecked(False)
        request = find(store, "request", "tools/call")
        pane.select_record(request)
        pane.view.scrollToTop()
        qtbot.wait(50)
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"traffic-pane-{theme}.png"
        assert pane.grab().save(str(path))
        assert path.stat().st_size > 10_000
        wide = ARTIFACTS / f"traffic-pane-{theme}-dock.png"
        pane.resize(1600, 420)
        qtbot.wait(50)
        pane.select_record(find(store, "malformed"))
        assert pane.split.orientation() == Qt.Orientation.Horizontal
        assert pane.grab().save(str(wide))
        pane.close()
    finally:
        app.setPalette(old_palette)
        app.setStyle(old_style)
        store.close()


def test_highlight_ranges_count_utf16_like_qt(qapp):
    from pygments.lexers import JsonLexer

    from inspector.ui.base.highlight import JsonHighlighter, token_ranges

    text = '{\n  "emoji": "😀😀",\n  "n": 1\n}'
    lines = token_ranges(text, JsonLexer(), "default")
    assert len(lines) == 4
    starts = [(start, length) for start, length, _fmt in lines[1]]
    assert starts[0] == (2, 7)  # "emoji"
    assert starts[-1] == (11, 6)  # "😀😀": two characters, four UTF-16 units, plus the quotes
    n_line = [(start, length) for start, length, _fmt in lines[2]]
    assert n_line[0] == (2, 3) and n_line[-1] == (7, 1)
    edit = QPlainTextEdit()
    highlighter = JsonHighlighter(edit.document())
    assert highlighter.set_text(text)
    assert not highlighter.set_text("x" * 500_000)  # too big to colour
    assert not highlighter.set_text("plain", json=False)


def test_a_reopened_session_shows_in_the_pane(qtbot, tmp_path):
    path = tmp_path / "saved.sqlite"
    live = filled_store(str(path))
    live.close()
    store = TrafficStore.open_session(path)
    pane = TrafficPane(store)
    qtbot.addWidget(pane)
    assert pane.model.rowCount() == len(store) == len(live)
    assert pane.findChild(QComboBox, "trafficServer").count() == 3  # all, demo, hostile
    pane.select_record(find(store, "response", "tools/list"))
    assert pane.detail.highlighted and pane.jump_to_pair()
    pane.close()
