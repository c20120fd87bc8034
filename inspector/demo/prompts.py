"""The demo's prompt templates and their argument completions."""

from __future__ import annotations

from typing import TypedDict

from . import resources
from .wire import INVALID_PARAMS, JsonObject, RpcError


class PromptArgument(TypedDict):
    name: str
    title: str
    description: str
    required: bool


class Prompt(TypedDict):
    name: str
    title: str
    description: str
    arguments: list[PromptArgument]


STYLES = {
    "formal": "Good day, {name}. It is a pleasure to make your acquaintance.",
    "casual": "Hey {name}! Great to see you.",
    "pirate": "Ahoy, {name}! Welcome aboard, ye scallywag!",
}

LANGUAGES = [
    "bash", "c", "c#", "c++", "clojure", "go", "haskell", "java", "javascript", "kotlin",
    "lua", "python", "ruby", "rust", "scala", "sql", "swift", "typescript",
]

PROMPTS: list[Prompt] = [
    {
        "name": "greeting",
        "title": "Friendly greeting",
        "description": "Asks the model to greet someone in a chosen style.",
        "arguments": [
            {"name": "name", "title": "Name", "description": "Who should be greeted", "required": True},
            {"name": "style", "title": "Style", "description": "formal, casual or pirate",
             "required": False},
        ],
    },
    {
        "name": "code_review",
        "title": "Code review",
        "description": "Asks the model to review a snippet against the demo style guide.",
        "arguments": [
            {"name": "language", "title": "Language",
             "description": "Programming language of the snippet (completion available)",
             "required": False},
            {"name": "code", "title": "Code", "description": "The code to review", "required": True},
        ],
    },
]

_BY_NAME = {p["name"]: p for p in PROMPTS}


def _text(role: str, text: str) -> JsonObject:
    return {"role": role, "content": {"type": "text", "text": text}}


def get_prompt(name: str, arguments: JsonObject) -> JsonObject:
    """Render prompt ``name``; raises -32602 for unknown prompts or bad arguments."""
    prompt = _BY_NAME.get(name)
    if prompt is None:
        raise RpcError(INVALID_PARAMS, f"Unknown prompt: {name}")
    if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
        raise RpcError(INVALID_PARAMS, "Prompt arguments must be an object of strings")
    missing = [a["name"] for a in prompt["arguments"] if a["required"] and not arguments.get(a["name"])]
    if missing:
        raise RpcError(INVALID_PARAMS, f"Missing required argument(s) for {name}: {', '.join(missing)}")

    if name == "greeting":
        style = arguments.get("style") or "casual"
        if style not in STYLES:
            raise RpcError(INVALID_PARAMS, f"Unknown style {style!r}; use one of {', '.join(STYLES)}")
        who = arguments["name"]
        return {
            "description": f"A {style} greeting for {who}",
            "messages": [
                _text("user", f"Please greet {who} in a {style} style."),
                _text("assistant", STYLES[style].format(name=who)),
            ],
        }

    language = arguments.get("language") or "python"
    guide = resources.read("demo://docs/style-guide.md")[0]
    return {
        "description": f"Review of a {language} snippet",
        "messages": [
            _text("user", f"Please review this {language} code:\n\n```{language}\n{arguments['code']}\n```"),
            {"role": "user", "content": {"type": "resource", "resource": guide}},
            _text("assistant", "Happy to. I will check it against the style guide above and list "
                               "concrete suggestions, most important first."),
        ],
    }


def complete(name: str, argument: str, value: str) -> list[str] | None:
    """Suggestions for a prompt argument, or None if the prompt is unknown."""
    if name not in _BY_NAME:
        return None
    prefix = value.lower()
    if name == "greeting" and argument == "style":
        return [s for s in STYLES if s.startswith(prefix)]
    if name == "code_review" and argument == "language":
        return [lang for lang in LANGUAGES if lang.startswith(prefix)]
    return []
