"""The tap (no Qt): watching a real host talk to its server. `record` writes what the tap sees to a
session file as it goes and feeds a running window live; `stdio` is the pass-through a host launches
instead of its server; `http` is the reverse proxy for a remote server; `install` rewrites a host's
config so one of its servers runs through the tap, and restores it exactly."""
