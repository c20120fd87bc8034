"""Recognising and masking secrets: values of Authorization headers and of env vars named like
*TOKEN*, *KEY*, *SECRET*, *PASSWORD* never appear in the UI, in logs or in exports. No Qt."""

from __future__ import annotations

import re
from collections.abc import Mapping

MASK = "••••••"
_SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE", re.IGNORECASE)
# DPoP proofs are short-lived but replayable within their lifetime: masked too.
_SECRET_HEADERS = {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "dpop"}


def is_secret_name(name: str) -> bool:
    """Env var or header names whose values must never be shown."""
    return name.lower() in _SECRET_HEADERS or bool(_SECRET_NAME.search(name))


def mask_value(name: str, value: str) -> str:
    if not is_secret_name(name):
        return value
    if name.lower() in ("authorization", "proxy-authorization") and " " in value:
        scheme = value.split(" ", 1)[0]
        return f"{scheme} {MASK}"
    return MASK


def mask_mapping(items: Mapping[str, str]) -> dict[str, str]:
    return {k: mask_value(k, v) for k, v in items.items()}
