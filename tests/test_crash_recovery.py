"""Nothing is lost: kill the app with SIGKILL in the middle of a flood, reopen its
session, and find every frame up to the last flush, in order, without a gap."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

from support import HOSTILE, PY, ROOT


def test_sigkill_mid_flood_keeps_every_flushed_frame(tmp_path):
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "QT_QPA_PLATFORM": "offscreen", "SPYGLASS_CONFIG_DIR": str(tmp_path / "config")}
    app = subprocess.Popen([PY, "-m", "inspector", "--protocol", "legacy", "--", PY, str(HOSTILE),
                            "flood-at-start", "400000"], cwd=str(ROOT), env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    sessions = tmp_path / "data" / "spyglass" / "sessions"
    try:
        deadline = time.monotonic() + 60
        # wait until a good part of the flood is on disk, then pull the plug
        while time.monotonic() < deadline:
            files = list(sessions.glob("*.sqlite")) if sessions.exists() else []
            if files and sum(f.stat().st_size for f in sessions.iterdir()) > 3_000_000:
                break
            assert app.poll() is None, app.stderr.read().decode()[-2000:]
            time.sleep(0.05)
        else:
            raise AssertionError("the session file never grew")
        os.killpg(app.pid, signal.SIGKILL)
        app.wait(10)
    finally:
        try:
            os.killpg(app.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        app.stderr.close()
    time.sleep(1.0)  # the session writer commits what it was handed, then exits
    # The server saw its stdin close when Spyglass died, and ended too.
    import psutil

    deadline = time.monotonic() + 10
    left = ["?"]
    while left and time.monotonic() < deadline:
        left = [p.pid for p in psutil.process_iter(["cmdline"])
                if "flood-at-start" in " ".join(p.info["cmdline"] or []) and p.status() != psutil.STATUS_ZOMBIE]
        time.sleep(0.1)
    assert not left, f"the server outlived the killed app: {left}"

    from inspector.traffic import TrafficStore

    path = next(sessions.glob("*.sqlite"))
    store = TrafficStore.open_session(path)
    try:
        numbers = []
        for n in range(len(store)):
            if store.method(n) == "notifications/message":
                m = re.search(rb"flood (\d+)/400000", store.raw(n))
                numbers.append(int(m.group(1)))
        assert len(numbers) > 1000, len(numbers)
        assert numbers == list(range(1, len(numbers) + 1)), "a frame is missing or out of order"
        assert len(numbers) < 400000  # the kill did come mid-flood
    finally:
        store.close()
