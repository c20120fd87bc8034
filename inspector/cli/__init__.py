"""The headless command line: never imports Qt, starts fast, runs where there are no Qt libraries.

`spyglass --cli ...` (oneshot.py) runs one request. What every headless command shares — naming and
reaching the server, authorization flags, the trace file, printing server text safely — is in
common.py, auth.py, answers.py and output.py.
"""

from .common import TraceWriter, pairs, parse_with_command, server_spec
from .oneshot import main

__all__ = ["TraceWriter", "main", "pairs", "parse_with_command", "server_spec"]
