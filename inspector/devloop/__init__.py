"""The development loop: restart on save, reconnect when back, re-run and compare (no Qt)."""

from .loop import DevLoop, Rerun, answer_of, compare, watchable
from .watch import Burst, Plan, Watcher, WatchSettings, default_folder, default_patterns, language, plan

__all__ = ["Burst", "DevLoop", "Plan", "Rerun", "WatchSettings", "Watcher", "answer_of", "compare",
           "default_folder", "default_patterns", "language", "plan", "watchable"]
