"""The session timeline: one lane per server, each request a bar from send to answer, coloured by outcome; ticks
for notifications, the server's requests and malformed frames; under it, latency per method.

Object names: `timelineView` (the widget), `timelineCanvas` (the painted lanes),
`timelineMethods` (the per-method table), `timelineFit`, `timelineZoomIn`, `timelineZoomOut`, `timelineRange`,
`timelineLegend`. docs/timeline.md says what it shows and how to drive it.

A paint never walks every frame: the Qt-free `Timeline` (inspector/traffic/timeline.py) finds what is visible by
bisection, and once a lane has more than `DETAIL` spans on screen it is drawn from per-pixel buckets (how many
spans start there, the worst outcome), plus the spans long enough to be wider than two pixels. New frames wake
the view through `notify_next`; a single-shot timer then takes them all in at once, within a time budget.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QPoint, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QPainter, QPalette, QPen, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSplitter, QTableView, QToolButton, QToolTip, QVBoxLayout, QWidget

from ...traffic import TrafficStore
from ...traffic import timeline as tlm
from ..base import design
from ..base.fit import overflow_row
from ..base.highlight import palette_is_dark
from ..base.text import plain_tooltip, visible
from .model import FLOOD_ROWS, FLOOD_SLOWER

BATCH_MS = 100  # new frames are taken in at most this often
BUDGET_S = 0.02  # and for no longer than this per turn of the loop
DETAIL = 1200  # more spans than this start on screen in one track: draw buckets
BUCKET_PX = 2  # zoomed out, a bucket of this many pixels per column
LONG_CAP = 20000  # a duration class with more candidates than this stays in the buckets
LABELLED = 400  # bars get a text label when no more than this many are drawn in a track
AXIS_H, LABEL_W, RIGHT_PAD = 24, 132, 8
LANE_H, TICK_Y, TICK_H, IN_Y, IN_H, OUT_Y, OUT_H = 48, 5, 10, 17, 8, 27, 16  # a lane's rows
MIN_WIDTH = 2e-5  # seconds: the deepest zoom
ZOOM_STEP = 1.25

# (light, dark): the outcome and tick colours, readable on either base.
COLOURS = design.named("timeline-")
LEGEND = ("ok", "error", "tool error", "cancelled", "unanswered", "notification", "server request", "malformed")
TIPS = {"ok": "answered", "error": "a JSON-RPC error response", "tool error": "a tools/call result with isError: true",
        "cancelled": "a notifications/cancelled was sent for it", "unanswered": "no answer (yet)",
        "notification": "a notification (taller: from the server; shorter: ours)",
        "server request": "the server asked us something (its bar is the thin row)",
        "malformed": "a frame that is not valid JSON-RPC"}
SLOWEST_ROLE = Qt.ItemDataRole.UserRole + 1
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter


def colours(palette: QPalette) -> dict[str, QColor]:
    dark = palette_is_dark(palette)
    out = {name: QColor(pair[1] if dark else pair[0]) for name, pair in COLOURS.items()}
    out.update({"dim " + name: QColor(v.red(), v.green(), v.blue(), 70) for name, v in list(out.items())})
    R = QPalette.ColorRole
    roles = {"base": R.Base, "alt": R.AlternateBase, "window": R.Window, "text": R.Text, "muted": R.PlaceholderText}
    out.update({name: palette.color(role) for name, role in roles.items()})
    out["grid"] = QColor(out["text"].red(), out["text"].green(), out["text"].blue(), 28)
    return out


def legend(palette: QPalette) -> str:
    """What the colours mean, as rich text in the palette's colours."""
    c = colours(palette)
    mark = {"unanswered": "▨", "notification": "┃", "server request": "┃", "malformed": "┃"}
    return "&nbsp;&nbsp;".join(f"<span style='color:{c[k].name()}'>{mark.get(k, '■')}</span>&nbsp;{k}" for k in LEGEND)


class TimelineCanvas(QWidget):
    """The painted lanes. Wheel or +/- zoom (around the cursor), a drag or the arrow keys pan, Home fits."""

    activated = Signal(int)  # a record clicked: the request's row for a bar, the frame's for a tick
    rangeChanged = Signal(float, float)

    def __init__(self, timeline: tlm.Timeline, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timelineCanvas")
        self.timeline = timeline
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.setMinimumHeight(AXIS_H + LANE_H + 4)
        self._t0, self._t1 = self.full_range()
        self._hi = self._t1  # the right end of the full range when data last changed
        self._fit = True  # until the user zooms or pans: show everything, as it grows
        self._yoff = 0
        self._selected: tuple[str, int] | None = None  # ("span", span) or ("tick", row)
        self._press: tuple[float, float, float, float] | None = None  # x, y, t0, t1 when the button went down
        self._dragged = False
        self._colours: tuple[int, dict[str, QColor]] | None = None
        self._rows: dict[tuple[int, bool], tuple[int, float]] = {}  # (lane, inward) -> levels shown, row height
        self.paints = 0

    # ------------------------------------------------------------------ geometry
    def plot_width(self) -> float:
        return float(max(1, self.width() - LABEL_W - RIGHT_PAD))

    def seconds_per_px(self) -> float:
        return (self._t1 - self._t0) / self.plot_width()

    def x_of(self, t: float) -> float:
        return LABEL_W + (t - self._t0) / self.seconds_per_px()

    def t_of(self, x: float) -> float:
        return self._t0 + (x - LABEL_W) * self.seconds_per_px()

    def lane_y(self, lane: int) -> float:
        return AXIS_H + lane * LANE_H - self._yoff

    # ------------------------------------------------------------------ the visible range
    def visible_range(self) -> tuple[float, float]:
        return self._t0, self._t1

    def full_range(self) -> tuple[float, float]:
        end = self.timeline.end
        pad = max(end * 0.02, 0.0005)
        return -pad, end + pad

    @property
    def fitted(self) -> bool:
        return self._fit

    def fit(self) -> None:
        self._fit = True
        self._apply(*self.full_range())

    def set_range(self, t0: float, t1: float) -> None:
        self._fit = False
        self._apply(t0, t1)

    def zoom(self, factor: float, x: float | None = None) -> None:
        """Zoom in by `factor` (below 1: out) around the time under `x` (the middle by default)."""
        t = self.t_of(x) if x is not None else (self._t0 + self._t1) / 2
        self.set_range(t - (t - self._t0) / factor, t + (self._t1 - t) / factor)

    def pan(self, fraction: float) -> None:
        dt = (self._t1 - self._t0) * fraction
        self.set_range(self._t0 + dt, self._t1 + dt)

    def _apply(self, t0: float, t1: float) -> None:
        lo, hi = self.full_range()
        width = max(MIN_WIDTH, t1 - t0)
        if width >= hi - lo:
            t0, t1 = lo, hi
            self._fit = True
        else:
            t0 = min(max(t0, lo), hi - width)
            t1 = t0 + width
        self._hi = hi
        if (t0, t1) != (self._t0, self._t1):
            self._t0, self._t1 = t0, t1
            self.rangeChanged.emit(t0, t1)
        self.update()

    def data_changed(self) -> None:
        """The timeline took in new rows: refit, or keep following the end when the view was at it."""
        if self._fit:
            self._apply(*self.full_range())
            return
        lo, hi = self.full_range()
        if self._t1 >= self._hi - (self._t1 - self._t0) * 1e-6 and hi > self._hi:
            shift = hi - self._hi
            self._apply(self._t0 + shift, self._t1 + shift)
        else:
            self._hi = hi
            self.update()

    def _scroll_lanes(self, dy: int) -> None:
        room = len(self.timeline.lanes) * LANE_H - (self.height() - AXIS_H)
        self._yoff = max(0, min(max(0, room), self._yoff + dy))
        self.update()

    # ------------------------------------------------------------------ selection and hits
    @property
    def selected(self) -> int | None:
        """The record highlighted: a request's row, or a tick's."""
        if self._selected is None:
            return None
        kind, ident = self._selected
        return self.timeline.span_row[ident] if kind == "span" else ident

    def select(self, n: int | None) -> bool:
        """Highlight record `n` (a request, its response, its cancel, or a tick) and bring it into view;
        False when the timeline does not draw it (None clears)."""
        tl = self.timeline
        self._selected = None
        if n is not None and n >= tl.scanned:
            tl.update()
        i = tl.span_of(n) if n is not None else None
        where = tl.tick_at(n) if n is not None and i is None else None
        if i is not None:
            self._selected = ("span", i)
            lane, start, end = tl.span_lane[i], tl.span_start[i], tl.span_until(i)
        elif where is not None and n is not None:
            self._selected = ("tick", n)
            lane, start = where[0], tl.lanes[where[0]].ticks.times[where[1]]
            end = start
        else:
            self.update()
            return False
        if end < self._t0 or start > self._t1:
            width = self._t1 - self._t0
            middle = (start + min(end, start + width * 0.6)) / 2
            self.set_range(middle - width / 2, middle + width / 2)
        y = self.lane_y(lane)
        if y < AXIS_H or y + LANE_H > self.height():
            self._scroll_lanes(int(y - AXIS_H))
        self.update()
        return True

    def hit(self, x: float, y: float) -> tuple[str, int] | None:
        """What is drawn at (x, y): ("span", span), ("tick", row) or ("lane", lane) for its label."""
        tl = self.timeline
        lane = int((y - AXIS_H + self._yoff) // LANE_H)
        if y < AXIS_H or not 0 <= lane < len(tl.lanes):
            return None
        if x < LABEL_W:
            return "lane", lane
        row_y = y - self.lane_y(lane)
        px, t = self.seconds_per_px(), self.t_of(x)
        entry = tl.lanes[lane]
        if row_y >= IN_Y - 1:
            found = self._span_near(entry.out if row_y >= OUT_Y - 1 else entry.inward, t, px, y)
            if found is not None or row_y >= OUT_Y - 1:
                return found
        ticks = entry.ticks
        a, z = ticks.range(t - 4 * px, t + 4 * px)
        if z <= a:
            return None
        best = min(range(a, z), key=lambda k: (round(abs(ticks.times[k] - t) / px), -(ticks.codes[k] % tlm.DIM)))
        return "tick", ticks.ids[best]

    def bar(self, i: int) -> tuple[float, float]:
        """Top and height of span i's bar, as last painted."""
        tl = self.timeline
        inward = bool(tl.span_flags[i] & 2)
        rows, row_h = self._rows.get((tl.span_lane[i], inward), (1, float(IN_H if inward else OUT_H)))
        top = self.lane_y(tl.span_lane[i]) + (IN_Y if inward else OUT_Y)
        return top + min(tl.span_level[i], rows - 1) * row_h, row_h

    def _span_near(self, track: tlm.Track, t: float, px: float, y: float) -> tuple[str, int] | None:
        tl = self.timeline
        best: tuple[int, bool, int, float, int] | None = None
        for i in tl.spans_in(track, t - 3 * px, t + 3 * px):
            start, until = tl.span_start[i], tl.span_until(i)
            gap = 0 if start <= t <= until else round(min(abs(t - start), abs(t - until)) / px)
            top, height = self.bar(i)
            key = (gap, not top <= y <= top + height, -tl.span_outcome[i], until - start, i)
            if best is None or key < best:
                best = key
        return ("span", best[4]) if best is not None else None

    def point_of(self, n: int) -> QPoint | None:
        """Where record `n` is drawn (the middle of the visible part of its bar), or None."""
        tl = self.timeline
        i = tl.span_of(n)
        if i is not None:
            a = max(self.x_of(tl.span_start[i]), LABEL_W)
            z = min(self.x_of(tl.span_until(i)), LABEL_W + self.plot_width())
            top, height = self.bar(i)
            return QPoint(int((a + z) / 2), int(top + height / 2)) if a <= z + 1 else None
        where = tl.tick_at(n)
        if where is None:
            return None
        x = self.x_of(tl.lanes[where[0]].ticks.times[where[1]])
        if not LABEL_W <= x <= LABEL_W + self.plot_width():
            return None
        return QPoint(int(x), int(self.lane_y(where[0]) + TICK_Y + TICK_H / 2))

    def describe(self, found: tuple[str, int]) -> str:
        tl, (kind, ident) = self.timeline, found
        lines = (tl.describe_span(ident) if kind == "span" else tl.describe_tick(ident) if kind == "tick" else
                 [tl.lanes[ident].server, f"{len(tl.lanes[ident].out.marks):,} requests, "
                  f"{len(tl.lanes[ident].inward.marks):,} from the server, {len(tl.lanes[ident].ticks):,} ticks"])
        return "\n".join(visible(line, 300) for line in lines)

    # ------------------------------------------------------------------ events
    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            pos = event.pos()  # type: ignore[attr-defined]
            found = self.hit(pos.x(), pos.y())
            if found is None:
                QToolTip.hideText()
            else:
                QToolTip.showText(event.globalPos(), plain_tooltip(self.describe(found)), self)  # type: ignore
            return True
        return super().event(event)

    def wheelEvent(self, event: Any) -> None:
        delta = event.angleDelta()
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self._scroll_lanes(-int(delta.y() or delta.x()) // 4)
        elif delta.y():
            self.zoom(ZOOM_STEP ** (delta.y() / 120), event.position().x())
        elif delta.x():
            self.pan(-delta.x() / 1200)
        event.accept()

    def mousePressEvent(self, event: Any) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            pos = event.position()
            self._press = (pos.x(), pos.y(), self._t0, self._t1)
            self._dragged = False
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: Any) -> None:
        if self._press is not None:
            x, _y, t0, t1 = self._press
            dx = event.position().x() - x
            if self._dragged or abs(dx) > 3:
                if not self._dragged:
                    self.setCursor(Qt.CursorShape.ClosedHandCursor)
                self._dragged = True
                dt = dx * (t1 - t0) / self.plot_width()
                self.set_range(t0 - dt, t1 - dt)

    def mouseReleaseEvent(self, event: Any) -> None:
        if self._press is not None and event.button() == Qt.MouseButton.LeftButton:
            if self._dragged:
                self.unsetCursor()
            else:
                found = self.hit(event.position().x(), event.position().y())
                if found is not None and found[0] != "lane":
                    self._selected = found
                    self.update()
                    self.activated.emit(self.selected)
            self._press = None
            self._dragged = False
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: Any) -> None:
        K, page = Qt.Key, max(LANE_H, self.height() - AXIS_H)
        action = {K.Key_Plus: lambda: self.zoom(ZOOM_STEP), K.Key_Equal: lambda: self.zoom(ZOOM_STEP),
                  K.Key_Minus: lambda: self.zoom(1 / ZOOM_STEP), K.Key_Left: lambda: self.pan(-0.15),
                  K.Key_Right: lambda: self.pan(0.15), K.Key_Home: self.fit,
                  K.Key_Up: lambda: self._scroll_lanes(-LANE_H), K.Key_Down: lambda: self._scroll_lanes(LANE_H),
                  K.Key_PageUp: lambda: self._scroll_lanes(-page), K.Key_PageDown: lambda: self._scroll_lanes(page),
                  }.get(event.key())
        if action is None:
            return super().keyPressEvent(event)
        action()

    # ------------------------------------------------------------------ painting
    def _palette_colours(self) -> dict[str, QColor]:
        key = self.palette().cacheKey()
        if self._colours is None or self._colours[0] != key:
            self._colours = (key, colours(self.palette()))
        return self._colours[1]

    def paintEvent(self, event: Any) -> None:
        self.paints += 1
        p = QPainter(self)
        c = self._palette_colours()
        w, h = self.width(), self.height()
        p.fillRect(self.rect(), c["base"])
        tl = self.timeline
        if not tl.lanes:
            p.setPen(c["muted"])
            p.drawText(QRectF(16, 0, w - 32, h), int(Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap),
                       "No traffic yet.\nEvery request will show here as a bar from send to answer, coloured by "
                       "its outcome; notifications as ticks.")
            p.end()
            return
        lanes = [(k, y) for k in range(len(tl.lanes)) if AXIS_H - LANE_H < (y := self.lane_y(k)) < h]
        for k, y in lanes:
            if k % 2:
                p.fillRect(QRectF(0, y, w, LANE_H), c["alt"])
        px, pw = self.seconds_per_px(), self.plot_width()
        step = tlm.nice_step(px * 110)
        marks = [k * step for k in range(math.ceil(self._t0 / step), math.floor(self._t1 / step) + 1)]
        p.setPen(QPen(c["grid"], 1))
        for t in marks:
            x = self.x_of(t)
            p.drawLine(QPointF(x, AXIS_H), QPointF(x, h))
        p.save()
        p.setClipRect(QRectF(LABEL_W, AXIS_H, pw + RIGHT_PAD, h - AXIS_H))
        for k, y in lanes:
            entry = tl.lanes[k]
            self._paint_ticks(p, c, entry.ticks, y + TICK_Y)
            self._paint_track(p, c, k, True, y + IN_Y, IN_H)
            self._paint_track(p, c, k, False, y + OUT_Y, OUT_H)
        self._paint_selection(p, c)
        p.restore()
        # the gutter: server names, and how many requests each lane holds
        p.fillRect(QRectF(0, AXIS_H, LABEL_W - 6, h - AXIS_H), c["window"])
        bold = self.font()
        bold.setBold(True)
        p.setFont(bold)
        fm, bold_fm = self.fontMetrics(), p.fontMetrics()
        for k, y in lanes:
            entry = tl.lanes[k]
            p.setFont(bold)
            p.setPen(c["text"])
            name = bold_fm.elidedText(visible(entry.server, 200), Qt.TextElideMode.ElideMiddle, LABEL_W - 18)
            p.drawText(QRectF(8, y + 4, LABEL_W - 14, bold_fm.height()), int(Qt.AlignmentFlag.AlignLeft), name)
            p.setFont(self.font())
            p.setPen(c["muted"])
            count = f"{len(entry.out.marks) + len(entry.inward.marks):,} requests"
            p.drawText(QRectF(8, y + 6 + bold_fm.height(), LABEL_W - 14, fm.height()), int(Qt.AlignmentFlag.AlignLeft),
                       fm.elidedText(count, Qt.TextElideMode.ElideRight, LABEL_W - 18))
        # the time axis
        p.fillRect(QRectF(0, 0, w, AXIS_H), c["window"])
        p.setPen(QPen(c["grid"], 1))
        p.drawLine(QPointF(0, AXIS_H - 0.5), QPointF(w, AXIS_H - 0.5))
        p.setPen(c["text"])
        until = max(abs(self._t0), abs(self._t1))
        right = LABEL_W + pw + RIGHT_PAD
        for t in marks:
            x = self.x_of(t)
            text = tlm.format_time(t, step, until)
            half = fm.horizontalAdvance(text) / 2
            left = min(max(x - half, LABEL_W), right - 2 * half)
            p.drawLine(QPointF(x, AXIS_H - 5), QPointF(x, AXIS_H - 1))
            p.drawText(QRectF(left, 2, 2 * half + 2, AXIS_H - 7), int(Qt.AlignmentFlag.AlignCenter), text)
        p.setPen(c["muted"])
        p.drawText(QRectF(8, 2, LABEL_W - 14, AXIS_H - 7), int(Qt.AlignmentFlag.AlignVCenter), "since start")
        p.end()

    def _paint_ticks(self, p: QPainter, c: dict[str, QColor], ticks: tlm.Marks, y: float) -> None:
        nb = int(self.plot_width()) // BUCKET_PX
        step = self.plot_width() / nb
        lines: dict[int, list[QRectF]] = {}
        for b, _n, code in self.timeline.summary(ticks, self._t0, self._t1, nb, ticks=True):
            kind = code % tlm.DIM
            top = y + TICK_H / 2 if kind == 1 else y  # ours: half as tall
            lines.setdefault(code, []).append(QRectF(LABEL_W + b * step, top, 1 + (kind >= 2), y + TICK_H - top))
        p.setPen(Qt.PenStyle.NoPen)
        for code, rects in lines.items():
            p.setBrush(c[("dim " if code >= tlm.DIM else "") + tlm.TICKS[code % tlm.DIM]])
            p.drawRects(rects)

    def _paint_track(self, p: QPainter, c: dict[str, QColor], lane: int, inward: bool, y: float, height: float
                     ) -> None:
        """Bars one level above the other while they are in flight at once; zoomed out, columns of
        `BUCKET_PX` (as tall as busy, topped by the worst outcome) under a strip of the spans wider than that."""
        tl = self.timeline
        track = tl.track(lane, inward)
        t0, t1 = self._t0, self._t1
        px, pw = self.seconds_per_px(), self.plot_width()
        rects: dict[int, list[QRectF]] = {}
        levels, right_edge, last = tl.span_level, LABEL_W + pw + 2, tl.end
        if track.marks.count(t0, t1) <= DETAIL:
            spans = tl.spans_in(track, t0, t1)
            rows = min(max(1, int(height // 4)), 1 + max(map(levels.__getitem__, spans), default=0))
            row_h = height / rows
        else:
            nb = int(pw) // BUCKET_PX
            buckets, step, bottom = tl.summary(track.marks, t0, t1, nb), pw / nb, y + height
            scale = (height - 5) * 0.7 / math.log1p(max(n for _b, n, _c in buckets)) if buckets else 0.0
            body, dim_body = rects.setdefault(tlm.OK, []), rects.setdefault(tlm.OK + tlm.DIM, [])
            for b, n, code in buckets:
                bar = (height - 5) * 0.3 + scale * math.log1p(n)
                (dim_body if code >= tlm.DIM else body).append(QRectF(LABEL_W + b * step, bottom - bar, step, bar))
                if code % tlm.DIM:
                    rects.setdefault(code, []).append(QRectF(LABEL_W + b * step, bottom - bar, step, 3))
            spans = tl.spans_in(track, t0, t1, BUCKET_PX * px, cap=LONG_CAP)
            rows, row_h = 1, 4.0
        self._rows[lane, inward] = rows, row_h
        starts, ends, outcome, flags = tl.span_start, tl.span_end, tl.span_outcome, tl.span_flags
        bar_h = row_h - 1 if rows > 1 else row_h
        placed: list[tuple[int, QRectF]] = []
        for i in spans:
            start, end = starts[i], ends[i]
            until = end if end == end else last if last > start else start
            code = outcome[i] + (tlm.DIM if flags[i] & 1 else 0)
            top = y + (levels[i] if levels[i] < rows else rows - 1) * row_h
            lent = start + tlm.HOLD  # an unanswered one lends its level after that: a thread on from there
            if end != end and until > lent and (x := max(LABEL_W - 2, self.x_of(lent))) < right_edge:
                rects.setdefault(code, []).append(QRectF(x, top, min(right_edge, self.x_of(until)) - x, 0))
                until = lent
            a = (start - t0) / px
            a = a if a > -2 else -2.0
            z = (until - t0) / px
            width = (z if z < pw + 2 else pw + 2) - a
            rect = QRectF(LABEL_W + a, top, width - 1 if width > 3 else width if width > 1 else 1.0, bar_h)
            rects.setdefault(code, []).append(rect)
            if width >= 44 and row_h >= 12:
                placed.append((i, rect))
        for code, group in rects.items():
            colour = c[("dim " if code >= tlm.DIM else "") + tlm.OUTCOMES[code % tlm.DIM]]
            if code % tlm.DIM == tlm.UNANSWERED:
                p.setPen(QPen(colour, 1))
                p.setBrush(QBrush(colour, Qt.BrushStyle.BDiagPattern))
            else:
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(colour)
            p.drawRects(group)
        if not inward and len(placed) <= LABELLED:
            fm, right = self.fontMetrics(), 0.0
            for i, rect in placed:
                name = tl.names[tl.span_name[i]] or tl.store.method(tl.span_row[i]) or ""
                room = rect.adjusted(max(4.0, right + 6 - rect.x()), 0, -4, 0)
                if room.width() >= 24:  # spans that began earlier are labelled where they show, never on top
                    bg = c[tlm.OUTCOMES[outcome[i]]]  # white on the dark ones, ink on the light (by luma)
                    luma = bg.red() * 299 + bg.green() * 587 + bg.blue() * 114
                    p.setPen(QColor(design.pair("paper" if luma < 128000 else "ink")[0]))
                    text = fm.elidedText(visible(name, 200), Qt.TextElideMode.ElideRight, int(room.width()))
                    p.drawText(room, int(Qt.AlignmentFlag.AlignVCenter), text)
                    right = room.x() + fm.horizontalAdvance(text)

    def _paint_selection(self, p: QPainter, c: dict[str, QColor]) -> None:
        if self._selected is None:
            return
        tl = self.timeline
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(c["text"], 2))
        kind, ident = self._selected
        if kind == "span":
            (y, height), a, z = self.bar(ident), self.x_of(tl.span_start[ident]), self.x_of(tl.span_until(ident))
            p.drawRect(QRectF(a - 2, y - 2, max(1.0, z - a) + 4, height + 4))
            return
        where = tl.tick_at(ident)
        if where is not None:
            x, y = self.x_of(tl.lanes[where[0]].ticks.times[where[1]]), self.lane_y(where[0]) + TICK_Y
            p.drawRect(QRectF(x - 3, y - 2, 7, TICK_H + 4))


class TimelineView(QWidget):
    """The timeline of a `TrafficStore` above its per-method table; follows the store as it grows.

    `frameActivated(n)`: a bar, a tick or a table row (its slowest request) was clicked; `select(n)` highlights a
    record chosen elsewhere (the traffic pane's selection) without emitting it back."""

    frameActivated = Signal(int)

    def __init__(self, store: TrafficStore, parent: QWidget | None = None, *, batch_ms: int = BATCH_MS) -> None:
        super().__init__(parent)
        self.setObjectName("timelineView")
        self.store = store
        self.timeline = tlm.Timeline(store)
        self.timeline.update(seconds=BUDGET_S)
        self.canvas = TimelineCanvas(self.timeline)
        self.canvas.activated.connect(self.frameActivated)
        self.methods = QStandardItemModel(0, len(tlm.METHOD_COLUMNS), self)
        self.methods.setSortRole(Qt.ItemDataRole.UserRole)
        for col, (text, tip) in enumerate(zip(tlm.METHOD_COLUMNS, tlm.METHOD_TIPS, strict=True)):
            item = QStandardItem(text)
            item.setToolTip(tip)
            item.setTextAlignment(Qt.AlignmentFlag.AlignCenter if col >= 2 else _LEFT)  # clear of the sort arrow
            self.methods.setHorizontalHeaderItem(col, item)
        self._method_items: list[list[QStandardItem]] = []  # one row per MethodStats, in their order
        self.table = QTableView()
        self.table.setObjectName("timelineMethods")
        self.table.setModel(self.methods)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QTableView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setSortIndicator(2, Qt.SortOrder.DescendingOrder)
        header.setSectionResizeMode(0, header.ResizeMode.Stretch)
        fm = header.fontMetrics()
        for col, sample in enumerate(("", "a_tool_name", "000,000", "00,000", "", "", "00000.0", "00000.0", "")):
            header.resizeSection(col, fm.horizontalAdvance(max(sample, tlm.METHOD_COLUMNS[col], key=len)) + 34)
        self._fill_methods()
        self.table.doubleClicked.connect(self._row_activated)
        bar = QHBoxLayout()
        bar.setContentsMargins(design.margins("hair", "xs"))
        self.fit_button = self._button("timelineFit", "Fit", "Show the whole session (Home)", self.canvas.fit)
        self.zoom_out = self._button("timelineZoomOut", "−", "Zoom out (-, or the mouse wheel)",
                                     lambda: self.canvas.zoom(1 / ZOOM_STEP))
        self.zoom_in = self._button("timelineZoomIn", "+", "Zoom in (+, or the mouse wheel over a moment)",
                                    lambda: self.canvas.zoom(ZOOM_STEP))
        self.range_label = QLabel()
        self.range_label.setObjectName("timelineRange")
        self.range_label.setMinimumWidth(self.fontMetrics().horizontalAdvance("0000.000 s – 0000.000 s  (0000.00 ms)"))
        self.range_label.setToolTip("The time shown, since the session's first frame; drag or use ←/→ to move")
        self.legend = QLabel(legend(self.palette()))
        self.legend.setObjectName("timelineLegend")
        self.legend.setToolTip("\n".join(f"{name}: {TIPS[name]}" for name in LEGEND))
        bar.addWidget(overflow_row(self, "timelineToolbar", (  # what has no room goes into its » menu
            self.fit_button, self.zoom_out, self.zoom_in, self.range_label, None, self.legend)))
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.canvas)
        self.split.addWidget(self.table)
        self.split.setChildrenCollapsible(False)
        self.table.setMinimumHeight(2 * self.table.fontMetrics().height() + 8)  # a dock on a small screen stays small
        self.split.splitterMoved.connect(lambda *_: setattr(self, "_split_moved", True))
        self._split_moved = False
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addLayout(bar)
        lay.addWidget(self.split, 1)
        self.canvas.rangeChanged.connect(self._show_range)
        self._armed = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(batch_ms)
        self._timer.timeout.connect(self.refresh)
        self._batch_ms = batch_ms  # the wait before taking in new frames; longer while a flood lasts (as the pane's)
        self.refreshes = 0
        self._arm()
        self.canvas.fit()
        self._show_range(*self.canvas.visible_range())
        if not self.timeline.complete:
            self._timer.start(0)

    def _button(self, name: str, text: str, tip: str, slot: Any) -> QToolButton:
        b = QToolButton(objectName=name, text=text, toolTip=tip, autoRaise=True)
        b.clicked.connect(slot)
        return b

    def _arm(self) -> None:
        if not self._armed:
            self._armed = True
            self.store.notify_next(self._woken)

    def _woken(self, n: int) -> None:
        self._armed = False
        try:
            if not self._timer.isActive():
                self._timer.start()  # its interval: set by the last refresh
        except RuntimeError:  # the view is gone; the store outlived it
            pass

    def refresh(self) -> int:
        """Take in what the store appended since (within a time budget, the rest on the next turn)."""
        self._arm()
        taken = self.timeline.update(seconds=BUDGET_S)
        self._timer.setInterval(self._batch_ms * FLOOD_SLOWER if taken >= FLOOD_ROWS else self._batch_ms)
        if not self.timeline.complete:
            self._timer.start(0)
        if taken:
            self.refreshes += 1
            self.canvas.data_changed()
            self._fill_methods()
            self._size_split()
        return taken

    def _size_split(self) -> None:
        """The canvas as tall as its lanes (at most two thirds), the table below, until the user says otherwise."""
        total = self.split.height()
        if not self._split_moved and total > 0:
            lanes = AXIS_H + max(2, len(self.timeline.lanes)) * LANE_H + 12
            canvas = max(self.canvas.minimumHeight(), min(lanes, total * 2 // 3))
            self.split.setSizes([canvas, total - canvas])

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.legend.setText(legend(self.palette()))
        super().changeEvent(event)

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self._size_split()

    def select(self, n: int | None) -> bool:
        """Highlight record `n` (given from outside: it is not emitted back)."""
        return self.canvas.select(n)

    @property
    def selected(self) -> int | None:
        return self.canvas.selected

    def fit(self) -> None:
        self.canvas.fit()

    def _fill_methods(self) -> None:
        """The table's rows follow `method_stats()` (one per method, in the order they appeared; the items
        keep their identity when the table is sorted)."""
        error = QBrush(colours(self.palette())["error"])
        for r, stats in enumerate(self.timeline.method_stats()):
            if r == len(self._method_items):
                items = [QStandardItem() for _ in tlm.METHOD_COLUMNS]
                for col, item in enumerate(items):
                    item.setTextAlignment(_RIGHT if col >= 2 else _LEFT)
                self._method_items.append(items)
                self.methods.appendRow(items)
            for item, (text, key) in zip(self._method_items[r], stats.cells(), strict=True):
                if item.data(Qt.ItemDataRole.UserRole) != key:
                    item.setText(visible(text, 200))
                    item.setData(key, Qt.ItemDataRole.UserRole)
            first = self._method_items[r][0]
            first.setData(stats.slowest, SLOWEST_ROLE)
            if stats.errors:
                self._method_items[r][3].setForeground(error)
        header = self.table.horizontalHeader()
        self.methods.sort(header.sortIndicatorSection(), header.sortIndicatorOrder())

    def _row_activated(self, index: QModelIndex) -> None:
        slowest = self.methods.item(index.row(), 0).data(SLOWEST_ROLE)
        if slowest is not None:
            self.canvas.select(slowest)
            self.frameActivated.emit(slowest)

    def _show_range(self, t0: float, t1: float) -> None:
        if not self.timeline.lanes:
            return self.range_label.clear()
        step = tlm.nice_step((t1 - t0) / 10)
        until = max(abs(t0), abs(t1))
        shown = f"{tlm.format_time(max(0.0, t0), step, until)} – {tlm.format_time(t1, step, until)}"
        self.range_label.setText(f"{shown}  ({tlm.format_duration(t1 - t0)})")
