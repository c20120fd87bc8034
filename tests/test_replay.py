import json
import shlex
import subprocess

from support import PY, ROOT, demo_cmd

from inspector.config import ServerSpec
from inspector.replay import cli_command, curl_command, jsonrpc_request


def test_cli_command_runs_and_reproduces_the_call():
    spec = ServerSpec(name="demo", command=demo_cmd(), env={"API_TOKEN": "s3cret", "MODE": "x"})
    line = cli_command(spec, "weather", {"city": "Oslo", "units": "celsius"}, protocol="legacy")
    assert "s3cret" not in line and "API_TOKEN=${API_TOKEN}" in line and "MODE=x" in line
    revealed = cli_command(spec, "weather", {"city": "Oslo"}, reveal_secrets=True)
    argv = shlex.split(revealed)
    assert argv[:2] == ["spyglass", "--cli"]
    proc = subprocess.run([PY, "-m", "inspector", *argv[1:]], capture_output=True, text=True, timeout=60,
                          cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    assert "temperature" in proc.stdout


def test_jsonrpc_request_carries_meta_in_the_modern_era():
    modern = json.loads(jsonrpc_request("echo", {"message": "hi"}, protocol_version="2026-07-28"))
    assert modern["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    legacy = json.loads(jsonrpc_request("echo", {"message": "hi"}, protocol_version="2025-11-25"))
    assert "_meta" not in legacy["params"]


def test_curl_command_masks_tokens_and_sets_modern_headers():
    spec = ServerSpec(name="r", url="http://127.0.0.1:9/mcp", headers={"Authorization": "Bearer abc", "X-Team": "t"})
    line = curl_command(spec, "my tool", {"a": 1}, protocol_version="2026-07-28")
    argv = shlex.split(line)
    assert "Authorization: Bearer ••••••" in argv and "X-Team: t" in argv
    assert "Mcp-Method: tools/call" in argv and "Mcp-Name: my tool" in argv
    assert json.loads(argv[-1])["params"]["arguments"] == {"a": 1}
