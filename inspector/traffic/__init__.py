"""Traffic records: every frame in either direction and every stderr line (no Qt)."""

from .frame import Frame

__all__ = ["Frame"]
