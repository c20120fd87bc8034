"""MCP Apps read as data: a tool's app and visibility, a resource's sandbox metadata, the CSP built from
it, and a `resources/read` answer checked before anything renders it. Pure: no loop, no Qt."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.protocol import apps

VANILLA_TOOL = {"name": "get-time", "inputSchema": {"type": "object"},
                "_meta": {"ui": {"resourceUri": "ui://get-time/mcp-app.html"},
                          "ui/resourceUri": "ui://get-time/mcp-app.html"}}


def test_a_tool_names_its_app_in_either_key_and_the_new_one_wins():
    ui = apps.tool_ui(VANILLA_TOOL)
    assert ui is not None and ui.resource_uri == "ui://get-time/mcp-app.html" and not ui.problems
    assert ui.visibility == ("model", "app") and not ui.visibility_declared
    flat = apps.tool_ui({"name": "t", "_meta": {"ui/resourceUri": "ui://flat/app.html"}})
    assert flat is not None and flat.resource_uri == "ui://flat/app.html" and flat.legacy_key
    both = apps.tool_ui({"name": "t", "_meta": {"ui": {"resourceUri": "ui://a"}, "ui/resourceUri": "ui://b"}})
    assert both is not None and both.resource_uri == "ui://a" and "names another resource" in both.problems[0]
    assert apps.tool_ui({"name": "plain"}) is None and apps.tool_ui({"name": "t", "_meta": {}}) is None
    assert apps.has_app(VANILLA_TOOL) and not apps.has_app({"name": "plain"})


def test_a_uri_that_is_not_ui_is_refused_with_the_reason():
    ui = apps.tool_ui({"name": "t", "_meta": {"ui": {"resourceUri": "https://evil.example/app.html"}}})
    assert ui is not None and ui.resource_uri is None
    assert ui.problems == ("_meta.ui.resourceUri is not a ui:// URI: https://evil.example/app.html",)
    odd = apps.tool_ui({"name": "t", "_meta": {"ui": "ui://x"}})
    assert odd is not None and "not an object" in odd.problems[0]


@pytest.mark.parametrize("visibility, only_app, callable_", [
    (None, False, True), (["model", "app"], False, True), (["app"], True, True), (["model"], False, False),
    ([], True, False), (["model", "internal"], False, False), ("app", True, False), ([1], True, False),
])
def test_visibility_rules(visibility, only_app, callable_):
    ui: dict = {"resourceUri": "ui://x"}
    if visibility is not None:
        ui["visibility"] = visibility
    tool = {"name": "t", "_meta": {"ui": ui}}
    assert apps.app_only(tool) is only_app
    assert apps.callable_by_app(tool) is callable_
    assert apps.callable_by_app({"name": "plain"})  # a tool that says nothing is the model's and the app's


def test_why_an_app_may_not_call_a_tool():
    tools = {"get-time": VANILLA_TOOL, "secret": {"name": "secret", "_meta": {"ui": {"visibility": ["model"]}}}}
    assert apps.refusal("get-time", tools) is None
    assert "not visible to apps" in apps.refusal("secret", tools) and "['model']" in apps.refusal("secret", tools)
    assert "lists no tool named 'other-server-tool'" in apps.refusal("other-server-tool", tools)
    assert apps.refusal(None, tools) == "tools/call names no tool"


def test_the_default_csp_is_the_specs_restrictive_one():
    csp = apps.build_csp(apps.csp_domains(None))
    assert csp == apps.DEFAULT_CSP
    for directive in ("default-src 'none'", "connect-src 'none'", "frame-src 'none'", "object-src 'none'",
                      "img-src 'self' data:", "script-src 'self' 'unsafe-inline'"):
        assert directive in csp
    assert apps.build_csp(apps.csp_domains({})) == apps.DEFAULT_CSP  # declared, but nothing outside


def test_declared_domains_reach_their_directives_and_nothing_else():
    domains = apps.csp_domains({"connectDomains": ["https://api.example.com", "wss://live.example.com"],
                                "resourceDomains": ["https://*.cdn.example.com"],
                                "frameDomains": ["https://www.youtube.com"], "baseUriDomains": ["https://base.example"],
                                "wasmUnsafeEval": True})
    csp = dict(d.strip().split(" ", 1) for d in apps.build_csp(domains).split(";"))
    assert csp["connect-src"] == "https://api.example.com wss://live.example.com"
    assert csp["script-src"] == "'self' 'unsafe-inline' 'wasm-unsafe-eval' https://*.cdn.example.com"
    assert csp["img-src"] == "'self' data: https://*.cdn.example.com"
    assert csp["frame-src"] == "https://www.youtube.com" and csp["base-uri"] == "https://base.example"
    assert csp["default-src"] == "'none'" and csp["object-src"] == "'none'"
    assert domains.as_meta()["connectDomains"] == ["https://api.example.com", "wss://live.example.com"]


@pytest.mark.parametrize("entry", [
    "https://ok.example; script-src *", "*", "https:", "'unsafe-eval'", "https://a.example 'unsafe-eval'",
    "javascript:alert(1)", "file:///etc", "data:", "https://exa\nmple.com", 42, None,
])
def test_an_entry_that_could_widen_the_policy_is_left_out_and_said(entry):
    domains = apps.csp_domains({"connectDomains": [entry, "https://fine.example"]})
    assert domains.connect == ("https://fine.example",)
    assert len(domains.ignored) == 1 and "not an origin" in domains.ignored[0]
    assert "connect-src https://fine.example;" in apps.build_csp(domains)


@given(st.lists(st.text(max_size=40), max_size=6))
def test_whatever_is_declared_no_directive_is_injected(entries):
    csp = apps.build_csp(apps.csp_domains({k: entries for k in apps.CSP_KEYS}))
    names = [d.strip().split(" ", 1)[0] for d in csp.split(";")]
    assert len(names) == len(set(names))
    assert set(names) <= {"default-src", "script-src", "style-src", "img-src", "font-src", "media-src",
                          "connect-src", "frame-src", "object-src", "base-uri"}
    assert "'unsafe-eval'" not in csp and "\n" not in csp


def test_the_read_contents_meta_wins_over_the_listing_entry_whole():
    listing = {"uri": "ui://a", "_meta": {"ui": {"csp": {"connectDomains": ["https://list.example"]},
                                                 "prefersBorder": True}}}
    content = {"uri": "ui://a", "_meta": {"ui": {"permissions": {"camera": {}, "clipboardWrite": {}}}}}
    ui = apps.resource_ui(listing, content)
    assert ui.source == "content" and ui.permissions == ("camera", "clipboard-write")
    assert not ui.csp.declared and ui.prefers_border is None  # a whole-object fallback, not a merge
    listed = apps.resource_ui(listing, {"uri": "ui://a"})
    assert listed.source == "listing" and listed.csp.connect == ("https://list.example",) and listed.prefers_border
    assert apps.resource_ui(None, {"meta": {"ui": {"domain": "x.example"}}}).domain == "x.example"  # the SDK quirk
    odd = apps.resource_ui(None, {"_meta": {"ui": {"permissions": {"teleport": {}}, "prefersBorder": "yes"}}})
    assert odd.permissions == () and len(odd.problems) == 2
    assert apps.allow_attribute(("clipboard-write", "camera")) == "camera; clipboard-write"


def read(**content):
    return {"contents": [{"uri": "ui://a/app.html", "mimeType": apps.MIME_TYPE, **content}]}


def test_a_good_document_text_or_blob():
    doc = apps.app_document("ui://a/app.html", read(text="<!doctype html><p>hi</p>"))
    assert doc.html.startswith("<!doctype") and doc.csp == apps.DEFAULT_CSP and doc.size == 24
    blob = base64.b64encode("<p>é</p>".encode()).decode()
    assert apps.app_document("ui://a/app.html", read(blob=blob)).html == "<p>é</p>"


@pytest.mark.parametrize("uri, result, title, words", [
    ("https://x", read(text="<p>"), "Not an app resource", "not a ui:// URI"),
    ("ui://a/app.html", {"contents": []}, "The app resource is empty", "no contents"),
    ("ui://a/app.html", {"contents": [{"text": "a", "mimeType": apps.MIME_TYPE}] * 2}, "ambiguous", "2 contents"),
    ("ui://a/app.html", read(mimeType="text/plain", text="x"), "Not an MCP App", "not HTML"),
    ("ui://a/app.html", read(mimeType="text/html", text="<p>"), "Not an MCP App", "without the mcp-app profile"),
    ("ui://a/app.html", read(mimeType=None, text="<p>"), "Not an MCP App", "no mimeType"),
    ("ui://a/app.html", read(text="x" * 101), "The app is too big", "101 bytes"),
    ("ui://a/app.html", read(blob="!!notbase64"), "broken", "not valid base64"),
    ("ui://a/app.html", read(blob=base64.b64encode(b"\xff\xfe").decode()), "broken", "not UTF-8"),
    ("ui://a/app.html", read(), "broken", "neither text nor blob"),
    ("ui://a/app.html", read(text="   "), "empty", "empty document"),
    ("ui://a/app.html", "nonsense", "The app resource is empty", "no contents"),
])
def test_a_bad_app_resource_says_what_is_wrong(uri, result, title, words):
    with pytest.raises(apps.AppProblem) as caught:
        apps.app_document(uri, result, limit=100)
    assert title in caught.value.title and words in caught.value.detail


def test_the_listing_entry_supplies_a_missing_mime_type():
    content = {"contents": [{"uri": "ui://a", "text": "<p>"}]}
    assert apps.app_document("ui://a", content, {"uri": "ui://a", "mimeType": apps.MIME_TYPE}).html == "<p>"
    assert apps.check_mime('text/html; profile="mcp-app"') is None
