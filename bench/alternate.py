"""Timing two ways of doing the same calls fairly: batches of each, alternated, so a machine that gets
busier or quieter during the run weighs on both alike (bench/http_calls.py, bench/tap_http.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator


async def alternate(a: AsyncIterator[float], b: AsyncIterator[float], rounds: int) -> tuple[list[float], list[float]]:
    """`rounds` batch times from each of two generators (each yields one batch's seconds), taken in turn;
    both are then run to their end (their clean-up)."""
    times_a, times_b = [], []
    for _ in range(rounds):
        times_a.append(await a.__anext__())
        times_b.append(await b.__anext__())
    for gen in (a, b):
        try:
            await gen.__anext__()
        except StopAsyncIteration:
            pass
    return times_a, times_b
