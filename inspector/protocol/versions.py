"""Protocol revisions Spyglass speaks, and the two eras they belong to."""

from __future__ import annotations

from enum import Enum

MODERN_VERSION = "2026-07-28"
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_LEGACY = LEGACY_VERSIONS[0]
SUPPORTED_VERSIONS = (MODERN_VERSION, *LEGACY_VERSIONS)

META_PREFIX = "io.modelcontextprotocol/"
META_PROTOCOL_VERSION = META_PREFIX + "protocolVersion"
META_CLIENT_CAPABILITIES = META_PREFIX + "clientCapabilities"
META_CLIENT_INFO = META_PREFIX + "clientInfo"
META_LOG_LEVEL = META_PREFIX + "logLevel"
META_SERVER_INFO = META_PREFIX + "serverInfo"

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class Era(str, Enum):
    LEGACY = "legacy"
    MODERN = "modern"


def era_of(version: str) -> Era:
    """The era of a protocol revision string (dates sort as strings)."""
    return Era.MODERN if version >= MODERN_VERSION else Era.LEGACY


def is_supported(version: object) -> bool:
    return isinstance(version, str) and version in SUPPORTED_VERSIONS


def best_common(offered: object) -> str | None:
    """The newest revision in `offered` (a list from the peer) that we also speak."""
    if not isinstance(offered, list):
        return None
    common = [v for v in offered if isinstance(v, str) and v in SUPPORTED_VERSIONS]
    return max(common) if common else None
