"""The official MCP conformance suite against Spyglass's client (client.py here)."""

from __future__ import annotations

import re
import subprocess

import pytest
from support import PEERS, PY, ROOT

NODE22 = PEERS / "node_modules" / ".bin" / "node"
SUITE = PEERS / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
ADAPTER = ROOT / "tests" / "conformance" / "client.py"
EXPECTED = ROOT / "tests" / "conformance" / "expected-failures.yml"

EXTENSIONS = {"auth/client-credentials-jwt", "auth/client-credentials-basic", "auth/enterprise-managed-authorization",
              "auth/dpop", "auth/dpop-nonce", "auth/wif-jwt-bearer"}
MUST_PASS = {
    "2025-11-25": {"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"},
    "2026-07-28": {"tools_call", "request-metadata", "sep-2322-client-request-state", "http-standard-headers",
                   "http-custom-headers", "http-invalid-tool-headers", "json-schema-ref-no-deref"},
}


@pytest.mark.parametrize("requirements", sorted(MUST_PASS))
def test_conformance_requirements(requirements, tmp_path):
    if not SUITE.exists() or not NODE22.exists():
        pytest.fail("the conformance suite is not installed: run `make test` (npm ci in tests/peers)")
    proc = subprocess.run(
        [str(NODE22), str(SUITE), "client", "--command", f"{PY} {ADAPTER}", "--requirements", requirements,
         "--expected-failures", str(EXPECTED), "--timeout", "60000", "-o", str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=str(PEERS))
    summary = proc.stdout + proc.stderr
    results = {name: mark for mark, name in re.findall(r"^([✓✗]) (\S+):", summary, flags=re.M)}
    missing = MUST_PASS[requirements] - {name for name, mark in results.items() if mark == "✓"}
    assert not missing, f"scenarios not passing: {sorted(missing)}\n{summary[-3000:]}"
    # Every scenario the run includes passes: the scored ones, the authorization ones and the
    # unscored extensions (client credentials, enterprise-managed, DPoP, workload identity).
    failures = [n for n, m in results.items() if m == "✗"]
    assert not failures, failures
    assert EXTENSIONS <= {n for n, m in results.items() if m == "✓"}, sorted(EXTENSIONS - set(results))
    assert proc.returncode == 0, summary[-3000:]
