"""What an agent drives: named connections kept open between commands (`hub.Hub`) and the operations on them
(`ops.Ops`: list, call with arguments checked first, read, prompt, complete, traffic through the
display-filter language, check, save, compare, log); the MCP tools over them (`tools.py`), served by the
SDK (`server.py`, for `spyglass mcp`) and by the per-user background process (`daemon.py`) that
`spyglass do` reaches (`remote.py`, light: standard library and `private` only); putting `spyglass mcp`
into an agent's configuration and its skill (`setup.py`, `SKILL.md`). `errors.AgentError` is every
refusal. No Qt here; nothing is imported here, so `spyglass do` loads only what it uses."""
