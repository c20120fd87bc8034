"""A recorded server's log is kept by column (`LogLines`): a million log lines of a big session cost their
data and 40 bytes each, not an object each, and read back as the LogEntry list they were."""

from __future__ import annotations

import json
import tracemalloc

from inspector.recording.surface import LogEntry, LogLines, surfaces
from inspector.traffic import Frame, TrafficStore

LINES = 20_000


def test_a_long_log_costs_its_data_and_a_few_bytes_a_line():
    store = TrafficStore(":memory:")
    for i in range(LINES):
        note = {"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "logger": "flood", "data": f"line {i}"}}
        store.add("big", Frame("in", json.dumps(note).encode(), i * 0.001, 1.8e9 + i * 0.001))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        built = surfaces(store)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    log = built["big"].log
    assert len(log) == LINES and log[7] == LogEntry(7, 1.8e9 + 0.007, "info", "flood", "line 7")
    # each line's data, about 60 bytes, and the rest: a LogEntry object each, its number and its time took
    # 130 bytes more before (190 a line in all)
    assert held / LINES < 140, f"{held / LINES:.0f} bytes a log line"
    store.close()


def test_log_lines_read_as_the_list_they_were():
    entries = [LogEntry(n, 100.0 + n, "info" if n % 2 else "debug", None if n % 3 else "l", {"n": n})
               for n in range(5)]
    lines = LogLines(entries[:3])
    lines.append(entries[3])
    lines.add(4, 104.0, "debug", None, {"n": 4})
    assert lines == entries and entries == lines and list(lines) == entries and len(lines) == 5
    assert lines[-1] == entries[-1] and lines[1:3] == entries[1:3] and lines[::-2] == entries[::-2]
    assert lines != entries[:4] and lines != LogLines() and LogLines(entries) == lines
    assert entries[2] in lines and lines.index(entries[2]) == 2
    assert repr(LogLines(entries[:1])) == f"LogLines({entries[:1]!r})"
