"""`python -m phblab`: the same as the `phblab` command."""

import sys

from phblab.cli import main

if __name__ == "__main__":
    sys.exit(main())
