"""The floor of any design with a process between an agent and its server (`bench/agent_calls.py`'s "relay
floor"): a bare asyncio relay, lines from stdin to the server and the server's lines back, nothing parsed,
nothing recorded. What `spyglass do`'s hop to the background process costs beyond this is Spyglass's own.

    python bench/relay_floor.py SERVER-COMMAND...
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys


async def main(command: list[str]) -> None:
    loop = asyncio.get_running_loop()
    proc = await asyncio.create_subprocess_exec(*command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin and proc.stdout
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(0, "rb", 0))
    out, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(1, "wb", 0))

    async def back() -> None:
        while line := await proc.stdout.readline():  # type: ignore[union-attr]
            out.write(line)

    answers = asyncio.ensure_future(back())
    while line := await reader.readline():
        proc.stdin.write(line)
    proc.stdin.close()
    await proc.wait()
    answers.cancel()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
