"""A choice of host profile (inspector.checks.hosts) for the views that offer a model the tools: *As
listed*, or as Claude Code, Cursor, VS Code… would offer them (renamed, descriptions cut, schemas
rewritten, tools left out). The profiles are the shipped ones and the project's `.spyglass/hosts` (the
shipped ones alone when a project file is broken: its problems are in the tooltip)."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QWidget

from ...checks.hosts import profile as host_profiles
from ...errors import SpyglassError
from .text import plain_tooltip


class HostPicker(QComboBox):
    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        try:
            self.profiles = host_profiles.load()
            problem = ""
        except SpyglassError as exc:
            self.profiles = host_profiles.shipped()
            problem = f"\n\nProject host profiles not used: {exc.message}"
        self.addItem("As listed", "")
        for pid, profile in self.profiles.items():
            self.addItem(f"As {profile.name}", pid)
        self.setToolTip(plain_tooltip("Offer the model the tools as this host would: its names, its cut "
                                      "descriptions, its rewritten schemas, without the tools it leaves out "
                                      "(docs/hosts.md)" + problem))

    def profile(self) -> host_profiles.Profile | None:
        return self.profiles.get(self.currentData() or "")
