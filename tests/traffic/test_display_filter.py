"""The display-filter language: the parser (every field, operator and error with its span), printing
round trips, telling expressions from plain text, completion contexts, and the compiled column masks
checked against a plain per-row evaluator on real and random stores."""

from __future__ import annotations

import json
import math
import operator
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from traffic_helpers import filled_store

from inspector.protocol import jsonrpc as rpc
from inspector.traffic import FilteredView, Frame, TrafficFilter, TrafficStore
from inspector.traffic.expr import (
    FIELDS,
    And,
    Compare,
    FilterSyntaxError,
    Flag,
    Not,
    Or,
    Quantity,
    Search,
    context_at,
    is_expression,
    needs_finding,
    parse,
    unparse,
)
from inspector.traffic.filter import STEP, known_tools, tool_index

# ---------------------------------------------------------------------- the parser

PARSED = [
    ('method == "tools/call"', Compare("method", "==", "tools/call")),
    ("method == tools/call", Compare("method", "==", "tools/call")),
    ("method != ping", Compare("method", "!=", "ping")),
    ('method ~ "resources/"', Compare("method", "~", "resources/")),
    ('method matches "^res"', Compare("method", "~", "^res")),
    ("method contains list", Compare("method", "contains", "list")),
    ('tool == "weather"', Compare("tool", "==", "weather")),
    ("tool ~ wea", Compare("tool", "~", "wea")),
    ('server == "demo"', Compare("server", "==", "demo")),
    ("server contains dem", Compare("server", "contains", "dem")),
    ('text contains "Oslo"', Compare("text", "contains", "Oslo")),
    ('text ~ "a\\.b"', Compare("text", "~", "a\\.b")),
    ("dir == out", Compare("dir", "==", "out")),
    ("dir != in", Compare("dir", "!=", "in")),
    ('dir == "ERR"', Compare("dir", "==", "err")),
    ("dir == http", Compare("dir", "==", "http")),
    ("kind == error", Compare("kind", "==", "error")),
    ("kind != stderr", Compare("kind", "!=", "stderr")),
    ("latency > 500ms", Compare("latency", ">", Quantity(500, "ms"))),
    ("latency > 500", Compare("latency", ">", Quantity(500, "ms"))),
    ("latency >= 1.5s", Compare("latency", ">=", Quantity(1.5, "s"))),
    ("latency < 250us", Compare("latency", "<", Quantity(250, "us"))),
    ("latency <= 250µs", Compare("latency", "<=", Quantity(250, "us"))),
    ("latency == 2MS", Compare("latency", "==", Quantity(2, "ms"))),
    ("latency != .5s", Compare("latency", "!=", Quantity(0.5, "s"))),
    ("size > 1MB", Compare("size", ">", Quantity(1, "MB"))),
    ("size > 1mb", Compare("size", ">", Quantity(1, "MB"))),
    ("size < 2kB", Compare("size", "<", Quantity(2, "kB"))),
    ("size < 2KB", Compare("size", "<", Quantity(2, "kB"))),
    ("size >= 1KiB", Compare("size", ">=", Quantity(1, "KiB"))),
    ("size <= 3MiB", Compare("size", "<=", Quantity(3, "MiB"))),
    ("size == 1GB", Compare("size", "==", Quantity(1, "GB"))),
    ("size != 10", Compare("size", "!=", Quantity(10, "B"))),
    ("size > 1e3B", Compare("size", ">", Quantity(1000.0, "B"))),
    ("id == 7", Compare("id", "==", 7)),
    ("id == -3", Compare("id", "==", -3)),
    ('id == "a"', Compare("id", "==", "a")),
    ('id == "7"', Compare("id", "==", "7")),
    ("id != p1", Compare("id", "!=", "p1")),
    ("severity >= warning", Compare("severity", ">=", "warning")),
    ("severity == error", Compare("severity", "==", "error")),
    ("severity < error", Compare("severity", "<", "error")),
    ("malformed", Flag("malformed")),
    ("expert", Flag("expert")),
    ('"hello world"', Search("hello world")),
    ("'single'", Search("single")),
    ('"a \\"quoted\\" \\\\ word"', Search('a "quoted" \\ word')),
    ("!malformed", Not(Flag("malformed"))),
    ("not expert", Not(Flag("expert"))),
    ("!dir == in", Not(Compare("dir", "==", "in"))),
    ("malformed && expert", And(Flag("malformed"), Flag("expert"))),
    ("malformed and expert", And(Flag("malformed"), Flag("expert"))),
    ("malformed || expert", Or(Flag("malformed"), Flag("expert"))),
    ("malformed or expert", Or(Flag("malformed"), Flag("expert"))),
    ("kind == error || kind == malformed && dir == in",
     Or(Compare("kind", "==", "error"), And(Compare("kind", "==", "malformed"), Compare("dir", "==", "in")))),
    ("(kind == error || malformed) && dir == in",
     And(Or(Compare("kind", "==", "error"), Flag("malformed")), Compare("dir", "==", "in"))),
    ("dir==out&&kind==request", And(Compare("dir", "==", "out"), Compare("kind", "==", "request"))),
    ("!(malformed || expert)", Not(Or(Flag("malformed"), Flag("expert")))),
    ("expert && expert && expert", And(And(Flag("expert"), Flag("expert")), Flag("expert"))),
]


@pytest.mark.parametrize(("text", "tree"), PARSED)
def test_every_field_and_operator_parses(text, tree):
    assert parse(text) == tree
    assert parse(unparse(tree)) == tree


def test_canonical_text():
    assert unparse(parse("method matches x and not (dir == in or kind==error)")) == \
        'method ~ "x" && !(dir == in || kind == error)'
    assert unparse(parse("latency > 500")) == "latency > 500ms"
    assert unparse(parse("size > 1kb")) == "size > 1kB"
    assert unparse(parse("id == 7 || id == '7'")) == 'id == 7 || id == "7"'
    assert unparse(And(Flag("expert"), And(Flag("malformed"), Flag("expert")))) == "expert && (malformed && expert)"
    assert unparse(Or(Flag("expert"), Or(Flag("malformed"), Flag("expert")))) == "expert || (malformed || expert)"
    assert unparse(Not(Not(Compare("dir", "==", "in")))) == "!!(dir == in)"
    assert unparse(Search('say "hi" \\o/')) == '"say \\"hi\\" \\\\o/"'


ERRORS = [
    # (input, words of the message, the span's text)
    ("metod == x", "unknown field 'metod' (did you mean 'method'?)", "metod"),
    ("foo == 1", "unknown field 'foo'", "foo"),
    ("method ==", "'==' needs a value", "=="),
    ("method == && dir == in", "'==' needs a value", "=="),
    ("method", "'method' needs an operator", "method"),
    ("tool echo", "expected an operator after 'tool'", "echo"),
    ('method == "tools', "no closing quote", '"tools'),
    ("(method == x", "this '(' is never closed", "("),
    ("(malformed || (expert)", "this '(' is never closed", "("),
    ("malformed)", "this ')' closes nothing", ")"),
    (")", "expected a condition before ')'", ")"),
    ("()", "expected a condition inside ( )", "()"),
    ("malformed &&", "expected a condition after '&&'", "&&"),
    ("&& malformed", "expected a condition before '&&'", "&&"),
    ("!", "expected a condition after '!'", "!"),
    ("latency > 5kg", "'kg' is not a unit of time", "kg"),
    ("size > 5ms", "'ms' is not a unit of size", "ms"),
    ("latency > fast", "'fast' is not a latency", "fast"),
    ("latency > -5ms", "is not a latency", "-5ms"),
    ('size > "1MB"', "is not a size", '"1MB"'),
    ("latency > 5 ms", "write the unit right after the number: 5ms", "5 ms"),
    ("latency > 1e999", "too large", "1e999"),
    ('method ~ "("', "bad regular expression", '"("'),
    ('text ~ "\\N{DASH}"', "bad regular expression", '"\\N{DASH}"'),
    ("dir > out", "'>' does not apply to dir: use == or !=", ">"),
    ("kind contains err", "'contains' does not apply to kind", "contains"),
    ("latency ~ 5", "'~' does not apply to latency", "~"),
    ("text == x", "'==' does not apply to text: use contains or ~", "=="),
    ("id > 5", "'>' does not apply to id", ">"),
    ("dir == up", "'up' is not a direction: one of out, in, err, http", "up"),
    ("kind == eror", "(did you mean 'error'?)", "eror"),
    ("severity >= warn", "'warn' is not a severity", "warn"),
    ("method = x", "'=' is not an operator: use '=='", "="),
    ("malformed & expert", "use '&&'", "&"),
    ("malformed | expert", "use '||'", "|"),
    ("method == x y", "expected && or || before 'y'", "y"),
    ("malformed expert", "expected && or || before 'expert'", "expert"),
    ("malformed == 1", "malformed takes no operator", "=="),
    ("", "empty", ""),
]


@pytest.mark.parametrize(("text", "words", "span"), ERRORS)
def test_errors_say_what_and_where(text, words, span):
    with pytest.raises(FilterSyntaxError) as info:
        parse(text)
    err = info.value
    assert words in err.message
    assert text[err.start:err.end] == span
    assert 0 <= err.start <= err.end <= len(text)
    assert "character" in str(err)


def test_the_error_position_is_one_based_in_words():
    with pytest.raises(FilterSyntaxError) as info:
        parse("dir == up")
    assert str(info.value).endswith("(characters 8–9)")
    with pytest.raises(FilterSyntaxError) as info:
        parse("dir > out")
    assert str(info.value).endswith("(character 5)")


# ---------------------------------------------------------------------- expression or plain text

@pytest.mark.parametrize(("text", "expression"), [
    ("tools/call", False), ("hello traffic", False), ("text", False), ("method", False), ("  tool  ", False),
    ('"id":7', False), ('{"method":"ping"}', False), ("id:7", False), ("not found", False), ("Method == x", True),
    ("TOOLS", False), ("error", False), ("", False), ("   ", False),
    ("malformed", True), ("expert", True), ("  malformed  ", True), ("not malformed", True), ("not (x", True),
    ("not !x", True), ("!x", True), ("(x", True), ("a == b", True), ("a != b", True), ("a && b", True),
    ("a || b", True), ("tool echo", True), ("method ~ x", True), ("latency>5", True), ("size >1MB", True),
    ("text contains x", True), ("severity >= warning", True), ("dir==out", True),
])
def test_expression_or_plain_text(text, expression):
    assert is_expression(text) is expression


# ---------------------------------------------------------------------- completion contexts

@pytest.mark.parametrize(("text", "kind", "prefix", "field"), [
    ("", "field", "", ""), ("me", "field", "me", ""), ("(", "field", "", ""), ("!", "field", "", ""),
    ("not ", "field", "", ""), ("malformed && ", "field", "", ""), ("malformed || la", "field", "la", ""),
    ("method ", "operator", "", "method"), ("method =", "operator", "=", "method"),
    ("method !", "operator", "!", "method"), ("tool co", "operator", "co", "tool"),
    ("method == ", "value", "", "method"), ("method ==", "value", "", "method"), ("kind ==e", "value", "e", "kind"),
    ('tool == "we', "value", "we", "tool"), ("dir != o", "value", "o", "dir"),
    ("method == x ", "logic", "", ""), ("malformed ", "logic", "", ""), ("(malformed) ", "logic", "", ""),
    ("method == x &", "logic", "&", ""), ('tool == "x" o', "logic", "o", ""),
    ("method == x && (tool == y || ", "field", "", ""),
])
def test_completion_context(text, kind, prefix, field):
    ctx = context_at(text, len(text))
    assert (ctx.kind, ctx.prefix, ctx.field) == (kind, prefix, field)
    if kind != "none":
        assert text[ctx.start:].lstrip('"').startswith(prefix)


def test_completion_in_the_middle_of_the_text():
    text = "method == x && dir == in"
    ctx = context_at(text, text.index("dir") + 2)
    assert (ctx.kind, ctx.prefix, ctx.start) == ("field", "di", text.index("dir"))


# ---------------------------------------------------------------------- random trees print and parse back

ANY_TEXT = st.text(max_size=12)
REGEX = st.one_of(ANY_TEXT.map(re.escape), st.sampled_from(["^tools/", "call$", "o+", "[ab]", r"\w+/\w+", "(?i)OSLO"]))
POSITIVE_FLOATS = (st.floats(min_value=0, allow_nan=False, allow_infinity=False)
                   .filter(lambda x: math.copysign(1, x) == 1))
NUMBER = st.one_of(st.integers(0, 10 ** 12), POSITIVE_FLOATS)


def compares(strings, regexes, ids, numbers, enum_values=None):
    def one(field):
        spec = FIELDS[field]
        if spec.type in ("string", "text"):
            return st.one_of(*(st.builds(Compare, st.just(field), st.just(op), regexes if op == "~" else strings)
                               for op in spec.ops))
        if spec.type in ("enum", "severity"):
            return st.builds(Compare, st.just(field), st.sampled_from(spec.ops), st.sampled_from(spec.choices))
        if spec.type == "id":
            return st.builds(Compare, st.just(field), st.sampled_from(spec.ops), ids)
        units = ["us", "ms", "s"] if spec.type == "duration" else ["B", "kB", "MB", "GB", "KiB", "MiB", "GiB"]
        return st.builds(Compare, st.just(field), st.sampled_from(spec.ops),
                         st.builds(Quantity, numbers, st.sampled_from(units)))
    return st.one_of(*(one(field) for field in FIELDS))


def trees(leaf):
    return st.recursive(leaf, lambda kids: st.one_of(st.builds(Not, kids), st.builds(And, kids, kids),
                                                     st.builds(Or, kids, kids)), max_leaves=10)


ROUND_TRIP_LEAVES = st.one_of(compares(ANY_TEXT, REGEX, st.one_of(st.integers(), ANY_TEXT), NUMBER),
                              st.builds(Flag, st.sampled_from(["malformed", "expert"])), st.builds(Search, ANY_TEXT))


@settings(max_examples=200)
@given(trees(ROUND_TRIP_LEAVES))
def test_printed_trees_parse_back_to_the_same_tree(tree):
    text = unparse(tree)
    assert parse(text) == tree
    assert unparse(parse(text)) == text
    assert is_expression(text) or isinstance(tree, Search)  # a lone quoted string is searched as it is


# ---------------------------------------------------------------------- what a filter means, row by row

SEVERITY = {0: "error", 1: "warning", 2: "info"}
RANK = {"info": 0, "warning": 1, "error": 2}
CMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def tool_of(store: TrafficStore, n: int) -> str | None:
    if store.method(n) != "tools/call":
        return None
    if store.kind(n) in ("response", "error"):
        p = store.pair(n)
        return tool_of(store, p) if p is not None and p < n else None
    try:
        params = json.loads(store.raw(n)).get("params")
    except (ValueError, AttributeError):
        return None
    name = params.get("name") if isinstance(params, dict) else None
    return name if isinstance(name, str) else None


def smart_in(needle: str, hay: str) -> bool:
    return needle in hay.lower() if needle == needle.lower() else needle in hay


def holds(store: TrafficStore, node, n: int) -> bool:
    """The meaning of `node` for record `n`, one field at a time."""
    if isinstance(node, And):
        return holds(store, node.left, n) and holds(store, node.right, n)
    if isinstance(node, Or):
        return holds(store, node.left, n) or holds(store, node.right, n)
    if isinstance(node, Not):
        return not holds(store, node.operand, n)
    if isinstance(node, Flag):
        return store.kind(n) == "malformed" if node.name == "malformed" else n in store.flags
    if isinstance(node, Search):
        text = node.text
        fold = text == text.lower()
        needle = (text.lower() if fold else text).encode()
        head = store.head(n)
        return (smart_in(text, store.method(n) or "") if store.method(n) else False) or \
            (smart_in(text, store.malformed(n)) if store.malformed(n) is not None else False) or \
            needle in (head.lower() if fold else head)
    field, op, value = node.field, node.op, node.value
    have = {"method": store.method(n), "tool": tool_of(store, n), "server": store.server_id(n),
            "text": store.head(n), "dir": store.direction(n), "kind": store.kind(n),
            "severity": SEVERITY.get(store.flags.get(n, -1)), "latency": store.latency(n), "size": store.size(n),
            "id": store.request_id(n)}[field]
    if have is None:
        return False
    if field == "text":
        if op == "~":
            return re.search(value.encode(), have) is not None
        fold = value == value.lower()
        return value.encode() in (have.lower() if fold else have)
    if field in ("method", "tool", "server"):
        if op == "~":
            return re.search(value, have) is not None
        if op == "contains":
            return smart_in(value, have)
        return CMP[op](have, value)
    if field == "severity":
        return CMP[op](RANK[have], RANK[value])
    if field in ("latency", "size"):
        return CMP[op](have, value.value)
    if field == "id":
        same = type(have) is type(value) and have == value
        return same if op == "==" else not same
    return CMP[op](have, value)


def reference(store: TrafficStore, flt: TrafficFilter) -> list[int]:
    return [n for n in range(flt.start, len(store))
            if (flt.background or n not in store.columns.background)
            and (not flt.expert or n in store.flags)
            and (flt.servers is None or store.server_id(n) in flt.servers)
            and (flt.directions is None or store.direction(n) in flt.directions)
            and holds(store, flt.expr, n)]


def test_real_traffic_expressions():
    store = filled_store()
    rows_of = lambda **want: [n for n in range(len(store)) if all(getattr(store, k)(n) == v for k, v in want.items())]
    for n in (rows_of(kind="request", method="tools/call")[0], rows_of(kind="error")[0], rows_of(kind="malformed")[0]):
        store.flag(n, 1)
    store.flag(rows_of(kind="error")[0], 0)
    store.flag(rows_of(kind="notification", direction="in")[0], 2)
    cases = {
        'method == "tools/call"': None, "method ~ \"^notifications/\"": None, "method contains LIST": 0,
        'tool == "echo"': None, "tool == divide || tool == nope": 4, 'tool ~ "^log"': 2, "tool != echo": None,
        "dir == err": None, "dir != in && kind == request": None, "kind == error": 1, "malformed": 8,
        "latency > 0ms && latency < 10s": None, "latency > 1000s": 0, "size > 1kB": None, "size <= 2B": None,
        "id == 7": 2, 'id == "p1"': 2, 'id == "7"': 0, "id != 1": None, 'server == "hostile"': None,
        'server contains "HOST"': 0, "text contains panic": 1, 'text contains "Hello"': None,
        'text ~ "\\"level\\":\\"(warning|error)\\""': 2, "text ~ \"^$\"": 2, "text ~ \"^INFO\"": 2,
        'text ~ "garbage$"': 2, "expert": 4, "severity >= warning": 3, "severity == info": 1,
        "severity < error": 3, "!expert && kind == response": None, '"utf-8"': None,
        '"tools/list" && kind == response': 1,
        "!(dir == err) && !malformed": None,
    }
    for text, count in cases.items():
        flt = TrafficFilter.make(expr=text)
        rows = store.filter(flt).rows.tolist()
        assert rows == reference(store, flt), text
        if count is not None:
            assert len(rows) == count, (text, rows)
        else:
            assert 0 < len(rows) < len(store), text
    # a response and an error take their request's tool
    rows = store.filter(expr='tool == "echo"').rows.tolist()
    assert {store.kind(n) for n in rows} == {"request", "response"}
    nope = next(n for n in range(len(store)) if tool_of(store, n) == "nope")
    assert store.filter(expr="tool == nope").rows.tolist() == [nope, store.pair(nope)]
    assert known_tools(store) == ["echo", "divide", "nope", "log_demo", "long_task", "ask_user"]


def test_tool_names_are_parsed_once_and_only_from_tools_call_requests():
    store = filled_store()
    calls = sum(1 for n in range(len(store)) if store.method(n) == "tools/call" and store.kind(n) == "request")
    store.filter(expr="tool == echo")
    store.filter(expr="tool ~ e")
    assert tool_index(store).parsed == calls
    store.add("demo", Frame("out", b'{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"late"}}', 9, 9))
    assert store.filter(expr="tool == late").rows.tolist() == [len(store) - 1]
    assert tool_index(store).parsed == calls + 1


def test_the_expression_combines_with_the_other_criteria():
    store = filled_store()
    flt = TrafficFilter.make(expr="kind == request", servers="hostile", directions="in", start=50)
    pings = [n for n in range(50, len(store)) if store.server_id(n) == "hostile" and store.direction(n) == "in"
             and store.kind(n) == "request"]
    assert store.filter(flt).rows.tolist() == reference(store, flt) == pings and len(pings) == 2
    both = TrafficFilter.make(text="ping", expr="dir == in")
    found = set(store.filter(text="ping").rows)
    assert store.filter(both).rows.tolist() == [n for n in range(len(store)) if store.direction(n) == "in"
                                                and n in found]
    assert TrafficFilter.make(expr="malformed").replace(expr=None).is_all
    assert not TrafficFilter.make(expr="malformed").is_all
    assert TrafficFilter.make(expr="  ").expr is None
    assert TrafficFilter.make(expr="malformed") == TrafficFilter.make(expr=parse("malformed"))
    with pytest.raises(FilterSyntaxError):
        TrafficFilter.make(expr="dir > in")


def test_an_expression_that_needs_a_finding_takes_rows_as_they_are_judged():
    assert needs_finding(parse("expert && method == ping")) and needs_finding(parse("severity == info"))
    assert needs_finding(parse("expert || severity >= error"))
    assert not needs_finding(parse("expert || malformed")) and not needs_finding(parse("!expert"))
    store = filled_store()
    flt = TrafficFilter.make(expr="severity >= warning && dir == in")
    assert flt.expert
    view = store.filter(flt)
    assert view.rows.tolist() == []
    answers = [n for n in range(len(store)) if store.kind(n) == "response" and store.direction(n) == "in"]
    sent = next(n for n in range(len(store)) if store.direction(n) == "out")
    store.flag(answers[3], 1)
    store.flag(sent, 0)  # sent: not shown
    store.flag(answers[2], 2)  # info: not shown
    store.flag(answers[1], 0)
    view.update()
    assert view.rows.tolist() == [answers[1], answers[3]] == reference(store, flt)


def test_more_codes_than_one_byte_holds():
    store = TrafficStore(":memory:")
    for i in range(600):
        method = f"m{i}"
        store.add(f"s{i % 300}", Frame("out", b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":'
                                       b'{"name":"t%d"}}' % (i, i % 290), i, i))
        store.add(f"s{i % 300}", Frame("out", json.dumps({"jsonrpc": "2.0", "method": method}).encode(), i, i))
    for text in ["method == m1", "method == m257", 'method ~ "^m2[0-9]{2}$"', "tool == t1", "tool == t257",
                 "tool ~ 't2[5-9]'", 'server == "s1"', "server == s257", "server ~ 's2.5'"]:
        flt = TrafficFilter.make(expr=text)
        rows = store.filter(flt).rows.tolist()
        assert rows and rows == reference(store, flt), text


def test_a_time_budget_slices_an_expression():
    store = TrafficStore(":memory:")
    for i in range(3 * STEP):
        store.add("s", Frame("err", b"line %d" % i, i, i))
    view = FilteredView(store, TrafficFilter.make(expr='text contains "line" && dir == err'))
    assert view.update(seconds=0) == STEP and not view.complete
    assert view.update(limit=10) == 10
    assert view.update(seconds=10) == 2 * STEP - 10 and view.complete


# ---------------------------------------------------------------------- random stores

NAMES = ["tools/call", "tools/list", "ping", "notifications/message", "Odd/Case"]
TOOLS = ["echo", "weather", "Weather", "e"]
WORDS = st.sampled_from(["", "a", "Oslo", "oslo", "Olo", "é", "x/y", "\\", "call", "l\nO", "{\n"])


@st.composite
def sessions(draw):
    """(server, frame, flag) tuples: calls and their answers (paired by id), notifications, junk, stderr."""
    out = []
    mono = 0.0
    open_calls: list[tuple[str, int | str, str]] = []
    for _ in range(draw(st.integers(0, 40))):
        mono += draw(st.sampled_from([0.0001, 0.002, 0.3, 1.5]))
        server = draw(st.sampled_from(["a", "b"]))
        what = draw(st.sampled_from(["call", "call", "answer", "answer", "note", "junk", "stderr", "http"]))
        word = draw(WORDS)
        meta = {"background": True} if draw(st.integers(0, 9)) == 0 else None
        if what == "call":
            rid = draw(st.one_of(st.integers(0, 6), st.sampled_from(["1", "a"])))
            method = draw(st.sampled_from(NAMES))
            params = {"name": draw(st.sampled_from(TOOLS)), "arguments": {"w": word}} if draw(st.booleans()) \
                else {"w": word}
            data = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params},
                              ensure_ascii=False).encode()
            direction = draw(st.sampled_from(["out", "out", "in"]))
            open_calls.append((server, rid, direction))
            frame = Frame(direction, data, mono, mono, None, rpc.parse(data) if direction == "in" else None, meta)
        elif what == "answer":
            if open_calls and draw(st.booleans()):
                server, rid, asked = open_calls.pop(draw(st.integers(0, len(open_calls) - 1)))
                direction = "in" if asked == "out" else "out"
            else:
                rid, direction = draw(st.integers(0, 6)), "in"
            body = {"result": {"w": word}} if draw(st.booleans()) else {"error": {"code": -1, "message": word}}
            data = json.dumps({"jsonrpc": "2.0", "id": rid, **body}, ensure_ascii=False).encode()
            frame = Frame(direction, data, mono, mono, draw(st.sampled_from([None, None, None, "Odd reason"])),
                          rpc.parse(data) if direction == "in" else None)
        elif what == "note":
            data = json.dumps({"jsonrpc": "2.0", "method": draw(st.sampled_from(NAMES)), "params": {"w": word}},
                              ensure_ascii=False).encode()
            frame = Frame("in", data, mono, mono, None, rpc.parse(data), meta)
        elif what == "junk":
            data = word.encode() + draw(st.sampled_from([b"", b"\xff", b"{"]))
            frame = Frame("in", data, mono, mono, None, rpc.parse(data))
        else:
            frame = Frame("err" if what == "stderr" else "http", word.encode(), mono, mono)
        flag = draw(st.sampled_from([None, None, 0, 1, 2]))
        out.append((server, frame, flag))
    return out


STRINGS = st.one_of(st.sampled_from(NAMES + TOOLS + ["a", "b", ""]), WORDS)
# without context (one search over many frames), with anchors (over frames joined by newlines) and the rest
# (frame by frame); some can match across two frames, which is no match
REGEXES = st.sampled_from(["o+", "[ab]", r"\w+/\w+", "(?i)OSLO", "Os", "e", r'"w":"a"', "é|x", "}{", "a.*e", "l.*O",
                           r"\}\{", "a*", "(?>a+)b", "^tools/", "call$", "^$", r"\bw\b", "(?=a)", "^{", "}$|^{",
                           r"\n", r"^\S*$", r'(?s)a.*"$', "(?<=w)", r"(?m)^\{", "(?!a)", r"\A{", r"}\Z", "(?-m:^{)",
                           r"(?>[^x]*)$", r"[^x]*+$", r"(?<!\n)\{",
                           "^a", "(?i)^OSLO", "^{.*}$", "^", "^l$|x", "^(a|O)", r"^\\",
                           "Os?lo$", "^Os?lo", r'"w":"a"}}$', "^call", "ca(?=ll)"])
IDS = st.one_of(st.integers(0, 6), st.sampled_from(["1", "a"]))
SMALL_NUMBERS = st.one_of(st.integers(0, 1600), st.sampled_from([0.5, 1.5, 300.0]))
LEAVES = st.one_of(compares(STRINGS, REGEXES, IDS, SMALL_NUMBERS),
                   st.builds(Flag, st.sampled_from(["malformed", "expert"])), st.builds(Search, WORDS))


def fill(store: TrafficStore, rows) -> None:
    for server, frame, flag in rows:
        n = store.add(server, frame)
        if flag is not None:
            store.flag(n, flag)


@settings(max_examples=120)
@given(sessions(), sessions(), trees(LEAVES), st.integers(0, 5), st.none() | st.sets(st.sampled_from(["a", "b"])))
def test_the_compiled_masks_mean_what_the_rows_say(first, later, tree, start, servers):
    store = TrafficStore(":memory:")
    fill(store, first)
    flt = TrafficFilter.make(expr=tree, start=start, servers=servers)
    view = store.filter(flt)
    assert view.rows.tolist() == reference(store, flt), unparse(tree)
    fill(store, later)
    view.update(limit=7)
    view.update(seconds=0)
    view.update()
    assert view.rows.tolist() == reference(store, flt), unparse(tree)


@settings(max_examples=150)
@given(sessions(), REGEXES, st.integers(1, 9))
def test_a_text_regex_searches_each_frame_on_its_own(rows, pattern, limit):
    store = TrafficStore(":memory:")
    fill(store, rows)
    flt = TrafficFilter.make(expr=Compare("text", "~", pattern))
    view = FilteredView(store, flt)
    while not view.complete:
        view.update(limit=limit)  # slices of a few frames: a slice's ends are frame ends too
    assert view.rows.tolist() == reference(store, flt), pattern
    assert store.filter(flt).rows.tolist() == reference(store, flt), pattern


def test_text_regexes_of_every_kind_on_chosen_frames():
    store = TrafficStore(":memory:")
    for line in [b"Olo", b"Oslo", b"xOlo", b"WARN a 9", b"aWARN 9", b"l\nO", b"", b"ab", b"abab", b"{", b"}"]:
        store.add("s", Frame("err", line, 0, 0))
    for pattern in ["Os?lo$", "^Os?lo", "Os?lo", "^WARN.*9$", "WARN.*9$", "^", "^$", "$", "b$", "^a", r"\bWARN",
                    "(?<=a)WARN", "(?i)^warn", "O$|^a", "}{", "b}", "(ab)+$", "l$", "(?m)^O", r"\Ab", "^(?<=b)a"]:
        flt = TrafficFilter.make(expr=Compare("text", "~", pattern))
        assert store.filter(flt).rows.tolist() == reference(store, flt), pattern


# ---------------------------------------------------------------------- the filter bar

from PySide6.QtCore import QPoint, QSettings, Qt  # noqa: E402
from PySide6.QtGui import QAction, QColor, QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication, QComboBox, QLabel, QLineEdit, QToolButton, QWidget  # noqa: E402
from traffic_helpers import ROOT  # noqa: E402

from inspector.ui.traffic.pane import TrafficPane  # noqa: E402

ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture
def ini(tmp_path):
    return QSettings(str(tmp_path / "spyglass.ini"), QSettings.IniFormat)


@pytest.fixture
def pane(qtbot, ini):
    store = filled_store()
    widget = TrafficPane(store, settings=ini)
    qtbot.addWidget(widget)
    widget.resize(1280, 800)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    widget.close()
    store.close()


def shown(pane: TrafficPane) -> list[int]:
    return [pane.model.record_at(r) for r in range(pane.model.rowCount())]


def offered(edit) -> list[str]:
    model = edit.completer.completionModel()
    return [model.index(i, 0).data(Qt.ItemDataRole.UserRole) for i in range(edit.completer.completionCount())]


def press(edit, key) -> None:
    """A key as the user presses it: the completion popup, when open, sees it first."""
    from PySide6.QtTest import QTest
    popup = edit.completer.popup()
    QTest.keyClick(popup if popup.isVisible() else edit, key)


def test_typing_an_expression_filters_the_rows(pane, qtbot):
    edit = pane.findChild(QLineEdit, "trafficFilter")
    qtbot.keyClicks(edit, 'tool == "echo" || kind == error')
    qtbot.waitUntil(lambda: pane.model.filter.expr is not None, timeout=3000)
    assert pane.model.filter.text == ""
    assert shown(pane) == reference(pane.store, pane.model.filter)
    assert {pane.store.kind(n) for n in shown(pane)} == {"request", "response", "error"}
    assert not pane.findChild(QLabel, "trafficFilterError").isVisible()
    # plain text is still plain text
    pane.set_filter_text("tools/call")
    assert pane.model.filter.expr is None and pane.model.filter.text == "tools/call"


def test_an_invalid_expression_is_shown_and_the_previous_filter_stays(pane, qtbot):
    pane.set_filter_text("dir == in")
    before = shown(pane)
    assert 0 < len(before) < len(pane.store)
    edit = pane.findChild(QLineEdit, "trafficFilter")
    label = pane.findChild(QLabel, "trafficFilterError")
    clean = edit.grab().toImage()
    edit.selectAll()
    qtbot.keyClicks(edit, "dir > in && latency > 5kg")
    qtbot.waitUntil(lambda: label.isVisible(), timeout=3000)
    assert shown(pane) == before and pane.model.filter.expr == parse("dir == in")
    assert "'>' does not apply to dir" in label.text() and "character 5" in label.text()
    assert "previous filter" in label.text() and "'>' does not apply to dir" in edit.toolTip()
    assert (pane.filter_error.start, pane.filter_error.end) == (4, 5)
    mark = edit.findChild(QAction, "trafficFilterErrorMark")  # the red mark in the line selects the fault
    assert mark in edit.actions()
    mark.trigger()
    assert edit.selectedText() == ">"
    # the fault is underlined in red
    def red(image):
        return sum(1 for x in range(image.width()) for y in range(image.height())
                   if (c := QColor(image.pixel(x, y))).red() > 150 and c.green() < 110 and c.blue() < 110)
    assert red(edit.grab().toImage()) > red(clean) + 5
    # the other criteria still apply, with the last valid expression
    kind = pane.findChild(QComboBox, "trafficKind")
    kind.setCurrentIndex(kind.findText("Responses"))
    assert pane.model.filter.expr == parse("dir == in") and pane.model.filter.kinds == {"response"}
    kind.setCurrentIndex(0)
    # fixed: the error goes and the new filter applies
    edit.setText("dir == out")
    pane.apply_filter()
    assert not label.isVisible() and pane.filter_error is None and mark not in edit.actions()
    assert {pane.store.direction(n) for n in shown(pane)} == {"out"}
    assert red(edit.grab().toImage()) <= red(clean) + 5


def test_completion_offers_fields_operators_and_the_values_seen(pane, qtbot):
    edit = pane.findChild(QLineEdit, "trafficFilter")
    popup = edit.completer.popup()
    edit.setFocus()
    qtbot.keyClicks(edit, "t")
    assert popup.isVisible() and offered(edit) == ["tool", "text"]
    press(edit, Qt.Key.Key_Return)
    assert edit.text() == "tool "
    qtbot.waitUntil(lambda: popup.isVisible() and offered(edit) == ["==", "!=", "~", "contains"], timeout=2000)
    press(edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: popup.isVisible() and edit.text() == "tool == ", timeout=2000)
    assert offered(edit) == ["echo", "divide", "nope", "log_demo", "long_task", "ask_user"]
    qtbot.keyClicks(edit, "div")
    assert offered(edit) == ["divide"]
    press(edit, Qt.Key.Key_Return)
    assert edit.text() == 'tool == "divide" '
    qtbot.keyClicks(edit, "&")
    assert offered(edit) == ["&&"]
    press(edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: popup.isVisible() and "latency" in offered(edit), timeout=2000)
    qtbot.keyClicks(edit, "ki")
    press(edit, Qt.Key.Key_Tab)  # Tab takes the offer too, and keeps the focus
    assert edit.text().endswith("&& kind ") and edit.hasFocus()
    qtbot.waitUntil(popup.isVisible, timeout=2000)
    press(edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: offered(edit) == list(FIELDS["kind"].choices), timeout=2000)
    qtbot.keyClicks(edit, "resp")
    press(edit, Qt.Key.Key_Return)
    assert edit.text() == 'tool == "divide" && kind == response '
    press(edit, Qt.Key.Key_Return)
    assert pane.model.filter.expr == parse('tool == divide && kind == response') and len(shown(pane)) == 1
    # the methods and servers seen; plain text gets no offers past its first word
    edit.clear()
    qtbot.keyClicks(edit, "method == ")
    assert "tools/call" in offered(edit) and "notifications/message" in offered(edit)
    edit.clear()
    qtbot.keyClicks(edit, "server ~ ")
    assert offered(edit) == ["demo", "hostile"]
    press(edit, Qt.Key.Key_Escape)
    edit.clear()
    qtbot.keyClicks(edit, "hello te")
    assert not popup.isVisible()


def test_saved_filters_round_trip(pane, qtbot, ini, monkeypatch):
    button = pane.findChild(QToolButton, "trafficSavedFilters")
    assert button.isVisible() and button.parent() is pane.filter_edit  # at the start of the line: no room taken
    assert button.menu() is pane.saved_filters.menu
    assert button.popupMode() == QToolButton.ToolButtonPopupMode.InstantPopup
    saved = pane.saved_filters
    saved.save("calls", 'method == "tools/call"')
    saved.save("problems", "kind == error || malformed")
    saved.save("calls", 'method == "tools/call" && dir == in')  # the same name: replaced
    assert saved.filters() == [("problems", "kind == error || malformed"),
                                ("calls", 'method == "tools/call" && dir == in')]
    # another pane over the same settings: its menu has them, and choosing one applies it
    other = TrafficPane(pane.store, settings=ini)
    qtbot.addWidget(other)
    menu = other.findChild(QToolButton, "trafficSavedFilters").menu()
    menu.aboutToShow.emit()
    names = [a.text() for a in menu.actions() if a.objectName().startswith("trafficSavedFilter:")]
    assert names == ["problems", "calls"]
    next(a for a in menu.actions() if a.objectName() == "trafficSavedFilter:calls").trigger()
    assert other.filter_edit.text() == 'method == "tools/call" && dir == in'
    assert other.model.filter.expr == parse('method == "tools/call" && dir == in')
    assert all(other.store.direction(n) == "in" for n in shown(other)) and shown(other)
    # save the current filter under a name the user types
    monkeypatch.setattr("inspector.ui.traffic.filter_edit.QInputDialog.getText",
                        lambda *a, **k: ("inbound", True))
    other.set_filter_text("dir == in")
    menu.aboutToShow.emit()
    save = next(a for a in menu.actions() if a.objectName() == "trafficSaveFilter")
    assert save.isEnabled()
    save.trigger()
    assert ("inbound", "dir == in") in saved.filters()
    # delete one
    menu.aboutToShow.emit()
    delete = next(a for a in menu.actions() if a.menu() is not None and a.menu().objectName() == "trafficDeleteFilter")
    next(a for a in delete.menu().actions() if a.text() == "problems").trigger()
    assert [n for n, _t in saved.filters()] == ["calls", "inbound"]
    assert [n for n, _t in TrafficPane(pane.store, settings=ini).saved_filters.filters()] == ["calls", "inbound"]
    other.close()


def test_the_pane_keeps_its_saved_filters_in_its_windows_settings(qtbot, ini):
    window = QWidget()
    window.settings = ini
    qtbot.addWidget(window)
    store = filled_store()
    pane = TrafficPane(store, window)
    assert pane.settings() is ini
    pane.saved_filters.save("x", "malformed")
    assert "malformed" in str(ini.value("traffic/savedFilters"))
    pane.close()
    store.close()


def _palettes():
    from inspector.ui.base.theme import dark_palette, light_palette
    return {"light": light_palette(), "dark": dark_palette()}


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_screenshots_of_an_error_and_of_the_completion(qtbot, ini, theme):
    app = QApplication.instance()
    old_style, old_palette = app.style().name(), app.palette()
    app.setStyle("Fusion")
    app.setPalette(_palettes()[theme])
    store = filled_store()
    try:
        pane = TrafficPane(store, settings=ini)
        qtbot.addWidget(pane)
        pane.resize(1400, 700)
        pane.show()
        qtbot.waitExposed(pane)
        ARTIFACTS.mkdir(exist_ok=True)
        pane.set_filter_text('kind == response && metod ~ "tools/"')
        assert pane.error_label.isVisible()
        path = ARTIFACTS / f"traffic-filter-error-{theme}.png"
        assert pane.grab().save(str(path))
        edit = pane.filter_edit
        edit.clear()
        pane.apply_filter()
        edit.setFocus()
        qtbot.keyClicks(edit, "kind == response && method == ")
        popup = edit.completer.popup()
        qtbot.waitUntil(popup.isVisible, timeout=2000)
        qtbot.wait(50)
        shot = pane.grab()
        painter = QPainter(shot)
        painter.drawPixmap(pane.mapFromGlobal(popup.mapToGlobal(QPoint(0, 0))), popup.grab())
        painter.end()
        path = ARTIFACTS / f"traffic-filter-completion-{theme}.png"
        assert shot.save(str(path))
        popup.hide()
        pane.close()
    finally:
        app.setPalette(old_palette)
        app.setStyle(old_style)
        store.close()
