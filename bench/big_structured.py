"""Benchmark: a tool result with about 50 MB of structured content in the result view.

The result is what a tool returning a big table looks like: `structuredContent` an object holding an array of
records (about 50 MB as JSON), the same data serialized in a text block (as the spec asks), and an outputSchema
that describes the records. Measured in a shown, offscreen window with a 10 ms heartbeat QTimer, from
`ResultView.show_record` until the view has settled (the outputSchema verdict shown), then while the tree's
array's ranges are opened down to its last record (a long array shows its items in ranges, as browsers'
developer tools do), and every record is counted through the ranges:
the longest loop turn of each phase, and the baseline of building every node of the tree at once
(a QTreeWidget item per node, what a naive viewer does) for the ratio.

Goals: no loop turn over 50 ms in either phase; the schema verdict and every row reachable.

    QT_QPA_PLATFORM=offscreen python bench/big_structured.py [MEGABYTES]
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

STALL_GOAL_MS = 50.0

SCHEMA = {
    "type": "object",
    "properties": {
        "rows": {"type": "array", "items": {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "email": {"type": "string"},
                           "score": {"type": "number"}, "active": {"type": "boolean"},
                           "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["id", "name"]}},
        "total": {"type": "integer"},
    },
    "required": ["rows", "total"],
}


def make_content(megabytes: int) -> dict:
    row = {"id": 0, "name": "Ada Lovelace the " + "x" * 40, "email": "ada@example.com", "score": 12.5,
           "active": True, "tags": ["alpha", "beta", "gamma"]}
    per = len(json.dumps(row)) + 2
    n = megabytes * 1024 * 1024 // per
    rows = [dict(row, id=i, name=f"{row['name']} {i}") for i in range(n)]
    return {"rows": rows, "total": n}


def main() -> int:
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QApplication, QTreeView, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget
    from traffic_flood import Heartbeat, compile_package
    from traffic_flood import pump as run_until
    from traffic_flood import settle as run_for

    compile_package()
    from inspector.session.calls import OK, CallRecord
    from inspector.ui.render.result_view import ResultView

    megabytes = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    app = QApplication.instance() or QApplication([])
    content = make_content(megabytes)
    text = json.dumps(content)
    result = {"content": [{"type": "text", "text": text}], "structuredContent": content}
    page = QWidget()
    lay = QVBoxLayout(page)
    page.resize(1200, 900)
    page.show()
    beat = Heartbeat()

    def pump(until, limit_s: float = 120.0) -> float:
        return run_until(app, until, limit_s)

    def settle(seconds: float = 0.3) -> None:
        run_for(app, seconds)

    # baseline: one item per node, built at once
    beat.start()
    started = time.perf_counter()
    naive = QTreeWidget(page)
    stack = [(naive, "(root)", content)]
    while stack:
        parent, key, value = stack.pop()
        item = QTreeWidgetItem(parent, [key, "" if isinstance(value, (dict, list)) else str(value)])
        if isinstance(value, dict):
            stack.extend((item, k, v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((item, f"[{i}]", v) for i, v in enumerate(value))
    lay.addWidget(naive)
    settle()
    beat.stop()
    baseline_ms, baseline_s = beat.max_stall_ms, time.perf_counter() - started - 0.3
    naive.hide()
    naive.deleteLater()
    settle()

    view = ResultView(page)
    lay.addWidget(view)
    settle()
    rec = CallRecord(1, "s", "table", {}, outcome=OK, result=result, tool_def={"name": "table", "outputSchema": SCHEMA})
    beat.start()
    started = time.perf_counter()
    view.show_record(rec)

    def verdict():
        return view.findChild(QWidget, "structuredValid") or view.findChild(QWidget, "structuredErrors")

    took = pump(lambda: verdict() is not None)
    settle()
    beat.stop()
    shown_ms = beat.max_stall_ms
    tree = view.findChild(QTreeView, "structuredTree")
    model = tree.model()
    root = model.index(0, 0)
    rows_index = next(model.index(r, 0, root) for r in range(model.rowCount(root))
                      if model.index(r, 0, root).data() == "rows")
    beat.start()
    started = time.perf_counter()
    index = rows_index  # open the last range, and its last range, down to the last record, then select it
    while True:
        tree.expand(index)
        app.processEvents(QEventLoop.AllEvents, 5)
        last = model.index(model.rowCount(index) - 1, 0, index)
        if model.data(last).startswith("[") and "…" not in model.data(last):
            break
        index = last
    tree.setCurrentIndex(last)
    tree.scrollTo(last)
    settle()
    beat.stop()
    opened_s = time.perf_counter() - started - 0.3
    scroll_ms = beat.max_stall_ms
    last_key = model.data(last)

    def records(index) -> int:  # every record reachable through the ranges
        n = 0
        for r in range(model.rowCount(index)):
            child = model.index(r, 0, index)
            n += records(child) if "…" in model.data(child) else 1
        return n

    reachable = records(rows_index)
    print(f"structured content: {len(text) / 1e6:.1f} MB as JSON, {len(content['rows']):,} records")
    print(f"baseline, a tree item per node at once: stall {baseline_ms:8.1f} ms ({baseline_s:.2f} s)")
    print(f"Spyglass, shown to the schema verdict:  stall {shown_ms:8.1f} ms ({took:.2f} s to the verdict: "
          f"{'valid' if view.findChild(QWidget, 'structuredValid') else 'errors'})")
    print(f"Spyglass, opening the ranges down to the last record {last_key} and selecting it: stall "
          f"{scroll_ms:8.1f} ms ({opened_s:.2f} s); records reachable: {reachable:,}")
    worst = max(shown_ms, scroll_ms)
    print(f"worst stall {worst:.1f} ms (goal <= {STALL_GOAL_MS:.0f} ms), {worst / max(baseline_ms, 0.1):.3f}x the "
          "baseline's")
    ok = worst <= STALL_GOAL_MS and reachable == len(content["rows"]) and verdict() is not None
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
