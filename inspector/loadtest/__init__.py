"""Load tests beyond one machine, with Locust (docs/load.md#locust): locustfiles written from a load run or a
collection (`locustfile`), Locust's CSV statistics read back and compared with a local run (`locust_stats`).

`locust_user` is the MCP user class Locust runs; only Locust imports it (it needs the `mcp-spyglass[locust]`
extra, and Locust's gevent patches the process that imports it), so this package's surface leaves it out.
"""

from .locustfile import Scenario, Step, load_scenario, render, write

__all__ = ["Scenario", "Step", "load_scenario", "render", "write"]
