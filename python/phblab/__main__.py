"""`python -m phblab`: the same as the `phblab` command."""

from phblab.cli import entry

if __name__ == "__main__":
    entry()
