"""Test-wide setup: offscreen Qt, the hypothesis profile, the no-orphan check, and the check that fails a
test logging a warning it did not expect (`expect_log`). Shared helpers live in `support.py`."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from hypothesis import settings as _hsettings

# CI machines are small and shared: judge properties, not speed.
_hsettings.register_profile("spyglass", deadline=None)
_hsettings.load_profile("spyglass")


# Chromium's helpers (Qt WebEngine, for MCP Apps) live as long as the QApplication, which outlives each test;
# the renderer of each app page is their child and ends with its page (tests/ui/test_ui_apps.py checks that).
QT_HELPERS = ("QtWebEngineProc",)


def _live_children() -> list[str]:
    """Processes whose parent is this test process and that are not zombies (Qt WebEngine's helpers aside)."""
    me = str(os.getpid())
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may contain spaces, so split after the last ')'
        head, _, rest = text.rpartition(")")
        fields = rest.split()
        name = head.split(" (", 1)[1] if " (" in head else head
        if len(fields) >= 2 and fields[1] == me and fields[0] != "Z" and name not in QT_HELPERS:
            out.append(name)
    return out


@pytest.fixture(autouse=True)
def no_orphan_processes():
    """Every test must end every process it started (never an orphan)."""
    yield
    if not Path("/proc").exists():
        return
    import time

    deadline = time.monotonic() + 3
    left = _live_children()
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = _live_children()
    assert not left, f"test left processes running: {left}"


class LogFailHandler(logging.Handler):
    """Collects every record at WARNING or above while a test runs (qutebrowser's LogFailHandler idea): a
    warning nobody expected is a fault the test did not see."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []
        self.expected: list[tuple[str, int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def allowed(self, record: logging.LogRecord) -> bool:
        return any((not logger or record.name == logger or record.name.startswith(logger + "."))
                   and record.levelno <= level
                   and text in record.getMessage() for logger, level, text in self.expected)


@pytest.fixture(autouse=True)
def fail_on_unexpected_warnings():
    """Fails a test that logs a WARNING or worse it did not declare with `expect_log`."""
    handler = LogFailHandler()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
    unexpected = [r for r in handler.records if not handler.allowed(r)]
    if unexpected:
        lines = "\n".join(f"  {r.levelname} {r.name}: {r.getMessage()[:300]}" for r in unexpected[:10])
        pytest.fail(f"the test logged {len(unexpected)} unexpected warning(s) or error(s):\n{lines}\n"
                    "(declare the ones it provokes on purpose with the expect_log fixture)", pytrace=False)


@pytest.fixture
def expect_log(fail_on_unexpected_warnings):
    """`expect_log("spyglass.client", "tool 'broken' dropped")`: this test provokes that record on purpose
    (at `level` or below, WARNING by default; the text is a part of the message)."""

    def expect(logger: str = "", text: str = "", level: int = logging.CRITICAL) -> None:
        fail_on_unexpected_warnings.expected.append((logger, level, text))

    return expect


def _forget_messages() -> None:
    from inspector import messages

    def heard(_message: object) -> None:
        pass

    messages.attach(heard)  # a listener that hears what waits, and forgets it
    messages.detach(heard)


@pytest.fixture(autouse=True)
def empty_message_bridge():
    """What one test told the user (inspector.messages buffers until a window listens) must not turn up
    in the next test's window."""
    _forget_messages()
    yield
    _forget_messages()


@pytest.fixture
def listener():
    """A loopback listener that answers and counts the connections a followed `$ref` would make
    (tests/refs_peers.py)."""
    import refs_peers

    yield from refs_peers.listening()


@pytest.fixture
def staller():
    """A loopback port that accepts and never answers: a followed `$ref` would wait on it for ever."""
    import refs_peers

    yield from refs_peers.listening(answer=False)
