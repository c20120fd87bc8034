"""Trying a server's tools with a language model, with no Qt: a connection to a chat endpoint (any
OpenAI-compatible chat-completions API, or the Anthropic Messages API) through the providers' own
clients (`providers.py`), one provider-neutral streamed turn (`types.py`), every exchange with the model
recorded as traffic of kind `model` with the key masked (`wire.py`), the playground's conversation that
runs the tools a model calls (`conversation.py`), and which tool a model picks for a plain request, run
N times and judged (`choice.py`: the Tool choice view and a collection's `ask` steps)."""

from .types import (
    ANTHROPIC,
    APIS,
    OPENAI,
    Finished,
    Message,
    ModelConnection,
    ModelError,
    TextDelta,
    ToolCall,
    ToolCallSeen,
    ToolSpec,
    Usage,
)

__all__ = ["ANTHROPIC", "APIS", "OPENAI", "Finished", "Message", "ModelConnection", "ModelError", "TextDelta",
           "ToolCall", "ToolCallSeen", "ToolSpec", "Usage"]
