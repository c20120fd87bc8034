"""The main window's dialogs and what they change: Preferences, the command palette, Keyboard shortcuts,
About. A part of `MainWindow` (its base class), kept apart so each module stays small."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QApplication

from ..base.dialogs import show_sheet
from .about import AboutDialog
from .command_palette import CommandPalette, palette_commands
from .preferences import Preferences, PreferencesDialog, apply_font
from .shortcuts import ShortcutsDialog


class WindowDialogs:
    """Mixed into MainWindow: every attribute used here is the window's."""

    settings: Any
    preferences: Any
    command_palette: Any

    def show_preferences(self) -> PreferencesDialog:
        dialog = PreferencesDialog(self.settings, self)
        dialog.applied.connect(self.apply_preferences)
        return show_sheet(dialog)

    def apply_preferences(self, prefs: Preferences) -> None:
        old, self.preferences = self.preferences, prefs
        app = QApplication.instance()
        if app is not None:
            apply_font(app, prefs.font_size)
        if old.theme != prefs.theme:
            self.set_theme(prefs.theme)
        for conn in self.servers.connections:
            self._apply_transport_options(conn)

    def open_command_palette(self) -> CommandPalette:
        self.command_palette = CommandPalette.open_over(self, palette_commands(
            server_actions=[self.act_connect, self.act_disconnect, self.act_restart, self.act_refresh, self.act_edit,
                            self.act_duplicate, self.act_remove, self.act_undo_remove],
            actions=[self.act_import, self.act_export_all, self.act_export_one, self.act_copy_command, self.act_add,
                     self.act_demo, self.act_preferences, self.act_shortcuts, self.composer.act_composer,
                     self.devloop.act_watch, self.devloop.act_settings],
            traffic=[(self.act_clear_traffic, self.traffic.pane is not None), (self.act_filter_traffic, True)],
            servers=self.servers.connections, selected=self.selected_connection(),
            select=self.select_connection, jump_to_tool=self.jump_to_tool))
        return self.command_palette

    def jump_to_tool(self, name: str) -> None:
        self.tabs.setCurrentIndex(0)
        self.tool_panel.jump_to(name)

    def show_shortcuts(self) -> ShortcutsDialog:
        return show_sheet(ShortcutsDialog(self))

    def show_about(self) -> AboutDialog:
        return show_sheet(AboutDialog(self, self.catalog))
