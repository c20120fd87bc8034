"""Fuzzy matching for the command palette, in the manner of fzy and VS Code's quick open: each typed word
must appear in the label as a subsequence of its letters (in any order of words), and a match scores
higher when its letters start words and follow each other. `match` returns the score and the positions
of the matched characters, which the palette draws highlighted. No Qt.
"""

from __future__ import annotations

from collections.abc import Sequence

_SEPARATORS = frozenset(" :/_-.(›»,")
_START = 8.0  # a letter that starts a word ("tl" -> "Traffic: cLear" scores less than "TimeLine")
_FIRST = 1.0  # ... and the label's very first letter a little more (it is the group's: little)
_NEXT = 10.0  # a letter right after the previous matched one: a run beats scattered word starts
_GAP = 0.3  # each letter skipped between two matched ones
_NONE = float("-inf")


def _word_starts(text: str) -> list[bool]:
    out = []
    prev = " "
    for ch in text:
        out.append(prev in _SEPARATORS or (prev.islower() and ch.isupper()) or (not prev.isalnum() and ch.isalnum()))
        prev = ch
    return out


def _is_subsequence(word: str, hay: str) -> bool:
    at = 0
    for ch in word:
        at = hay.find(ch, at)
        if at < 0:
            return False
        at += 1
    return True


def _best(word: str, hay: str, starts: Sequence[bool]) -> tuple[float, list[int]] | None:
    """The best placement of `word`'s letters in `hay` (both casefolded), by dynamic programming over
    (letter of the word, position in the label): O(len(word) * len(hay))."""
    n = len(hay)
    prev: list[float] = []
    back: list[list[int]] = []
    for i, ch in enumerate(word):
        row = [_NONE] * n
        came = [-1] * n
        best_before, best_at = _NONE, -1  # the best of the previous row strictly left of j - 1
        for j in range(n):
            if i and j >= 2 and prev[j - 2] > _NONE:
                gap_score = prev[j - 2] + _GAP * (j - 2)
                if gap_score > best_before:
                    best_before, best_at = gap_score, j - 2
            if hay[j] != ch:
                continue
            bonus = (_START if starts[j] else 0.0) + (_FIRST if j == 0 else 0.0)
            if i == 0:
                row[j] = bonus - _GAP * j * 0.1
                continue
            cand, frm = _NONE, -1
            if j >= 1 and prev[j - 1] > _NONE:
                cand, frm = prev[j - 1] + _NEXT, j - 1
            if best_before > _NONE:
                gapped = best_before - _GAP * (j - 1)  # undo the stored offset: minus the letters skipped
                if gapped > cand:
                    cand, frm = gapped, best_at
            if cand > _NONE:
                row[j] = cand + bonus
                came[j] = frm
        prev = row
        back.append(came)
    end = max(range(n), key=lambda j: prev[j], default=-1)
    if end < 0 or prev[end] == _NONE:
        return None
    positions = [end]
    for i in range(len(word) - 1, 0, -1):
        positions.append(back[i][positions[-1]])
    positions.reverse()
    return prev[end], positions


def match(query: str, text: str) -> tuple[float, list[int]] | None:
    """None when some word of `query` is not in `text`; else (score, sorted matched positions). An empty query
    matches everything with score 0. A word found whole scores above any scattered placement of it."""
    words = query.casefold().split()
    if not words:
        return 0.0, []
    hay = text.casefold()
    if len(hay) != len(text):  # casefolding changed the length (ß -> ss): fall back to lower()
        hay = text.lower()
    starts = _word_starts(text)
    score, positions = 0.0, set()
    for word in words:
        if not _is_subsequence(word, hay):
            return None
        found = _best(word, hay, starts)
        if found is None:  # pragma: no cover - a subsequence always has a placement
            return None
        s, p = found
        if word in hay:
            s += 2.0 * len(word)
        score += s
        positions.update(p)
    return score - 0.01 * len(text), sorted(positions)
