"""The main window and what hangs off it: `main_window` (`MainWindow`), `menus` (actions and the menu
bar), `pages` (the empty page), `files` (import, export, copy as a command, dropped files),
`preferences` (`Preferences`, `PreferencesDialog`), `command_palette`, `shortcuts`, `about`, `composer_link`
(the raw composer, Edit and resend)."""

__all__ = ["about", "command_palette", "composer_link", "files", "main_window", "menus", "pages", "preferences",
           "shortcuts"]
