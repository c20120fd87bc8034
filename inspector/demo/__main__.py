"""Entry point: ``python -m inspector.demo``."""

import sys

from .server import main

if __name__ == "__main__":
    sys.exit(main())
