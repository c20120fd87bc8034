"""Traffic in the window: `model` (`TrafficModel`, Wireshark style), `pane` (`TrafficPane`: filter bar,
table, the selected frame; `detail_header`: its header line beside its buttons), `recorder`
(`TrafficRecorder`: the window's session store and flush), `timeline` (`TimelineView`: each server's requests
in time, latency per method) and `composer` (`FrameDialog`: the raw composer and the Edit and resend editor)."""

__all__ = ["composer", "detail_header", "model", "pane", "recorder", "timeline"]
