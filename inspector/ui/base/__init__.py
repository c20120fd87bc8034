"""What every part of the window uses, and nothing of the window itself:

- `text`: text hygiene for whatever a server sends (`visible`, `visible_block`, `plain_tooltip`, masking);
- `design`: the design tokens, in one place (spacing and type scales, each theme's accent, every colour);
- `theme`: light, dark and high-contrast palettes (from the tokens), status colours and icons, primary buttons;
- `badge`: filled badges with their tooltips (`Badge`, `BadgeRow`, `paint_badge`, `badge_tip`);
- `layout`: small layout pieces (`title_label`, `plain_label`, `label_grid`, `ListHeader`, `scrolling_column`);
- `empty`: `EmptyState`, what a pane with nothing to list shows (a title, why, and the actions);
- `items`: lists drawn alike (item roles, `ItemDelegate`, icons from data: URIs);
- `highlight`, `json_view`: pygments colours, a read-only highlighted JSON view;
- `banner`: the non-blocking message strip; `dialogs`: `run_dialog` (await a dialog, no nested loop);
- `files`: what the window writes from Qt objects (`save_png`: a screenshot, 0600 like every file);
- `opening`: `open_address`, the one way an address reaches the system opener (after `inspector.urlpolicy`);
- `tasks`: `spawn` (a coroutine started from a widget, kept alive, its failure reported);
- `enums`: PySide6's short enum names made plain attributes (`Qt.DisplayRole` in a paint costs ~0.05 µs, not
  tens), installed when the window's code is first imported.
"""

from . import enums as _enums

_enums.install()

__all__ = ["badge", "banner", "design", "dialogs", "empty", "enums", "files", "highlight", "items", "json_view",
           "layout", "opening", "tasks", "text", "theme"]
