import sys

from gammonclock.cli.main import main

sys.exit(main())
