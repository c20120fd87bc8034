"""One list-and-detail pattern on Tools, Resources and Prompts: a search box across the list, the count and Refresh
on the row beneath it (Refresh at the right), both above the list; the search filters the list and keeps room to
type in; Refresh lists again. Before, only Tools had a search box and Tools had no Refresh."""

from __future__ import annotations

import pytest
from calling import connected
from PySide6.QtWidgets import QLabel, QLineEdit, QListView, QPushButton
from uikit import everything_cmd, find, until

from inspector.config import ServerSpec

TABS = {  # tab's widget attribute: (search, count, refresh, list)
    "tool_panel": ("toolSearch", "toolCount", "refreshToolsButton", "toolList"),
    "resources_pane": ("resourceSearch", "resourceCount", "refreshResourcesButton", "resourceList"),
    "prompts_pane": ("promptSearch", "promptCount", "refreshPromptsButton", "promptList"),
}


def shown_rows(view: QListView) -> list[str]:
    model = view.model()
    return [model.index(r, 0).data() for r in range(model.rowCount()) if not view.isRowHidden(r)]


@pytest.mark.parametrize("tab", sorted(TABS))
async def test_every_list_has_search_count_and_refresh_above_it(tab, open_window):
    search_name, count_name, refresh_name, list_name = TABS[tab]
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="everything", command=everything_cmd()))
        await connected(conn)
        await until(lambda: all(conn.session.listings[k].loaded for k in ("resources", "templates", "prompts")), 20,
                    "the listings")
        if tab == "tool_panel":
            window.tabs.setCurrentIndex(0)
        else:
            window.tabs.setCurrentWidget(getattr(window, tab))
        search, count = find(window, QLineEdit, search_name), find(window, QLabel, count_name)
        refresh, view = find(window, QPushButton, refresh_name), find(window, QListView, list_name)
        await until(lambda: search.isVisible() and refresh.isVisible() and view.model().rowCount() > 2, 10,
                    f"the {tab} list")
        def box(w):
            return w.rect().translated(w.mapTo(window, w.rect().topLeft()))
        middle = [box(w).center().y() for w in (count, refresh)]
        assert abs(middle[0] - middle[1]) <= 4, middle  # the count and Refresh: one row...
        assert box(search).bottom() < min(box(count).top(), box(refresh).top())  # ...beneath the search
        assert box(count).left() < box(refresh).left() and box(refresh).right() >= box(view).right() - 4
        assert box(refresh).bottom() < box(view).top()  # all above the list
        assert search.width() >= view.width() - 8  # across the list: a narrow list keeps room to type in
        assert search.placeholderText().startswith("Filter ") and search.isClearButtonEnabled()
        # the search filters
        everything = shown_rows(view) if list_name != "toolList" else None
        word = "echo" if list_name == "toolList" else "simple" if list_name == "promptList" else "architecture"
        search.setText(word)
        if list_name == "toolList":
            await until(lambda: 0 < view.model().rowCount() < 5, 5, "the tools filtered")
        else:
            await until(lambda: 0 < len(shown_rows(view)) < len(everything), 5, f"{list_name} filtered")
            search.clear()
            assert shown_rows(view) == everything
        # Refresh lists again
        method = {"toolList": "tools/list", "resourceList": "resources/list", "promptList": "prompts/list"}[list_name]
        store = window.store
        before = sum(1 for n in range(len(store)) if store.method(n) == method and store.kind(n) == "request")
        refresh.click()
        await until(lambda: sum(1 for n in range(len(store)) if store.method(n) == method
                                and store.kind(n) == "request") > before, 10, f"{method} sent again")


async def test_the_detail_buttons_stand_at_the_left_as_call_does(open_window):
    """Get prompt stood centred under the prompt's form while Call and Read stand at the left of theirs."""
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="everything", command=everything_cmd()))
        await connected(conn)
        await until(lambda: conn.session.listings["prompts"].loaded, 20, "the prompts")
        window.tabs.setCurrentWidget(window.prompts_pane)
        pane = window.prompts_pane
        pane.view.setCurrentIndex(pane.model.index(0, 0))
        button, title = find(window, QPushButton, "getPromptButton"), find(window, QLabel, "promptTitle")
        await until(lambda: button.isVisible() and title.isVisible(), 5, "the prompt's detail")
        await until(lambda: abs(button.mapTo(window, button.rect().topLeft()).x()
                                - title.mapTo(window, title.rect().topLeft()).x()) <= 6, 5,
                    "Get prompt at the detail's left edge")
