"""Changing a collection file the way a person would: a step added from a call made by hand, a step's
arguments or expectations replaced, the file written back atomically with its comments, its key order
and its quoting as they were (ruamel.yaml round-trip). No Qt: the window's Collections tab and its
*Save to collection…* dialog are the users.

Every change is checked before it is written: the text that would be saved is read again by
`load.parse`, so a file the window writes is one `spyglass test` accepts. A file changed on disk since it
was opened is not overwritten behind the user's back (`StaleCollection`).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import errors as E
from ..private import write_atomic
from ..secrets import mask_args, mask_env_value, mask_url, mask_value
from .expect import text_of
from .load import Collection, CollectionError, Problem, parse, yaml

if TYPE_CHECKING:
    from ..config import ServerSpec

SECRET_WORDS = {"password", "passwd", "secret", "token", "apikey", "credential", "credentials", "passphrase"}
TEXT_KEPT = 80  # characters of an answer's first line kept as a `contains` expectation


class StaleCollection(E.UsageError):
    """The file changed on disk since it was read: saving would lose someone else's edit."""


@dataclass(frozen=True)
class Stamp:
    """What the file was when it was read (its size and modification time), to notice a change since."""

    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: Path) -> Stamp | None:
        try:
            st = path.stat()
        except OSError:
            return None
        return cls(st.st_size, st.st_mtime_ns)


@dataclass
class Editable:
    """A collection open for editing: its checked form, the round-trip document behind it, and the file's
    stamp when read. Changes go to `document`; `save` checks and writes them, and refreshes `collection`."""

    path: Path
    document: Any  # ruamel CommentedMap
    collection: Collection
    stamp: Stamp | None
    dirty: bool = False
    _current: Collection | None = field(default=None, repr=False)

    @property
    def steps(self) -> list[Any]:
        steps = self.document.get("steps")
        return steps if isinstance(steps, list) else []

    def text(self) -> str:
        return dump(self.document)

    def step_names(self) -> list[str]:
        return [s.name for s in self.collection.steps]

    def touch(self) -> None:
        """The document changed (not saved yet)."""
        self.dirty = True
        self._current = None

    def current(self) -> Collection:
        """The collection as edited so far (not saved yet), checked: what a run uses."""
        if not self.dirty:
            return self.collection
        if self._current is None:
            self._current = parse(self.text(), self.path, round_trip=True)
        return self._current


def dump(document: Any) -> str:
    out = io.StringIO()
    yaml().dump(document, out)
    return out.getvalue()


def open_editable(path: str | Path) -> Editable:
    """Read `path` for editing (CollectionError with every problem when it cannot be run as it is)."""
    path = Path(path)
    stamp = Stamp.of(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CollectionError([Problem(str(path), 1, 1, "no such file")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CollectionError([Problem(str(path), 1, 1, f"cannot be read: {exc}")]) from None
    collection = parse(text, path, round_trip=True)
    return Editable(path, collection.document, collection, stamp)


def new_editable(path: str | Path, name: str, server: dict[str, Any] | None = None) -> Editable:
    """A collection that is not on disk yet (its first step comes next; `save` writes the file)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    path = Path(path)
    document = CommentedMap()
    document["name"] = name
    if server:
        document["server"] = _mapping(server)
        document.yaml_set_comment_before_after_key(
            "server", before="How to start the server (-- COMMAND or a URL on the command line wins)")
    document["steps"] = CommentedSeq()
    return Editable(path, document, Collection(path, name, [], server), None, dirty=True)


def _mapping(value: Any) -> Any:
    """Plain dicts and lists as round-trip nodes (short ones written inline, as a person would)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, dict):
        out = CommentedMap()
        for k, v in value.items():
            out[k] = _mapping(v)
        if _short(value):
            out.fa.set_flow_style()
        return out
    if isinstance(value, list):
        seq = CommentedSeq(_mapping(v) for v in value)
        if _short(value):
            seq.fa.set_flow_style()
        return seq
    return value


def _short(value: Any) -> bool:
    """Small enough to read on one line: under 60 characters, no line breaks, two levels at most."""
    def depth(v: Any) -> int:
        items = v.values() if isinstance(v, dict) else v if isinstance(v, list) else None
        return 0 if items is None else 1 + max((depth(i) for i in items), default=0)

    text = repr(value)
    return depth(value) <= 2 and len(text) < 60 and "\\n" not in text


URL_VARIABLE = "MCP_SERVER_URL"


def url_of(url: str) -> str:
    """A server's URL as a collection keeps it: one that holds a secret (userinfo, a secret query key, a
    token) is read from the environment as `${MCP_SERVER_URL}` when the collection runs."""
    return f"${{{URL_VARIABLE}}}" if mask_url(url) != url else url


def server_of(spec: ServerSpec, base: Path | None = None) -> dict[str, Any]:
    """A collection's `server:` for `spec`. A secret (an env var or header named like one, or a value
    shaped like one: `secrets.mask_env_value`, `mask_value`) is written as `${NAME}`, read from the
    environment when the collection runs: the file never holds it. A secret in the command line is masked."""
    server: dict[str, Any] = {}
    if spec.url:
        server["url"] = url_of(spec.url)
        if spec.transport == "sse":
            server["transport"] = "sse"
        if spec.headers:
            server["headers"] = {k: (f"${{{env_name(k)}}}" if mask_value(k, v) != v else v)
                                 for k, v in spec.headers.items()}
    else:
        server["command"] = mask_args(spec.command)
        if spec.env:
            server["env"] = {k: (f"${{{env_name(k)}}}" if mask_env_value(k, v) != v else v)
                             for k, v in spec.env.items()}
        if spec.cwd:
            cwd = Path(spec.cwd)
            if base is not None:
                try:
                    cwd = cwd.resolve().relative_to(base.resolve())
                except ValueError:
                    pass
            if str(cwd) != ".":
                server["cwd"] = str(cwd)
    return server


def env_name(name: str) -> str:
    """An environment variable's name for a header or env var (`X-Api-Key` → `X_API_KEY`)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", name).upper() or "SECRET"
    return f"_{name}" if name[0].isdigit() else name  # ${…} names begin with a letter or _


def expectation_from(method: str, result: Any, error: dict[str, Any] | None, ms: float | None = None, *,
                     text: bool = True, shape: bool = True, max_ms: bool = False) -> dict[str, Any]:
    """A starting expectation from one answer, as a person would write it: a JSON-RPC error's code; for a
    result, whether it was a tool error, its first line of text (`contains`), its content's types and the
    keys of its structured content. `max_ms`: no slower than four times this answer (at least 1 s)."""
    expect: dict[str, Any] = {}
    if error is not None:
        expect["error"] = {"code": error.get("code")} if isinstance(error.get("code"), int) else {}
        return expect
    res = result if isinstance(result, dict) else {}
    if method == "tools/call":
        expect["isError"] = res.get("isError") is True
    if text:
        first = next((line.strip() for line in text_of(method, result).splitlines() if line.strip()), "")
        if first:
            expect["text"] = {"contains": first[:TEXT_KEPT]}
    if shape and method == "tools/call":
        blocks = res.get("content")
        types = [b.get("type") for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else []
        if types and isinstance(blocks, list) and len(types) == len(blocks) and all(isinstance(t, str)
                                                                                    for t in types):
            expect["content"] = {"types": types}
        structured = res.get("structuredContent")
        if isinstance(structured, dict) and structured:
            expect["structured"] = {"schema": {"type": "object", "required": sorted(structured)}}
    if shape and method == "prompts/get" and isinstance(res.get("messages"), list):
        expect["messages"] = {"count": len(res["messages"])}
    if max_ms and ms is not None:
        expect["maxMs"] = int(max(1000, -(-ms * 4 // 100) * 100))
    return expect


def secret_arguments(arguments: Any, schema: Any, tool: str) -> tuple[Any, list[str]]:
    """`arguments` with each secret one (a property whose schema says `format: password` or `writeOnly`, or
    whose name reads like a secret) written as `${TOOL_NAME}`, taken from the environment when the step
    runs; and the variables named so. The file never holds the value typed in the window."""
    if not isinstance(arguments, dict):
        return arguments, []
    found = schema.get("properties") if isinstance(schema, dict) else None
    props: dict[str, Any] = found if isinstance(found, dict) else {}
    out: dict[str, Any] = {}
    names: list[str] = []
    for key, value in arguments.items():
        prop = props.get(key)
        spec: dict[str, Any] = prop if isinstance(prop, dict) else {}
        secret = spec.get("format") == "password" or spec.get("writeOnly") is True or secret_word(str(key))
        if secret and isinstance(value, str) and value and not value.startswith("${"):
            name = env_name(f"{tool}_{key}")
            out[key] = f"${{{name}}}"
            names.append(name)
        else:
            out[key] = value
    return out, names


def secret_word(name: str) -> bool:
    """Whether an argument's name reads like a secret: password, api_key, accessToken (not author, keyword)."""
    words = [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)]
    joined = {a + b for a, b in zip(words, words[1:], strict=False)}
    return bool(SECRET_WORDS & (set(words) | joined))


def unique_name(editable: Editable, wanted: str) -> str:
    taken = {str(s["name"]) if isinstance(s.get("name"), str) and s.get("name") else f"step {i + 1}"
             for i, s in enumerate(editable.steps) if isinstance(s, dict)}
    name = wanted.strip() or "step"
    if name not in taken:
        return name
    n = 2
    while f"{name} ({n})" in taken:
        n += 1
    return f"{name} ({n})"


def add_step(editable: Editable, name: str, kind: str, target: str, arguments: dict[str, Any] | None,
             expect: dict[str, Any]) -> str:
    """Append a step (named uniquely); its name. `kind` is call, read, prompt or list."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if kind not in ("call", "read", "prompt", "list"):
        raise ValueError(kind)
    step = CommentedMap()
    step["name"] = unique_name(editable, name)
    step[kind] = target
    if arguments:
        step["arguments"] = _mapping(arguments)
    if expect:
        step["expect"] = _expect_node(expect)
    steps = editable.document.get("steps")
    if not isinstance(steps, list):
        steps = editable.document["steps"] = CommentedSeq()
    steps.append(step)
    editable.touch()
    return str(step["name"])


def _expect_node(expect: dict[str, Any]) -> Any:
    """An expectation block: one key per line, each value inline when short."""
    from ruamel.yaml.comments import CommentedMap

    node = CommentedMap()
    for k, v in expect.items():
        node[k] = _mapping(v)
    return node


def _step_node(editable: Editable, index: int) -> Any:
    steps = editable.steps
    if not 0 <= index < len(steps) or not isinstance(steps[index], dict):
        raise IndexError(f"the collection has no step {index + 1}")
    return steps[index]


# A comment on the lines after a block (before the next key, or the next step) is kept by ruamel with the
# block's last value. It belongs to what follows: moved aside before the block changes, put back after it.

def _tail_slot(node: Any, key: Any) -> tuple[Any, Any, int] | None:
    """Where the comment after `node[key]`'s last line is kept: (container, key, slot), deepest first."""
    found = None
    while True:
        ca = getattr(node, "ca", None)
        slot = 2 if isinstance(node, dict) else 0
        entry = ca.items.get(key) if ca is not None else None
        if entry is not None and len(entry) > slot and entry[slot] is not None:
            found = (node, key, slot)
        value = node[key]
        if not isinstance(value, (dict, list)) or not value:
            return found
        node, key = value, (next(reversed(value)) if isinstance(value, dict) else len(value) - 1)


def _take_tail(node: Any, key: Any) -> str:
    """Cut the comment lines after `node[key]` (its own line's comment stays); they are returned."""
    if key not in node:
        return ""
    slot = _tail_slot(node, key)
    if slot is None:
        return ""
    holder, k, i = slot
    token = holder.ca.items[k][i]
    text = token.value if isinstance(token.value, str) else ""
    first, newline, rest = text.partition("\n")
    if not newline or not rest.strip():
        return ""
    token.value = first + "\n"
    return rest


def _give_tail(node: Any, key: Any, tail: str) -> None:
    """Put `tail` (comment lines) after `node[key]`'s last line."""
    if not tail or key not in node:
        return
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    while True:
        value: Any = node[key]
        if not isinstance(value, (dict, list)) or not value or _flow(value):
            break
        node, key = value, (next(reversed(value)) if isinstance(value, dict) else len(value) - 1)
    slot = 2 if isinstance(node, dict) else 0
    entry = node.ca.items.setdefault(key, [None, None, None, None] if slot == 2 else [None, None])
    token = entry[slot]
    if token is None:
        entry[slot] = CommentToken("\n" + tail, CommentMark(0), None)
    else:
        token.value = (token.value if token.value.endswith("\n") else token.value + "\n") + tail


def _flow(value: Any) -> bool:
    """Written inline ({a: 1}): no comment can follow a line inside it (plain values count as inline)."""
    fa = getattr(value, "fa", None)
    return fa is None or bool(fa.flow_style())


def _key_before(node: Any, key: Any) -> Any:
    keys = list(node)
    at = keys.index(key)
    return keys[at - 1] if at > 0 else None


def set_arguments(editable: Editable, index: int, arguments: dict[str, Any] | None) -> None:
    """Replace step `index`'s arguments, in place: keys kept keep their place and their comments."""
    step = _step_node(editable, index)
    if not arguments:
        if "arguments" in step:
            _drop_key(step, "arguments")
            editable.touch()
        return
    current = step.get("arguments")
    if not isinstance(current, dict):
        _insert_after_target(step, "arguments", _mapping(arguments))
    else:
        tail = _take_tail(step, "arguments")
        _merge(current, arguments)
        _give_tail(step, "arguments", tail)
    editable.touch()


def _drop_key(node: Any, key: Any) -> None:
    """Remove `node[key]`, the comment lines after it kept (with the key before it)."""
    tail = _take_tail(node, key)
    before = _key_before(node, key)
    del node[key]
    if before is not None:
        _give_tail(node, before, tail)


def _merge(node: Any, value: dict[str, Any]) -> None:
    for key in [k for k in node if k not in value]:
        del node[key]
    for key, v in value.items():
        old = node.get(key)
        if isinstance(old, dict) and isinstance(v, dict):
            _merge(old, v)
        elif key not in node or _plain(old) != v:
            node[key] = _mapping(v)


def _plain(value: Any) -> Any:
    from .load import plain

    return plain(value)


def _insert_after_target(step: Any, key: str, value: Any) -> None:
    keys = list(step)
    at = next((i + 1 for i, k in enumerate(keys) if k in ("call", "read", "prompt", "list", "ask")), len(keys))
    step.insert(at, key, value)


def expect_text(editable: Editable, index: int) -> str:
    """Step `index`'s expectations as the YAML a person edits (its comments kept, not those after it,
    which belong to what follows); empty when it has none."""
    step = _step_node(editable, index)
    expect = step.get("expect")
    if not isinstance(expect, dict) or not expect:
        return ""
    tail = _take_tail(step, "expect")
    try:
        return dump(expect)
    finally:
        _give_tail(step, "expect", tail)


def parse_expect(text: str, kind: str, target: str, file: str = "expectations") -> Any:
    """The expectations typed in the editor as a round-trip node, checked as `spyglass test` would check
    them; CollectionError with each problem's line and column in `text` itself."""
    from ruamel.yaml.comments import CommentedMap

    if not text.strip():
        return CommentedMap()
    header = ["steps:", "  - name: edited", f"    {kind}: {_scalar(target)}", "    expect:"]
    body = "\n".join("      " + line if line.strip() else line for line in text.splitlines())
    try:
        parse("\n".join(header) + "\n" + body + "\n", Path(file), round_trip=True)
    except CollectionError as exc:
        raise CollectionError([_shift(p, file, len(header), 6) for p in exc.problems]) from None
    node = yaml().load(text)
    if node is None:  # only comments: no expectation
        return CommentedMap()
    if not isinstance(node, dict):
        raise CollectionError([Problem(file, 1, 1, "expectations are a mapping (isError, text, structured…)")])
    return node


def _scalar(target: str) -> str:
    import json

    return json.dumps(target, ensure_ascii=False)


def _shift(p: Problem, file: str, lines: int, columns: int) -> Problem:
    line = max(1, p.line - lines)
    return Problem(file, line, max(1, p.column - columns) if p.line > lines else 1, p.message)


def set_expect(editable: Editable, index: int, text: str) -> None:
    """Replace step `index`'s expectations with `text` (checked first: CollectionError says where)."""
    step = _step_node(editable, index)
    kind = next((k for k in ("call", "read", "prompt", "list", "ask") if k in step), "call")
    target = step.get(kind)
    node = parse_expect(text, kind, "tools" if kind == "list" and target is True else str(target))
    if not node:
        if "expect" in step:
            _drop_key(step, "expect")
    elif "expect" in step:
        tail = _take_tail(step, "expect")
        step["expect"] = node
        _give_tail(step, "expect", tail)
    else:
        keys = list(step)
        at = next((i + 1 for i, k in enumerate(keys) if k == "arguments"), None)
        if at is None:
            _insert_after_target(step, "expect", node)
        else:
            step.insert(at, "expect", node)
    editable.touch()


def remove_step(editable: Editable, index: int) -> None:
    _step_node(editable, index)
    del editable.steps[index]
    editable.touch()


def save(editable: Editable, *, overwrite: bool = False) -> Collection:
    """Check the document and write it atomically (a temporary file beside it, then renamed over it).
    The text is read back by `load.parse` first: a collection the window writes is one `spyglass test`
    runs. StaleCollection when the file changed since it was read (unless `overwrite`)."""
    path = editable.path
    now = Stamp.of(path)
    if not overwrite and now != editable.stamp:
        said = "was created" if editable.stamp is None else ("was removed" if now is None else "changed")
        raise StaleCollection(f"{path} {said} on disk since it was opened")
    text = editable.text()
    collection = parse(text, path, round_trip=True)
    try:
        # a new collection is 0600; one the user has keeps its mode: it is their file (often in a repository
        # shared with a team), and who may read it is their choice, not a side effect of adding a step
        write_atomic(path, text, keep_mode=True, prefix=f".{path.name}.", suffix=".part")
    except OSError as exc:
        raise E.UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    editable.collection = collection
    editable.document = collection.document
    editable.stamp = Stamp.of(path)
    editable.dirty = False
    editable._current = None
    return collection


def store_snapshot(editable: Editable, step: str, answer: Any) -> None:
    """Keep `answer` as step `step`'s snapshot (beside the collection), without `_meta`."""
    from .run import load_snapshots, without_meta, write_snapshots

    path = editable.collection.snapshot_path
    snapshots = load_snapshots(path)
    snapshots[step] = without_meta(answer)
    write_snapshots(path, snapshots)
