"""`spyglass --cli` against the official inspector's CLI (@modelcontextprotocol/inspector 2.12.0, pinned in
tests/peers, run on Node 22 from node@22): the same invocations, on the same servers (server-everything over
stdio and Streamable HTTP, the SDK peer in both protocol eras, the planted server's unportable schema), must
end with the same exit code, the same `error.code` in the envelope on the last stderr line, and where both
print one, a result of the same shape. The few deliberate differences are cases of their own, each with the
reason docs/cli.md#differences-from-the-official-cli gives.

Both CLIs run every case concurrently (the official CLI's Node start is the slow part). The corpus runs in
PARTS tests of its own (every PARTS-th case, each part with its own HTTP peers): 108 process starts are CPU
bound, and on a loaded two-core machine the whole corpus in one test outran the 120 s limit per test."""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import http_peers
import pytest
from support import EVERYTHING, PEERS, PY, ROOT, SLOWDOWN

NODE22 = PEERS / "node_modules" / ".bin" / "node"
# resolved: the official CLI runs only when argv[1] is its own real path (a linked node_modules, as in a git
# worktree, made it exit 0 at once, printing nothing)
OFFICIAL = (PEERS / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "cli" / "build"
            / "index.js").resolve()
DEBUG = PEERS / "node_modules" / "@modelcontextprotocol" / "server-debug" / "dist" / "index.js"
PLANTED = [PY, str(ROOT / "tests" / "checks" / "planted_server.py")]
TIMEOUT = 60 * SLOWDOWN
PARTS = 3


@dataclass
class Case:
    name: str
    argv: list[str]  # the official order: TARGET... -- OPTIONS..., or URL OPTIONS...
    exit: int
    code: str | None = None  # error.code of the envelope, when the exit is not 0
    same_result: bool = False  # compare the `result` of --format json
    same_stdout: bool = False  # compare stdout line by line, as JSON
    same_file: bool = False  # compare the JSON file each wrote at {out} (and the results, but for that path)
    spyglass: dict = field(default_factory=dict)  # a deliberate difference: {"exit":, "code":, "why":}
    extra: list[str] = field(default_factory=list)  # Spyglass-only flags (its way to the official behaviour)


def corpus(everything_url: str, sdk_url: str, tmp: Path) -> list[Case]:
    ev = ["node", str(EVERYTHING), "stdio", "--"]  # a server process per run: most cases share the HTTP one
    doc = "demo://resource/static/document/architecture.md"
    debug = ["node", str(DEBUG), "--stdio", "--"]
    config = tmp / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"local": {"command": "node", "args": ["s.js"]},
                                                 "remote": {"type": "streamable-http", "url": everything_url}}}))
    bad_client = tmp / "client.json"
    bad_client.write_text("{not json")
    return [
        Case("list tools, stdio", [*ev, "--connect-timeout", "15000", "--method", "tools/list", "--format", "json"], 0,
             same_result=True),
        Case("call a tool", [*ev, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi",
                             "--format", "json"], 0, same_result=True),
        Case("arguments as one JSON object", [everything_url, "--method", "tools/call", "--tool-name", "echo",
                                               "--tool-args-json", '{"message":"x"}', "--format", "json"], 0,
             same_result=True),
        Case("unknown tool", [*ev, "--method", "tools/call", "--tool-name", "nope", "--format", "json"], 5,
             "tool_not_found"),
        Case("missing argument: the server's isError", [everything_url, "--method", "tools/call", "--tool-name", "echo",
                                                        "--format", "json"], 5, "tool_is_error",
             spyglass={"exit": 1, "code": "error", "why": "checked against the inputSchema before sending"}),
        Case("missing argument, --no-validate", [everything_url, "--method", "tools/call", "--tool-name", "echo",
                                                 "--format", "json"], 5, "tool_is_error", extra=["--no-validate"]),
        Case("unsupported method", [everything_url, "--method", "bogus/method"], 1, "error"),
        Case("unknown resource (JSON-RPC error)", [everything_url, "--method", "resources/read", "--uri",
                                                   "nope://x"], 1,
             "error"),
        Case("unknown prompt (JSON-RPC error)", [everything_url, "--method", "prompts/get", "--prompt-name", "nope"], 1,
             "error"),
        Case("read a resource", [everything_url, "--method", "resources/read", "--uri", doc, "--format", "json"], 0,
             same_result=True),
        Case("get a prompt", [everything_url, "--method", "prompts/get", "--prompt-name", "simple-prompt",
                              "--format", "json"],
             0, same_result=True),
        Case("initialize probe", [everything_url, "--method", "initialize", "--format", "json"], 0),
        Case("set the log level", [everything_url, "--method", "logging/setLevel", "--log-level", "debug",
                                   "--format", "json"],
             0, same_result=True),
        Case("list templates, default text format", [everything_url, "--method", "resources/templates/list"], 0),
        Case("metadata on every request", [everything_url, "--method", "tools/call", "--tool-name", "echo",
                                           "--tool-arg",
                                           "message=m", "--metadata", "trace=1", "--tool-metadata", "k=v",
                                           "--format", "json"], 0, same_result=True),
        Case("modern era pinned, legacy-only server", [*ev, "--protocol-era", "modern", "--method", "tools/list"],
             1, "error"),
        Case("--strict needs tools/list", [everything_url, "--strict", "--method", "prompts/list"], 1, "error"),
        Case("--output-format needs --output", [everything_url, "--output-format", "raw", "--method", "tools/list"], 1,
             "error"),
        Case("raw output of a call", [everything_url, "--method", "tools/call", "--tool-name", "echo", "--tool-arg",
                                      "message=raw", "--output", "{out}", "--output-format", "raw"], 0),
        Case("quiet, unknown tool", [*ev, "-q", "--method", "tools/call", "--tool-name", "nope"], 5,
             "tool_not_found"),
        Case("list tools, Streamable HTTP", [everything_url, "--method", "tools/list", "--format", "json"], 0,
             same_result=True),
        Case("--server-url and --transport http", ["--server-url", everything_url, "--transport", "http",
                                                   "--method", "tools/call", "--tool-name", "echo",
                                                   "--tool-arg", "message=h", "--format", "json"], 0,
             same_result=True),
        Case("several headers after one flag", [everything_url, "--header", "X-Probe: 1", "X-Other: 2", "--method",
                                                "tools/list", "--format", "json"], 0, same_result=True),
        Case("unknown tool over HTTP", [everything_url, "--method", "tools/call", "--tool-name", "nope"], 5,
             "tool_not_found"),
        Case("connection refused", [f"http://127.0.0.1:{http_peers.free_port()}/mcp", "--method", "tools/list"],
             4, "unreachable"),
        Case("command not found", ["/nonexistent/server", "--", "--method", "tools/list"], 1, "error"),
        Case("server exits at once", [PY, "-c", "raise SystemExit(3)", "--", "--method", "tools/list"], 1, "error"),
        Case("SDK peer, legacy: isError", [sdk_url, "--protocol-era", "legacy", "--method", "tools/call",
                                           "--tool-name", "fail", "--format", "json"], 5, "tool_is_error",
             same_result=True),
        Case("SDK peer, modern: a call", [sdk_url, "--protocol-era", "modern", "--method", "tools/call",
                                          "--tool-name", "add", "--tool-arg", "a=2", "b=3", "--format", "json"], 0,
             same_result=True),
        Case("SDK peer, modern: initialize", [sdk_url, "--protocol-era", "modern", "--method", "initialize",
                                              "--format", "json"], 0),
        Case("SDK peer over HTTP, modern", [sdk_url, "--protocol-era", "modern", "--method", "tools/list",
                                            "--format", "json"], 0, same_result=True),
        Case("SDK peer over HTTP, legacy: unknown tool", [sdk_url, "--protocol-era", "legacy", "--method",
                                                          "tools/call", "--tool-name", "nope"], 5, "tool_not_found"),
        Case("servers/list of a config file", ["--config", str(config), "--method", "servers/list", "--format",
                                               "json"], 0, same_result=True),
        Case("servers/show of an unknown server", ["--config", str(config), "--method", "servers/show", "--server",
                                                   "nope"], 1, "error"),
        Case("servers/add to a new catalog", ["--catalog", "{out}", "--method", "servers/add", "--server", "web",
                                              "--server-url", everything_url, "--format", "json"], 0, same_file=True),
        Case("servers/remove of an unknown server", ["--catalog", "{out}", "--method", "servers/remove", "--server",
                                                     "nope"], 1, "error"),
        Case("servers/add to a read-only --config", ["--config", str(config), "--method", "servers/add", "--server",
                                                     "x", "--server-url", everything_url], 1, "error"),
        Case("app info of an app tool", [*debug, "--method", "tools/call", "--tool-name", "debug-tool", "--app-info",
                                         "--format", "json"], 0, same_stdout=True),
        Case("app info of every tool", [*debug, "--method", "tools/list", "--app-info", "--advertise-apps"], 0,
             same_stdout=True),
        Case("app info of a tool without an app", [everything_url, "--method", "tools/call", "--tool-name", "echo",
                                                   "--app-info"], 2, "no_app", same_stdout=True),
        Case("--relogin of a stdio server", [PY, "-c", "pass", "--", "--relogin", "--method", "tools/list"], 1,
             "error"),
        Case("--relogin with --stored-auth-only", [everything_url, "--relogin", "--stored-auth-only", "--method",
                                                   "tools/list"], 1, "error"),
        Case("--relogin of a server that needs no sign-in", [everything_url, "--relogin", "--method", "tools/list",
                                                             "--format", "json"], 0, same_result=True),
        Case("--no-revoke without --relogin", [everything_url, "--no-revoke", "--method", "tools/list"], 1, "error"),
        Case("--callback-url not on loopback", [everything_url, "--callback-url", "http://10.0.0.1:6276/oauth/callback",
                                                "--method", "tools/list"], 1, "error"),
        Case("--callback-url on loopback, no sign-in needed", [everything_url, "--callback-url",
                                                               "http://127.0.0.1:0/cb", "--method", "tools/list",
                                                               "--format", "json"], 0, same_result=True),
        Case("--wait-for-auth times out", ["--server-url", f"http://127.0.0.1:{http_peers.free_port()}/mcp",
                                           "--wait-for-auth", "0.5", "--method", "tools/list"], 3,
             "auth_wait_timeout"),
        Case("--wait-for-auth 0", ["--server-url", everything_url, "--wait-for-auth", "0", "--method", "tools/list"],
             1, "error"),
        Case("--client-config not JSON", [PY, "-c", "pass", "--", "--client-config", str(bad_client),
                                          "--method", "tools/list"], 1, "error"),
        Case("--client-config missing", [everything_url, "--client-config", str(tmp / "none.json"), "--method",
                                         "tools/list", "--format", "json"], 0, same_result=True),
        Case("--print-handoff", ["--server-url", everything_url, "--print-handoff"], 0, same_stdout=True),
        Case("--print-handoff of an SSE URL, --transport sse", ["--server-url", "HTTP://Example.COM:80/sse",
                                                                "--transport", "sse", "--print-handoff"], 0,
             same_stdout=True),
        Case("--print-handoff without --server-url", [everything_url, "--print-handoff"], 1, "error"),
        Case("--strict on an unportable schema", [*PLANTED, "--", "--method", "tools/list", "--strict", "--format",
                                                  "json"], 6, "schema_unportable"),
    ]


@dataclass
class Run:
    exit: int
    stdout: str
    stderr: str
    out_file: bytes | None

    @property
    def envelope(self) -> dict | None:
        lines = self.stderr.strip().splitlines()
        try:
            return json.loads(lines[-1])["error"] if lines else None
        except (ValueError, KeyError, TypeError):
            return None

    def result(self):
        return json.loads(self.stdout)["result"]


def _run(prefix: list[str], case: Case, extra: list[str], env: dict, tmp: Path, who: str) -> Run:
    out = tmp / f"{who}-{abs(hash(case.name))}.out"
    argv = [a.replace("{out}", str(out)) for a in case.argv]
    if extra:  # Spyglass-only options go with the others (after `--` in the official order, else at the end)
        argv = argv + extra
    proc = subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=TIMEOUT, env=env,
                          cwd=str(ROOT))
    return Run(proc.returncode, proc.stdout, proc.stderr, out.read_bytes() if out.exists() else None)


def run_corpus(tmp: Path, part: int = 0, parts: int = 1, node_cache: Path | None = None) -> list[tuple[Case, Run, Run]]:
    """Every `parts`-th case of the corpus from `part` on, through both CLIs; `node_cache` is a folder where
    Node keeps the code it compiled (NODE_COMPILE_CACHE: the official CLI's bundle is compiled once, not
    at every start)."""
    assert NODE22.exists() and OFFICIAL.exists(), "run `make peers` (npm ci in tests/peers)"
    env = {**os.environ, "HOME": str(tmp), "MCP_STORAGE_DIR": str(tmp / "store"),
           "MCP_INSPECTOR_OAUTH_STATE_PATH": str(tmp / "store" / "oauth.json"), "NO_COLOR": "1"}
    if node_cache is not None:
        env["NODE_COMPILE_CACHE"] = str(node_cache)
    env.pop("MCP_CATALOG_PATH", None)
    env.pop("MCP_AUTO_OPEN_ENABLED", None)
    with http_peers.everything("streamableHttp") as everything_url, http_peers.sdk() as sdk_url:
        cases = corpus(everything_url, sdk_url, tmp)[part::parts]
        # the official CLI waits ~2 s for a stdio server to exit at the end, idle: more runs than cores
        with ThreadPoolExecutor(max_workers=8) as pool:
            official = [pool.submit(_run, [str(NODE22), str(OFFICIAL)], c, [], env, tmp, "official") for c in cases]
            ours = [pool.submit(_run, [PY, "-m", "inspector", "--cli"], c, c.extra, env, tmp, "spyglass")
                    for c in cases]
            return [(c, o.result(), s.result()) for c, o, s in zip(cases, official, ours)]


def _shape(value):
    """A result with what legitimately varies between clients left out (JSON object key order aside): the
    2026-07-28 `resultType`, which Spyglass keeps and the official CLI drops."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items() if k != "resultType"}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return value


# server-everything offers these tools by client capability: the official CLI declares roots (Spyglass only
# with --root), Spyglass declares sampling and elicitation (it answers them from flags)
ONLY_OFFICIAL = {"get-roots-list"}
ONLY_SPYGLASS = {"trigger-sampling-request", "trigger-sampling-request-async", "trigger-elicitation-request",
                 "trigger-elicitation-request-async"}


def _same_result(official: dict, ours: dict) -> bool:
    """Equal results; for tools/list the same tools alike, but for those offered by client capability."""
    if "tools" in official and isinstance(ours.get("tools"), list):
        theirs = {t["name"]: _shape(t) for t in official["tools"] if t["name"] not in ONLY_OFFICIAL}
        return theirs == {t["name"]: _shape(t) for t in ours["tools"] if t["name"] not in ONLY_SPYGLASS}
    return _shape(official) == _shape(ours)


def differences(case: Case, official: Run, ours: Run) -> list[str]:
    """How `ours` falls short of the case (empty: as the official CLI, or as the documented difference)."""
    out = []
    if official.exit != case.exit:
        out.append(f"the official CLI exited {official.exit}, the corpus expects {case.exit}")
    want_exit = case.spyglass.get("exit", case.exit)
    if ours.exit != want_exit:
        out.append(f"spyglass exited {ours.exit}, expected {want_exit}")
    if "Traceback" in ours.stderr:
        out.append("a traceback")
    if case.exit != 0 and (official.envelope or {}).get("code") != case.code:
        out.append(f"official envelope {official.envelope}")
    if want_exit != 0:
        env = ours.envelope or {}
        if env.get("code") != case.spyglass.get("code", case.code) or not env.get("kind") or not env.get("message"):
            out.append(f"spyglass envelope {ours.envelope}")
    try:
        if case.same_result and not _same_result(official.result(), ours.result()):
            out.append("the results differ")
        if case.same_stdout and [json.loads(x) for x in official.stdout.splitlines()] != [
                json.loads(x) for x in ours.stdout.splitlines()]:
            out.append(f"stdout differs: {official.stdout[:300]!r} / {ours.stdout[:300]!r}")
        if case.same_file:
            theirs, mine = official.result(), ours.result()
            if json.loads(official.out_file or b"null") != json.loads(ours.out_file or b"null") or \
                    {**theirs, "catalog": ""} != {**mine, "catalog": ""}:
                out.append(f"files or results differ: {official.out_file!r} / {ours.out_file!r}")
        if "--output" in case.argv and not (ours.out_file == official.out_file == b"Echo: raw"
                                            and ours.stdout == official.stdout == ""):
            out.append(f"--output: {ours.out_file!r} / {official.out_file!r}")
        if "-q" in case.argv and not (len(official.stderr.strip().splitlines())
                                      == len(ours.stderr.strip().splitlines()) == 1):
            out.append("-q: more than the envelope on stderr")
        if "--strict" in case.argv and case.exit == 6:
            found = [[(t["toolName"], f["rule"], f["severity"], f["schema"], f["path"]) for t in
                      json.loads(run.stdout)["schemaFindings"] for f in t["findings"]] for run in (official, ours)]
            if not found[0] == found[1] == [("pick_color", "boolean-schema", "error", "inputSchema",
                                             "properties.shades.items")]:
                out.append(f"schemaFindings {found}")
        if ("--format" not in case.argv and "--output" not in case.argv and case.exit == 0 and not case.same_stdout
                and json.loads(ours.stdout) != json.loads(official.stdout)):
            out.append("the default (text) output differs")
        if "initialize" in case.argv and case.exit == 0:
            a, b = official.result(), ours.result()
            if (a["serverInfo"], a["protocolVersion"]) != (b["serverInfo"], b["protocolVersion"]):
                out.append(f"initialize: {a} / {b}")
    except (ValueError, KeyError, TypeError) as exc:
        out.append(f"output unreadable: {exc!r}")
    return out


@pytest.mark.parametrize("part", range(PARTS), ids=lambda p: f"part{p + 1}of{PARTS}")
def test_spyglass_ends_every_invocation_as_the_official_cli_does(tmp_path, tmp_path_factory, part):
    problems = []
    node_cache = tmp_path_factory.getbasetemp() / "node-compile-cache"
    for case, official, ours in run_corpus(tmp_path, part, PARTS, node_cache):
        found = differences(case, official, ours)
        if found:
            problems.append(f"{case.name}: {'; '.join(found)}\n  official {official.exit}: "
                            f"{official.stderr.strip()[-300:]}\n  spyglass {ours.exit}: {ours.stderr.strip()[-300:]}")
    assert not problems, "\n".join(problems)


def test_the_comparison_can_fail():
    """The corpus's verdicts are not vacuous: a wrong exit, a wrong code and a different result are caught."""
    case = Case("x", ["--method", "tools/call"], 5, "tool_not_found", same_result=True)
    good = Run(5, '{"result": {"content": []}}', '{"error": {"code": "tool_not_found", "kind": "k", "message": "m"}}',
               None)
    assert differences(case, good, good) == []
    assert differences(case, good, Run(6, good.stdout, good.stderr, None))
    assert differences(case, good, Run(5, good.stdout, '{"error": {"code": "error", "kind": "k", "message": "m"}}',
                                       None))
    assert differences(case, good, Run(5, '{"result": {"content": [1]}}', good.stderr, None))
