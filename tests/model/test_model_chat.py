"""The model layer against the scripted endpoints of tests/model_peers.py (no network beyond loopback): a
streamed turn of text and of a tool call through both providers' clients, the models listed, each way an
endpoint can fail said in a sentence, the conversation that checks and runs the calls a model makes and
stays usable after every failure, Tool choice's counts and verdicts, and every exchange recorded as
traffic of kind `model` with the key masked."""

from __future__ import annotations

import asyncio
import json

import pytest
from model_peers import MODELS, AnthropicPeer, OpenAIPeer, closing_port, offered_tools

from inspector.model import Finished, Message, ModelConnection, ModelError, TextDelta, ToolCall, Usage
from inspector.model.choice import Case, judge_pick, pick, run_cases, subset_misses
from inspector.model.conversation import CallOutcome, Conversation, check_call
from inspector.model.providers import open_chat
from inspector.model.types import key_name, offered_name, result_text, tool_specs
from inspector.recording.files import export_session, open_session
from inspector.recording.surface import surfaces
from inspector.traffic import FilteredView, TrafficFilter, TrafficStore

KEY = "sk-test-secret-1234"
WEATHER = {"name": "weather", "description": "Weather for a city",
           "inputSchema": {"type": "object", "properties": {"city": {"type": "string"},
                                                            "units": {"enum": ["celsius", "fahrenheit"]}},
                           "required": ["city"]}}
DELETE = {"name": "delete_item", "description": "Deletes an item",
          "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}, "confirm": {"type": "boolean"}}},
          "annotations": {"destructiveHint": True}}
APP_ONLY = {"name": "refresh", "inputSchema": {"type": "object"}, "_meta": {"ui": {"visibility": ["app"]}}}
TOOLS = tool_specs({"demo": [WEATHER, DELETE, APP_ONLY]})


@pytest.fixture(scope="module")
def openai_peer():
    with OpenAIPeer(key=KEY) as peer:
        yield peer


@pytest.fixture(scope="module")
def anthropic_peer():
    with AnthropicPeer(key=KEY) as peer:
        yield peer


def connection(peer, timeout: float = 5.0) -> ModelConnection:
    return ModelConnection("scripted", peer.kind, peer.url, MODELS[1], timeout)


class Listener:
    """What the window would show of a turn."""

    def __init__(self) -> None:
        self.events: list = []
        self.checks: list = []
        self.outcomes: list = []

    def event(self, event) -> None:
        self.events.append(event)

    def checked(self, checked) -> None:
        self.checks.append(checked)

    def outcome(self, checked, outcome) -> None:
        self.outcomes.append((checked, outcome))


def listener() -> Listener:
    return Listener()


@pytest.mark.parametrize("which", ["openai", "anthropic"])
async def test_a_turn_streams_text_and_a_tool_call_with_token_counts(which, openai_peer, anthropic_peer):
    peer = openai_peer if which == "openai" else anthropic_peer
    chat = open_chat(connection(peer), KEY)
    try:
        assert await chat.models() == MODELS
        events = [e async for e in chat.stream([Message("system", "Be brief."), Message("user", "hello")], TOOLS)]
        deltas = [e.text for e in events if isinstance(e, TextDelta)]
        assert len(deltas) > 3 and "".join(deltas).startswith("Hello! I am a scripted model")  # streamed, in pieces
        finished = events[-1]
        assert isinstance(finished, Finished) and finished.tool_calls == [] and finished.usage is not None
        assert any(isinstance(e, Usage) and e.output_tokens for e in events)
        sent = peer.requests[-1]
        assert set(offered_tools(sent)) == {"weather", "delete_item"}  # an app-only tool is never offered
        events = [e async for e in chat.stream([Message("user", "weather in Paris?")], TOOLS)]
        call = events[-1].tool_calls[0]
        assert (call.name, call.arguments) == ("weather", {"city": "Paris"})
    finally:
        await chat.aclose()


@pytest.mark.parametrize("which", ["openai", "anthropic"])
async def test_each_failure_of_an_endpoint_is_a_sentence(which, openai_peer, anthropic_peer):
    peer = openai_peer if which == "openai" else anthropic_peer
    quick = open_chat(connection(peer, timeout=0.5), KEY)
    wrong_key = open_chat(connection(peer), "sk-wrong")
    nowhere = open_chat(ModelConnection("gone", which, f"http://127.0.0.1:{closing_port()}/v1", "m", 5), KEY)
    try:
        cases = {"garbage": "garbage", "server error": "refused", "slow": "timeout", "empty": "garbage"}
        for words, kind in cases.items():
            with pytest.raises(ModelError) as caught:
                await pick(quick, words, TOOLS)
            assert caught.value.kind == kind, (words, caught.value.message)
            assert "Traceback" not in caught.value.message and peer.url in caught.value.message
        with pytest.raises(ModelError) as caught:
            await pick(wrong_key, "hello", TOOLS)
        assert caught.value.kind == "auth" and caught.value.exit_code == 3 and "401" in caught.value.message
        assert "sk-wrong" not in caught.value.message
        with pytest.raises(ModelError) as caught:
            await nowhere.models()
        assert caught.value.kind == "connect" and caught.value.exit_code == 4
        assert caught.value.message.startswith("cannot reach the model endpoint")
    finally:
        for chat in (quick, wrong_key, nowhere):
            await chat.aclose()


@pytest.mark.parametrize("which", ["openai", "anthropic"])
async def test_the_conversation_runs_checked_calls_and_survives_every_bad_answer(which, openai_peer, anthropic_peer):
    peer = openai_peer if which == "openai" else anthropic_peer
    chat = open_chat(connection(peer, timeout=1.0), KEY)
    ran: list[tuple[str, dict, list]] = []

    async def run(spec, call, problems):
        ran.append((spec.server_tool, call.arguments, problems))
        return CallOutcome(result={"content": [{"type": "text", "text": f"sunny in {call.arguments.get('city')}"}]})

    talk = Conversation()
    shown = listener()
    try:
        last = await talk.send("What's the weather in Paris?", chat, TOOLS, run, shown)
        assert ran == [("weather", {"city": "Paris"}, [])]
        assert last.text == "The tool answered: sunny in Paris" and not last.tool_calls
        assert [m.role for m in talk.messages] == ["user", "assistant", "tool", "assistant"]
        # arguments that break the inputSchema run (the person sees the problems), unknown tools and
        # arguments that are not JSON never run: the model is told why, and the turn ends in words
        await talk.send("now with bad arguments", chat, TOOLS, run, shown)
        assert ran[-1][0] == "weather" and any("/units" in p for p in ran[-1][2]) and any("/city" in p for p in
                                                                                            ran[-1][2])
        for words, said in (("call an unknown tool", "not one of the tools it was offered"),
                            ("broken json please", "are not JSON")):
            before = len(ran)
            await talk.send(words, chat, TOOLS, run, shown)
            assert len(ran) == before
            checked, outcome = shown.outcomes[-1]
            assert said in outcome.error and said in talk.messages[-2].text and talk.messages[-2].is_error
        for words in ("garbage", "slow", "server error"):
            with pytest.raises(ModelError):
                await talk.send(words, chat, TOOLS, run, shown)
        await talk.send("hello again", chat, TOOLS, run, shown)  # still usable
        assert talk.messages[-1].text.startswith("Hello! I am a scripted model")
        assert len(talk.usage) >= 5
    finally:
        await chat.aclose()


async def test_an_endpoint_that_refuses_stream_options_is_asked_without_them():
    with OpenAIPeer(strict=True) as strict:
        chat = open_chat(connection(strict), None)
        try:
            for _ in range(2):
                got = await pick(chat, "weather in Paris", TOOLS)
                assert got.tool == "weather" and got.tokens is None  # no counts: the endpoint was not asked
            assert ["stream_options" in r for r in strict.requests] == [True, False, False]
            assert strict.headers[0]["authorization"] == "Bearer no-key"  # a local endpoint needs no key
        finally:
            await chat.aclose()


async def test_stopping_answers_every_call_the_model_made(openai_peer):
    chat = open_chat(connection(openai_peer), KEY)
    talk = Conversation()
    try:
        last = await talk.send("delete alpha", chat, TOOLS, lambda *a: None, listener(), stopped=lambda: True)
        assert last.tool_calls[0].name == "delete_item"
        assert talk.messages[-1].role == "tool" and "stopped" in talk.messages[-1].text
    finally:
        await chat.aclose()


async def test_tool_choice_counts_picks_and_judges_them(openai_peer):
    chat = open_chat(connection(openai_peer), KEY)
    progress = []
    try:
        cases = [Case("What's the weather in Paris?", "weather", {"city": "Paris"}),
                 Case("Delete user 42", "none"), Case("hello", "none"), Case("hesitate between two", "weather"),
                 Case("garbage", "weather")]
        results = await run_cases(chat, cases, TOOLS, 4, progress.append)
        assert [r.verdict for r in results] == ["right", "wrong", "right", "hesitant", "failed"]
        assert results[0].counts == {"weather": 4} and results[0].common_arguments() == {"city": "Paris"}
        assert results[1].counts == {"delete_item": 4}
        assert results[3].counts == {"weather": 2, "none": 2} and results[3].right == 2
        assert len(progress) == 20
        overridden = tool_specs({"demo": [WEATHER]}, {"weather": "Only for the Moon"})
        await pick(chat, "weather", overridden)
        assert offered_tools(openai_peer.requests[-1]) == {"weather": "Only for the Moon"}
        with pytest.raises(ModelError):
            await run_cases(open_chat(connection(openai_peer), "bad"), cases, TOOLS, 1)
    finally:
        await chat.aclose()


def test_what_an_ask_step_expects_and_how_a_pick_is_judged():
    got = asyncio.run(_pick_offline())
    assert judge_pick({"tool": "weather", "arguments": {"city": "Paris"}}, got) == []
    assert judge_pick({"tool": "none"}, got)[0][:2] == ("tool", "none")
    assert judge_pick({"arguments": {"city": "Oslo"}}, got) == [("arguments", {"city": "Oslo"},
                                                                 "/city: expected 'Oslo', got 'Paris'")]
    assert subset_misses({"a": {"b": 1}}, {"a": {"b": 1.0, "c": 2}}) == []
    assert subset_misses({"a": 1}, {}) == ["/a: missing"] and subset_misses({"a": 1}, [1])[0].startswith("/:")


async def _pick_offline():
    from inspector.model.choice import Pick

    return Pick("weather", {"city": "Paris", "units": "celsius"})


def test_a_key_never_reaches_a_message():
    from inspector.model.providers import scrub
    from inspector.secrets import MASK

    assert scrub("Incorrect API key provided: sk-proj-****abcd1234.", None) == f"Incorrect API key provided: {MASK}."
    assert scrub("bad key hunter2hunter2 here", "hunter2hunter2") == f"bad key {MASK} here"
    plain = "see https://api.anthropic.com/v1 and x-api-key"
    assert scrub(plain, None) == plain


def test_the_environments_proxy_applies_to_a_model_endpoint(monkeypatch):
    from inspector.model.providers import proxy_for

    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                 "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert proxy_for("https://api.openai.com/v1") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert proxy_for("https://api.openai.com/v1") == "http://proxy.example:3128"
    assert proxy_for("http://localhost:11434/v1") is None and proxy_for("http://127.0.0.1:1234/v1") is None


def test_names_results_and_saved_connections():
    assert offered_name("get weather!", "s", set()) == "get_weather_"
    assert offered_name("echo", "server two", {"echo"}) == "server_two__echo"
    assert offered_name("echo", "a", {"echo", "a__echo"}) == "a__echo_2"
    specs = tool_specs({"one": [WEATHER], "two": [WEATHER]})
    assert [(s.name, s.server_tool, s.server) for s in specs] == [("weather", "weather", "one"),
                                                                   ("two__weather", "weather", "two")]
    call = ToolCall.of("1", "weather", "[1, 2]")
    assert call.arguments is None and "not a JSON object" in call.problem
    assert check_call(ToolCall.of("1", "weather", "{}"), TOOLS).problems == ["/: 'city' is a required property"]
    text, failed = result_text({"content": [{"type": "text", "text": "a"}, {"type": "image", "mimeType": "image/png"},
                                            {"type": "resource", "resource": {"uri": "x://y"}}], "isError": True})
    assert (text, failed) == ("a\n[image image/png]\n[resource x://y]", True)
    assert result_text({"content": [], "structuredContent": {"t": 1}}) == ('{"t": 1}', False)
    assert result_text(None, "not called") == ("not called", True)
    saved = ModelConnection("local", "openai", "http://localhost:11434/v1/", "llama3.2", 30)
    assert ModelConnection.from_json(saved.as_json()) == saved and saved.key_name == key_name("http://localhost:11434/v1")
    assert ModelConnection.from_json({"name": "x", "api": "nope", "base_url": "u", "model": "m"}) is None
    assert ModelConnection.from_json({"name": "x", "api": "openai", "base_url": "u", "model": "m",
                                      "timeout": True}).timeout == 60.0


async def test_every_exchange_is_model_traffic_with_the_key_masked(openai_peer, anthropic_peer, tmp_path):
    store = TrafficStore()
    try:
        for peer in (openai_peer, anthropic_peer):
            chat = open_chat(connection(peer, 0.5), KEY, store.hook(f"model:{peer.kind}"))
            await pick(chat, "weather in Paris", TOOLS)
            with pytest.raises(ModelError):
                await pick(chat, "slow", TOOLS)
            await chat.aclose()
        nowhere = open_chat(ModelConnection("gone", "openai", f"http://127.0.0.1:{closing_port()}/v1", "m", 5), KEY,
                            store.hook("model:gone"))
        with pytest.raises(ModelError):
            await nowhere.models()
        await nowhere.aclose()
        records = [store.record(n) for n in range(len(store))]
        assert {r.kind for r in records} == {"model"}
        assert [r.direction for r in records] == ["to-model", "from-model"] * 5
        everything = json.dumps([r.meta for r in records], ensure_ascii=False)
        everything += b"".join(store.raw(n) for n in range(len(store))).decode()
        assert KEY not in everything and "Bearer ••••••" in everything
        request, answer = records[0], records[1]
        assert request.pair == 1 and answer.pair == 0 and request.method == "/v1/chat/completions"
        assert answer.meta["status"] == 200 and store.raw(1).startswith(b"data: ")
        assert "scripted-small · 2 messages · 2 tools · streamed" in store.summary(0)
        assert "→ weather" in store.summary(1)
        assert "broke off" in (records[3].malformed or "") or "closed before" in (records[3].malformed or "") or \
            "no answer" in (records[3].malformed or "")
        assert "no answer: ConnectError" in (records[9].malformed or "")
        for expr, count in (('kind == model', 10), ('dir == to-model', 5), ('server == "model:anthropic"', 4)):
            view = FilteredView(store, TrafficFilter.make(expr=expr))
            assert view.update(seconds=10) == count, expr
        # a shared .mcpsession keeps them, paired, and a reopened session's servers are not made of them
        path = tmp_path / "with-model.mcpsession"
        assert export_session(store, path) == 10
        opened = open_session(path)
        again = [opened.store.record(n) for n in range(len(opened.store))]
        assert [(r.kind, r.direction, r.pair) for r in again] == [(r.kind, r.direction, r.pair) for r in records]
        assert all(s.exchanges == [] for s in surfaces(opened.store).values())
        opened.store.close()
    finally:
        store.close()
