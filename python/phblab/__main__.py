"""`python -m phblab`: the same as the `phblab` command."""

import sys

from phblab.cli import main

sys.exit(main())
