"""`remote.Lines`, both ends of the background process's socket: lines handed over as they arrive however the
bytes are cut, a line over the limit ends the connection (the stream cannot be followed past it), and writes
wait while the peer does not read."""

from __future__ import annotations

import asyncio
import socket

from inspector.agent.remote import Lines


async def open_pair(limit: int) -> tuple[Lines, asyncio.Queue[bytes], socket.socket]:
    ours, theirs = socket.socketpair()
    seen: asyncio.Queue[bytes] = asyncio.Queue()
    _transport, lines = await asyncio.get_running_loop().create_unix_connection(
        lambda: Lines(seen.put_nowait, limit=limit), sock=ours)
    theirs.setblocking(False)
    return lines, seen, theirs


async def test_lines_however_cut_and_one_over_the_limit_ends_it():
    lines, seen, theirs = await open_pair(limit=16)
    loop = asyncio.get_running_loop()
    for chunk in (b'{"a":', b' 1}\n{"b": 2}\n{"c"', b": 3}\n"):
        await loop.sock_sendall(theirs, chunk)
    assert [await seen.get() for _ in range(3)] == [b'{"a": 1}', b'{"b": 2}', b'{"c": 3}']
    await loop.sock_sendall(theirs, b'{"long": "' + b"x" * 40)  # no newline yet, already over the limit
    await lines.lost
    assert seen.empty() and lines.closing()
    theirs.close()


async def test_a_line_over_the_limit_among_others_ends_it_where_it_stands():
    lines, seen, theirs = await open_pair(limit=16)
    await asyncio.get_running_loop().sock_sendall(theirs, b'{"a": 1}\n' + b"y" * 30 + b'\n{"b": 2}\n')
    await lines.lost
    assert seen.get_nowait() == b'{"a": 1}' and seen.empty()
    theirs.close()


async def test_writes_wait_while_the_peer_does_not_read():
    lines, _seen, theirs = await open_pair(limit=1 << 20)
    assert lines.transport is not None
    lines.transport.set_write_buffer_limits(high=1024)
    lines.write(b"z" * 1_000_000 + b"\n")  # more than the socket and the buffer hold
    drained = asyncio.ensure_future(lines.drain())
    await asyncio.sleep(0)
    assert not drained.done()
    loop = asyncio.get_running_loop()
    got = 0
    while got < 1_000_001:
        got += len(await loop.sock_recv(theirs, 1 << 16))
    await drained
    lines.close()
    await lines.lost
    lines.write(b"after\n")  # a closed connection takes no more, and says nothing
    await lines.drain()
    theirs.close()
