"""`python -m benchmarks.load ...`: the class from the command line (see benchmarks.load.cli)."""

import sys

from benchmarks.load.cli import main

sys.exit(main())
