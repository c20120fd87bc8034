"""The message bridge: Qt-free code tells the user something; the window hears it once it listens."""

from __future__ import annotations

import pytest

from inspector import messages


def drain(message):
    pass


def test_what_is_said_before_anyone_listens_waits_and_arrives_in_order():
    messages.warning("no keyring: secrets are kept for this session only")
    messages.info("imported 3 servers")
    heard: list[messages.Message] = []
    messages.attach(heard.append)
    try:
        messages.error("recording stopped", details="disk full")
        assert [(m.level, m.text) for m in heard] == [("warning", "no keyring: secrets are kept for this session only"),
                                                      ("info", "imported 3 servers"), ("error", "recording stopped")]
        assert heard[-1].details == "disk full" and messages.pending() == []
    finally:
        messages.detach(heard.append)


def test_the_buffer_keeps_the_newest_and_a_broken_listener_is_not_fatal(expect_log):
    for i in range(messages.BUFFERED + 5):
        messages.info(f"m{i}")
    assert len(messages.pending()) == messages.BUFFERED and messages.pending()[0].text == "m5"
    messages.attach(drain)
    messages.detach(drain)
    expect_log("spyglass.messages", "a message listener failed")

    def broken(message):
        raise RuntimeError("listener bug")
    messages.attach(broken)
    try:
        messages.info("still fine")  # logged, not raised
    finally:
        messages.detach(broken)


def test_an_unknown_level_is_a_programming_error():
    with pytest.raises(ValueError):
        messages.say("shout", "x")
