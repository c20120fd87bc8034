"""A read's run of `notifications/message` becomes log entries in one step, as one by one would make them."""

from __future__ import annotations

from inspector.session.log import ServerLog, entries_from_messages, entry_from_message

ODD = [
    {"level": "info", "logger": "a", "data": "plain"},
    {"level": "warning", "data": "no logger"},
    {"level": "error", "logger": "b", "data": {"structured": [1, 2]}},
    {"level": 7, "logger": 8, "data": "bad level and logger"},
    {"data": None},
    "not an object",
    None,
]


def test_a_run_is_what_one_by_one_makes() -> None:
    run = entries_from_messages(ODD, 123.0)
    one = [entry_from_message(p) for p in ODD]
    assert [(e.level, e.text, e.logger) for e in run] == [(e.level, e.text, e.logger) for e in one]
    assert all(e.wall == 123.0 for e in run)


def test_extend_keeps_order_limit_and_count_and_tells_once() -> None:
    log = ServerLog(limit=3)
    told: list[int] = []
    log.changed.connect(lambda: told.append(log.total))
    log.extend(entries_from_messages([{"level": "info", "data": f"line {i}"} for i in range(5)], 1.0))
    log.extend([])
    assert [e.text for e in log] == ["line 2", "line 3", "line 4"]
    assert log.total == 5 and told == [5]
