"""The window's side of kept sessions: `window_link` (`WindowSessions`: the File menu's Open, Recent,
Import and Export session, *Compare with…* on a server), `session_window` (`SessionWindow`: a saved
session shown read-only, with its traffic and timeline), `surface_view` and `calls_view` (one server's
tabs, its calls with their results), `replay_view` (*Replay against…*), `mock_view` (*Serve as mock…*),
`compare_view` (*Compare with…*), `json_diff` (two JSON columns with the changed paths marked),
`export_dialog` and `sides` (the servers a replay or comparison can be made against)."""

__all__ = ["calls_view", "compare_view", "export_dialog", "json_diff", "mock_view", "replay_view", "session_window",
           "sides", "surface_view", "window_link"]
