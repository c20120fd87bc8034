"""Tool definitions reviewed as a model would read them: names, descriptions, parameters, input schemas,
annotations, and what the whole list costs a model on every turn.

`review_tools(tools)` returns the findings; `list_cost(tools)` the measurement behind `tool-list-cost`.
Token counts are estimates: the compact JSON of a definition, in bytes, divided by four (the usual
rule of thumb for English text and JSON in the tokenizers of current models; real counts differ by
model, typically within 25%).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from .. import schemarefs
from . import portability, trust
from .rules import INFO, WARNING, Finding, finding

T = TypeVar("T")

NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
DIALECT = re.compile(r"https?://json-schema\.org/(draft-0[467]/schema|draft/(2019-09|2020-12)/schema)#?")
BYTES_PER_TOKEN = 4
LIST_TOKENS_MAX = 10_000
TOOL_TOKENS_MAX = 1_000
DESCRIPTION_MIN_WORDS = 4
DESCRIPTION_MIN_CHARS = 24

# Words that say what a tool does. A description without one names a thing ("Weather data.") but not
# what calling the tool does with it. Each word also counts in its -s, -es, -ed and -ing forms.
VERBS = frozenset("""
    accept access add allow analyse analyze answer append apply approve archive ask assign attach authenticate
    book build calculate call cancel capture change check clean clear clone close collect combine commit compare
    compile complete compose compress compute configure confirm connect convert copy count crawl create crop
    debug decode decrypt delete deploy describe detect diff disable discover download draft draw drop duplicate
    echo edit enable encode encrypt enumerate estimate evaluate execute expand explain export extract fetch
    fill filter find fix flag format forward generate geocode get give grant group guess handle hash help hide
    identify import index insert inspect install invite invoke join keep kill label launch link list load
    locate lock log look lookup make manage map mark measure merge modify monitor move navigate notify
    open optimize order parse pause pay perform pick ping plan play post predict prepare preview print process
    produce provide publish pull purge push put query queue rank read receive record redact refresh register
    reject reload remove rename render reorder replace reply report request reserve reset resize resolve
    restart restore resume retrieve return revert review revoke rotate run sample save scan schedule score
    scrape search select send set share show shorten sign simulate sleep sort split start stop store stream
    submit subscribe sum summarise summarize suspend switch sync tag take test tell toggle track transcribe
    transfer transform translate trigger trim undo unlock unsubscribe update upload use validate verify view
    visit wait watch write zip
""".split())
STOPWORDS = frozenset("a an the of for to and or in on with this that tool tools function mcp server api".split())


@dataclass(frozen=True)
class Cost:
    """What a tool list costs a model: bytes and estimated tokens, for the list and each tool."""

    bytes: int
    tokens: int
    tools: dict[str, tuple[int, int]]  # name -> (bytes, tokens); a name listed twice counts once
    count: int  # tools in the list

    def as_json(self) -> dict[str, Any]:
        return {"count": self.count, "bytes": self.bytes, "tokens": self.tokens,
                "method": f"compact JSON bytes / {BYTES_PER_TOKEN}",
                "tools": {name: {"bytes": b, "tokens": t} for name, (b, t) in self.tools.items()}}


def tokens(size: int) -> int:
    return -(-size // BYTES_PER_TOKEN)


def list_cost(tools: list[Any]) -> Cost:
    return drive(cost_steps(tools))


def cost_steps(tools: list[Any]) -> Generator[None, None, Cost]:
    """`list_cost` a tool at a time: yields after each tool, returns the cost (a caller on an event loop can
    let it turn between steps; `drive` runs them all)."""
    per_tool: dict[str, tuple[int, int]] = {}
    total = 2  # the list's brackets
    for i, tool in enumerate(tools):
        size = len(json.dumps(tool, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass"))
        total += size + (1 if i else 0)
        name = tool.get("name") if isinstance(tool, dict) else None
        per_tool[name if isinstance(name, str) else f"#{i}"] = (size, tokens(size))
        yield
    return Cost(total, tokens(total), per_tool, len(tools))


def drive(steps: Generator[None, None, T]) -> T:
    """Run the steps of a step-wise computation (`cost_steps`, `review_steps`) to the end; its result."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


def review_tools(tools: list[Any], cost: Cost | None = None) -> list[Finding]:
    """Every definition reviewed as a model reads it; `cost`: the list's `list_cost`, when already known."""
    return drive(review_steps(tools, cost))


def review_steps(tools: list[Any], cost: Cost | None = None) -> Generator[None, None, list[Finding]]:
    """`review_tools` a tool at a time (yields after each), as `cost_steps`."""
    out: list[Finding] = []
    names = Counter(t.get("name") for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str))
    for name, count in sorted(names.items()):
        if count > 1:
            out.append(finding("tool-name-duplicate", f"tool:{name}",
                               f"{count} tools are named {name!r}: a client can call only one of them; "
                               "give each a name of its own"))
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            continue  # the schema check of the tools/list frame reports it
        name = tool.get("name")
        target = f"tool:{name}" if isinstance(name, str) else f"tool:#{i}"
        out.extend(_name(name, target))
        out.extend(_description(tool, name, target))
        out.extend(_input_schema(tool.get("inputSchema"), target))
        out.extend(_annotations(tool.get("annotations"), target))
        out.extend(unportable(tool, target))
        out.extend(trust.tool_findings(tool, target))
        yield
    out.extend(trust.lookalikes(tools))
    if cost is None:
        cost = yield from cost_steps(tools)
    for name, (_size, toks) in cost.tools.items():
        if toks > TOOL_TOKENS_MAX:
            out.append(finding("tool-list-cost", f"tool:{name}",
                               f"this definition is about {toks:,} tokens (over {TOOL_TOKENS_MAX:,}), read by the "
                               "model on every turn: shorten the description and the schema's texts",
                               severity=WARNING))
    if cost.tokens > LIST_TOKENS_MAX:
        heaviest = sorted(cost.tools.items(), key=lambda kv: -kv[1][1])[:3]
        top = ", ".join(f"{n} ({t:,})" for n, (_b, t) in heaviest)
        out.append(finding("tool-list-cost", "list:tools",
                           f"the tool list is about {cost.tokens:,} tokens (over {LIST_TOKENS_MAX:,}) for "
                           f"{len(tools)} tools, read by the model on every turn; the largest: {top}. "
                           "Fewer or shorter tools leave the model more room", severity=INFO))
    return out


def unportable(tool: dict[str, Any], target: str) -> list[Finding]:
    """Rule `schema-unportable`: what `--cli --strict` reports (inspector.checks.portability), each problem
    with its path, the issue and the fix, at its own severity (a bare boolean schema is an error)."""
    return [finding("schema-unportable", target, f"{p.where}: {p.issue} [{p.rule}]. Fix: {p.suggestion}",
                    severity=p.severity) for p in portability.tool_problems(tool)]


def _name(name: Any, target: str) -> list[Finding]:
    if not isinstance(name, str):
        return []  # the revision's schema requires a string name: schema-violation says so
    if NAME.fullmatch(name):
        return []
    if not name:
        why = "is empty"
    elif len(name) > 128:
        why = f"is {len(name)} characters long (at most 128)"
    else:
        bad = sorted({c for c in name if not NAME.fullmatch(c)})
        why = "contains " + ", ".join(repr(c) if c != " " else "a space" for c in bad[:5])
    return [finding("tool-name-invalid", target,
                    f"the name {name!r} {why}: use 1-128 characters from A-Z, a-z, 0-9, '_', '-' and '.'")]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower())


def _has_verb(words: list[str]) -> bool:
    """A known verb anywhere, or a first word that reads as one ("Repeats ...", "Reverses ...")."""
    first = words[0] if words else ""
    if len(first) > 3 and first.endswith("s") and not first.endswith("ss") and first not in STOPWORDS:
        return True
    for word in words:
        for stem in (word, word[:-1], word[:-2], word[:-3], word[:-2] + "e", word[:-3] + "e", word[:-3] + "y"):
            if stem in VERBS and (stem == word or word.endswith(("s", "es", "ed", "ing", "ies"))):
                return True
    return False


GOOD = "say what it does, what it returns and when to use it"


def _description(tool: dict[str, Any], name: Any, target: str) -> list[Finding]:
    out: list[Finding] = []
    text = tool.get("description")
    if not isinstance(text, str) or not text.strip():
        out.append(finding("description-missing", target,
                           f"no description: a model decides when and how to call a tool from it alone; {GOOD}"))
    else:
        words = _words(text)
        name_words = set(_words(name)) if isinstance(name, str) else set()
        if set(words) - STOPWORDS <= name_words:
            why = "only repeats the tool's name"
        elif len(words) < DESCRIPTION_MIN_WORDS or len(text.strip()) < DESCRIPTION_MIN_CHARS:
            why = f"is {len(words)} word{'s' if len(words) != 1 else ''} long"
        elif not _has_verb(words):
            why = "says what the tool is about, not what it does"
        else:
            why = ""
        if why:
            shown = text.strip() if len(text.strip()) <= 60 else text.strip()[:57] + "..."
            out.append(finding("description-vague", target, f"the description {shown!r} {why}: {GOOD}"))
    schema = tool.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(props, dict):
        bare = [key for key, sub in props.items() if not _described(sub)]
        if bare:
            listed = ", ".join(bare[:6]) + (f" and {len(bare) - 6} more" if len(bare) > 6 else "")
            out.append(finding("param-description-missing", target,
                               f"parameter{'s' if len(bare) > 1 else ''} without a description: {listed}; say "
                               "what each one means and which values it takes"))
    return out


def _described(sub: Any) -> bool:
    return isinstance(sub, dict) and isinstance(sub.get("description"), str) and bool(sub["description"].strip())


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why `schema` is not a usable JSON Schema of its dialect ($schema, else 2020-12), or None."""
    import jsonschema_rs

    dialect = schema.get("$schema")
    if dialect is not None and not (isinstance(dialect, str) and DIALECT.fullmatch(dialect)):
        return (f"its $schema {str(dialect)[:80]!r} is not a JSON Schema dialect Spyglass knows (draft-04, -06, "
                "-07, 2019-09, 2020-12), so it cannot be checked; clients will not know how to read it either")
    try:
        schemarefs.rust_meta_validate(schema)
    except jsonschema_rs.ValidationError as exc:
        where = "".join(f"/{p}" for p in exc.instance_path)
        return f"the schema is invalid at {where or '(top level)'}: {exc.message[:200]}"
    except Exception as exc:  # an unknown $schema and the like
        return f"the schema cannot be checked: {str(exc).splitlines()[0][:200]}"
    try:
        schemarefs.rust_validator(schema)
    except Exception as exc:  # a $ref that leaves the schema among them (never followed: said as such)
        return f"the schema cannot be used: {str(exc).splitlines()[0][:300]}"
    return None


def _input_schema(schema: Any, target: str) -> list[Finding]:
    if schema is None:
        return [finding("input-schema-invalid", target, "no inputSchema: give one, "
                        '{"type": "object"} for a tool without parameters')]
    if not isinstance(schema, dict):
        return [finding("input-schema-invalid", target,
                        f"the inputSchema is {type(schema).__name__}, not a JSON Schema object")]
    out: list[Finding] = []
    if schema.get("type") != "object":
        out.append(finding("input-schema-invalid", target,
                           f'the inputSchema\'s type is {json.dumps(schema.get("type"))}, not "object": '
                           "tool arguments are always an object"))
    problem = schema_problem(schema)
    if problem:
        out.append(finding("input-schema-invalid", target, f"{problem} (checked in the schema's own dialect)"))
    required = schema.get("required")
    props = schema.get("properties")
    if isinstance(required, list):
        declared = props if isinstance(props, dict) else {}
        missing = [r for r in required if isinstance(r, str) and r not in declared]
        if missing:
            out.append(finding("input-schema-invalid", target,
                               f"required but not declared in properties: {', '.join(missing)}"))
    return out


def _annotations(annotations: Any, target: str) -> list[Finding]:
    """A read-only tool changes nothing: it cannot be destructive, and repeating it changes nothing either.
    Hints that say so anyway (destructiveHint: false, idempotentHint: true) agree and are left alone."""
    if not isinstance(annotations, dict) or annotations.get("readOnlyHint") is not True:
        return []
    out = []
    if annotations.get("destructiveHint") is True:
        out.append(finding("annotations-contradict", target,
                           "readOnlyHint and destructiveHint are both true: a read-only tool changes nothing, so "
                           "it cannot destroy anything (the specification ignores destructiveHint then); drop one"))
    if annotations.get("idempotentHint") is False:
        out.append(finding("annotations-contradict", target,
                           "readOnlyHint is true but idempotentHint is false: calling a tool that changes nothing "
                           "again has no further effect; remove idempotentHint (it means nothing on a read-only "
                           "tool)"))
    return out
