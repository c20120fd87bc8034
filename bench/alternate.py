"""Timing ways of doing the same calls fairly: batches of each, alternated, so a machine that gets busier
or quieter during the run weighs on all alike (bench/http_calls.py, bench/tap_http.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator


async def alternate(a: AsyncIterator[float], b: AsyncIterator[float], rounds: int) -> tuple[list[float], list[float]]:
    """`rounds` batch times from each of two generators (each yields one batch's seconds), taken in turn;
    both are then run to their end (their clean-up)."""
    times_a, times_b = await alternate_all([a, b], rounds)
    return times_a, times_b


async def alternate_all(gens: list[AsyncIterator[float]], rounds: int) -> list[list[float]]:
    """`alternate` for any number of generators."""
    times: list[list[float]] = [[] for _ in gens]
    for _ in range(rounds):
        for gen, seen in zip(gens, times):
            seen.append(await gen.__anext__())
    for gen in gens:
        try:
            await gen.__anext__()
        except StopAsyncIteration:
            pass
    return times
