"""Lists drawn alike — tools, resources, templates, prompts: the item roles, the two-line delegate with
its badges, and icons from data: URIs (remote icons are never fetched)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPixmap
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QToolTip

from ...session.tools import decode_data_uri
from . import design, theme
from .badge import badge_size, badge_tip, paint_badge
from .text import plain_tooltip, visible

TOOL_ROLE = Qt.UserRole + 1
BADGES_ROLE = Qt.UserRole + 2
FLAGS_ROLE = Qt.UserRole + 3
CHANGE_ROLE = Qt.UserRole + 4
SEARCH_ROLE = Qt.UserRole + 5
DESCRIPTION_ROLE = Qt.UserRole + 6
NAME_ROLE = Qt.UserRole + 7

ICON_SIZE = 20


_icon_cache: dict[str, QPixmap | None] = {}


def item_icon(tool: dict[str, Any]) -> tuple[QPixmap | None, str | None]:
    """The tool's icon if it is a data: URI we can render; else (None, why not)."""
    icons = tool.get("icons")
    if not isinstance(icons, list) or not icons:
        return None, None
    want = "dark" if theme.is_dark() else "light"
    candidates = [i for i in icons if isinstance(i, dict) and isinstance(i.get("src"), str)]
    candidates.sort(key=lambda i: 0 if i.get("theme") == want else 1 if not i.get("theme") else 2)
    remote = None
    for icon in candidates:
        src = icon["src"]
        if not src.startswith("data:"):
            remote = remote or src
            continue
        if src in _icon_cache:
            pm = _icon_cache[src]
        else:
            decoded = decode_data_uri(src)
            pm = None
            if decoded is not None:
                data, mime = decoded
                fmt = {"image/svg+xml": "SVG", "image/png": "PNG", "image/jpeg": "JPG", "image/gif": "GIF",
                       "image/webp": "WEBP"}.get(mime)
                candidate = QPixmap()
                if candidate.loadFromData(data, fmt) if fmt else candidate.loadFromData(data):
                    pm = candidate.scaled(ICON_SIZE * 2, ICON_SIZE * 2, Qt.KeepAspectRatio, Qt.SmoothTransformation)
            if len(_icon_cache) > 500:
                _icon_cache.clear()
            _icon_cache[src] = pm
        if pm is not None:
            return pm, None
    if remote:
        return None, f"remote icon not loaded: {visible(remote, 120)}"
    return None, "icon could not be decoded"


class ItemDelegate(QStyledItemDelegate):
    """Two lines per item: icon, bold title (and the raw name when it differs), badges on the right;
    the description below, muted."""

    PAD = 6

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:
        fm = QFontMetrics(option.font)
        return QSize(200, fm.height() * 2 + self.PAD * 2 + 4)

    @staticmethod
    def badge_font(option: QStyleOptionViewItem) -> QFont:
        small = QFont(option.font)
        small.setPointSizeF(design.size("small", option.font.pointSizeF()))
        return small

    def badges_at(self, option: QStyleOptionViewItem, index: QModelIndex, x: int | None = None
                  ) -> list[tuple[QRect, str, str]]:
        """The badges shown on a row, (rect, label, colour key), left to right: what is wrong (and new or removed)
        first, the annotation badges after; those are dropped first when the row is narrow."""
        r = option.rect.adjusted(self.PAD, self.PAD, -self.PAD, -self.PAD)
        if x is None:
            deco = index.data(Qt.DecorationRole)
            x = r.left() + (ICON_SIZE + 8 if isinstance(deco, QPixmap) else 0)
        sfm = QFontMetrics(self.badge_font(option))
        line_h = QFontMetrics(option.font).height()
        change = index.data(CHANGE_ROLE)
        chips = [(b, b) for b in index.data(BADGES_ROLE) or []]
        chips = [(f, "warning") for f in index.data(FLAGS_ROLE) or []] + chips
        if change:
            chips.insert(0, ("changed", "changed") if change.endswith(" changed") else (change, change))
        room, shown = r.right() - x - 90, []  # the title keeps 90 px
        for label, key in chips:
            w = badge_size(label, sfm).width() + 4
            if w > room:
                break
            room -= w
            shown.append((label, key))
        out, right = [], r.right()
        for label, key in reversed(shown):
            size = badge_size(label, sfm)
            out.append((QRect(right - size.width(), r.top() + (line_h - size.height()) // 2, size.width(),
                              size.height()), label, key))
            right -= size.width() + 4
        return out[::-1]

    def helpEvent(self, event: Any, view: Any, option: QStyleOptionViewItem, index: QModelIndex) -> bool:
        """A badge's tooltip says what the badge means; elsewhere the row's own tooltip."""
        if event.type() == QEvent.Type.ToolTip and index.isValid():
            for rect, label, key in self.badges_at(option, index):
                if rect.contains(event.pos()):
                    tip = badge_tip(label, key)
                    if key == "warning" and isinstance(index.data(Qt.ToolTipRole), str):
                        tip = index.data(Qt.ToolTipRole)  # what is wrong, whole, with the findings' text
                    QToolTip.showText(event.globalPos(), plain_tooltip(tip), view)
                    return True
        return super().helpEvent(event, view, option, index)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        opt.icon = type(opt.icon)()
        style = opt.widget.style() if opt.widget else None
        painter.save()
        if style:
            style.drawControl(QStyle.CE_ItemViewItem, opt, painter, opt.widget)
        selected = bool(option.state & QStyle.State_Selected)
        pal = option.palette
        text_colour = pal.highlightedText().color() if selected else pal.text().color()
        muted = text_colour if selected else theme.colour("muted")
        change = index.data(CHANGE_ROLE)
        r = option.rect.adjusted(self.PAD, self.PAD, -self.PAD, -self.PAD)
        fm = QFontMetrics(option.font)
        line_h = fm.height()
        # icon
        deco = index.data(Qt.DecorationRole)
        if isinstance(deco, QPixmap) and not deco.isNull():
            target = QRect(r.left(), r.top() + (line_h * 2 + 4 - ICON_SIZE) // 2, ICON_SIZE, ICON_SIZE)
            if change == "removed":
                painter.setOpacity(0.4)
            painter.drawPixmap(target, deco)
            painter.setOpacity(1.0)
        x = r.left() + (ICON_SIZE + 8 if isinstance(deco, QPixmap) else 0)  # no icon in the list: no room kept
        # badges, right-aligned on the first line, filled (base.badge)
        small = self.badge_font(option)
        placed = self.badges_at(option, index, x)
        for chip, label, key in placed:
            painter.setFont(small)
            paint_badge(painter, chip, label, key)
        right = placed[0][0].left() - 4 if placed else r.right()
        # title (bold), then the raw name if it differs
        bold = QFont(option.font)
        bold.setBold(True)
        bold.setStrikeOut(change == "removed")
        painter.setFont(bold)
        bfm = QFontMetrics(bold)
        title = index.data(Qt.DisplayRole) or ""
        avail = max(10, right - x - 4)
        shown = bfm.elidedText(title, Qt.ElideRight, avail)
        painter.setPen(muted if change == "removed" else text_colour)
        painter.drawText(QRect(x, r.top(), avail, line_h), Qt.AlignLeft | Qt.AlignVCenter, shown)
        name = index.data(NAME_ROLE) or ""
        used = bfm.horizontalAdvance(shown)
        if name and name != title and used + 40 < avail:
            sfm = QFontMetrics(small)
            painter.setFont(small)
            painter.setPen(muted)
            name_rect = QRect(x + used + 8, r.top(), avail - used - 8, line_h)
            painter.drawText(name_rect, Qt.AlignLeft | Qt.AlignVCenter,
                             sfm.elidedText(name, Qt.ElideRight, name_rect.width()))
        # description
        painter.setFont(option.font)
        painter.setPen(muted)
        desc = index.data(DESCRIPTION_ROLE) or ""
        if not desc and change != "removed":
            desc = "(no description)"
        line2 = QRect(x, r.top() + line_h + 4, r.right() - x, line_h)
        painter.drawText(line2, Qt.AlignLeft | Qt.AlignVCenter, fm.elidedText(desc, Qt.ElideRight, line2.width()))
        painter.restore()
