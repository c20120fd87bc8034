"""The seed example tools of presentation mode, on the official MCP Python SDK (``mcp`` 2.x, ``MCPServer``).

    python tests/peers/seed_server.py        (stdio)

tools
    ``get_weather(city, units)``  titled, an enum of units, an output schema; ``Atlantis`` is a tool error
    ``add_numbers(a, b)``         titled, two numbers
    ``count_words(text)``         titled, ``minLength: 1``
    ``delete_user(user_id)``      titled, ``destructiveHint: true``
    ``slow_report(seconds)``      progress with a message every 0.1 s, then a Markdown report
    ``app_refresh()``             app-only (``_meta.ui.visibility: ["app"]``): hidden from people and models
    ``write_poem(subject)``       asks the client for a written reply (sampling), and returns it as the poem
    ``count_folders()``           asks the client which folders it may work in (roots), and counts them
"""

from __future__ import annotations

import sys as _sys

if __name__ == "__main__" and "coverage" in _sys.modules:
    # a peer, not Spyglass: the suite measures coverage in every Python subprocess it starts, and tracing a
    # peer only slows it down (every call of its code passes through the tracer)
    _current = _sys.modules["coverage"].Coverage.current()
    if _current is not None:
        _current.stop()

from typing import Annotated, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import ListRoots, Sample
from mcp.types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent, ToolAnnotations
from pydantic import BaseModel, Field


class Weather(BaseModel):
    city: str = Field(description="The city the weather is for")
    temperature: float = Field(description="The temperature in the chosen units")
    conditions: str = Field(description="The sky, in words")
    humidity: int = Field(description="Relative humidity in percent")


def build_server() -> MCPServer:
    server = MCPServer("seed-tools", version="1.0.0")

    @server.tool(title="Weather lookup", description="Looks up today's weather for a city. Made up, but "
                 "always the same for the same city.",
                 annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    def get_weather(city: Annotated[str, Field(description="The city to look up", examples=["Lisbon"])],
                    units: Annotated[Literal["celsius", "fahrenheit"],
                                     Field(description="How to show the temperature")] = "celsius") -> Weather:
        if city.strip().lower() == "atlantis":
            raise ToolError(f"The weather service couldn't find '{city}'.")
        seed = sum(map(ord, city.lower()))
        celsius = 5 + seed % 25
        temp = celsius if units == "celsius" else round(celsius * 9 / 5 + 32, 1)
        return Weather(city=city, temperature=temp, conditions=["sunny", "cloudy", "rainy"][seed % 3],
                       humidity=30 + seed % 60)

    @server.tool(title="Add two numbers", description="Adds two numbers and tells you the sum.",
                 annotations=ToolAnnotations(read_only_hint=True))
    def add_numbers(a: Annotated[float, Field(description="The first number")],
                    b: Annotated[float, Field(description="The second number")]) -> str:
        total = a + b
        return f"{a:g} plus {b:g} is **{total:g}**."

    @server.tool(title="Count words", description="Counts the words in a piece of text. Punctuation is ignored.",
                 annotations=ToolAnnotations(read_only_hint=True))
    def count_words(text: Annotated[str, Field(description="The text to count", min_length=1,
                                               examples=["The quick brown fox"])]) -> str:
        return f"That text has {len(text.split())} words."

    @server.tool(title="Delete a user", description="Deletes a user account for good. This cannot be undone.",
                 annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def delete_user(user_id: Annotated[int, Field(description="The number of the user to delete", ge=1,
                                                  le=1000)]) -> str:
        return f"User {user_id} was deleted."

    @server.tool(title="Slow report", description="Prepares a report slowly, telling you how far it got.",
                 annotations=ToolAnnotations(read_only_hint=True))
    async def slow_report(ctx: Context, seconds: Annotated[float, Field(description="How long to take")] = 1.0
                          ) -> str:
        steps = max(1, round(seconds / 0.1))
        for step in range(1, steps + 1):
            await anyio.sleep(0.1)
            await ctx.report_progress(step, steps, f"Reading page {step} of {steps}")
        return "# Report\n\nEverything is **fine**."

    @server.tool(title="Refresh the app", description="Used by the app itself.",
                 meta={"ui": {"visibility": ["app"]}})
    def app_refresh() -> str:
        return "refreshed"

    @server.tool(title="Write a poem", description="Writes a short poem about a subject, with your help.",
                 annotations=ToolAnnotations(read_only_hint=True))
    def write_poem(subject: Annotated[str, Field(description="What the poem is about", examples=["the sea"])],
                   reply: Annotated[CreateMessageResult, Resolve(ask_for_poem)]) -> str:
        text = reply.content.text if isinstance(reply.content, TextContent) else ""
        return f"A poem about {subject}:\n\n{text}" if text.strip() else "No poem came back."

    @server.tool(title="Count my folders", description="Counts the folders you let it work in.",
                 annotations=ToolAnnotations(read_only_hint=True))
    def count_folders(roots: Annotated[ListRootsResult, Resolve(ask_for_roots)]) -> str:
        n = len(roots.roots)
        return f"You shared {n} folder{'s' if n != 1 else ''}."

    return server


def ask_for_poem(subject: str) -> Sample:
    asked = SamplingMessage(role="user", content=TextContent(type="text", text=f"Write a poem about {subject}."))
    return Sample([asked], max_tokens=200, system_prompt="You are a poet. Answer with four short lines.")


def ask_for_roots() -> ListRoots:
    return ListRoots()


def main() -> None:
    build_server().run()


if __name__ == "__main__":
    main()
