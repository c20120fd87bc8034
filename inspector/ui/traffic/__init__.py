"""Traffic in the window: `model` (`TrafficModel`, Wireshark style), `pane` (`TrafficPane`: filter bar,
table, the selected frame) and `recorder` (`TrafficRecorder`: the window's session store and flush)."""

__all__ = ["model", "pane", "recorder"]
