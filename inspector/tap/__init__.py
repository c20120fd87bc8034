"""The tap (no Qt): watching a real host talk to its server. `record` writes what the tap sees to a
session file as it goes and feeds a running window live; `stdio` is the pass-through a host launches
instead of its server; `http` is the reverse proxy for a remote server; `install` rewrites a host's
config so one of its servers runs through the tap, and restores it exactly; `session` is a tapped
conversation as a read-only server of the window; `intercept` (the tap's side) and `held` (the window's)
hold matching messages of a stdio tap for the user to edit, forward or drop."""
