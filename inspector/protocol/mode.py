"""What protocol the user asked for: auto, legacy, modern, or one exact revision."""

from __future__ import annotations

from dataclasses import dataclass

from .versions import LATEST_LEGACY, SUPPORTED_VERSIONS, Era, era_of


@dataclass(frozen=True)
class Mode:
    """What the user asked for: auto, legacy, modern, or one exact revision."""

    kind: str  # "auto" | "legacy" | "modern" | "version"
    version: str | None = None

    @classmethod
    def parse(cls, text: str) -> Mode:
        text = (text or "auto").strip()
        if text in ("auto", "legacy", "modern"):
            return cls(text)
        if text in SUPPORTED_VERSIONS:
            return cls("modern" if era_of(text) is Era.MODERN else "version", text)
        raise ValueError(
            f"unknown protocol mode {text!r}: use auto, legacy, modern or one of {', '.join(SUPPORTED_VERSIONS)}"
        )

    @property
    def legacy_version(self) -> str:
        return self.version if self.kind == "version" and self.version else LATEST_LEGACY
