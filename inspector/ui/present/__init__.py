"""Presentation mode: a server's tools shown to people who do not program. `view` (`PresentView`, the stage),
`cards` (the tools as cards), `friendly_form` (the friendly presentation of `SchemaForm`), `answer` (the answer
card), `question` (a question the server asks during a call, on the stage) and `words` (what every part says,
in plain words; no Qt)."""

__all__ = ["answer", "cards", "friendly_form", "question", "view", "words"]
