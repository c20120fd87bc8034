"""Locustfiles Spyglass writes (`--cli --load … --locust FILE`) and Locust's CSV files it reads back
(`--cli --load-compare PREFIX RUN.json`), without starting Locust: the files are compiled and read, never imported
(Locust's gevent must stay out of this process). tests/data/locust/mix_* are the CSV files of a real Locust run
(the MCP user, 4 users for 3 s against the demo over HTTP: echo, divide by zero, an unknown tool)."""

from __future__ import annotations

import ast
import json
import subprocess

import pytest
from http_peers import demo_http, stop_group
from support import PY, ROOT, demo_cmd
from test_cli import one_line_error, out_json, spyglass

from inspector import errors as E
from inspector.loadtest import Scenario, Step, load_scenario, render
from inspector.loadtest.locust_stats import compare, error_kind, read

MIX = str(ROOT / "tests/data/locust/mix")


def tree(text: str) -> ast.Module:
    return ast.parse(text)


def test_a_load_run_becomes_a_locustfile_with_its_tool_arguments_rate_and_users(tmp_path):
    with demo_http(tmp_path / "counts.json") as (url, _demo):
        path = tmp_path / "weather_load.py"
        proc = spyglass("--load", "--load-concurrency", "8", "--load-rate", "40", "--load-duration", "30",
                        "--tool-name", "weather", "--tool-arg", "city=Paris", "--header", "X-Team: blue",
                        "--header", "X-Api-Key: s3cret-value", "--locust", str(path), url)
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {path}" in proc.stdout and "locust -f" in proc.stdout
    text = path.read_text()
    module = tree(text)
    classes = [n for n in module.body if isinstance(n, ast.ClassDef)]
    assert [c.name for c in classes] == ["McpLoad"]
    assert "self.call_tool('weather', {'city': 'Paris'})" in text
    assert "USERS = 8" in text and "RATE = 40" in text and "constant_throughput(RATE / USERS)" in text
    assert f"HOST = {url!r}" in text and "protocol = '2026-07-28'" in text  # the version the server agreed
    assert "-u 8 -r 8 -t 30s" in text and "--master" in text and "--worker --master-host" in text
    assert "'X-Team': 'blue'" in text and "os.environ.get('MCP_HEADER_X_API_KEY', '')" in text
    assert "s3cret" not in text  # a secret header is read from the environment when Locust runs
    assert path.stat().st_mode & 0o077 == 0


def test_locust_needs_a_server_over_http_and_a_load(tmp_path):
    proc = spyglass("--load", "--tool-name", "echo", "--tool-arg", "message=hi", "--locust",
                    str(tmp_path / "x.py"), "--", *demo_cmd())
    assert proc.returncode == 1
    assert "--locust needs a server reached over HTTP" in one_line_error(proc)
    proc = spyglass("--tool-name", "echo", "--locust", str(tmp_path / "x.py"), "--", *demo_cmd())
    assert proc.returncode == 1 and "--locust requires --load." in one_line_error(proc)
    assert not (tmp_path / "x.py").exists()


def test_a_name_a_server_chose_cannot_break_out_of_the_file():
    evil = 'x"""\nimport os; os.system("boom")\n"""'
    text = render(load_scenario("http://127.0.0.1:1/mcp", "2025-11-25", evil, {"q": evil}, concurrency=2,
                                duration_s=None, requests=10, rate=None))
    module = tree(text)
    assert [type(n).__name__ for n in module.body] == ["Expr", "ImportFrom", "ImportFrom", "ImportFrom", "Assign",
                                                       "Assign", "Assign", "ClassDef"]
    call = [n for n in ast.walk(module) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "call_tool"][0]
    assert ast.literal_eval(call.args[0]) == evil and ast.literal_eval(call.args[1]) == {"q": evil}
    assert "CALLS_PER_USER = 5" in text and "raise StopUser()" in text and "constant(0)" in text


def test_steps_become_weighted_tasks_with_distinct_names():
    steps = (Step("echo", "tools/call", {"name": "echo", "arguments": {}}, weight=3),
             Step("echo", "tools/call", {"name": "echo", "arguments": {"message": "b"}}),
             Step("request", "resources/read", {"uri": "demo://clock"}),
             Step("greet", "prompts/get", {"name": "greeting", "arguments": {"name": "Ada"}}))
    module = tree(render(Scenario("http://127.0.0.1:1/mcp", "2026-07-28", steps)))
    cls = [n for n in module.body if isinstance(n, ast.ClassDef)][0]
    tasks = [f for f in cls.body if isinstance(f, ast.FunctionDef)]
    assert [f.name for f in tasks] == ["echo", "echo_2", "request_3", "greet"]
    weights = [ast.unparse(f.decorator_list[0]) for f in tasks]
    assert weights == ["task(3)", "task", "task", "task"]
    assert ast.unparse(tasks[2].body[0]) == "self.read_resource('demo://clock')"
    assert ast.unparse(tasks[3].body[0]) == "self.get_prompt('greeting', {'name': 'Ada'})"


def test_locust_csv_files_read_back_as_a_load_runs_figures():
    run = read(MIX)
    assert run.aggregated.requests == 112 and run.aggregated.failures == 50
    assert {(f.name, f.kind, f.code, f.occurrences) for f in run.failures} == {
        ("tools/call no_such_tool", "rpc_error", -32602, 27), ("tools/call divide", "tool_error", None, 23)}
    every = run.summary()
    assert every["errorsByKind"] == {"rpc_error": 27, "tool_error": 23}
    assert every["toolErrors"] == 23 and every["errors"] == 27 and every["ok"] == 62 and every["users"] == 4
    assert every["errorMessages"] == [{"message": "rpc_error -32602: Unknown tool: no_such_tool", "count": 27}]
    echo = run.summary("tools/call echo")
    assert echo["requests"] == echo["ok"] == 50 and echo["errorRate"] == 0
    assert echo["latencyMs"] == {"min": 1.46, "mean": 3.93, "p50": 3, "p90": 7, "p99": 9, "max": 8.64}
    assert sum(h["count"] for h in echo["histogram"]) == 50
    snap = run.snapshot("tools/call divide")
    assert snap.tool_errors == snap.completed == 23 and not snap.running
    # without --csv-full-history Locust keeps a timeline of every request only: that one is plotted
    assert [b.calls for b in snap.buckets] == [0, 48, 40] and snap.buckets[1].width_s == 1.0
    assert sum(n for _, _, n in snap.histogram) == 23


@pytest.mark.parametrize(("error", "kind", "code"), [
    ("CatchResponseError('rpc_error -32602: Unknown tool')", "rpc_error", -32602),
    ('CatchResponseError("tool_error: it\'s broken")', "tool_error", None),
    ("ConnectionRefusedError(111, 'Connection refused')", "locust", None),
    ("http_error 503: busy", "http_error", 503),
])
def test_a_failures_kind_and_code_come_from_its_text(error, kind, code):
    assert error_kind(error)[:2] == (kind, code)


def test_a_missing_or_foreign_csv_is_a_usage_error(tmp_path):
    with pytest.raises(E.UsageError, match="does not exist: give the prefix"):
        read(str(tmp_path / "nothing"))
    (tmp_path / "x_stats.csv").write_text("a,b\n1,2\n")
    with pytest.raises(E.UsageError, match="is not one of Locust's CSV files"):
        read(str(tmp_path / "x"))


def test_load_compare_puts_a_locust_run_beside_a_local_run(tmp_path):
    with demo_http(tmp_path / "counts.json") as (url, _demo):
        proc = spyglass("--load", "--load-requests", "20", "--tool-name", "echo", "--tool-arg", "message=hi",
                        "--format", "json", url)
    assert proc.returncode == 0, proc.stderr
    local = tmp_path / "run.json"
    local.write_text(proc.stdout)
    proc = spyglass("--load-compare", MIX, str(local), "--format", "human")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("Load test of echo: local run (10 at once) against Locust") and "4 users" in lines[0]
    assert lines[2].split() == ["calls", "20", "50", "+150.0", "%"]
    assert any(line.split()[:3] == ["latency", "p50,", "ms"] for line in lines)
    result = out_json(spyglass("--load-compare", MIX, str(local)))
    assert result["locust"]["requests"] == 50 and result["local"]["requests"] == 20
    assert [r["figure"] for r in result["compared"]][:3] == ["calls", "ok", "tool errors"]
    bad = spyglass("--load-compare", MIX, str(tmp_path / "counts.json"))
    assert bad.returncode == 1 and "is not a load run's summary" in one_line_error(bad)


def test_compare_says_which_change_is_better():
    rows = {r["figure"]: r for r in compare({"requests": 10, "errors": 4, "throughput": 100.0,
                                             "latencyMs": {"p50": 10.0}},
                                            {"requests": 20, "errors": 2, "throughput": 50.0,
                                             "latencyMs": {"p50": 12.5}})}
    assert rows["calls"]["changePercent"] == 100 and rows["calls"]["verdict"] is None
    assert rows["errors"]["verdict"] == "better" and rows["throughput, calls/s"]["verdict"] == "worse"
    assert rows["latency p50, ms"]["changePercent"] == 25 and rows["latency p50, ms"]["verdict"] == "worse"
    assert json.dumps(rows)  # plain data, as --format json prints it


def test_a_steps_expectations_judge_each_answer_as_spyglass_test_does():
    from inspector.loadtest.expectations import checker

    tool_error = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "by zero"}],
                                                        "isError": True}}
    assert checker("tools/call", {"isError": True, "text": {"contains": "zero"}})(tool_error, 3.0) is None
    assert checker("tools/call", {"text": {"contains": "zero"}})(tool_error, 3.0) == "isError: expected false, got true"
    rpc = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Unknown tool: x"}}
    assert checker("tools/call", {"error": {"code": -32602}})(rpc, 1.0) is None
    assert checker("tools/call", {"error": {"code": -32601}})(rpc, 1.0) == "error code: expected -32601, got -32602"
    listed = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "echo"}]}}
    check = checker("tools/list", {"listed": {"present": ["echo", "divide"]}, "maxMs": 50, "snapshot": True})
    said = check(listed, 80.0)
    assert said.startswith("maxMs: expected 50, got 80.0; listed present: expected ") and "missing divide" in said


@pytest.mark.parametrize(("extra", "message"), [
    (["--rate", "5"], "--rate is for --locust"),
    (["--locust", "x.py", "--weight", "nope=2"], "--weight names no step of smoke.yaml: 'nope'"),
    (["--locust", "x.py", "--weight", "echo"], "--weight expects STEP=N"),
    (["--locust", "x.py", "--junit", "j.xml"], "--locust writes a locustfile; it runs nothing"),
])
def test_collection_to_locust_refuses_what_it_cannot_do(tmp_path, extra, message):
    (tmp_path / "smoke.yaml").write_text("name: smoke\nsteps:\n  - name: echo\n    call: echo\n"
                                         "    arguments: {message: hi}\n")
    # refused before any connection: nothing listens at this address
    proc = subprocess.run([PY, "-m", "inspector", "test", "smoke.yaml", *extra, "http://127.0.0.1:9/mcp"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 1 and message in proc.stderr, proc.stderr
    assert not (tmp_path / "x.py").exists()


def test_collection_to_locust_needs_a_server_over_http(tmp_path):
    (tmp_path / "smoke.yaml").write_text("name: smoke\nsteps:\n  - name: echo\n    call: echo\n")
    proc = subprocess.run([PY, "-m", "inspector", "test", "smoke.yaml", "--locust", "x.py", "--", *demo_cmd()],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 1 and "--locust needs a server reached over HTTP" in proc.stderr


def test_a_collections_steps_as_tasks_and_the_steps_left_out(tmp_path):
    from inspector.collection.load import parse
    from inspector.loadtest.from_collection import collection_scenario

    collection = parse("""\
name: all kinds
steps:
  - {name: tools, list: tools, expect: {listed: {count: 3}}}
  - {name: clock, read: "demo://clock"}
  - {name: greet, prompt: greeting, arguments: {name: Ada}, expect: {messages: {count: 1}, snapshot: true}}
  - {name: pick, ask: "what is the weather in Paris"}
  - {name: confirm, call: delete_item, arguments: {id: 1}, elicit: {accept: {confirm: true}}}
  - {name: later, call: echo, arguments: {message: "${saved}"}}
""", tmp_path / "all.yaml")
    scenario, notes = collection_scenario(collection, "http://127.0.0.1:1/mcp", "2025-11-25", users=2, duration_s=None,
                                          rate=None, weights={"clock": 4})
    assert [(s.name, s.method, s.params, s.weight, s.expect) for s in scenario.steps] == [
        ("tools", "tools/list", {}, 1, {"listed": {"count": 3}}),
        ("clock", "resources/read", {"uri": "demo://clock"}, 4, None),
        ("greet", "prompts/get", {"name": "greeting", "arguments": {"name": "Ada"}}, 1,
         {"messages": {"count": 1}})]
    assert notes == ["step 'pick' left out: an ask step needs a model",
                     "step 'confirm' left out: it answers the server's questions (elicit, sampling), which the Locust "
                     "user cannot",
                     "step 'later' left out: it uses ${…}: a value saved by an earlier step or taken from the "
                     "environment"]
    text = render(scenario)
    assert "self.request('tools/list', expect=checker('tools/list', {'listed': {'count': 3}}))" in text
    assert "@task(4)" in text and "from inspector.loadtest.expectations import checker" in text
    only, _ = collection_scenario(collection, "http://127.0.0.1:1/mcp", "2025-11-25", users=2, duration_s=None,
                                  rate=None, weights={}, only=["clock"])
    assert [s.name for s in only.steps] == ["clock"]
    with pytest.raises(E.UsageError, match="no step of all.yaml can run under Locust"):
        collection_scenario(collection, "http://127.0.0.1:1/mcp", "2025-11-25", users=2, duration_s=None, rate=None,
                            weights={}, only=["pick"])


def test_the_demo_over_http_says_what_it_refuses(tmp_path):
    import httpx

    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    with demo_http(tmp_path / "counts.json", "--sse") as (url, demo), httpx.Client(timeout=10) as http:
        assert http.post(url.replace("/mcp", "/other"), json=init).status_code == 404
        assert http.get(url).status_code == 405
        assert http.post(url, content=b"{not json").status_code == 400
        assert http.post(url, json=[init]).status_code == 400
        listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        missing = http.post(url, json=listed)
        assert missing.status_code == 400 and "Mcp-Session-Id header is required" in missing.text
        assert http.post(url, json=listed, headers={"Mcp-Session-Id": "nope"}).status_code == 404
        opened = http.post(url, json=init)  # JSON: the client does not take event streams
        assert opened.headers["content-type"] == "application/json"
        sid = opened.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert http.post(url, json=note, headers={"Mcp-Session-Id": sid}).status_code == 202
        streamed = http.post(url, json=listed, headers={"Mcp-Session-Id": sid, "Accept": "text/event-stream"})
        assert streamed.headers["content-type"] == "text/event-stream"
        assert streamed.text.startswith("event: message\ndata: {") and '"tools":' in streamed.text
        assert http.delete(url, headers={"Mcp-Session-Id": sid}).status_code == 200
        assert http.delete(url, headers={"Mcp-Session-Id": sid}).status_code == 404
        stop_group(demo)
    assert json.loads((tmp_path / "counts.json").read_text()) == {
        "initialize": {"answered": 1, "toolErrors": 0, "rpcErrors": {}},
        "tools/list": {"answered": 1, "toolErrors": 0, "rpcErrors": {}}}


def test_an_answer_read_from_json_or_an_event_stream_and_judged():
    from inspector.loadtest.answers import McpFailure, judge, read_answer, request_name

    ok = {"jsonrpc": "2.0", "id": 7, "result": {"content": []}}
    assert read_answer(json.dumps(ok).encode(), "application/json; charset=utf-8", 7) == ok
    stream = ('event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\r\n\r\n'
              ': a comment\n\nid: 3\ndata: {"jsonrpc":"2.0","id":7,\ndata: "result":{"content":[]}}\n\n')
    assert read_answer(stream.encode(), "text/event-stream", 7) == ok
    for body, kind, said in ((b"\xff", "text/plain", "not UTF-8"), (b"<html>", "text/html", "not JSON: <html>"),
                             (json.dumps({**ok, "id": 8}).encode(), "application/json", "no response to request 7")):
        with pytest.raises(McpFailure, match=said) as caught:
            read_answer(body, kind, 7)
        assert str(caught.value).startswith("invalid_response: ")
    assert judge(ok) == {"content": []}
    with pytest.raises(McpFailure, match=r"^rpc_error -32601: Method not found$"):
        judge({"id": 1, "error": {"code": -32601, "message": "Method not found"}})
    with pytest.raises(McpFailure, match=r"^tool_error: no\s*such city$"):
        judge({"id": 1, "result": {"isError": True, "content": [{"type": "text", "text": "no\n\nsuch city"}]}})
    with pytest.raises(McpFailure, match=r"^invalid_response: the result is not an object: \[\]$"):
        judge({"id": 1, "result": []})
    assert len(str(McpFailure("tool_error", "x" * 1000))) == len("tool_error: ") + 200
    assert request_name("tools/call", {"name": "get_weather"}) == "tools/call get_weather"
    assert request_name("resources/read", {"uri": "demo://clock"}) == "resources/read demo://clock"
    assert request_name("tools/list", {}) == "tools/list" and request_name("tools/call", {"name": 3}) == "tools/call"


def test_only_locust_loads_locust():
    """Locust's gevent patches the process that imports it: Spyglass's own modules for Locust leave it out (the
    window's Load tab and the command line import them)."""
    code = ("import sys, inspector.loadtest, inspector.loadtest.locust_stats, inspector.loadtest.expectations, "
            "inspector.loadtest.answers, inspector.loadtest.from_collection, inspector.cli.load_compare, "
            "inspector.cli.load, inspector.cli.test; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('locust', 'gevent', 'greenlet')))")
    proc = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_no_secret_is_written_into_a_locustfile():
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    text = render(load_scenario(f"https://mcp.example.com/mcp?api_key={token}", "2026-07-28", "echo", {},
                                concurrency=1, duration_s=5, requests=None, rate=None,
                                headers={"X-Trace": token, "Authorization": f"Bearer {token}", "X-Team": "blue"}))
    assert token not in text
    assert "HOST = os.environ['MCP_SERVER_URL']  # the URL holds a secret: https://mcp.example.com/mcp?api_key=" in text
    assert "'X-Trace': os.environ.get('MCP_HEADER_X_TRACE', '')" in text
    assert "'Authorization': os.environ.get('MCP_HEADER_AUTHORIZATION', '')" in text and "'X-Team': 'blue'" in text
    ast.parse(text)
