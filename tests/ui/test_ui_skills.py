"""The Skills tab (SEP-2640) against tests/skills_server.py (the official SDK): shown only for a server that
declares the extension; the list, each skill's files and digests, Verify all with its verdicts, the SKILL.md
rendered as Markdown (or its source), and Save skill… writing the files as served."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QPushButton, QTreeWidget
from test_ui_resources import ready
from uikit import demo_cmd, find, shot, until

from inspector.config import ServerSpec
from inspector.session import Status

SERVER = [sys.executable, str(Path(__file__).parent.parent / "skills_server.py")]


def column(tree: QTreeWidget, col: int) -> list[str]:
    return [tree.topLevelItem(i).text(col) for i in range(tree.topLevelItemCount())]


async def test_skills_tab_lists_verifies_renders_and_saves(open_window, tmp_path):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="skills", command=SERVER))
        await ready(conn)
        tabs = window.tabs
        pane = window.skills.pane
        assert tabs.isTabVisible(tabs.indexOf(pane))
        tabs.setCurrentWidget(pane)
        listed = find(window, QTreeWidget, "skillsList")
        await until(lambda: listed.topLevelItemCount() == 4, 15, "the skills to be listed")
        assert column(listed, 0) == ["good-notes", "tampered-report", "live-status", "huge-atlas"]
        assert pane.count.text() == "4 skills"
        assert listed.topLevelItem(0).toolTip(0).startswith("<qt>")  # the server's words, never rich text

        pane.select("skill://good-notes/SKILL.md")
        files = find(window, QTreeWidget, "skillsFiles")
        assert column(files, 0) == ["SKILL.md", "reference.md"] and column(files, 2)[0].startswith("sha256:")
        content = pane.content
        assert content.objectName() == "skillsContent"
        await until(lambda: "Meeting notes" in content.toPlainText(), 10, "SKILL.md to be rendered")
        rendered = content.toPlainText()
        assert "name: good-notes" not in rendered and "**" not in rendered  # the body, as Markdown
        pane.source_button.setChecked(True)
        assert content.toPlainText().startswith("---\nname: good-notes")
        pane.source_button.setChecked(False)
        assert pane.verdict.text() == "Not verified yet: press Verify all."
        pane.content.linkShown.emit("https://example.com/x")  # what a click on a link says
        assert pane.status.text() == "Link: https://example.com/x (not opened)"
        pane.content.linkShown.emit("reference.md")  # a file of the skill: shown
        await until(lambda: "ana: send the draft" in content.toPlainText(), 10, "the linked file to be shown")
        assert pane.shown_uri == "skill://good-notes/reference.md"

        verify = find(window, QPushButton, "skillsVerify")
        assert verify.isEnabled()
        verify.click()
        await until(lambda: len(pane.reports) == 4 and not pane.verifying, 20, "every skill to be verified")
        assert column(listed, 1) == ["✓ verified", "✗ failed", "○ no digests", "… incomplete"]
        assert pane.summary.text().startswith("1 of 4 skills failed verification")
        assert column(files, 3) == ["✓ verified", "✓ verified"]
        assert pane.verdict.text().startswith("✓ verified — 2 files")

        pane.select("skill://tampered-report/SKILL.md")
        assert column(files, 3) == ["✓ verified", "✗ mismatch"]
        issues = find(window, QTreeWidget, "skillsIssues")
        assert column(issues, 1) == ["digest-mismatch"] and column(issues, 2) == ["data.csv"]
        assert pane.verdict.text() == "✗ failed — 1 problem, listed below."
        window.resize(1280, 860)
        await until(lambda: "Quarterly report" in content.toPlainText(), 10, "its SKILL.md to be rendered")
        await shot(window, "skills_tab")
        files.itemClicked.emit(files.topLevelItem(1), 0)
        await until(lambda: "Q1,900" in content.toPlainText(), 10, "data.csv to be shown as plain text")
        assert not pane.source_button.isEnabled()

        pane.select("skill://live-status/SKILL.md")
        assert pane.dynamic_note.isVisible() and pane.verdict.text().startswith("○ no digests")
        pane.select("skill://huge-atlas/SKILL.md")
        assert "Only 1 of 2 manifest entries were read" in pane.verdict.text()

        pane.select("skill://good-notes/SKILL.md")
        dialog = pane.choose_folder()
        assert isinstance(dialog, QFileDialog) and dialog.objectName() == "saveSkillDialog"
        dialog.reject()
        task = pane.save_to(tmp_path)
        await task
        saved = tmp_path / "good-notes"
        assert sorted(p.name for p in saved.iterdir()) == ["SKILL.md", "reference.md"]
        assert (saved / "SKILL.md").read_text().startswith("---\nname: good-notes\n")
        assert pane.status.text().startswith(f"Saved 2 files to {saved}.")
        await pane.save_to(tmp_path)
        assert "already exists" in pane.status.text()

        await conn.session.close()
        await until(lambda: conn.session.status is not Status.CONNECTED, 10, "the server to disconnect")
        assert not verify.isEnabled() and not pane.save_button.isEnabled()


async def test_a_server_without_skills_has_no_skills_tab(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await ready(conn)
        pane = window.skills.pane
        assert not window.tabs.isTabVisible(window.tabs.indexOf(pane))
        assert pane.conn is None and pane.list.topLevelItemCount() == 0


async def test_a_listing_that_cannot_be_read_is_said_in_the_tab(open_window):
    hostile = [sys.executable, str(Path(__file__).parent.parent / "hostile" / "skills_server.py")]
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="garbage", command=[*hostile, "--case", "garbage"]))
        await ready(conn)
        pane = window.skills.pane
        assert window.tabs.isTabVisible(window.tabs.indexOf(pane))  # a handshake-era server declaring skills
        await until(lambda: pane.message.text().startswith("skills/list failed:"), 10, "the failure to be said")
        assert "the result has no skills list" in pane.message.text()
        assert pane.list.topLevelItemCount() == 0 and not pane.verify_button.isEnabled()
        fine = window.add_server(ServerSpec(name="fine", command=hostile))
        await ready(fine)
        await until(lambda: pane.conn is fine and pane.list.topLevelItemCount() == 3, 10,
                    "the skills of the server added (and selected)")
        assert pane.message.isHidden()
