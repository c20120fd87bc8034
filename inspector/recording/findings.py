"""What `spyglass check` would have said of a recorded session's frames: each server's frames judged in
order by a `Judge` of its own (`inspector.checks.frames`), as the live window judges them, so an opened
session has its findings — the traffic pane's Expert column and the `expert` / `severity` filters —
although the file never stored them."""

from __future__ import annotations

from ..checks.frames import Judge
from ..checks.rules import SEVERITIES, Finding
from ..traffic import Frame, TrafficStore
from .surface import HANDSHAKE, ServerSurface


def judge_recording(store: TrafficStore, surfaces: dict[str, ServerSurface]) -> dict[int, list[Finding]]:
    """The findings of every frame (by record number), also set as the store's flags."""
    judging = Judging(store, surfaces)
    judging.take(len(store))
    return judging.found


class Judging:
    """`judge_recording` a slice at a time: `take(end)` judges the frames up to `end`; `found` so far."""

    def __init__(self, store: TrafficStore, surfaces: dict[str, ServerSurface]) -> None:
        self.store = store
        self.ready_at: dict[int, ServerSurface] = {}  # the handshake's answer: the judge knows the revision there
        for s in surfaces.values():
            first = next((x for x in s.exchanges if x.method in HANDSHAKE and x.answer is not None), None)
            if first is not None and first.answer is not None:
                self.ready_at[first.answer] = s
        self.judges: dict[str, Judge] = {}
        self.found: dict[int, list[Finding]] = {}
        self.taken = 0

    def take(self, end: int) -> None:
        store, judges, found = self.store, self.judges, self.found
        for n in range(self.taken, end):
            server = store.server_id(n)
            judge = judges.get(server)
            if judge is None:
                judge = judges[server] = Judge()
            frame = Frame(store.direction(n), store.raw(n), store.mono(n), store.wall(n), store.malformed(n), None,
                          store.meta(n))
            for f in judge.frame(n, frame):
                found.setdefault(n, []).append(f)
                store.flag(n, SEVERITIES.index(f.severity))
            surface = self.ready_at.get(n)
            if surface is not None and surface.revision is not None:
                judge.ready(surface.revision, surface.capabilities)
        self.taken = max(self.taken, end)
