"""The palette's fuzzy matching, alone: what matches, what comes first, and which letters are marked."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from inspector.ui.window.palette_match import match


def test_every_word_must_be_found_as_letters_in_order():
    assert match("mdrep", "Tool: Markdown report (markdown_report)") is not None
    assert match("xyz", "Server: Connect") is None
    assert match("connect server", "Server: Connect") is not None  # words in any order
    assert match("", "anything") == (0.0, [])


def test_word_starts_and_runs_rank_first():
    def score(q: str, t: str) -> float:
        got = match(q, t)
        assert got is not None, (q, t)
        return got[0]

    assert score("dark", "View › Theme: Dark") > score("dark", "Tool: Draw a bar chart kindly")
    assert score("res", "Tab: Resources") > score("res", "Tool: Get the config files (gets_fresh)")
    assert score("check", "Tab: Check") > score("check", "Tool: Cancel the hooked checkout")


def test_the_marked_letters_are_the_matched_ones():
    text = "Tool: Divide two numbers (divide)"
    _, positions = match("div", text)
    assert "".join(text[i] for i in positions) == "Div"
    text = "Server: Raw composer"
    _, positions = match("srv rc", text)
    assert "".join(text[i] for i in positions).casefold() == "srvrc"


@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=6))
def test_positions_spell_each_word(text, word):
    got = match(word, text)
    folded = text.casefold() if len(text.casefold()) == len(text) else text.lower()
    w = word.casefold().split()
    if got is None:
        return
    positions = got[1]
    assert positions == sorted(set(positions)) and all(0 <= p < len(text) for p in positions)
    assert all(any(folded[p] == ch for p in positions) for token in w for ch in token)
