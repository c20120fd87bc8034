"""`--cli` and MCP Apps: the app resource of a tool is listed as sent (`_meta.ui`), said in `--format human`,
and `resources/read` of a `ui://` resource prints the app's HTML (the window is where apps run)."""

from __future__ import annotations

import base64

from support import app_cmd
from test_cli import out_json, spyglass

from inspector.cli.output import as_text


def test_tools_list_shows_the_app_resource_as_sent():
    proc = spyglass("--method", "tools/list", "--", *app_cmd("debug"))
    assert proc.returncode == 0, proc.stderr
    tools = {t["name"]: t for t in out_json(proc)["tools"]}
    assert tools["debug-tool"]["_meta"]["ui"] == {"resourceUri": "ui://debug-tool/mcp-app.html"}
    assert tools["debug-refresh"]["_meta"]["ui"]["visibility"] == ["app"]
    text = spyglass("--format", "human", "--", *app_cmd("debug")).stdout
    assert "debug-tool (Debug Tool)\t" in text and "\t[app ui://debug-tool/mcp-app.html]" in text
    assert "[app ui://debug-tool/mcp-app.html] [app-only]" in text.splitlines()[1]


def test_resources_read_prints_the_html():
    proc = spyglass("--format", "human", "--method", "resources/read", "--uri", "ui://get-time/mcp-app.html", "--",
                    *app_cmd("basic-vanillajs"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("<!DOCTYPE html>") and "<title>Get Time App</title>" in proc.stdout
    raw = spyglass("--method", "resources/read", "--uri", "ui://get-time/mcp-app.html", "--",
                   *app_cmd("basic-vanillajs"))
    [content] = out_json(raw)["contents"]
    assert content["mimeType"] == "text/html;profile=mcp-app" and content["text"].startswith("<!DOCTYPE html>")


def test_an_apps_html_sent_as_a_blob_is_printed_as_html():
    html = "<!doctype html><p>é</p>"
    blob = {"contents": [{"uri": "ui://a", "mimeType": "text/html;profile=mcp-app",
                          "blob": base64.b64encode(html.encode()).decode()}]}
    assert as_text("resources/read", blob) == html + "\n"
    other = {"contents": [{"uri": "x", "mimeType": "image/png", "blob": "AAAA"}]}
    assert as_text("resources/read", other) == "[blob x]\n"
    listed = as_text("tools/list", {"tools": [{"name": "t", "_meta": {"ui": {"visibility": ["app"]}}}]})
    assert listed == "t\t\t[app-only]\n"
