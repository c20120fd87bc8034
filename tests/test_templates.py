import pytest

from inspector.templates import TemplateError, check, expand


@pytest.mark.parametrize("template, names", [
    ("demo://notes/{note_id}", ["note_id"]),
    ("file:///{+path}{?q,lang}{#frag}", ["path", "q", "lang", "frag"]),
    ("x{/seg*}{;p:3}{.ext}{&more}", ["seg", "p", "ext", "more"]),
])
def test_valid_templates_name_their_variables(template, names):
    assert check(template) == names


@pytest.mark.parametrize("template, words", [
    ("demo://{", "never closed"), ("x/}{a}", "unmatched"), ("x/{}", "empty expression"),
    ("x/{a b}", "not a valid variable name"), ("x/{!a}", "reserved"), ("x/{a:0}", "prefix length"),
    ("x/{a{b}}", "nested"), ("a b/{x}", "not allowed"), ("", "empty"),
])
def test_invalid_templates_say_why(template, words):
    with pytest.raises(TemplateError, match=words):
        check(template)


def test_expansion_covers_the_operators():
    assert expand("demo://notes/{note_id}", {"note_id": "a b"}) == "demo://notes/a%20b"
    assert expand("file:///{+path}{?q,lang}", {"path": "a/b c", "q": "x", "lang": ""}) == "file:///a/b%20c?q=x"
    assert expand("x{/seg*}{#f}", {"seg": ["a", "b"], "f": "top"}) == "x/a/b#top"
