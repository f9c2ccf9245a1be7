"""What produced an outcome: the git commit of phblab's source tree and
the date of the run, recorded in each entry's comparison.json so that a
rendered catalog says which code measured each figure."""

from __future__ import annotations

import datetime as _dt
import subprocess
from pathlib import Path

#: the repository root, if phblab runs from its checkout (python/phblab/catalog/ in it)
_ROOT = Path(__file__).resolve().parents[3]


def source_commit(root: Path = _ROOT) -> str | None:
    """The commit phblab's checkout at `root` is at, with "+dirty" when its
    tracked files have changes not committed; None when phblab does not run
    from a git checkout of its own (an installed package) or git is absent."""
    if not (root / "python" / "phblab" / "catalog").is_dir():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--show-toplevel", "HEAD"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if head.returncode != 0:
            return None
        top, commit = head.stdout.split()
        if Path(top).resolve() != root.resolve():
            return None  # root is not a checkout's top: the package sits inside another repository
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    dirty = status.returncode != 0 or bool(status.stdout.strip())
    return commit + ("+dirty" if dirty else "")


def run_date() -> str:
    """Now, in UTC, to the second: "2026-11-24T16:05:09Z"."""
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
