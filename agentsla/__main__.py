"""Allow `python -m agentsla`."""

import sys

from agentsla.cli import main

sys.exit(main())
