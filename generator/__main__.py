"""Run the CLI as ``python -m generator``."""

import sys

from generator.cli.commands import main

sys.exit(main())
