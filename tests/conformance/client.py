#!/usr/bin/env python3
"""Conformance adapter: `client.py URL`, run by @modelcontextprotocol/conformance.

It drives Spyglass's own client the way a user would drive Spyglass: the
scenario may decide *what* the user does (which protocol revision they pin,
which tools they call with which arguments, how they answer an elicitation),
never *how* the protocol is spoken — that is the client's job for every user.

Environment set by the harness: MCP_CONFORMANCE_SCENARIO,
MCP_CONFORMANCE_PROTOCOL_VERSION, and (for some scenarios) MCP_CONFORMANCE_CONTEXT.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from inspector import errors as E
from inspector.auth import AuthSettings, HeadlessAuthorizer, MemoryStore, OAuthProvider
from inspector.client import Client
from inspector.transport.http import HttpSettings, HttpTransport

# Spyglass's Client ID Metadata Document URL, as a user would set it in the settings.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def log(*parts: Any) -> None:
    print("[spyglass-conformance]", *parts, file=sys.stderr, flush=True)


# --- what the user answers when the server asks ----------------------------------------------

async def accept_defaults(params: dict | None, context=None) -> dict:
    """The user accepts the form as the server prefilled it (every default), and
    ticks the yes/no questions."""
    schema = (params or {}).get("requestedSchema") or {}
    content: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if "default" in prop:
            content[name] = prop["default"]
        elif prop.get("type") == "boolean":
            content[name] = True
        elif name in (schema.get("required") or []):
            content[name] = stub_value(prop)
    return {"action": "accept", "content": content}


async def sampling_reply(params: dict | None, context=None) -> dict:
    return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "spyglass-user",
            "stopReason": "endTurn"}


async def roots_reply(params: dict | None, context=None) -> dict:
    return {"roots": [{"uri": "file:///tmp/spyglass-conformance", "name": "workspace"}]}


def stub_value(prop: dict) -> Any:
    if "default" in prop:
        return prop["default"]
    if "enum" in prop and prop["enum"]:
        return prop["enum"][0]
    kind = prop.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    return {"string": "x", "integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}.get(kind, "x")


def stub_arguments(tool: dict) -> dict:
    schema = tool.get("inputSchema") or {}
    props = schema.get("properties") or {}
    return {name: stub_value(props.get(name) or {}) for name in schema.get("required") or []}


# --- what the user does, per scenario ---------------------------------------------------------

async def explore(client: Client, scenario: str, context: dict) -> None:
    tools = (await client.list_tools())["tools"]
    for name, why in client.rejected_tools:
        log(f"tool {name!r} left out: {why}")
    names = [t["name"] for t in tools]
    log("tools:", names)
    if scenario in ("initialize", "request-metadata", "json-schema-ref-no-deref"):
        return
    if scenario == "tools_call":
        await call(client, "add_numbers", {"a": 5, "b": 3})
        return
    if scenario == "http-custom-headers":
        for entry in context.get("toolCalls") or []:
            if entry.get("name") in names:
                await call(client, entry["name"], entry.get("arguments") or {})
        return
    if scenario == "json-schema-2020-12-preservation":
        source = next((t for t in tools if t["name"] == "json_schema_2020_12_tool"), None)
        if source and "json_schema_echo" in names:
            await call(client, "json_schema_echo", {"schema": source.get("inputSchema")})
        return
    # Everything else: the user tries every tool, resource and prompt once.
    for tool in tools:
        await call(client, tool["name"], stub_arguments(tool))
    caps = (client.hello.capabilities if client.hello else None) or {}
    if "resources" in caps or scenario == "http-standard-headers":
        try:
            for res in (await client.list_resources())["resources"]:
                await client.read_resource(res["uri"])
        except E.SpyglassError as exc:
            log("resources:", exc.message)
    if "prompts" in caps or scenario == "http-standard-headers":
        try:
            for prompt in (await client.list_prompts())["prompts"]:
                args = {a["name"]: "x" for a in prompt.get("arguments") or [] if a.get("required")}
                await client.get_prompt(prompt["name"], args)
        except E.SpyglassError as exc:
            log("prompts:", exc.message)


async def call(client: Client, name: str, arguments: dict) -> None:
    try:
        result = await client.call_tool(name, arguments)
        log(f"{name}: ok", json.dumps(result)[:200])
    except E.SpyglassError as exc:
        log(f"{name}: {exc.message}")


def auth_settings(context: dict) -> AuthSettings:
    """What the user typed into the authorization settings for this server: the
    credentials the scenario hands out (client ID/secret, private key, workload
    JWT, identity-provider token). How they are used is Spyglass's business."""
    return AuthSettings(
        client_id=context.get("client_id"), client_secret=context.get("client_secret"),
        client_issuer=context.get("issuer"), client_metadata_url=CLIENT_METADATA_URL,
        private_key_pem=context.get("private_key_pem"), signing_alg=context.get("signing_algorithm") or "ES256",
        assertion=context.get("valid_jwt"), idp_id_token=context.get("idp_id_token"),
        idp_token_endpoint=context.get("idp_token_endpoint"), idp_issuer=context.get("idp_issuer"),
        idp_client_id=context.get("idp_client_id"), timeout=10)


async def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or "auto"
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    log("scenario", scenario, "version", version, "url", url)
    auth = OAuthProvider(url, auth_settings(context), authorizer=HeadlessAuthorizer(), store=MemoryStore())
    # The discover probe's timer runs while the authorization flow does; give it the request timeout.
    client = Client(HttpTransport(url, HttpSettings(auth=auth)), mode=version, timeout=20,
                    client_info={"name": "spyglass-conformance", "version": "0.1.0"},
                    handlers={"elicitation/create": accept_defaults, "sampling/createMessage": sampling_reply,
                              "roots/list": roots_reply})
    try:
        await client.connect()
        await explore(client, scenario, context)
        return 0
    except E.SpyglassError as exc:
        log("failed:", exc.message)
        return exc.exit_code
    finally:
        for step in auth.steps:
            log(f"auth step {step.title}: {step.status}: {step.verdict}")
            for x in step.exchanges:
                log("   ", x.summary())
        await client.close()
        await auth.aclose()


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[-1])))
