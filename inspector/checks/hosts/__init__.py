"""Will this server work in Claude, ChatGPT, Cursor, VS Code...? Host profiles as data (`profile`), each
tool as a host's model receives it (`seen`), and a verdict per host (`verdict`) from the server's listings
and what its calls were seen to do (`observe`). Qt-free: `spyglass check --host` and the window's Hosts
view both use it (docs/hosts.md)."""
