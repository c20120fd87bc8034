"""The window's side of the development loop: `watch_dialog` (`WatchDialog`: what a server's watch looks
at, and what runs again after a restart) and `rerun_view` (`RerunView`: each call run again after a
restart beside the answer before it, the differences marked)."""

__all__ = ["rerun_view", "watch_dialog"]
