"""Every frame judged: what a server sends, checked against the schema of the revision negotiated with it,
and against what its own declarations and tool definitions promise.

A `Judge` follows one connection's frames in order (`frame(index, frame)`): the requests Spyglass sent
tell it which method each response answers; each message from the server is validated against its
revision's schema (responses by the method of their request, notifications and server requests by
their method) and the observed-call rules run on `tools/call` answers. Standard library and jsonschema
only; no IO. A schema that cannot be compiled is itself a finding, never an exception.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from .. import schemarefs
from ..protocol import jsonrpc as rpc
from ..protocol import schemas
from ..traffic.frame import Frame
from . import trust
from .rules import Finding, finding, mistake, times
from .watch import Watch

INVALID_PARAMS, METHOD_NOT_FOUND = -32602, -32601
LIST_CHANGED_CAPABILITY = {"notifications/tools/list_changed": "tools",
                           "notifications/resources/list_changed": "resources",
                           "notifications/prompts/list_changed": "prompts"}
DETAIL_MAX = 240
LISTED = {"prompts/list": ("prompts", "name", "prompt"), "resources/list": ("resources", "uri", "resource"),
          "resources/templates/list": ("resourceTemplates", "uriTemplate", "resource")}


@dataclass
class _Sent:
    method: str
    params: dict[str, Any]


@dataclass
class Judge:
    """The findings of one connection's frames. Set `revision` and `capabilities` once the handshake is
    done (`ready`), and `tools` whenever the tool list is known (the observed-call rules need it)."""

    revision: str | None = None
    capabilities: dict[str, Any] | None = None
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    listed: bool = False  # `tools` is the server's list (possibly empty), not merely unknown
    findings: list[Finding] = field(default_factory=list)  # one per mistake, at its first frame
    repeats: dict[tuple[str, str], int] = field(default_factory=dict)  # (rule, message) -> frames it was in
    _sent: dict[Any, _Sent] = field(default_factory=dict)
    _reported_capabilities: set[str] = field(default_factory=set)
    # method -> (the validator of its notification, or None; whether a capability rule may apply to it), for
    # the revision and capabilities in `_quick_for`: a flood's notification is judged by one lookup and
    # one call of the compiled validator
    _quick: dict[str, tuple[Any, bool]] = field(default_factory=dict)
    _quick_for: tuple[Any, Any] = (None, None)
    # the trust rules' findings of listings, results and what the server did: one per rule and target,
    # however often the same listing or result came back
    trusted: dict[tuple[str, str], Finding] = field(default_factory=dict)
    watch: Watch = field(default_factory=Watch)

    def ready(self, revision: str, capabilities: dict[str, Any] | None) -> None:
        self.revision = revision if revision in schemas.REVISIONS else None
        self.capabilities = capabilities if isinstance(capabilities, dict) else {}

    def frame(self, index: int, frame: Frame) -> list[Finding]:
        """Judge one frame (frames of the session in order); returns its findings. `findings` keeps each
        mistake once (a flood of one broken notification is one finding, however long it lasts)."""
        if frame.direction == "out":
            self._sent_frame(frame)
            return []
        if frame.direction != "in":
            return []
        message = frame.message
        if type(message) is rpc.Notification and self._quick_valid(message):
            return []  # the common case of a flood: valid, and no capability rule applies
        target = f"frame:{index}"
        if message is None and (plain := _plain_notification(frame.data)) is not None:
            found = self._notification(target, plain)  # judged as sent
        else:
            if message is None:
                message = rpc.parse(frame.data)
            found = self._judge(target, message, frame.data)
        for f in found:
            key = mistake(f)
            if key in self.repeats:
                self.repeats[key] += 1
            else:
                self.repeats[key] = 1
                self.findings.append(f)
        return found

    def frames(self, first: int, frames: list[Frame]) -> list[tuple[int, Finding]]:
        """`frame` of frames `first`, `first + 1`…, in order, with each finding's frame number. A flood's
        valid notifications are checked against their schema here, without a call each."""
        if len(frames) > 1 and self._run_valid(frames):
            return []  # a flood's read: one method's notifications, each valid, judged in one call
        found: list[tuple[int, Finding]] = []
        quick: dict[str, Any] = {}  # method -> its validator where `_quick_valid` says one settles it
        for n, frame in enumerate(frames, first):
            message = frame.message
            if frame.direction == "in" and type(message) is rpc.Notification:
                validator = quick.get(message.method)
                if validator is not None:
                    try:
                        whole: dict[str, Any] = {"jsonrpc": "2.0", "method": message.method}
                        if message.params is not None:
                            whole["params"] = message.params
                        if validator.is_valid(whole):
                            continue
                    except Exception:  # (integers beyond 64 bits and the like): the long way says what
                        pass
                elif self._quick_valid(message):
                    entry = self._quick.get(message.method)
                    if entry is not None and entry[0] is not True:
                        quick[message.method] = entry[0]
                    continue
            found.extend((n, f) for f in self.frame(n, frame))
        return found

    def reported(self) -> list[Finding]:
        """`findings`, each naming how many frames it was found in when more than one."""
        out = []
        for f in self.findings:
            count = self.repeats.get(mistake(f), 1)
            out.append(f if count == 1 else replace(f, message=f"{f.message} ({times(f, count)})"))
        return out + list(self.trusted.values())

    def _trust(self, found: list[Finding]) -> None:
        for f in found:
            self.trusted.setdefault((f.rule, f.target), f)

    def _quick_valid(self, message: rpc.Notification) -> bool:
        """True when `message` is valid against its revision's schema and no capability rule can concern
        it: nothing to report. False: judge it the long way (it may still turn out fine)."""
        if self._quick_for[0] is not self.revision or self._quick_for[1] is not self.capabilities:
            self._quick.clear()
            self._quick_for = (self.revision, self.capabilities)
        quick = self._quick.get(message.method)
        if quick is None:
            quick = self._quick[message.method] = self._quick_entry(message.method)
        validator, ruled = quick
        if ruled or validator is None:
            return False
        if validator is True:
            return True  # a method this revision does not define: nothing to validate it against
        try:
            return bool(validator.is_valid(_whole(message)))
        except Exception:  # (integers beyond 64 bits and the like): the long way says what
            return False

    def _run_valid(self, frames: list[Frame]) -> bool:
        """True when every frame is a notification the server sent, all of one method that `_quick_valid`
        settles, and each is valid: then `frames` finds nothing. Checked in one call where the method's
        schema asks nothing of a notification but its params (`_params_run`), else False (judged one by one)."""
        first = frames[0].message
        if type(first) is not rpc.Notification or frames[0].direction != "in" or not self._quick_valid(first):
            return False
        method = first.method
        params = [m.params for f in frames if f.direction == "in" and type(m := f.message) is rpc.Notification
                  and m.method == method]
        if len(params) != len(frames):
            return False
        validator = self._quick[method][0]
        if validator is True:
            return True  # a method the revision does not define: nothing to validate against
        run = _params_run(self.revision, _method_defs(self.revision, "Notification")[method]) \
            if self.revision is not None else None
        if run is None or None in params:
            return False
        try:
            return bool(run.is_valid(params))
        except Exception:  # (integers beyond 64 bits and the like): one by one, the long way says what
            return False

    def _quick_entry(self, method: str) -> tuple[Any, bool]:
        ruled = (self.capabilities is None or method in LIST_CHANGED_CAPABILITY
                 or method == "notifications/resources/updated"
                 or (method == "notifications/message" and "logging" not in self.capabilities))
        if self.revision is None:
            return True, ruled  # nothing to validate against yet
        name = _method_defs(self.revision, "Notification").get(method)
        if name is None:
            return True, ruled
        return _validator(self.revision, name).validator, ruled  # (None: cannot be compiled, said the long way)

    # ------------------------------------------------------------------ what we sent
    def _sent_frame(self, frame: Frame) -> None:
        try:
            data = json.loads(frame.data)
        except ValueError:
            return
        for item in data if isinstance(data, list) else [data]:
            if isinstance(item, dict) and isinstance(item.get("method"), str) and "id" in item:
                params = item.get("params")
                key = _key(item["id"])
                self._sent[key] = _Sent(item["method"], params if isinstance(params, dict) else {})
                self.watch.sent(key, item["method"], self._sent[key].params, self.tools)

    # ------------------------------------------------------------------ what the server sent
    def _judge(self, target: str, message: Any, raw: bytes) -> list[Finding]:
        if isinstance(message, (rpc.Response, rpc.ErrorResponse)):
            sent = self._sent.pop(_key(message.id), None)
            if sent is None:
                return []  # an answer to nothing we asked (the traffic pane shows it unpaired)
            self.watch.answered(_key(message.id))
            if isinstance(message, rpc.Response):
                return self._response(target, sent, message.result)
            return self._error(target, sent, message, raw)
        if isinstance(message, rpc.Notification):
            return self._notification(target, _whole(message))
        if isinstance(message, rpc.Request):  # rare: judged as sent, not as parsed
            return self._schema(target, message.method, _decoded(raw, message), "Request")
        if isinstance(message, rpc.Malformed) and not message.refused:  # (refused: over Spyglass's size limit)
            return [finding("schema-violation", target, f"not a JSON-RPC message: {_clip(message.reason, 160)}: "
                                                        "a server writes only JSON-RPC messages to its output "
                                                        "(logs go to stderr)")]
        return []

    def _notification(self, target: str, whole: dict[str, Any]) -> list[Finding]:
        method = whole["method"]
        self._trust(self.watch.notified(method, whole.get("params")))
        return self._schema(target, method, whole, "Notification") + self._capability(target, method)

    def _response(self, target: str, sent: _Sent, result: Any) -> list[Finding]:
        out: list[Finding] = []
        if self.revision is not None or sent.method == "initialize":
            out += self._result_schema(target, sent, result)
        if sent.method == "initialize" and isinstance(result, dict) and self.capabilities is None:
            self.ready(str(result.get("protocolVersion")), result.get("capabilities"))
        if sent.method == "tools/call" and isinstance(result, dict):
            out += self._call_result(target, sent, result)
        if isinstance(result, dict):
            self._trust_listing(sent, result)
        if sent.method == "logging/setLevel" and self.capabilities is not None and "logging" not in self.capabilities:
            out += self._undeclared(target, "logging/setLevel", "logging/setLevel was answered with a result although "
                                                       "the server declares no logging capability")
        return out

    def _error(self, target: str, sent: _Sent, message: rpc.ErrorResponse, raw: bytes) -> list[Finding]:
        out = self._schema_def(target, "error response", _error_def(self.revision), _decoded(raw, message))
        if sent.method != "tools/call":
            return out
        name = sent.params.get("name")
        if not isinstance(name, str) or name not in self.tools:
            return out
        code = message.error.code
        if code in (INVALID_PARAMS, METHOD_NOT_FOUND):
            return out
        tool = self.tools[name]
        if _arguments_valid(tool.get("inputSchema"), sent.params.get("arguments", {})):
            out.append(finding("tool-error-as-protocol-error", f"tool:{name}",
                               f"a call with valid arguments was answered with JSON-RPC error {code} "
                               f"({_clip(message.error.message)}): a tool that ran and failed should return a result "
                               "with isError: true and the reason as text, so that the model can read it"))
        return out

    def _result_schema(self, target: str, sent: _Sent, result: Any) -> list[Finding]:
        revision = self.revision or _initialize_revision(result)
        if revision is None:
            return []
        names = _result_defs(revision, sent.method)
        if not names:
            return []
        if any(_validator(revision, n).accepts(result) for n in names):
            return []  # (a result that one definition accepts is not judged against the others)
        first = next((p for p in (_problem(revision, n, result) for n in names) if p is not None), None)
        if first is None:  # pragma: no cover - a definition that rejects it reports why
            return []
        return [finding("schema-violation", target,
                        f"the {sent.method} result breaks the {revision} schema ({names[0]}): {first}")]

    def _schema(self, target: str, method: str, whole: dict[str, Any], kind: str) -> list[Finding]:
        if self.revision is None:
            return []
        name = _method_defs(self.revision, kind).get(method)
        if name is None:
            return []  # a method this revision does not define: nothing to validate it against
        return self._schema_def(target, method, name, whole)

    def _schema_def(self, target: str, what: str, name: str | None, instance: Any) -> list[Finding]:
        if self.revision is None or name is None:
            return []
        problem = _problem(self.revision, name, instance)
        if problem is None:
            return []
        return [finding("schema-violation", target, f"the {what} breaks the {self.revision} schema ({name}): "
                                                    f"{problem}")]

    def _capability(self, target: str, method: str) -> list[Finding]:
        caps = self.capabilities
        if caps is None:
            return []
        if method in LIST_CHANGED_CAPABILITY:
            kind = LIST_CHANGED_CAPABILITY[method]
            declared = caps.get(kind)
            if not (isinstance(declared, dict) and declared.get("listChanged") is True):
                return self._undeclared(target, f"{kind}.listChanged",
                                        f"the server sent {method} without declaring {kind}.listChanged: "
                                        "clients that trust the declaration never reload the list")
        if method == "notifications/resources/updated":
            declared = caps.get("resources")
            if not (isinstance(declared, dict) and declared.get("subscribe") is True):
                return self._undeclared(target, "resources.subscribe",
                                        "the server sent notifications/resources/updated without declaring "
                                        "resources.subscribe")
        if method == "notifications/message" and "logging" not in caps:
            return self._undeclared(target, "logging", "the server sent notifications/message (a log line) "
                                                       "without declaring the logging capability")
        return []

    def _undeclared(self, target: str, what: str, message: str) -> list[Finding]:
        if what in self._reported_capabilities:
            return []  # once each: a flood of list_changed is one mistake
        self._reported_capabilities.add(what)
        return [finding("capability-undeclared", target, f"{message}; declare it in the initialize result")]

    def _trust_listing(self, sent: _Sent, result: dict[str, Any]) -> None:
        """The trust rules on what a listing, the instructions and a tool's result say to a model (a tool
        list's definitions are reviewed with the list: `definitions.review_tools`; here, only a redefinition)."""
        method = sent.method
        if method == "tools/list":
            self._trust(self.watch.listed(result.get("tools")))
        elif method in LISTED:
            key, ident, kind = LISTED[method]
            items = result.get(key)
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict):
                    self._trust(trust.item_findings(item, f"{kind}:{item.get(ident)}"))
        elif method in ("initialize", "server/discover") and isinstance(result.get("instructions"), str):
            self._trust(trust.item_findings(result["instructions"], "server", "the server's instructions"))
        elif method == "tools/call" and isinstance(sent.params.get("name"), str):
            self._trust(trust.result_findings(sent.params["name"], result))

    # ------------------------------------------------------------------ observed tool calls
    def _call_result(self, target: str, sent: _Sent, result: dict[str, Any]) -> list[Finding]:
        name = sent.params.get("name")
        if not isinstance(name, str):
            return []
        if "task" in result and "content" not in result:
            return []  # a task was created: its result comes later, from tasks/result
        if name not in self.tools:
            if not self.listed:
                return []  # the list is not known: cannot tell an unknown tool
            return [finding("unknown-tool-not-protocol-error", "server",
                            f"calling {name!r}, which the server does not list, was answered with a result"
                            f"{' (isError: true)' if result.get('isError') is True else ''}: an unknown "
                            f"tool is a protocol error, JSON-RPC error {INVALID_PARAMS}", )]
        if result.get("isError") is True:
            return []
        schema = self.tools[name].get("outputSchema")
        if not isinstance(schema, dict):
            return []
        structured = result.get("structuredContent")
        if structured is None:
            return [finding("structured-content-missing", f"tool:{name}",
                            "the tool declares an outputSchema but its result has no "
                            "structuredContent: return the data as structuredContent, valid against the schema")]
        out: list[Finding] = []
        problem = _output_problem(schema, structured)
        if problem:
            out.append(finding("structured-content-mismatch", f"tool:{name}",
                               f"structuredContent does not match the outputSchema: {problem}"))
        if not _text_carries(result.get("content"), structured):
            out.append(finding("structured-text-missing", f"tool:{name}",
                               "no text block of the result carries the structured data: add its JSON "
                               "as a text block for clients that do not read structuredContent"))
        return out


def _plain_notification(raw: bytes) -> dict[str, Any] | None:
    """The decoded message when `raw` is a well-formed JSON-RPC notification (else None: the full parser
    classifies it). Most of a flood is notifications: this skips building a message object for each."""
    if b'"id"' in raw:
        return None
    obj, problem = rpc.decode(raw)  # the frames' parser: the faster one when the client installed it
    if problem:
        return None
    if (isinstance(obj, dict) and obj.get("jsonrpc") == "2.0" and isinstance(obj.get("method"), str)
            and "id" not in obj and "result" not in obj and "error" not in obj
            and isinstance(obj.get("params", {}), dict)):  # (as `rpc.parse` classifies: else no message at all)
        return obj
    return None


def _key(rid: Any) -> str:
    if type(rid) is int:  # the usual id, spelled as json.dumps spells it without serialising
        return str(rid)
    return json.dumps(rid)


def _whole(message: rpc.Request | rpc.Notification) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "method": message.method}
    if isinstance(message, rpc.Request):
        out["id"] = message.id
    if message.params is not None:
        out["params"] = message.params
    return out


def _decoded(raw: bytes, message: rpc.Request | rpc.ErrorResponse) -> Any:
    """The message as it came (parsing fills in what a client can do without, e.g. an error's message)."""
    try:
        return json.loads(raw)
    except ValueError:  # pragma: no cover - a frame that parsed as a message is JSON
        return {"id": message.id}


def _initialize_revision(result: Any) -> str | None:
    version = result.get("protocolVersion") if isinstance(result, dict) else None
    return version if version in schemas.REVISIONS else None


def _defs(revision: str) -> dict[str, Any]:
    doc = schemas.schema(revision)
    defs: dict[str, Any] = doc.get("$defs") or doc.get("definitions") or {}
    return defs


@cache
def _method_defs(revision: str, kind: str) -> dict[str, str]:
    """method -> definition name, for the revision's requests or notifications."""
    out = {}
    for name, sub in _defs(revision).items():
        method = (sub.get("properties") or {}).get("method") if isinstance(sub, dict) else None
        if name.endswith(kind) and isinstance(method, dict) and isinstance(method.get("const"), str):
            out[method["const"]] = name
    return out


@cache
def _result_defs(revision: str, method: str) -> tuple[str, ...]:
    """The definitions a result of `method` may match: its own, then the ones any request may get instead
    (a task created in its place, input required before it can run)."""
    defs = _defs(revision)
    request = _method_defs(revision, "Request").get(method)
    if request is None:
        return ()
    own = request[: -len("Request")] + "Result"
    first = own if own in defs else "EmptyResult" if "EmptyResult" in defs else "Result"
    extra = [n for n in ("CreateTaskResult", "InputRequiredResult") if n in defs and n != first]
    return (first, *extra)


def _error_def(revision: str | None) -> str | None:
    if revision is None:
        return None
    defs = _defs(revision)
    return next((n for n in ("JSONRPCErrorResponse", "JSONRPCError") if n in defs), None)


class _Compiled:
    """One definition of a revision, compiled once (jsonschema-rs: a message is judged in about a
    microsecond, so a flood of notifications stays cheap), or why it could not be."""

    def __init__(self, revision: str, name: str) -> None:
        self.problem: str | None = None
        try:
            self.validator: Any = schemarefs.rust_validator(schemas.definition(revision, name))
        except Exception as exc:  # a schema the validator cannot compile: reported, never raised
            self.validator, self.problem = None, f"{type(exc).__name__}: {exc}"

    def accepts(self, instance: Any) -> bool:
        """Valid, and nothing more asked (no words for what is wrong)."""
        if self.validator is None:
            return False
        try:
            return bool(self.validator.is_valid(instance))
        except Exception:  # (integers beyond 64 bits and the like): judged by first_problem
            return False

    def first_problem(self, instance: Any) -> str | None:
        if self.validator is None:
            return f"the schema cannot be compiled ({_clip(self.problem or '')})"
        return _first_error(self.validator, instance)


def _first_error(validator: Any, instance: Any) -> str | None:
    """The problem of `instance` that says most (the deepest; "not valid under any of" says least), in
    words; None when valid. Values the validator cannot take are a problem, never an exception."""
    try:
        if validator.is_valid(instance):
            return None
        errors = list(itertools.islice(validator.iter_errors(instance), 20))
    except Exception as exc:  # (integers beyond 64 bits and the like)
        return f"cannot be validated ({type(exc).__name__}: {_clip(str(exc), 120)})"
    if not errors:  # pragma: no cover - is_valid and iter_errors disagree
        return None
    best = max(errors, key=lambda e: (len(e.instance_path), "any of" not in e.message))
    where = "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in best.instance_path)
    return _clip(f"at {where or '(top level)'}: {best.message}")


@cache
def _validator(revision: str, name: str) -> _Compiled:
    return _Compiled(revision, name)


def _problem(revision: str, name: str, instance: Any) -> str | None:
    """The first problem of `instance` against `name` of `revision`, in words; None when valid."""
    return _validator(revision, name).first_problem(instance)


@cache
def _params_run(revision: str, name: str) -> Any:
    """A validator of a list of params, each against the `params` of notification `name`, where a notification
    `{"jsonrpc": "2.0", "method": M, "params": P}` of that definition's own method M is valid exactly when P
    is (an object schema that says only that jsonrpc is "2.0", method is M and which of them are required);
    None where the definition asks more (judged one by one) or cannot be compiled."""
    doc = schemas.definition(revision, name)
    key = "$defs" if "$defs" in doc else "definitions"
    sub = doc[key][name]
    props = sub.get("properties") if isinstance(sub, dict) else None
    required = sub.get("required", []) if isinstance(sub, dict) else None

    def const(member: Any, value: str) -> bool:
        return (isinstance(member, dict) and set(member) <= {"const", "type", "description"}
                and member.get("const") == value and member.get("type", "string") == "string")

    method = props["method"].get("const") if isinstance(props, dict) and isinstance(props.get("method"), dict) else None
    if not (isinstance(props, dict) and set(sub) <= {"description", "properties", "required", "type"}
            and sub.get("type") == "object" and "params" in props and set(props) <= {"jsonrpc", "method", "params"}
            and isinstance(method, str) and const(props["method"], method)
            and ("jsonrpc" not in props or const(props["jsonrpc"], "2.0"))
            and isinstance(required, list) and set(required) <= {"jsonrpc", "method", "params"}):
        return None
    run = {k: v for k, v in doc.items() if k != "$ref"}
    run.update({"type": "array", "items": {"$ref": f"#/{key}/{name}/properties/params"}})
    try:
        return schemarefs.rust_validator(run)
    except Exception:
        return None


def _compiled(schema: Any) -> Any:
    """A tool's own schema compiled with jsonschema-rs (patterns in linear time: a server's regex cannot
    freeze the window; remote references never fetched), or the reason it cannot be."""
    try:
        return schemarefs.rust_validator(schema)
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def _arguments_valid(schema: Any, arguments: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    validator = _compiled(schema)
    try:
        return not isinstance(validator, str) and bool(validator.is_valid(arguments))
    except Exception:
        return False


def _output_problem(schema: dict[str, Any], structured: Any) -> str | None:
    validator = _compiled(schema)
    if isinstance(validator, str):
        return f"the outputSchema cannot be used ({_clip(validator, 200)})"
    return _first_error(validator, structured)


def _text_carries(content: Any, structured: Any) -> bool:
    if not isinstance(content, list):
        return False
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            try:
                if json.loads(block["text"]) == structured:
                    return True
            except (ValueError, RecursionError):
                continue
    return False


def _clip(text: str, limit: int = DETAIL_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
