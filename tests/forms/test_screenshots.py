"""Screenshots of real forms, light and dark, for a person to look at (test-artifacts/forms/)."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_tools import corpus
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QLineEdit, QStyleFactory

CORPUS = dict(corpus())
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "forms"  # git-ignored

FILLED = {
    "demo:create_event": {"title": "Design review", "when": "2030-01-31T09:30:00Z",
                          "attendees": [{"name": "Ada", "email": "ada@example.com"},
                                        {"name": "Bo", "email": "not-an-email"}],
                          "priority": None, "duration_minutes": 45, "location": {"room": "B12"},
                          "reminder": {"minutes_before": 10}},
    "memory:create_entities": {"entities": [{"name": "Ada Lovelace", "entityType": "person",
                                             "observations": ["wrote the first program", "worked with Babbage"]}]},
    "filesystem:edit_file": {"path": "/tmp/notes.md", "edits": [{"oldText": "teh", "newText": "the"}],
                             "dryRun": True},
    "sdk_pydantic:register_person": {"person": {"name": "Ada", "age": 36, "email": None,
                                                "address": {"street": "1 Loop", "city": "Delft"},
                                                "tags": ["vip", "speaker"], "favourite": "green"}},
}

SHOTS = ["demo:create_event", "sdk_pydantic:register_person", "sdk_pydantic:adopt_pet", "sdk_pydantic:search",
         "everything:get-annotated-message", "everything:gzip-file-as-resource",
         "everything:trigger-long-running-operation", "everything:get-sum", "filesystem:edit_file",
         "memory:create_entities"]


def dark_palette() -> QPalette:
    p = QPalette()
    colours = {QPalette.Window: (37, 37, 38), QPalette.WindowText: (230, 230, 230), QPalette.Base: (30, 30, 30),
               QPalette.AlternateBase: (45, 45, 48), QPalette.Text: (230, 230, 230), QPalette.Button: (55, 55, 58),
               QPalette.ButtonText: (230, 230, 230), QPalette.Highlight: (38, 79, 120),
               QPalette.HighlightedText: (255, 255, 255), QPalette.PlaceholderText: (150, 150, 150),
               QPalette.Mid: (90, 90, 95), QPalette.Midlight: (70, 70, 75), QPalette.Dark: (20, 20, 20),
               QPalette.Light: (80, 80, 85), QPalette.ToolTipBase: (50, 50, 50), QPalette.ToolTipText: (230, 230, 230)}
    for role, rgb in colours.items():
        p.setColor(role, QColor(*rgb))
    p.setColor(QPalette.Disabled, QPalette.Text, QColor(120, 120, 120))
    p.setColor(QPalette.Disabled, QPalette.WindowText, QColor(120, 120, 120))
    return p


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def styled(qapp):
    old_style, old_palette = qapp.style().name(), qapp.palette()
    qapp.setStyle(QStyleFactory.create("Fusion"))
    yield qapp
    qapp.setPalette(old_palette)
    qapp.setStyle(QStyleFactory.create(old_style) or QStyleFactory.create("Fusion"))


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("name", SHOTS)
def test_screenshot(qtbot, styled, artifacts, name, theme):
    from inspector.forms import SchemaForm

    styled.setPalette(dark_palette() if theme == "dark" else styled.style().standardPalette())
    form = SchemaForm(CORPUS[name])
    qtbot.addWidget(form)
    if name in FILLED:
        form.set_value(FILLED[name])
    else:
        first = form.first_field()
        if isinstance(first, QLineEdit):
            qtbot.keyClicks(first, "x")
    form.resize(620, 100)
    form.show()
    qtbot.waitExposed(form)
    form.refresh()
    hint = form.page.sizeHint().height() + 60
    form.resize(620, min(max(hint, 240), 1400))
    qtbot.wait(30)
    path = artifacts / f"{name.replace(':', '_')}_{theme}.png"
    assert form.grab().save(str(path))
    assert path.stat().st_size > 2000
