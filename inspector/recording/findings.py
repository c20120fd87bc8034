"""What `spyglass check` would have said of a recorded session's frames: each server's frames judged in
order by a `Judge` of its own (`inspector.checks.frames`), as the live window judges them, so an opened
session has its findings — the traffic pane's Expert column and the `expert` / `severity` filters —
although the file never stored them."""

from __future__ import annotations

from typing import Any

from ..checks.frames import Judge
from ..checks.rules import SEVERITIES, Finding
from ..traffic import Frame, TrafficStore
from .surface import HANDSHAKE, ServerSurface


def judge_recording(store: TrafficStore, surfaces: dict[str, ServerSurface]) -> dict[int, list[Finding]]:
    """The findings of every frame (by record number), also set as the store's flags."""
    judging = Judging(store, surfaces)
    judging.take(len(store))
    return judging.found


def ready_points(surfaces: dict[str, ServerSurface]) -> dict[int, ServerSurface]:
    """Where each server's judge learns its revision: the answer of its first answered handshake."""
    out: dict[int, ServerSurface] = {}
    for s in surfaces.values():
        first = next((x for x in s.exchanges if x.method in HANDSHAKE and x.answer is not None), None)
        if first is not None and first.answer is not None:
            out[first.answer] = s
    return out


class Judging:
    """`judge_recording` a slice at a time: `take(end)` judges the frames up to `end`; `found` so far. Without
    `surfaces`, the frames are judged as they are read (`take_read`, then `settle` once the servers are
    rebuilt whole, then `take` for any left)."""

    def __init__(self, store: TrafficStore, surfaces: dict[str, ServerSurface] | None = None) -> None:
        self.store = store
        # the handshake's answer: the judge knows the revision there
        self.ready_at: dict[int, ServerSurface] = ready_points(surfaces) if surfaces is not None else {}
        self.judges: dict[str, Judge] = {}
        self.found: dict[int, list[Finding]] = {}
        self.taken = 0
        self.settled = surfaces is not None
        # while reading: server -> (the frame where its judge learned the revision, the revision, capabilities)
        self.used: dict[str, tuple[int, str | None, dict[str, Any] | None]] = {}
        self._points: dict[int, str] = {}  # a handshake's answer found while reading -> its server
        self._handshakes: dict[str, list[Any]] = {}  # server -> [exchanges looked at, its handshakes]
        self._found_ready: set[str] = set()
        self._waiting: tuple[int, str] | None = None  # (a ready point, its server) while its revision is unknown
        self._flags = (dict(store.flags), list(store.flag_order))  # as they were before any judging

    def take(self, end: int) -> None:
        store = self.store
        for n in range(self.taken, end):
            frame = Frame(store.direction(n), store.raw(n), store.mono(n), store.wall(n), store.malformed(n), None,
                          store.meta(n))
            if not self._one(n, store.server_id(n), frame):
                return
        self.taken = max(self.taken, end)

    def _one(self, n: int, server: str, frame: Frame) -> bool:
        """Judge frame `n`; False when it is where a judge learns its revision while the frames are still being
        read and its server's revision is not known yet (judging goes on when it is, `take_read`)."""
        judge = self.judges.get(server)
        if judge is None:
            judge = self.judges[server] = Judge()
        for f in judge.frame(n, frame):
            self.found.setdefault(n, []).append(f)
            self.store.flag(n, SEVERITIES.index(f.severity))
        self.taken = n + 1
        if self.settled:
            surface = self.ready_at.get(n)
            if surface is not None and surface.revision is not None:
                judge.ready(surface.revision, surface.capabilities)
        elif self._points.get(n) == server:
            self._waiting = (n, server)
            return False
        return True

    # ------------------------------------------------------------------ as the frames are read
    def take_read(self, first: int, read: list[tuple[str, Frame]], surfaces: dict[str, ServerSurface]) -> None:
        """Judge the frames the store has just read (`store.last_read`: frame `first` on) with the messages it
        parsed, while `surfaces` are rebuilt alongside (`SurfacesBuilder.out`, these frames taken). A judge
        learns its server's revision where the servers read so far say, once they say which (the frames
        after wait until then, and are judged from the store); `settle` checks it all against the servers
        rebuilt whole."""
        if self.settled:
            return
        self._find_ready(surfaces)
        if self._waiting is not None:
            n, server = self._waiting
            surface = surfaces[server]
            if surface.revision is None:
                return  # not known yet: these frames wait in the store
            self._waiting = None
            self.used[server] = (n, surface.revision, surface.capabilities)
            self.judges[server].ready(surface.revision, surface.capabilities)
        if self.taken < first:
            self.take(first)  # those that waited
            if self.waiting:
                return
        for n, (server, frame) in enumerate(read, first):
            if n >= self.taken and not self._one(n, server, frame):
                return

    @property
    def waiting(self) -> bool:
        """Judging waits where a judge learns its revision until the servers read say which."""
        return self._waiting is not None

    def _find_ready(self, surfaces: dict[str, ServerSurface]) -> None:
        """Where each server's judge learns its revision, as far as its frames were read: the answer of its
        first answered handshake (a handshake sent earlier may still be answered later: `settle` sees it)."""
        for sid, s in surfaces.items():
            if sid in self._found_ready:
                continue
            looked = self._handshakes.setdefault(sid, [0, []])
            for x in s.exchanges[looked[0]:]:
                if x.method in HANDSHAKE:
                    looked[1].append(x)
            looked[0] = len(s.exchanges)
            hit = next((x for x in looked[1] if x.answer is not None), None)
            if hit is not None and hit.answer is not None:
                self._found_ready.add(sid)
                self._points[hit.answer] = sid

    def settle(self, surfaces: dict[str, ServerSurface]) -> None:
        """Every frame is read and `surfaces` rebuilt whole. The frames judged as they were read were judged as
        `judge_recording` judges them when each judge learned the revision where, and as, the rebuilt servers
        say (a session with one handshake a server, a version probe before it included); otherwise they are
        judged again from the first. The frames after them are judged by `take`."""
        self.settled = True
        self.ready_at = ready_points(surfaces)
        said = {s.server_id: (n, s.revision, s.capabilities) for n, s in self.ready_at.items() if n < self.taken}
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            n, server = waiting
            if said.get(server, (None,))[0] == n:
                surface = surfaces[server]
                self.used[server] = (n, surface.revision, surface.capabilities)
                if surface.revision is not None:
                    self.judges[server].ready(surface.revision, surface.capabilities)
        if said != self.used:
            self.store.flags.clear()
            self.store.flags.update(self._flags[0])
            self.store.flag_order[:] = self._flags[1]
            self.judges.clear()
            self.found.clear()
            self.used.clear()
            self.taken = 0
