"""The Add and Edit server dialogs fit a 1366x768 laptop's screen at every text size (the area under a 48 px panel,
less a title bar): their fields scroll inside while the buttons stay in sight, a checkbox's long sentence wraps
instead of being cut, and the dialog does not grow wider than most of the screen. The available area is given to
the dialog here (the offscreen test screen is 800x800), as the dialog takes it from its screen when it opens."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QCheckBox, QLabel, QScrollArea
from uikit import shot

from inspector.config import ServerSpec
from inspector.ui.base import fit
from inspector.ui.servers.add_dialog import AddServerDialog
from inspector.ui.window import layout
from inspector.ui.window.preferences import apply_font

PANEL = 48
LAPTOP = QRect(0, PANEL, 1366, 768 - PANEL)  # the available area of a 1366x768 screen under its panel
TEXT_SIZES = {"100": 0, "150": 14, "200": 18}  # Preferences → Text size, in points (the suite's font is 9 pt)
WIDEST = 0.7  # of the screen's width: the most the dialog takes
SENTENCES = ("Send W3C trace context (traceparent in every request's _meta)",
             "Run sandboxed: no network, no home folder")


def _whole_texts(dialog):
    """The checkbox sentences a person reads whole: a box's own text when its width holds it, a wrapped label's
    when its height holds all its lines."""
    whole, cut = [], []
    for box in dialog.findChildren(QCheckBox):
        if box.text() and box.isVisibleTo(dialog):
            (whole if box.width() >= box.sizeHint().width() else cut).append(box.text())
    for label in dialog.findChildren(QLabel):
        if label.wordWrap() and label.text() and label.isVisibleTo(dialog):
            (whole if label.height() >= label.heightForWidth(label.width()) else cut).append(label.text())
    return whole, cut


@pytest.mark.parametrize("editing", [False, True], ids=["add", "edit"])
@pytest.mark.parametrize("text_size", list(TEXT_SIZES))
async def test_the_server_dialog_fits_a_laptop_with_its_buttons_in_sight_at(text_size, editing, qapp, qtbot):
    apply_font(qapp, TEXT_SIZES[text_size])
    try:
        spec = ServerSpec(name="demo", command=["python", "-m", "inspector.demo"]) if editing else None
        dialog = AddServerDialog(spec=spec, editing=editing)
        qtbot.addWidget(dialog)
        fit.fit_to_available(dialog, LAPTOP)
        dialog.show()
        qtbot.waitExposed(dialog)
        limit_w, limit_h = LAPTOP.width(), LAPTOP.height() - layout.FRAME_ALLOWANCE
        least = dialog.minimumSizeHint()
        assert least.height() <= limit_h and least.width() <= limit_w, \
            f"at {text_size} % the dialog asks for at least {least.width()}x{least.height()}, " \
            f"the laptop has {limit_w}x{limit_h}"
        assert dialog.height() <= limit_h and dialog.width() <= WIDEST * limit_w, \
            f"at {text_size} % the dialog is {dialog.width()}x{dialog.height()}"
        ok = dialog.ok_button
        bottom = ok.mapTo(dialog, ok.rect().bottomRight())
        assert ok.isVisible() and bottom.y() < dialog.height() and bottom.x() < dialog.width(), (bottom, dialog.size())
        for width in (dialog.width(), least.width()):  # as it opens, and made as narrow as it goes
            dialog.resize(width, dialog.height())
            qtbot.waitUntil(lambda w=width: dialog.width() == w)
            for tab in (0, 1):
                dialog.tabs.setCurrentIndex(tab)
                qapp.processEvents()
                whole, cut = _whole_texts(dialog)
                assert not cut, f"cut at {text_size} %, {width} px wide: {cut}"
        dialog.tabs.setCurrentIndex(0)
        qapp.processEvents()
        assert set(SENTENCES) <= set(_whole_texts(dialog)[0])
        fields = dialog.findChild(QScrollArea, "serverFields")
        if least.height() < dialog.sizeHint().height() - 4 and dialog.height() < dialog.sizeHint().height():
            assert fields.verticalScrollBar().maximum() > 0  # what does not fit scrolls
        await shot(dialog, f"server-dialog-{'edit' if editing else 'add'}-1366x768-{text_size}")
    finally:
        apply_font(qapp, 0)
