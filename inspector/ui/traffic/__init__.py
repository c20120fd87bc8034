"""Traffic in the window: `model` (`TrafficModel`, Wireshark style), `pane` (`TrafficPane`: filter bar,
table, the selected frame), `recorder` (`TrafficRecorder`: the window's session store and flush) and `timeline`
(`TimelineView`: each server's requests in time, latency per method)."""

__all__ = ["model", "pane", "recorder", "timeline"]
