"""The traffic pane's display-filter language: tokens, a recursive-descent parser, a printer (no Qt).

    method == "tools/call" && latency > 500ms
    tool == weather || (kind == error && !(server == "demo"))
    text contains "Oslo" and not malformed

An expression is a tree of `Compare` (field, operator, value), `Flag` (`malformed`, `expert`),
`Search` (a quoted string on its own: the plain-text search), `Not`, `And` and `Or`. `parse` builds it
or raises `FilterSyntaxError` with the character span of the fault; `unparse` prints the canonical text,
which parses back to the same tree. `filter.FilteredView` turns a tree into column masks.

A field a frame does not have (the latency of a request, the tool of a notification, the severity of a
frame without a finding) makes every comparison on it false, `!=` included: `!(…)` is the complement.

What counts as an expression (anything else is the old plain-text search, see `is_expression`): input
that starts with `!` or `(`; that contains `==`, `!=`, `&&` or `||`; that starts with a flag; that starts
with a field name followed by something else (a field name alone is searched as text); or `not` followed
by one of those. docs/filters.md is the user's description of the language.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from typing import NamedTuple

# ---------------------------------------------------------------------- the vocabulary
DIRECTION_VALUES = ("out", "in", "err", "http", "to-view", "from-view", "to-model", "from-model")  # columns.DIRECTIONS
KIND_VALUES = ("request", "response", "notification", "error", "malformed", "stderr", "http", "app",
               "model")  # columns.KINDS
SEVERITY_VALUES = ("error", "warning", "info")  # TrafficStore.flags codes 0, 1, 2
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}  # info < warning < error

STRING_OPS = ("==", "!=", "~", "contains")
ORDER_OPS = ("==", "!=", "<", "<=", ">", ">=")
EQUALITY_OPS = ("==", "!=")
OPERATORS = ("==", "!=", "<", "<=", ">", ">=", "~", "contains")

TIME_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}  # seconds per unit; a bare number is in ms
SIZE_UNITS = {"B": 1, "kB": 1000, "MB": 1000 ** 2, "GB": 1000 ** 3, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}
_TIME_SPELLINGS = {"us": "us", "µs": "us", "μs": "us", "ms": "ms", "s": "s"}
_SIZE_SPELLINGS = {"b": "B", "kb": "kB", "mb": "MB", "gb": "GB", "kib": "KiB", "mib": "MiB", "gib": "GiB"}


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: str  # string | text | enum | severity | duration | size | id
    ops: tuple[str, ...]
    doc: str
    choices: tuple[str, ...] = ()


FIELDS: dict[str, Field] = {f.name: f for f in (
    Field("method", "string", STRING_OPS, "JSON-RPC method (a response: its request's)"),
    Field("tool", "string", STRING_OPS, "tool of a tools/call request and of its answer"),
    Field("server", "string", STRING_OPS, "server id"),
    Field("text", "text", ("contains", "~"), "the frame's raw text"),
    Field("dir", "enum", EQUALITY_OPS, "direction: out, in, err, http", DIRECTION_VALUES),
    Field("kind", "enum", EQUALITY_OPS, "kind of frame", KIND_VALUES),
    Field("severity", "severity", ORDER_OPS, "worst finding: info < warning < error", SEVERITY_VALUES),
    Field("latency", "duration", ORDER_OPS, "request to answer: us, ms (the default), s"),
    Field("size", "size", ORDER_OPS, "bytes on the wire: B, kB, MB, GB, KiB, MiB, GiB"),
    Field("id", "id", EQUALITY_OPS, "JSON-RPC id: 7 or \"a\""),
)}
FLAGS = {"malformed": "frames that are not valid JSON-RPC", "expert": "frames with a finding",
         "handmade": "hand-made frames (the raw composer, Edit and resend) and their answers"}
KEYWORDS = ("and", "or", "not", "contains", "matches")


# ---------------------------------------------------------------------- the tree
@dataclass(frozen=True, slots=True)
class Quantity:
    """A number with its unit as written (canonical spelling), so that printing keeps it."""

    number: int | float
    unit: str

    @property
    def value(self) -> float:
        """Seconds for a latency, bytes for a size."""
        return self.number * (TIME_UNITS[self.unit] if self.unit in TIME_UNITS else SIZE_UNITS[self.unit])


Value = str | int | Quantity


@dataclass(frozen=True, slots=True)
class Compare:
    field: str
    op: str  # one of OPERATORS (`matches` is read as `~`)
    value: Value


@dataclass(frozen=True, slots=True)
class Flag:
    name: str  # malformed | expert | handmade


@dataclass(frozen=True, slots=True)
class Search:
    text: str  # the plain-text search: method, malformed reason and raw text, smart case


@dataclass(frozen=True, slots=True)
class Not:
    operand: Node


@dataclass(frozen=True, slots=True)
class And:
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Or:
    left: Node
    right: Node


Node = Compare | Flag | Search | Not | And | Or


class FilterSyntaxError(ValueError):
    """What is wrong with a filter and where: characters `start` to `end` (exclusive) of the input."""

    def __init__(self, message: str, start: int, end: int) -> None:
        super().__init__(message)
        self.message = message
        self.start = start
        self.end = max(start, end)

    def __str__(self) -> str:
        last = max(self.end, self.start + 1)
        where = f"character {last}" if last == self.start + 1 else f"characters {self.start + 1}–{last}"
        return f"{self.message} ({where})"


# ---------------------------------------------------------------------- tokens
class Token(NamedTuple):
    kind: str  # word | string | op | and | or | not | ( | ) | bad
    text: str  # as written
    start: int
    end: int
    value: str  # a string's contents, an operator's canonical spelling, otherwise the text
    closed: bool = True  # False: a string that runs to the end of the input


_DELIMITERS = frozenset(" \t\r\n\f\v\"'()&|=!<>~")
_SYMBOLS = (("&&", "and", "&&"), ("||", "or", "||"), ("==", "op", "=="), ("!=", "op", "!="), ("<=", "op", "<="),
            (">=", "op", ">="), ("<", "op", "<"), (">", "op", ">"), ("~", "op", "~"), ("!", "not", "!"),
            ("(", "(", "("), (")", ")", ")"))
_WORDS = {"and": ("and", "&&"), "or": ("or", "||"), "not": ("not", "!"), "contains": ("op", "contains"),
          "matches": ("op", "~")}
_BAD_SYMBOLS = {"=": "use '==' to compare", "&": "use '&&' (or 'and')", "|": "use '||' (or 'or')"}


def tokenize(text: str, *, lenient: bool = False) -> list[Token]:
    """The tokens of `text`. Not lenient: a stray `=`, `&` or `|`, or an unclosed string, raises."""
    out: list[Token] = []
    i, size = 0, len(text)
    while i < size:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if ch in "\"'":
            j, chars = i + 1, []
            while j < size and text[j] != ch:
                if text[j] == "\\" and j + 1 < size and text[j + 1] in (ch, "\\"):
                    j += 1
                chars.append(text[j])
                j += 1
            closed = j < size
            if not closed and not lenient:
                raise FilterSyntaxError("this string has no closing quote", i, size)
            end = j + 1 if closed else size
            out.append(Token("string", text[i:end], i, end, "".join(chars), closed))
            i = end
            continue
        for symbol, kind, canonical in _SYMBOLS:
            if text.startswith(symbol, i):
                out.append(Token(kind, symbol, i, i + len(symbol), canonical))
                i += len(symbol)
                break
        else:
            if ch in _BAD_SYMBOLS:
                if not lenient:
                    raise FilterSyntaxError(f"'{ch}' is not an operator: {_BAD_SYMBOLS[ch]}", i, i + 1)
                out.append(Token("bad", ch, i, i + 1, ch))
                i += 1
                continue
            j = i
            while j < size and text[j] not in _DELIMITERS:
                j += 1
            word = text[i:j]
            kind, canonical = _WORDS.get(word, ("word", word))
            out.append(Token(kind, word, i, j, canonical))
            i = j
    return out


def _first_word(text: str, start: int) -> tuple[str, int]:
    """The bare word at `start` (after spaces) and where it ends."""
    i = start
    while i < len(text) and text[i].isspace():
        i += 1
    j = i
    while j < len(text) and text[j] not in _DELIMITERS:
        j += 1
    return text[i:j], j


def is_expression(text: str) -> bool:
    """True when `text` is meant as an expression (see the module's docstring); False: plain text."""
    stripped = text.strip()
    if not stripped:
        return False
    if stripped[0] in "!(" or any(op in stripped for op in ("==", "!=", "&&", "||")):
        return True
    word, end = _first_word(stripped, 0)
    rest = stripped[end:].strip()
    if word == "not":
        return bool(rest) and (rest[0] in "!(" or is_expression(rest))
    return word in FLAGS or (word in FIELDS and bool(rest))


# ---------------------------------------------------------------------- parsing
_NUMBER = re.compile(r"(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)(.*)", re.DOTALL)
_INT = re.compile(r"-?\d+")
_TEXT_HINT = ' (to search for the text itself, write text contains "…")'


def _suggest(word: str, choices: list[str] | tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word.lower(), list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def parse(text: str) -> Node:
    """The tree of an expression; raises `FilterSyntaxError` (with the span of the fault)."""
    tokens = tokenize(text)
    if not tokens:
        raise FilterSyntaxError("the filter is empty", 0, len(text))
    return _Parser(text, tokens).parse()


class _Parser:
    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.text = text
        self.tokens = tokens
        self.i = 0

    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def end_span(self) -> tuple[int, int]:
        size = len(self.text.rstrip())
        return size, size

    def parse(self) -> Node:
        node = self.or_()
        tok = self.peek()
        if tok is not None:
            if tok.kind == ")":
                raise FilterSyntaxError("this ')' closes nothing", tok.start, tok.end)
            prev = self.tokens[self.i - 1]
            field = self.tokens[self.i - 3].text if self.i >= 3 else ""
            if tok.kind == "word" and field in ("latency", "size") and _is_unit(tok.text):
                raise FilterSyntaxError(f"write the unit right after the number: {prev.text}{tok.text}",
                                        prev.start, tok.end)
            raise FilterSyntaxError(f"expected && or || before '{tok.text}'", tok.start, tok.end)
        return node

    def or_(self) -> Node:
        node = self.and_()
        while (tok := self.peek()) is not None and tok.kind == "or":
            self.take()
            node = Or(node, self.and_())
        return node

    def and_(self) -> Node:
        node = self.unary()
        while (tok := self.peek()) is not None and tok.kind == "and":
            self.take()
            node = And(node, self.unary())
        return node

    def unary(self) -> Node:
        tok = self.peek()
        if tok is not None and tok.kind == "not":
            self.take()
            return Not(self.unary())
        return self.primary()

    def primary(self) -> Node:
        tok = self.peek()
        if tok is None:
            where = self.tokens[-1]
            raise FilterSyntaxError(f"expected a condition after '{where.text}'", where.start, where.end)
        if tok.kind == "(":
            self.take()
            if (inner := self.peek()) is not None and inner.kind == ")":
                raise FilterSyntaxError("expected a condition inside ( )", tok.start, inner.end)
            node = self.or_()
            close = self.peek()
            if close is None:
                raise FilterSyntaxError("this '(' is never closed", tok.start, tok.end)
            if close.kind != ")":
                raise FilterSyntaxError(f"expected && or || before '{close.text}'", close.start, close.end)
            self.take()
            return node
        if tok.kind == "string":
            self.take()
            return Search(tok.value)
        if tok.kind == "word":
            self.take()
            if tok.text in FLAGS:
                after = self.peek()
                if after is not None and after.kind == "op":
                    raise FilterSyntaxError(f"{tok.text} takes no operator or value: it is true or false",
                                            after.start, after.end)
                return Flag(tok.text)
            if tok.text in FIELDS:
                return self.comparison(tok, FIELDS[tok.text])
            names = [*FIELDS, *FLAGS]
            raise FilterSyntaxError(f"unknown field '{tok.text}'" + (_suggest(tok.text, names) or _TEXT_HINT),
                                    tok.start, tok.end)
        raise FilterSyntaxError(f"expected a condition before '{tok.text}'", tok.start, tok.end)

    def comparison(self, name: Token, field: Field) -> Node:
        op = self.peek()
        ops = ", ".join(field.ops[:-1]) + " or " + field.ops[-1]
        if op is None or op.kind in ("and", "or", ")"):
            raise FilterSyntaxError(f"'{field.name}' needs an operator ({ops}) and a value", name.start, name.end)
        if op.kind != "op":
            raise FilterSyntaxError(f"expected an operator after '{field.name}': {ops}", op.start, op.end)
        self.take()
        if op.value not in field.ops:
            raise FilterSyntaxError(f"'{op.text}' does not apply to {field.name}: use {ops}", op.start, op.end)
        tok = self.peek()
        if tok is None or tok.kind not in ("word", "string"):
            raise FilterSyntaxError(f"'{op.text}' needs a value after it", op.start, op.end)
        self.take()
        return Compare(field.name, op.value, _value(field, op.value, tok))


def _is_unit(word: str) -> bool:
    return word in _TIME_SPELLINGS or word.lower() in _SIZE_SPELLINGS


def _value(field: Field, op: str, tok: Token) -> Value:
    raw = tok.value
    if field.type in ("string", "text"):
        if op == "~":
            try:
                re.compile(raw.encode("utf-8") if field.type == "text" else raw)
            except re.error as exc:
                raise FilterSyntaxError(f"bad regular expression: {exc.msg}", tok.start, tok.end) from None
        return raw
    if field.type in ("enum", "severity"):
        word = raw.lower()
        if word not in field.choices:
            what = "a direction" if field.name == "dir" else f"a {field.name}"
            raise FilterSyntaxError(f"'{raw}' is not {what}: one of {', '.join(field.choices)}"
                                    + _suggest(word, field.choices), tok.start, tok.end)
        return word
    if field.type == "id":
        return int(raw) if tok.kind == "word" and _INT.fullmatch(raw) else raw
    return _quantity(field, tok)


def _quantity(field: Field, tok: Token) -> Quantity:
    duration = field.type == "duration"
    example = "500ms" if duration else "1MB"
    m = _NUMBER.fullmatch(tok.value) if tok.kind == "word" else None
    if m is None:
        raise FilterSyntaxError(f"'{tok.text}' is not a {'latency' if duration else 'size'}: write a number "
                                f"and a unit, e.g. {example}", tok.start, tok.end)
    digits, unit = m.group(1), m.group(2)
    number: int | float = float(digits) if any(c in digits for c in ".eE") else int(digits)
    if not math.isfinite(number):
        raise FilterSyntaxError("this number is too large", tok.start, tok.end)
    where = tok.start + len(digits)
    if duration:
        canonical = _TIME_SPELLINGS.get(unit if unit in _TIME_SPELLINGS else unit.lower()) if unit else "ms"
        if canonical is None:
            raise FilterSyntaxError(f"'{unit}' is not a unit of time: us, ms or s", where, tok.end)
    else:
        canonical = _SIZE_SPELLINGS.get(unit.lower()) if unit else "B"
        if canonical is None:
            raise FilterSyntaxError(f"'{unit}' is not a unit of size: B, kB, MB, GB, KiB, MiB or GiB",
                                    where, tok.end)
    return Quantity(number, canonical)


# ---------------------------------------------------------------------- printing
def quote(text: str) -> str:
    """`text` as a double-quoted string of the language."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _value_text(field: str, value: Value) -> str:
    if isinstance(value, Quantity):
        return f"{value.number!r}{value.unit}"
    if isinstance(value, int):
        return str(value)
    return value if FIELDS[field].type in ("enum", "severity") else quote(value)


def unparse(node: Node) -> str:
    """The canonical text of `node`: `&&`, `||`, `!`, `~`, quoted strings, parentheses only where needed."""
    if isinstance(node, Compare):
        return f"{node.field} {node.op} {_value_text(node.field, node.value)}"
    if isinstance(node, Flag):
        return node.name
    if isinstance(node, Search):
        return quote(node.text)
    if isinstance(node, Not):
        inner = unparse(node.operand)
        return "!" + (inner if isinstance(node.operand, Flag | Search | Not) else f"({inner})")
    if isinstance(node, And):
        left = unparse(node.left)
        right = unparse(node.right)
        return (f"({left})" if isinstance(node.left, Or) else left) + " && " + (
            f"({right})" if isinstance(node.right, And | Or) else right)
    left, right = unparse(node.left), unparse(node.right)
    return left + " || " + (f"({right})" if isinstance(node.right, Or) else right)


def needs_finding(node: Node) -> bool:
    """True when only frames with a finding can match: views then take rows as they are judged."""
    if isinstance(node, Flag):
        return node.name == "expert"
    if isinstance(node, Compare):
        return node.field == "severity"
    if isinstance(node, And):
        return needs_finding(node.left) or needs_finding(node.right)
    if isinstance(node, Or):
        return needs_finding(node.left) and needs_finding(node.right)
    return False


# ---------------------------------------------------------------------- completion
class Context(NamedTuple):
    """What to offer at the cursor: `kind` is field | operator | value | logic | none; the text from
    `start` to the cursor is what the offer replaces; `field` names the field of an operator or value."""

    kind: str
    start: int
    prefix: str
    field: str = ""


def context_at(text: str, cursor: int) -> Context:
    """What completes the expression being typed at `cursor` (never raises)."""
    tokens = tokenize(text[:cursor], lenient=True)
    partial: Token | None = None
    last = tokens[-1] if tokens and tokens[-1].end == cursor else None
    if last is None or (last.kind == "string" and last.closed) or last.text in ("&&", "||", "(", ")"):
        pass
    elif last.kind == "op" and last.value != "contains" and len(tokens) >= 2 and tokens[-2].kind == "word":
        pass  # a whole operator: the values come next
    elif last.kind != "not" or (last.text == "!" and len(tokens) >= 2 and tokens[-2].text in FIELDS):
        partial = tokens.pop()  # a word, a string or a symbol being typed (`method !` may become `!=`)
    start = partial.start if partial is not None else cursor
    prefix = partial.text if partial is not None else ""
    if partial is not None and partial.kind == "string":
        start, prefix = partial.start, partial.value
    prev = tokens[-1] if tokens else None
    if prev is None or prev.kind in ("(", "not", "and", "or"):
        if partial is not None and partial.kind == "bad":
            return Context("none", start, prefix)
        return Context("field", start, prefix)
    if prev.kind == "word" and prev.text in FIELDS and (len(tokens) < 2 or tokens[-2].kind != "op"):
        return Context("operator", start, prefix, prev.text)
    if prev.kind == "op" and len(tokens) >= 2 and tokens[-2].text in FIELDS:
        return Context("value", start, prefix, tokens[-2].text)
    if prev.kind in ("word", "string", ")"):
        return Context("logic", start, prefix)
    return Context("none", start, prefix)


__all__ = ["FIELDS", "FLAGS", "And", "Compare", "Context", "Field", "FilterSyntaxError", "Flag", "Node", "Not",
           "Or", "Quantity", "Search", "Token", "context_at", "is_expression", "needs_finding", "parse", "quote",
           "tokenize", "unparse"]
