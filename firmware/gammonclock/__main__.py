"""`python -m gammonclock`: the same command line as `gammonclock` (cli/main.py)."""

import sys

from gammonclock.cli.main import main

sys.exit(main())
