"""Can this server be trusted? What its definitions and results say to a model that a person would miss.

The trust rules read the text a model receives — every string of a tool definition (description, title,
parameter descriptions…), the descriptions of prompts and resources, the server's instructions, the text
of tool results — for:

- hidden text: the kinds of `inspector.invisible` (tag characters, variation selectors, zero-width and bidi
  controls, fillers, C0 / C1 controls and U+2028 / U+2029), HTML comments (a Markdown view hides them),
  and text pushed out of sight by a long run of blank lines or spaces;
- instructions aimed at the model ("ignore previous instructions", "before using any other tool",
  `<IMPORTANT>` blocks, "do not tell the user") and references to secrets (`~/.ssh`, `id_rsa`, `.env`,
  "send … the API key");
- names: a tool name that looks like another (the same once confusable letters, case and separators are
  set aside) or mixes scripts; and, across servers (`across`), a name another server's tool has
  (shadowing), one that looks like it, and a description that names another server's tool.

`tool_findings(tool, target)` and `lookalikes(tools)` review one server's tools (`definitions.review_tools`
calls them); `item_findings` a prompt, resource or the instructions; `result_findings` a tool's result;
`across({server: tools})` a set of servers (the window's connected servers, an audit of a host's). What
a server does, observed, is `watch.py`'s.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .. import invisible
from .rules import Finding, finding

HIDDEN_RULES = {invisible.TAG: "hidden-tag-characters", invisible.VARIATION: "hidden-variation-selectors",
                invisible.ZERO_WIDTH: "hidden-zero-width", invisible.BIDI: "hidden-bidi-controls",
                invisible.FILLER: "hidden-fillers", invisible.CONTROL: "hidden-control-characters",
                invisible.SEPARATOR: "hidden-control-characters"}
# in a result (text read from the world: web pages, files) only the kinds that carry or reorder words
RESULT_KINDS = (invisible.TAG, invisible.VARIATION, invisible.BIDI)
BLANK_LINES = 12  # consecutive blank lines before more text: the rest is out of sight
BLANK_SPACES = 300  # a run of spaces (any: tab, no-break, ideographic…) before more text, the same on one line
STRINGS_MAX = 2000  # strings read per definition
SHOWN = 80  # characters of the matched text quoted in a finding
RESULT_SCAN = 100_000  # characters of a result read (the judge runs on the window's loop; a result may be 64 MiB)

_SPACES = re.compile(rf"[^\S\n]{{{BLANK_SPACES},}}")  # white space but a newline: U+00A0 and U+3000 push as far
_GAP = re.compile(r"[^\S\n]{32}")
_COMMENT = re.compile(r"<!--[\s\S]{0,200}?(?:-->|$)")
INSTRUCTION = re.compile(r"""
    \b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+)*
        (?:previous|prior|above|earlier|preceding|other|system|existing|safety)\s+
        (?:instructions?|prompts?|rules|directions|guidelines|messages|context)
  | \bbefore\s+(?:using|calling|running|invoking|executing)\s+(?:any|every|all|the)\s+(?:other\s+)?tools?\b
  | \bbefore\s+any\s+other\s+tool
  | \b(?:ignore|disregard|forget)\s+(?:everything|anything|all(?:\s+of)?(?:\s+the)?)\s+
        (?:above|before|earlier|previously|so\s+far|you\s+(?:were|have\s+been)\s+told)
  | <\s*/?\s*(?:important|system|instructions?|secret|hidden|admin|critical|override|assistant)\s*>
  | \[\s*/?\s*(?:important|system|instructions?|admin|critical|override|assistant)\s*\]
  | \b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention|reveal|show|notify|alert|disclose)\b
        [^.\n]{0,40}\b(?:user|human)\b
  | \bwithout\s+(?:telling|informing|notifying|asking)\s+the\s+user
  | \b(?:you|the\s+(?:assistant|model|ai))\s+must\s+(?:always\s+)?(?:first\s+)?(?:call|invoke|run|use|read|send)\b
        [^.\n]{0,60}\b(?:tools?|files?|first)\b
  | \binstead\s+of\s+(?:using|calling)\s+(?:the\s+)?[`'"]?\w[\w.-]*[`'"]?\s+tool
  | \bthis\s+tool\s+(?:must|should)\s+(?:always\s+)?be\s+(?:called|used|run)\s+(?:first|before)
""", re.I | re.X)
SECRET = re.compile(r"""
    ~/\.ssh\b | \.ssh/ | \bid_(?:rsa|dsa|ecdsa|ed25519)\b | (?:^|[\s/'"`(])\.env(?:\.\w+)?\b
  | ~/\.aws\b | \.aws/credentials | \.netrc\b | \.npmrc\b | \.pypirc\b | \.git-credentials | \.kube/config
  | \.docker/config\.json | claude_desktop_config\.json | \.cursor/mcp\.json | /etc/shadow | \.gnupg\b
  | \bwallet\.dat\b
  | \b(?:send|include|attach|upload|copy|forward|collect|extract|exfiltrate|share|append|leak|post)\b
        [^.\n]{0,50}\b(?:api[ _-]?keys?|access[ _-]?tokens?|passwords?|credentials|secrets?|private[ _-]?keys?
        |ssh[ _-]?keys?|session[ _-]?cookies?|env(?:ironment)?\s+variables)\b
""", re.I | re.X)

# one of these is in every text INSTRUCTION or SECRET matches (lower case)
_WORDS = ("ignor", "disregard", "forget", "overrid", "bypass", "before", "<", "important", "[system", "[ system",
          "[instruction", "[admin", "[critical", "[override", "[assistant", "[/", " not", "n't", "dont", "never",
          "without", "must", "instead", "this tool", "ssh", "id_", ".env", "env var", "environment var",
          "aws", "netrc", "npmrc", "pypirc", "credential",
          "kube", "docker", "claude_desktop", "cursor", "shadow", "gnupg", "wallet", "key", "token", "password",
          "secret", "cookie")

# letters of other scripts that read as Latin ones, and Latin that reads as other Latin (after casefold)
_CONFUSABLE = str.maketrans({
    "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "ѕ": "s", "і": "l", "ј": "j", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ɡ": "g",
    "α": "a", "β": "b", "ε": "e", "ι": "l", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
    "χ": "x", "γ": "y", "0": "o", "1": "l", "i": "l", "|": "l", "ı": "l", "5": "s",
    "_": None, "-": None, ".": None, " ": None,
})


# ---------------------------------------------------------------------------------------------- text
def text_findings(text: str, target: str, where: str, *, result: bool = False) -> list[Finding]:
    """The trust findings of one string a model reads, `where` saying which (`description`,
    `inputSchema.properties.path.description`, `its result`)."""
    out: list[Finding] = []
    if invisible.ANY.search(text):
        runs = [run for run in invisible.find(text) if not result or run.kind in RESULT_KINDS]
        for rule, same in _by_rule(runs).items():
            first = same[0]
            more = f" (and {len(same) - 1} more run{'s' if len(same) > 2 else ''})" if len(same) > 1 else ""
            it = "them" if len(first.chars) > 1 or more else "it"
            out.append(finding(rule, target, f"{where} holds {first.describe()}{more}: a model reads {it}, a person "
                                             f"does not see {it}; remove {it}"))
    if result:
        return out + _instructions(text, target, where)
    if "<!--" in text:
        match = _COMMENT.search(text)
        if match:
            out.append(finding("hidden-html-comment", target,
                               f"{where} holds an HTML comment ({_quote(match.group())}): a Markdown view hides "
                               "it, the model reads it; remove it"))
    pushed = _pushed(text) if len(text) > BLANK_SPACES or text.count("\n") >= BLANK_LINES else None
    if pushed:
        gap, rest = pushed
        out.append(finding("hidden-after-blank-lines", target,
                           f"{where} goes on after {gap} ({_quote(rest)}): text below the fold is read by the "
                           "model and missed by a person; remove the gap, or the text"))
    out += _instructions(text, target, where)
    match = SECRET.search(text)
    if match:
        out.append(finding("secret-reference", target,
                           f"{where} refers to secrets ({_quote(match.group().strip())}): a tool's words have no "
                           "reason to point a model at keys, credentials or private files; remove it"))
    return out


def _suspect(text: str) -> bool:
    """Whether `text` (or a JSON document of texts: a control character escaped as `\\u00XX`) may hold
    anything `text_findings` finds: a few scans in C, so that the regular expressions run only on the
    definitions that may match."""
    if invisible.ANY.search(text) or "\\u00" in text or "<!--" in text or text.count("\n") >= BLANK_LINES:
        return True
    if " " * 32 in text or "\t" * 32 in text:
        return True
    if (not text.isascii() or " \t" in text) and _GAP.search(text):  # other spaces, or mixed: rarer, slower
        return True
    low = text.lower()
    return any(word in low for word in _WORDS)


def _pushed(text: str) -> tuple[str, str] | None:
    """(the gap, the text after it) when text goes on after `BLANK_LINES` blank lines or `BLANK_SPACES`
    spaces; in linear time (a regular expression for it backtracks quadratically on a long gap)."""
    blank = 0
    for line in text.split("\n") if text.count("\n") >= BLANK_LINES else ():
        if not line.strip():
            blank += 1
            continue
        if blank >= BLANK_LINES:
            return f"{blank} blank lines", line
        blank = 0
    for match in _SPACES.finditer(text):
        rest = text[match.end():].strip()
        if rest:
            return "a run of spaces", rest
    return None


def _instructions(text: str, target: str, where: str) -> list[Finding]:
    match = INSTRUCTION.search(text)
    if match is None:
        return []
    return [finding("model-instruction", target,
                    f"{where} gives the model instructions ({_quote(match.group())}): words aimed at the model "
                    "can take it over; describe what there is, never tell the model what to do")]


def _by_rule(runs: list[invisible.Run]) -> dict[str, list[invisible.Run]]:
    out: dict[str, list[invisible.Run]] = {}
    for run in runs:
        out.setdefault(HIDDEN_RULES[run.kind], []).append(run)
    return out


def _quote(text: str) -> str:
    shown = " ".join(invisible.marked(text).split())
    return repr(shown if len(shown) <= SHOWN else shown[:SHOWN - 1] + "…")


# ---------------------------------------------------------------------------------------------- definitions
def strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(where, text) of every string a model reads in a definition (keys too), `_meta` and icons left out."""
    stack: list[tuple[str, Any]] = [(path, value)]
    seen = 0
    while stack and seen < STRINGS_MAX:
        where, node = stack.pop()
        seen += 1
        if isinstance(node, str):
            yield where or "the text", node
        elif isinstance(node, dict):
            for key, sub in reversed(list(node.items())):
                if key in ("_meta", "icons"):
                    continue
                if isinstance(key, str) and invisible.ANY.search(key):
                    yield f"{where or 'the definition'} (a key)", key
                stack.append((f"{where}.{key}" if where else str(key), sub))
        elif isinstance(node, list):
            stack.extend((f"{where}[{i}]", sub) for i, sub in reversed(list(enumerate(node))))


def item_findings(item: Any, target: str, path: str = "") -> list[Finding]:
    """The trust findings of a definition (tool, prompt, resource) or a text: one per rule, at its first
    place, naming how many places have it."""
    found: dict[str, Finding] = {}
    counts: dict[str, int] = {}
    try:  # the whole definition at once, in C: most are plainly fine
        plain = not _suspect(json.dumps(item, ensure_ascii=False).replace("\\n", "\n").replace("\\t", "\t"))
    except (TypeError, ValueError, RecursionError):
        plain = False
    if plain:
        return []
    for where, text in strings(item, path):
        for f in text_findings(text, target, where):
            counts[f.rule] = counts.get(f.rule, 0) + 1
            found.setdefault(f.rule, f)
    return [f if counts[f.rule] == 1 else _more(f, counts[f.rule] - 1) for f in found.values()]


def _more(f: Finding, n: int) -> Finding:
    return Finding(f.rule, f.severity, f.target, f"{f.message} (and in {n} more place{'s' if n > 1 else ''})", f.spec)


def tool_findings(tool: dict[str, Any], target: str) -> list[Finding]:
    """Every string of a tool definition read for hidden text, instructions and secrets; its name for
    mixed scripts."""
    out = item_findings(tool, target)
    name = tool.get("name")
    if isinstance(name, str) and not name.isascii():
        scripts = _scripts(name)
        if len(scripts) > 1:
            out.append(finding("tool-name-lookalike", target,
                               f"the name {invisible.marked(name)!r} mixes scripts ({', '.join(sorted(scripts))}): "
                               "it reads like a name it is not; use one script (ASCII, as the naming guidance "
                               "says)"))
    return out


def result_findings(name: str, result: dict[str, Any]) -> list[Finding]:
    """A tool's result read as the model reads it: hidden text that carries or reorders words, and
    instructions aimed at the model."""
    out: dict[str, Finding] = {}
    content = result.get("content")
    budget = RESULT_SCAN
    for i, block in enumerate(content if isinstance(content, list) else []):
        if budget <= 0:
            break
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            text = block["text"][:budget]
            budget -= len(text)
            if _suspect(text):
                for f in text_findings(text, f"tool:{name}", f"its result (content[{i}])", result=True):
                    out.setdefault(f.rule, f)
    return list(out.values())


def skeleton(name: str) -> str:
    """`name` as it reads: compatibility forms folded, case, separators and confusable letters set aside."""
    return unicodedata.normalize("NFKC", name).casefold().translate(_CONFUSABLE).replace("rn", "m").replace(
        "vv", "w")


def lookalikes(tools: Sequence[Any]) -> list[Finding]:
    """Tools of one list whose names differ but read alike (`send_email`, `send-emai1`)."""
    groups: dict[str, list[str]] = {}
    for tool in tools:
        name = tool.get("name") if isinstance(tool, dict) else None
        if isinstance(name, str) and name:
            group = groups.setdefault(skeleton(name), [])
            if name not in group:
                group.append(name)
    out = []
    for names in groups.values():
        for name in names[1:]:
            out.append(finding("tool-name-lookalike", f"tool:{name}",
                               f"the name {invisible.marked(name)!r} reads like the tool "
                               f"{invisible.marked(names[0])!r}: a model (or a person approving its call) can "
                               "take one for the other; give it a name that differs in words"))
    return out


def _scripts(name: str) -> set[str]:
    out = set()
    for c in name:
        if c.isalpha():
            word = unicodedata.name(c, "").split(" ")[0]
            out.add(word.capitalize() if word else "unknown")
    return out


# ---------------------------------------------------------------------------------------------- across servers
def across(servers: Mapping[str, Sequence[Any]]) -> dict[str, list[Finding]]:
    """The findings each server gets for the others: a tool name another server's tool has (shadowing), a
    name that reads like another server's tool, a description that names another server's tool. `servers`
    maps a server's name to its tool definitions."""
    names: dict[str, list[str]] = {}
    for server, tools in servers.items():
        names[server] = [t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
    owners: dict[str, list[str]] = {}
    shapes: dict[str, list[tuple[str, str]]] = {}
    for server, listed in names.items():
        for name in dict.fromkeys(listed):
            owners.setdefault(name, []).append(server)
            shapes.setdefault(skeleton(name), []).append((server, name))
    out: dict[str, list[Finding]] = {server: [] for server in servers}
    for server, listed in names.items():
        for name in dict.fromkeys(listed):
            others = [o for o in owners[name] if o != server]
            if others:
                out[server].append(finding("tool-name-shadowing", f"tool:{name}",
                                           f"{_servers(others)} also {'has' if len(others) == 1 else 'have'} a "
                                           f"tool named {name!r}: a host that connects both offers the model two "
                                           "tools of one name, and may call the wrong server's; rename it (a "
                                           "prefix of the server's own)"))
            alike = [(o, n) for o, n in shapes[skeleton(name)] if o != server and n != name]
            if alike:
                o, n = alike[0]
                out[server].append(finding("tool-name-lookalike", f"tool:{name}",
                                           f"the name {invisible.marked(name)!r} reads like {invisible.marked(n)!r} "
                                           f"of the server {o!r}: a model can take one for the other; give it a "
                                           "name that differs in words"))
    for server, tools in servers.items():
        foreign = {n: o for o, listed in names.items() if o != server for n in listed
                   if _distinctive(n) and n not in owners_of(owners, server, n)}
        if not foreign:
            continue
        pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, sorted(foreign, key=len, reverse=True)))
                             + r")(?![\w-])")
        for tool in tools:
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                continue
            for where, text in strings({k: v for k, v in tool.items() if k != "name"}):
                match = pattern.search(text)
                if match:
                    other = match.group(1)
                    out[server].append(finding("foreign-tool-reference", f"tool:{tool['name']}",
                                               f"{where} names {other!r}, a tool of the server {foreign[other]!r}: "
                                               "a tool's words have no business steering how another server's "
                                               "tools are used; remove it"))
                    break
    return out


def owners_of(owners: dict[str, list[str]], server: str, name: str) -> list[str]:
    """`[name]` when `server` has a tool of that name itself (then naming it is naming its own), else []."""
    return [name] if server in owners.get(name, []) else []


def _distinctive(name: str) -> bool:
    """A name that cannot be an ordinary word of a sentence ("search" can; "send_email" cannot)."""
    return len(name) >= 5 and (any(c in name for c in "_-.") or any(c.isupper() for c in name[1:]))


def _servers(names: list[str]) -> str:
    quoted = [repr(n) for n in names[:3]] + ([f"{len(names) - 3} more"] if len(names) > 3 else [])
    return ("the server " if len(names) == 1 else "the servers ") + ", ".join(quoted)
