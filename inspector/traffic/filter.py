"""Filtered views of the traffic store, incremental and fast at a million rows.

A `FilteredView` is an ascending array of record numbers. `update(limit)` scans
the records appended since the last call (at most `limit` of them, so a UI can
spread a full re-filter over several timer ticks) and appends the matches.

Per chunk of rows the work is done at C speed: the one-byte columns
(direction, kind, server) become 0/1 masks with `bytes.translate`, masks are
combined as big integers, and the matching numbers come out of
`itertools.compress`. The method and tool columns hold codes into short lists of
names: a predicate is decided once per name, and the low byte of every code
(`array.tobytes()[k::itemsize]`) is translated like a one-byte column. Free text
is searched with `bytes.find` over the contiguous raw buffer. The text matches
the method (for responses the method of their request), the malformed reason
and the raw text of the frame (the first `HEAD_MAX` bytes of huge frames); the
one-line summary is derived from those. Smart case: an all-lowercase needle
ignores case (ASCII), any capital makes it case-sensitive.

`TrafficFilter.expr`, a display-filter expression (`expr.py`), is compiled to
the same masks (`_Program`); the rows' tool names come from a per-store
`ToolIndex` that parses only the tools/call requests, once each.
"""

from __future__ import annotations

import json
import operator
import re
import sys
import time
import weakref
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import compress, repeat
from typing import TYPE_CHECKING, Any

from .columns import DIRECTIONS, HEAD_MAX, K_ERROR, K_MALFORMED, K_REQUEST, K_RESPONSE, KINDS, WIDE, Columns
from .expr import SEVERITY_RANK, And, Compare, Flag, Node, Not, Or, Quantity, Search, needs_finding, parse

if TYPE_CHECKING:  # pragma: no cover - a type only: the store imports this module to make views
    from .store import TrafficStore

CHUNK = 65536
STEP = 8192  # records per slice when the caller gives a time budget
CLUSTER_GAP = 64  # flagged rows this close together are scanned as one range

Mask = bytes | bytearray  # one byte per row: 1 matches, 0 does not
_ITEM = array("I").itemsize
_LOW = 0 if sys.byteorder == "little" else _ITEM - 1  # where the low byte of a code sits
_NOT = bytes([1, 0]) + bytes(254)
_CMP: dict[str, Callable[[Any, Any], bool]] = {"==": operator.eq, "!=": operator.ne, "<": operator.lt,
                                              "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _set(values: Iterable[str] | str | None) -> frozenset[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        return frozenset({values})
    return frozenset(values)


@dataclass(frozen=True)
class TrafficFilter:
    """`None` for a criterion means "any"; an empty set matches nothing. Every criterion must hold."""

    text: str = ""
    directions: frozenset[str] | None = None  # out | in | err
    kinds: frozenset[str] | None = None  # request | response | notification | error | malformed | stderr
    servers: frozenset[str] | None = None  # server ids
    start: int = 0  # hide records numbered below this ("clear view")
    background: bool = False  # show the session's background traffic (its heartbeat), hidden by default
    # only the records with a finding (`TrafficStore.flags`); `make` sets it too when `expr` can only match
    # those (`severity >= warning`), so that views take flagged rows in as they are judged
    expert: bool = False
    expr: Node | None = None  # a display-filter expression (`inspector.traffic.expr`)

    @classmethod
    def make(cls, text: str = "", directions: Iterable[str] | str | None = None,
             kinds: Iterable[str] | str | None = None, servers: Iterable[str] | str | None = None,
             start: int = 0, background: bool = False, expert: bool = False,
             expr: Node | str | None = None) -> TrafficFilter:
        """`expr` as a tree or as text (parsed: raises `expr.FilterSyntaxError`)."""
        node = (parse(expr) if expr.strip() else None) if isinstance(expr, str) else expr
        expert = expert or (node is not None and needs_finding(node))
        return cls(text.strip(), _set(directions), _set(kinds), _set(servers), max(0, start), background, expert,
                   node)

    def replace(self, **changes: Any) -> TrafficFilter:
        fields: dict[str, Any] = {"text": self.text, "directions": self.directions, "kinds": self.kinds,
                                  "servers": self.servers, "start": self.start, "background": self.background,
                                  "expert": self.expert, "expr": self.expr}
        fields.update(changes)
        return TrafficFilter.make(**fields)

    @property
    def is_all(self) -> bool:
        return (not self.text and self.directions is None and self.kinds is None and self.servers is None
                and not self.expert and self.expr is None)


def _and(a: Mask | None, b: Mask) -> Mask:
    if a is None:
        return b
    size = len(b)
    return (int.from_bytes(a, "little") & int.from_bytes(b, "little")).to_bytes(size, "little")


def _or(a: Mask, b: Mask) -> Mask:
    return (int.from_bytes(a, "little") | int.from_bytes(b, "little")).to_bytes(len(b), "little")


def _rows_of(mask: Mask, lo: int) -> Iterable[int]:
    """The row numbers where `mask` is 1 (`mask[0]` is row `lo`)."""
    if mask.count(1) * 16 > len(mask):
        return compress(range(lo, lo + len(mask)), mask)
    return _sparse_rows(mask, lo)


def _sparse_rows(mask: Mask, lo: int) -> Iterator[int]:
    pos = mask.find(1)
    while pos >= 0:
        yield lo + pos
        pos = mask.find(1, pos + 1)


def _table(codes: Iterable[int]) -> bytes:
    wanted = set(codes)
    return bytes(1 if i in wanted else 0 for i in range(256))


class _Names:
    """A predicate over a growing list of names (methods, tools, servers), decided once per name."""

    def __init__(self, test: Callable[[str], bool], skip_empty: bool = True) -> None:
        self.test = test
        self.first = 1 if skip_empty else 0  # code 0 is "no method" / "no tool": no value, never a match
        self.seen = 0
        self.hits: set[int] = set()
        self.table = _table(())

    def update(self, names: list[str]) -> set[int]:
        if len(names) != self.seen:
            for code in range(max(self.first, self.seen), len(names)):
                if self.test(names[code]):
                    self.hits.add(code)
            self.seen = len(names)
            self.table = _table(code & 0xFF for code in self.hits)
        return self.hits


def _code_mask(codes: array[int], lo: int, hi: int, names: _Names, count: int) -> Mask:
    """1 where `codes[n]` is one of `names.hits`, for n in [lo, hi); `count` codes exist."""
    if not names.hits:
        return bytes(hi - lo)
    mask = codes[lo:hi].tobytes()[_LOW::_ITEM].translate(names.table)
    if count > 256:  # the low byte alone can be another code's: check those rows one by one
        checked = bytearray(mask)
        hits = names.hits
        pos = checked.find(1)
        while pos >= 0:
            if codes[lo + pos] not in hits:
                checked[pos] = 0
            pos = checked.find(1, pos + 1)
        return checked
    return mask


def _code_rows(codes: array[int], lo: int, hi: int, code: int) -> Iterator[int]:
    """The rows n in [lo, hi) with `codes[n] == code`."""
    low = codes[lo:hi].tobytes()[_LOW::_ITEM]
    byte = code & 0xFF
    pos = low.find(byte)
    while pos >= 0:
        if codes[lo + pos] == code:
            yield lo + pos
        pos = low.find(byte, pos + 1)


_DECODER = json.JSONDecoder()


def _tool_name(store: TrafficStore, n: int) -> str | None:
    c = store.columns
    data = c.head(n) if c.size[n] <= HEAD_MAX else store.raw(n)
    try:
        # the store found it to be JSON-RPC, so it is one JSON text: raw_decode is json.loads without its
        # encoding sniffing and end check, twice as fast
        params = _DECODER.raw_decode(data.decode("utf-8").lstrip())[0].get("params")
    except (ValueError, AttributeError, RecursionError):
        return None
    name = params.get("name") if isinstance(params, dict) else None
    return name if isinstance(name, str) else None


class ToolIndex:
    """The tool of every row (a code into `names`; 0: none): a tools/call request names it in its
    params, its response or error takes its request's. Only the tools/call rows are parsed, once."""

    def __init__(self, store: TrafficStore) -> None:
        self.store = store
        self.codes = array("I")
        self.names: list[str] = [""]
        self.code_of: dict[str, int] = {"": 0}
        self.parsed = 0  # requests parsed so far (for tests)

    def update(self, hi: int) -> None:
        """Index the rows below `hi`."""
        lo = len(self.codes)
        if hi <= lo:
            return
        c = self.store.columns
        self.codes.frombytes(bytes(_ITEM * (hi - lo)))
        call = c.method_code.get("tools/call")
        if call is None:
            return
        for n in _code_rows(c.method, lo, hi, call):
            kind = c.kind[n]
            if kind == K_RESPONSE or kind == K_ERROR:
                p = c.pair[n]
                self.codes[n] = self.codes[p] if 0 <= p < n else 0
                continue
            self.parsed += 1
            name = _tool_name(self.store, n)
            if name is not None:
                code = self.code_of.get(name)
                if code is None:
                    code = self.code_of[name] = len(self.names)
                    self.names.append(name)
                self.codes[n] = code


_TOOL_INDEXES: weakref.WeakKeyDictionary[TrafficStore, ToolIndex] = weakref.WeakKeyDictionary()


def tool_index(store: TrafficStore) -> ToolIndex:
    """The store's tool index, made on first use and shared by its views."""
    index = _TOOL_INDEXES.get(store)
    if index is None:
        index = _TOOL_INDEXES[store] = ToolIndex(store)
    return index


def known_tools(store: TrafficStore) -> list[str]:
    """The tool names the store's tools/call requests named, in order of first appearance."""
    index = tool_index(store)
    index.update(len(store))
    return index.names[1:]


def _rows_mask(rows: set[int], lo: int, hi: int) -> Mask:
    """Rows lo..hi that are in `rows` (a few: the hand-made frames)."""
    mask = bytearray(hi - lo)
    for n in rows:
        if lo <= n < hi:
            mask[n - lo] = 1
    return mask


def _raw_mask(c: Columns, lo: int, hi: int, needle: bytes, fold: bool) -> bytearray:
    """1 where the raw text of the row holds `needle` (`fold`: compared in ASCII lowercase)."""
    if not needle:
        return bytearray(b"\x01" * (hi - lo))
    mask = bytearray(hi - lo)
    off = c.off
    if fold:
        base = off[lo]
        hay = c.buf[base:off[hi]].lower()
    else:
        base, hay = 0, c.buf  # searched in place
    find = hay.find
    size = len(needle)
    top = off[hi] - base
    pos = find(needle, off[lo] - base, top)
    while pos >= 0:
        row = bisect_right(off, base + pos, lo, hi + 1) - 1
        row_end = off[row + 1] - base
        if pos + size <= row_end:
            mask[row - lo] = 1
            pos = find(needle, row_end, top)
        else:  # the match spans two frames: not a match
            pos = find(needle, pos + 1, top)
    return mask


# What makes a regular expression's match depend on the text around it: anchors, word boundaries,
# lookarounds. Without them a match inside a frame is a match of the frames side by side too.
_CONTEXT = re.compile(rb"[\^$]|\\[AZbB]|\(\?<?[=!]")
# What looks before the start of a search that begins at `pos` (`Pattern.search(text, pos, endpos)` is the
# frame alone at its end, not at its start)
_LOOKS_BACK = re.compile(rb"\^|\\[AbB]|\(\?<[=!]")
_LEADING_CARET = re.compile(rb"(\(\?[aiLsux]+\))?\^")  # a pattern anchored at the start (flags first, not m)
_LITERAL = re.compile(rb"[A-Za-z0-9 _/:\"',;=<>@#%&!-]+")  # characters that stand for themselves in a pattern


def _literal_start(source: bytes, flags: int) -> bytes | None:
    """The text every match of `source` starts with (two bytes at least), if it says so plainly."""
    m = _LITERAL.match(source)
    if m is None or b"|" in source or flags & re.IGNORECASE:
        return None
    text = m.group()
    if source[m.end():m.end() + 1] in (b"*", b"+", b"?", b"{"):
        text = text[:-1]  # the last one is quantified
    return text if len(text) >= 2 else None


class _Regex:
    """`text ~ pattern`, each frame searched on its own in effect. A pattern without context is searched
    over a slice of frames at once, and only a match that runs into the next frame is checked on its
    frame alone; one that only looks ahead is searched frame by frame within the slice (pos, endpos), and
    so is one that starts with ^ and looks back nowhere else (matched at each frame's start, without the
    ^); one that looks back otherwise (\b, lookbehind), on a view of each frame. A pattern that starts
    with plain text is tried only on the frames that hold that text (found with `bytes.find`)."""

    def __init__(self, pattern: re.Pattern[bytes]) -> None:
        self.pattern = pattern
        source = pattern.pattern
        self.free = not _CONTEXT.search(source) and pattern.search(b"") is None
        self.bounded = not self.free and not _LOOKS_BACK.search(source)
        self.at_start: re.Pattern[bytes] | None = None  # `^rest` as `rest` matched at the frame's start
        lead = _LEADING_CARET.match(source)
        if not (self.free or self.bounded) and lead is not None and b"|" not in source \
                and not pattern.flags & re.MULTILINE:
            rest = (lead.group(1) or b"") + source[lead.end():]
            if not _LOOKS_BACK.search(rest):
                self.at_start = re.compile(rest, pattern.flags)
        first = self.at_start if self.at_start is not None else pattern
        self.literal = _literal_start(first.pattern, first.flags) if not self.free else None

    def mask(self, c: Columns, lo: int, hi: int) -> Mask:
        off = c.off
        search = self.pattern.search
        bounded = search if self.bounded else self.at_start.match if self.at_start is not None else None
        if bounded is not None:
            buf = c.buf  # searched in place: a search holds the buffer only while it runs
            if self.literal is None:
                return bytes(map(bool, map(bounded, repeat(buf), off[lo:hi], off[lo + 1:hi + 1])))
            mask = _raw_mask(c, lo, hi, self.literal, False)  # the frames that can match
            for n in _rows_of(mask, lo):
                if bounded(buf, off[n], off[n + 1]) is None:
                    mask[n - lo] = 0
            return mask
        if self.free:
            buf, mask = c.buf, bytearray(hi - lo)
            pos, top = off[lo], off[hi]
            while pos < top and (m := search(buf, pos, top)) is not None:
                n = bisect_right(off, m.start(), lo, hi + 1) - 1
                start, end = off[n], off[n + 1]
                if m.end() <= end or search(buf, start, end) is not None:  # it may run into the next frame
                    mask[n - lo] = 1
                pos = end
            return mask
        base = off[lo]
        segment = c.buf[base:off[hi]]  # a copy: a view of the store's buffer would keep it from growing
        starts = map(operator.sub, off[lo:hi], repeat(base))
        ends = map(operator.sub, off[lo + 1:hi + 1], repeat(base))
        view = memoryview(segment)
        return bytes(map(bool, map(search, map(view.__getitem__, map(slice, starts, ends)))))


class _TextSearch:
    """The plain-text search: the method name, the malformed reason and the raw text, smart case."""

    def __init__(self, text: str) -> None:
        self.fold = text == text.lower()
        self.text = text.lower() if self.fold else text
        self.needle = self.text.encode("utf-8")
        self.methods = _Names(lambda name: self.text in (name.lower() if self.fold else name))

    def mask(self, c: Columns, lo: int, hi: int) -> Mask:
        mask = _raw_mask(c, lo, hi, self.needle, self.fold)
        self.methods.update(c.methods)
        if self.methods.hits:
            mask = bytearray(_or(mask, _code_mask(c.method, lo, hi, self.methods, len(c.methods))))
        # malformed reasons (sparse): find the malformed rows through the kind column
        kinds = c.kind
        pos = kinds.find(K_MALFORMED, lo, hi)
        while pos >= 0:
            reason = c.reasons.get(pos, "")
            if self.text in (reason.lower() if self.fold else reason):
                mask[pos - lo] = 1
            pos = kinds.find(K_MALFORMED, pos + 1, hi)
        return mask


def _name_test(op: str, value: str) -> Callable[[str], bool]:
    if op == "==":
        return lambda name: name == value
    if op == "!=":
        return lambda name: name != value
    if op == "~":
        return lambda name: re.search(value, name) is not None
    if value == value.lower():  # contains: smart case
        return lambda name: value in name.lower()
    return lambda name: value in name


Leaf = Callable[[int, int], Mask]


class _Program:
    """An expression compiled to a mask per range of rows."""

    def __init__(self, store: TrafficStore, node: Node) -> None:
        self.store = store
        self.c = store.columns
        self.flagged: list[int] = []  # the flagged rows, ascending
        self.leaves: dict[Node, Leaf] = {}
        self.node = node
        self._compile(node)

    def _compile(self, node: Node) -> None:
        if isinstance(node, And | Or):
            self._compile(node.left)
            self._compile(node.right)
        elif isinstance(node, Not):
            self._compile(node.operand)
        elif node not in self.leaves:
            self.leaves[node] = self._leaf(node)

    def mask(self, lo: int, hi: int) -> Mask:
        return self._eval(self.node, lo, hi)

    def _eval(self, node: Node, lo: int, hi: int) -> Mask:
        if isinstance(node, And):
            left = self._eval(node.left, lo, hi)
            return left if left.find(1) < 0 else _and(left, self._eval(node.right, lo, hi))
        if isinstance(node, Or):
            left = self._eval(node.left, lo, hi)
            return left if left.find(0) < 0 else _or(left, self._eval(node.right, lo, hi))
        if isinstance(node, Not):
            return self._eval(node.operand, lo, hi).translate(_NOT)
        return self.leaves[node](lo, hi)

    # ------------------------------------------------------------------ leaves
    def _leaf(self, node: Node) -> Leaf:
        c = self.c
        if isinstance(node, Search):
            search = _TextSearch(node.text)
            return lambda lo, hi: search.mask(c, lo, hi)
        if isinstance(node, Flag):
            if node.name == "malformed":
                return self._column(c.kind, {K_MALFORMED})
            if node.name == "handmade":
                return lambda lo, hi: _rows_mask(c.handmade, lo, hi)
            return self._flags(lambda _severity: True)
        assert isinstance(node, Compare)
        field, op, value = node.field, node.op, node.value
        if field in ("dir", "kind"):
            names = DIRECTIONS if field == "dir" else KINDS
            code = names.index(str(value))
            return self._column(c.dir if field == "dir" else c.kind,
                                {code} if op == "==" else set(range(len(names))) - {code})
        if field == "severity":
            wanted, test = SEVERITY_RANK[str(value)], _CMP[op]
            return self._flags(lambda severity: test(2 - severity, wanted))
        if field == "latency":
            assert isinstance(value, Quantity)
            return self._latency(_CMP[op], value.value)
        if field == "size":
            assert isinstance(value, Quantity)
            size_test, limit = _CMP[op], value.value
            return lambda lo, hi: bytes(map(size_test, c.size[lo:hi], repeat(limit)))
        if field == "id":
            return self._id(op, value)
        assert isinstance(value, str)
        if field == "text":
            if op == "~":
                regex = _Regex(re.compile(value.encode("utf-8")))
                return lambda lo, hi: regex.mask(c, lo, hi)
            fold = value == value.lower()
            needle = value.encode("utf-8")
            return lambda lo, hi: _raw_mask(c, lo, hi, needle, fold)
        names_test = _Names(_name_test(op, value), skip_empty=field != "server")
        if field == "server":
            return lambda lo, hi: _server_mask(c, lo, hi, names_test.update(c.servers))
        if field == "method":
            def methods(lo: int, hi: int) -> Mask:
                names_test.update(c.methods)
                return _code_mask(c.method, lo, hi, names_test, len(c.methods))
            return methods
        index = tool_index(self.store)

        def tools(lo: int, hi: int) -> Mask:
            index.update(hi)  # from the first row, also for a view that starts later: an answer needs its request
            names_test.update(index.names)
            return _code_mask(index.codes, lo, hi, names_test, len(index.names))
        return tools

    @staticmethod
    def _column(column: bytearray, codes: set[int]) -> Leaf:
        table = _table(codes)
        return lambda lo, hi: column[lo:hi].translate(table)

    def _flags(self, test: Callable[[int], bool]) -> Leaf:
        flags = self.store.flags

        def leaf(lo: int, hi: int) -> Mask:
            order = self.store.flag_order
            if len(order) != len(self.flagged):
                self.flagged = sorted(order)
            mask = bytearray(hi - lo)
            rows = self.flagged
            for n in rows[bisect_left(rows, lo):bisect_left(rows, hi)]:
                if test(flags[n]):
                    mask[n - lo] = 1
            return mask
        return leaf

    def _latency(self, test: Callable[[float, float], bool], limit: float) -> Leaf:
        c = self.c
        answers = _table({K_RESPONSE, K_ERROR})

        def leaf(lo: int, hi: int) -> Mask:
            mask = bytearray(hi - lo)
            pair, mono = c.pair, c.mono
            for n in _rows_of(c.kind[lo:hi].translate(answers), lo):
                p = pair[n]
                if 0 <= p < n and test(mono[n] - mono[p], limit):
                    mask[n - lo] = 1
            return mask
        return leaf

    def _id(self, op: str, value: object) -> Leaf:
        c = self.c
        ids = c.ids
        carriers = _table({K_REQUEST, K_RESPONSE, K_ERROR, K_MALFORMED})  # the kinds of row that have an id

        def leaf(lo: int, hi: int) -> Mask:
            if op == "!=":
                # ids are int or str (never bool): != keeps 7 and "7" apart, and needs an id
                rows = range(lo, hi)
                same = bytes(map(operator.eq, map(ids.get, rows), repeat(value)))
                return _and(bytes(map(ids.__contains__, rows)), same.translate(_NOT))
            mask = bytearray(hi - lo)
            candidates = list(_rows_of(c.kind[lo:hi].translate(carriers), lo))
            for n in compress(candidates, map(operator.eq, map(ids.get, candidates), repeat(value))):
                mask[n - lo] = 1
            return mask
        return leaf


def _server_mask(c: Columns, lo: int, hi: int, codes: set[int]) -> bytearray:
    mask = c.srv[lo:hi].translate(_table(min(code, WIDE) for code in codes))
    if any(code >= WIDE for code in codes):  # a session with more than 255 servers: check those rows one by one
        pos = mask.find(1)
        while pos >= 0:
            n = lo + pos
            if c.srv[n] == WIDE and c.wide.get(n) not in codes:
                mask[pos] = 0
            pos = mask.find(1, pos + 1)
    return mask


class FilteredView:
    """The record numbers of `store` that match `flt`, in ascending order."""

    def __init__(self, store: TrafficStore, flt: TrafficFilter) -> None:
        self.store = store
        self._columns = store.columns
        self.filter = flt
        self.rows = array("I")
        self.scanned = min(flt.start, len(store)) if flt.start else 0
        self._start = flt.start
        self._dir_table = _table(i for i, d in enumerate(DIRECTIONS) if d in flt.directions) \
            if flt.directions is not None else None
        self._kind_table = _table(i for i, k in enumerate(KINDS) if k in flt.kinds) \
            if flt.kinds is not None else None
        self._search = _TextSearch(flt.text) if flt.text else None
        self._program = _Program(store, flt.expr) if flt.expr is not None else None
        self._flags_seen = 0

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, row: int) -> int:
        return self.rows[row]

    def __iter__(self) -> Iterator[int]:
        return iter(self.rows)

    @property
    def complete(self) -> bool:
        """True when every record of the store has been looked at."""
        return max(self.scanned, self._start) >= len(self.store)

    def row_of(self, n: int) -> int | None:
        """The row at which record `n` is shown, or None if it is filtered out."""
        i = bisect_left(self.rows, n)
        return i if i < len(self.rows) and self.rows[i] == n else None

    def update(self, limit: int | None = None, seconds: float | None = None) -> int:
        """Take in up to `limit` records appended since the last call, stopping
        early once `seconds` have passed (checked every `STEP` records);
        returns how many rows were added to the view."""
        if self.filter.expert:
            return self._update_flagged()
        total = len(self.store)
        lo = max(self.scanned, self._start)
        hi = total if limit is None else min(total, lo + limit)
        before = len(self.rows)
        step = CHUNK if seconds is None else STEP
        deadline = None if seconds is None else time.perf_counter() + seconds
        while lo < hi:
            top = min(hi, lo + step)
            self._scan(lo, top)
            lo = top
            self.scanned = top
            if deadline is not None and time.perf_counter() >= deadline:
                break
        return len(self.rows) - before

    def _update_flagged(self) -> int:
        """An expert view: the flagged records (few, and flagged after they arrived) that match the rest
        of the filter, each looked at once, kept in ascending order."""
        order = self.store.flag_order
        fresh = sorted(n for n in order[self._flags_seen:] if n >= self._start)
        self._flags_seen = len(order)
        self.scanned = len(self.store)
        if not fresh:
            return 0
        matched = array("I")
        rows, self.rows = self.rows, matched
        wanted = set(fresh)
        first = 0
        for i in range(1, len(fresh) + 1):  # rows close together are scanned as one range
            if i == len(fresh) or fresh[i] - fresh[i - 1] > CLUSTER_GAP:
                self._scan(fresh[first], fresh[i - 1] + 1)
                first = i
        self.rows = array("I", sorted({*rows, *(n for n in matched if n in wanted)}))
        return len(self.rows) - len(rows)

    # ------------------------------------------------------------------ internals
    def _scan(self, lo: int, hi: int) -> None:
        c = self._columns
        flt = self.filter
        mask: Mask | None = None
        if self._dir_table is not None:
            mask = c.dir[lo:hi].translate(self._dir_table)
        if self._kind_table is not None:
            mask = _and(mask, c.kind[lo:hi].translate(self._kind_table))
        if flt.servers is not None:
            mask = _and(mask, _server_mask(c, lo, hi, {c.server_code[s] for s in flt.servers
                                                       if s in c.server_code}))
        if self._search is not None:
            mask = _and(mask, self._search.mask(c, lo, hi))
        if self._program is not None and (mask is None or mask.find(1) >= 0):
            mask = _and(mask, self._program.mask(lo, hi))
        if not flt.background and c.background:
            hidden = [n - lo for n in c.background if lo <= n < hi]
            if hidden:
                mask = bytearray(mask) if mask is not None else bytearray(b"\x01" * (hi - lo))
                for i in hidden:
                    mask[i] = 0
        if mask is None:
            self.rows.extend(range(lo, hi))
        else:
            self.rows.extend(_rows_of(mask, lo))
