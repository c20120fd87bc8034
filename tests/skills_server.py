"""A server that offers skills (SEP-2640), built on the official MCP Python SDK, for Spyglass's tests.

    python tests/skills_server.py [--only NAME[,NAME...]]

The SDK serves the extension as an `Extension` (SEP-2133): it declares `io.modelcontextprotocol/skills`
in the server's capabilities and serves `skills/list` and `skills/get`; every skill file is an ordinary
resource read with `resources/read`. Skills:

good-notes       SKILL.md and reference.md, digests and sizes right: verified
tampered-report  data.csv is served changed (same size) from the bytes its digest was taken of: failed
live-status      resources "dynamic" (a generated file set, no digests): unverifiable
huge-atlas       declares a 17 MiB atlas.bin beside its SKILL.md, over the 16 MiB a verifier reads for one
                 skill: incomplete (the file is made only if someone reads it)

`--only` lists just the named skills (skills/get still finds every one). Speaks stdio.
"""

from __future__ import annotations

import sys as _sys

if __name__ == "__main__" and "coverage" in _sys.modules:  # a peer: tracing it only slows it down
    _current = _sys.modules["coverage"].Coverage.current()
    if _current is not None:
        _current.stop()

import argparse
import hashlib
from collections.abc import Sequence
from typing import Any

from mcp.server.extension import Extension, MethodBinding, ResourceBinding
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import FunctionResource, TextResource
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, RequestParams

EXTENSION = "io.modelcontextprotocol/skills"
ATLAS_SIZE = 17 * 1024 * 1024


def skill_md(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{body}"


GOOD_DESCRIPTION = "Take tidy meeting notes with a summary, decisions and action items with owners."
GOOD = skill_md("good-notes", GOOD_DESCRIPTION,
                "# Meeting notes\n\nWrite notes in three parts:\n\n1. **Summary**: two or three sentences.\n"
                "2. **Decisions**: one line each.\n3. **Action items**: `owner: task (due date)`.\n\n"
                "See [the reference](reference.md) for examples.\n")
REFERENCE = "# Examples\n\n- ana: send the draft (Friday)\n- ben: book the room (Monday)\n"
TAMPERED_DESCRIPTION = "Summarise a CSV of quarterly figures into a short report."
TAMPERED = skill_md("tampered-report", TAMPERED_DESCRIPTION,
                    "# Quarterly report\n\nRead `data.csv` and write one paragraph per quarter.\n")
DATA_SIGNED = "quarter,revenue\nQ1,100\nQ2,120\n"
DATA_SERVED = "quarter,revenue\nQ1,900\nQ2,120\n"  # the same length, other bytes
LIVE_DESCRIPTION = "Report the live status of the build farm (the file set is generated on request)."
LIVE = skill_md("live-status", LIVE_DESCRIPTION, "# Live status\n\nAsk for the current status page.\n")
HUGE_DESCRIPTION = "Look places up in a large offline atlas."
HUGE = skill_md("huge-atlas", HUGE_DESCRIPTION, "# Atlas\n\nSearch `atlas.bin` for a place name.\n")


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def manifest_file(uri: str, signed: str) -> dict[str, Any]:
    return {"uri": uri, "digest": digest(signed), "size": len(signed.encode())}


def entry(name: str, description: str, resources: Any) -> dict[str, Any]:
    return {"uri": f"skill://{name}/SKILL.md", "frontmatter": {"name": name, "description": description},
            "resources": resources}


SKILLS: dict[str, dict[str, Any]] = {
    "good-notes": entry("good-notes", GOOD_DESCRIPTION, [
        manifest_file("skill://good-notes/SKILL.md", GOOD),
        manifest_file("skill://good-notes/reference.md", REFERENCE)]),
    "tampered-report": entry("tampered-report", TAMPERED_DESCRIPTION, [
        manifest_file("skill://tampered-report/SKILL.md", TAMPERED),
        manifest_file("skill://tampered-report/data.csv", DATA_SIGNED)]),
    "live-status": entry("live-status", LIVE_DESCRIPTION, "dynamic"),
    "huge-atlas": entry("huge-atlas", HUGE_DESCRIPTION, [
        manifest_file("skill://huge-atlas/SKILL.md", HUGE),
        {"uri": "skill://huge-atlas/atlas.bin", "digest": "sha256:" + "0" * 64, "size": ATLAS_SIZE}]),
}
FILES = {"skill://good-notes/SKILL.md": GOOD, "skill://good-notes/reference.md": REFERENCE,
         "skill://tampered-report/SKILL.md": TAMPERED, "skill://tampered-report/data.csv": DATA_SERVED,
         "skill://live-status/SKILL.md": LIVE, "skill://huge-atlas/SKILL.md": HUGE}


# the caching attributes every 2026-07-28 result carries (the SDK does not add them to an extension's results)
CACHING = {"ttlMs": 0, "cacheScope": "public"}


class ListParams(RequestParams):
    cursor: str | None = None


class GetParams(RequestParams):
    uri: str


class Skills(Extension):
    identifier = EXTENSION

    def __init__(self, listed: Sequence[str]) -> None:
        self.listed = list(listed)

    def methods(self) -> Sequence[MethodBinding]:
        return (MethodBinding("skills/list", ListParams, self.list_skills),
                MethodBinding("skills/get", GetParams, self.get_skill))

    def resources(self) -> Sequence[ResourceBinding]:
        out = [ResourceBinding(TextResource(uri=uri, name=uri.split("//", 1)[1], text=text,
                                            mime_type="text/markdown" if uri.endswith(".md") else "text/plain"))
               for uri, text in FILES.items()]
        out.append(ResourceBinding(FunctionResource(uri="skill://huge-atlas/atlas.bin", name="huge-atlas/atlas.bin",
                                                    mime_type="application/octet-stream",
                                                    fn=lambda: "x" * ATLAS_SIZE)))
        return out

    async def list_skills(self, ctx: Any, params: ListParams) -> dict[str, Any]:
        # two pages, so a client has to follow nextCursor to see them all
        names = self.listed
        if params.cursor is None and len(names) > 1:
            return {"skills": [SKILLS[n] for n in names[:1]], "nextCursor": "page-2", **CACHING}
        return {"skills": [SKILLS[n] for n in (names[1:] if params.cursor == "page-2" else names)], **CACHING}

    async def get_skill(self, ctx: Any, params: GetParams) -> dict[str, Any]:
        for skill in SKILLS.values():
            if skill["uri"] == params.uri:
                return {"skill": skill, **CACHING}
        raise MCPError(INVALID_PARAMS, f"no skill {params.uri}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="list only these skills (comma-separated names)")
    args = parser.parse_args(argv)
    listed = args.only.split(",") if args.only else list(SKILLS)
    unknown = [n for n in listed if n not in SKILLS]
    if unknown:
        parser.error(f"unknown skills: {', '.join(unknown)}")
    server = MCPServer("spyglass-skills-peer", version="1.0.0", extensions=[Skills(listed)],
                       instructions="Test peer for Spyglass: skills good-notes, tampered-report, live-status, "
                                    "huge-atlas.")
    server.run("stdio")


if __name__ == "__main__":
    main()
