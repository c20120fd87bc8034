"""What an agent drives: named connections kept open between commands (`Hub`, hub.py) and the operations on
them (`Ops`, ops.py: list, call with arguments checked first, read, prompt, complete, traffic through the
display-filter language, check, save, compare, log). Shared by `spyglass mcp` and the `spyglass do`
background process. No Qt here."""

from .hub import AgentError, Connection, Hub, error_of
from .ops import Gate, Ops, allow_all, refuse_writes, spelled

__all__ = ["AgentError", "Connection", "Gate", "Hub", "Ops", "allow_all", "error_of", "refuse_writes", "spelled"]
