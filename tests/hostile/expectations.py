"""What `spyglass --cli` must do with each hostile case: shared by the tests and
bench/hostile.py. Each entry: the server's cases, the CLI's extra arguments,
the exit code, words that must appear (in stdout+stderr), and words that must
appear among the trace's malformed reasons.

Exit codes are the official inspector CLI's: a server that crashes, hangs, refuses the handshake or answers
nonsense ends in 1 (its envelope's `kind` says which), an isError result in 5."""

from __future__ import annotations

from dataclasses import dataclass, field

CALL = ("--tool-name", "echo", "--tool-arg", "message=hello")


@dataclass(frozen=True)
class Expect:
    cases: tuple[str, ...]
    args: tuple[str, ...] = CALL
    exit_code: int = 0
    says: tuple[str, ...] = ()
    malformed: tuple[str, ...] = ()
    stdin_timeout: float = 5.0
    note: str = field(default="", compare=False)


EXPECTATIONS: dict[str, Expect] = {
    # noise: tolerated and recorded
    "noise": Expect(("noise",), says=("hello",), malformed=("bad JSON", "not UTF-8", "blank line", "batch array")),
    "stderr-flood": Expect(("stderr-flood",), says=("hello",)),
    "flood": Expect(("flood",), says=("hello",)),
    "server-pings": Expect(("server-pings", "500"), says=("pings answered: 500/500",)),
    "slow-bytes": Expect(("slow-bytes", "0"), says=("hello",)),
    "big-reply": Expect(("big-reply",), args=(*CALL, "--format", "human"), says=("0123456789abcdef",)),
    # wrong messages
    "unknown-id": Expect(("unknown-id",), says=("hello",), malformed=("unknown id 99999",)),
    "duplicate-reply": Expect(("duplicate-reply",), says=("hello",), malformed=("already answered",)),
    "string-id": Expect(("string-id",), exit_code=1, says=("is a string, but we sent the number",)),
    "batch-noise": Expect(("noise",), says=("hello",), malformed=("batch array",)),
    "no-jsonrpc": Expect(("no-jsonrpc",), exit_code=1, says=('missing "jsonrpc"', "request 1")),
    "result-and-error": Expect(("result-and-error",), exit_code=1, says=('both "result" and "error"',)),
    "null-id-error": Expect(("null-id-error",), says=("hello",), malformed=("null id",)),
    "deep-nesting": Expect(("deep-nesting",), exit_code=1, says=("nested too deeply", "request 4")),
    "half-line-exit": Expect(("half-line-exit",), exit_code=1, says=("exited with code 1", "crashed while writing"),
                             malformed=("ended in the middle of this message",)),
    # wrong results
    "tools-null": Expect(("tools-null",), args=(), exit_code=1, says=("result is null",)),
    "tools-nope": Expect(("tools-nope",), args=(), exit_code=1, says=('"tools" is a string, not a list',)),
    "odd-content": Expect(("odd-content",), says=("hologram", "not base64 at all")),
    # (the hostile server does not implement its schema-only tools: -32602 from it is the outcome)
    "big-schema": Expect(("big-schema",), args=("--tool-name", "cyclic", "--tool-args-json", '{"node": {}}'),
                         exit_code=1, says=("not validating arguments", "cycle", "Unknown tool: cyclic")),
    "wide-schema": Expect(("big-schema",), args=("--tool-name", "wide", "--tool-arg", "field_2999=x"),
                          exit_code=1, says=("Unknown tool: wide",)),
    # wrong behaviour
    "no-reply": Expect(("no-reply",), args=(*CALL, "--timeout", "1"), exit_code=1, says=("within 1 s",)),
    "exit-during-call": Expect(("exit-during-call",), exit_code=1, says=("exited with code 70", "panic: boom")),
    "die-at-start": Expect(("die-at-start",), exit_code=1, says=("exited with code 3", "could not open database")),
    "close-stdout": Expect(("close-stdout",), exit_code=1, says=("closed its standard output",)),
    "init-error": Expect(("init-error",), exit_code=1, says=("database locked",)),
    "bad-version": Expect(("bad-version",), exit_code=1, says=("1999-01-01",)),
    # The CLI declares sampling (and refuses each request unless --sampling-reply is given).
    "sampling-uninvited": Expect(("sampling-uninvited",), says=("sampling answered: error -1",
                                                                "sampling request declined")),
    "is-error": Expect(("is-error",), exit_code=5, says=("it broke",)),
    # tasks (2025-11-25) gone wrong
    "task-bad-shape": Expect(("task-bad-shape",), args=(*CALL, "--task"), exit_code=1,
                             says=("answered with a task, but the task has no taskId string",)),
    "task-eager-result": Expect(("task-eager-result",), args=(*CALL, "--task"),
                                says=("done after 3 polls", "task task-1: working", "task task-1: completed")),
    "task-unadvertised": Expect(("task-unadvertised",), says=("hello",)),  # called plainly: no "task" sent
    "task-no-get": Expect(("task-no-get",), args=(*CALL, "--task"), says=("result without any status",)),
    "task-no-result": Expect(("task-no-result",), args=(*CALL, "--task", "--timeout", "1"), exit_code=1,
                             says=("ended (completed) and its result did not come within 1 s",)),
    # a $ref out of the inputSchema (HOSTILE_REF unset: port 9 on loopback): named, never followed, the call sent
    "schema-refs": Expect(("schema-refs",), args=("--tool-name", "ref_input", "--tool-arg", "x=1"),
                          says=("a $ref refers to http://127.0.0.1:9/schema.json outside this schema; Spyglass never "
                                "fetches schema references", "called ref_input")),
    # untrusted text: escapes made visible in text output
    "untrusted-text": Expect(("untrusted-text",), args=("--format", "human"),
                             says=("\\x1b[31mRED", "<U+202E>", "<script>")),
}
