"""The bundle's entry point (PyInstaller freezes this script): `spyglass` as installed by pip."""

import sys

from inspector.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
