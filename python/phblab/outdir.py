"""Directories phblab writes into: what it wrote is recorded, only that is
ever replaced, and one writer at a time.

Every directory phblab writes (a run's results, a sweep, a reproduction
entry, the report) holds `manifest.json`, the list of the files phblab put
there with their size and SHA-256 digest. Writing into a directory:

1. **Claim.** The directory must be new, empty, or phblab's: it has a
   manifest, or (written by phblab before manifests existed) the file that
   marks its kind, e.g. `summary.json` for a run. Anything else is refused
   (`NotOurs`), so a mistyped `--out` never touches a user's directory.
2. **Lock.** An OS file lock on `.phblab.lock` in the directory, released
   on any exit of the process, keeps a second writer out (`Busy`).
3. **Stage.** The new files are written into a staging directory inside it
   (`.phblab-staging-<pid>`), so a crash leaves the old files whole.
4. **Commit.** The manifest is first rewritten in state `writing` (naming
   old and new files, so an interrupted commit is still known to be
   phblab's and incomplete), then each staged file replaces its target
   (`os.replace`, atomic per file), files of the previous manifest that
   the new set no longer has are removed, and the manifest is written in
   state `complete` with the new digests.

A file in the directory that phblab did not record (a user's `notes.txt`,
`plots/` from `phblab plot`) is never replaced or removed; a new file whose
name collides with such a file is refused. `verify` checks a directory
against its manifest; sweeps use it to decide which runs to reuse.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

MANIFEST = "manifest.json"
LOCK = ".phblab.lock"
STAGING_PREFIX = ".phblab-staging-"

#: the file that marks a directory of each kind written before manifests
LEGACY_MARKERS = {
    "run": "summary.json",
    "sweep": "sweep.json",
    "reproduce": "comparison.json",
    "report": ".phblab-report",
}

# Locks this process holds: resolved path -> open file. A second `lock` on
# the same directory from this process is a no-op (flock locks belong to an
# open file, so a second open would conflict with our own).
_HELD: dict[Path, object] = {}


class NotOurs(FileExistsError):
    """The directory, or a file in it, was not written by phblab."""


class Busy(RuntimeError):
    """Another process is writing into the directory."""


def _read_manifest(directory: Path) -> dict | None:
    path = directory / MANIFEST
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict):
        return None
    return doc


def _visible_entries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name != LOCK and not p.name.startswith(STAGING_PREFIX))


def claim(directory: str | os.PathLike, kind: str) -> None:
    """Raises `NotOurs` unless `directory` is absent, empty or phblab's (a
    manifest, or the legacy marker of `kind`)."""
    directory = Path(directory)
    if not directory.exists() and not directory.is_symlink():
        return
    if not directory.is_dir():
        raise NotOurs(f"{directory} exists and is not a directory; refusing to write there: choose another output")
    if _read_manifest(directory) is not None:
        return
    if (directory / LEGACY_MARKERS[kind]).is_file():
        return
    entries = _visible_entries(directory)
    if entries:
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        raise NotOurs(
            f"{directory} holds files phblab did not write ({shown}); refusing to write there: "
            "choose another output directory (or empty this one)"
        )


@contextlib.contextmanager
def lock(directory: str | os.PathLike) -> Iterator[None]:
    """Holds the directory's lock (creating the directory) for the `with`
    body; raises `Busy` if another process holds it."""
    import fcntl

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    key = directory.resolve()
    if key in _HELD:
        yield
        return
    f = open(directory / LOCK, "a+")
    try:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            f.seek(0)
            holder = f.read().strip() or "another process"
            raise Busy(
                f"{directory} is being written by {holder}; wait for it to finish or choose another output"
            ) from None
        f.seek(0)
        f.truncate()
        f.write(f"phblab (pid {os.getpid()})\n")
        f.flush()
        if _read_manifest(directory) is None and not _visible_entries(directory):
            _mark_new(directory)
        _HELD[key] = f
        try:
            yield
        finally:
            del _HELD[key]
    finally:
        f.close()  # closing the file releases the lock


def _mark_new(directory: Path) -> None:
    """Records a new (or empty) directory as phblab's before anything is
    written into it, so that what a long job puts there first (a sweep's
    `runs/`) is known to be phblab's if the job is interrupted."""
    from phblab import _core

    _write_manifest(directory, {"kind": None, "phblab_version": _core.version(), "state": "writing", "files": {}})


def digest(path: Path) -> dict:
    """A file's size and SHA-256, as the manifest records them."""
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
            size += len(chunk)
    return {"bytes": size, "sha256": h.hexdigest()}


def _staged_files(staging: Path) -> list[str]:
    return sorted(p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file())


def _write_manifest(directory: Path, doc: dict) -> None:
    tmp = directory / f"{MANIFEST}.tmp-{os.getpid()}"
    tmp.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, directory / MANIFEST)


def _commit(directory: Path, staging: Path, kind: str, version: str) -> None:
    old = _read_manifest(directory)
    old_files = set(old["files"]) if old is not None else set()
    legacy = old is None
    new = {name: digest(staging / name) for name in _staged_files(staging)}
    for name in new:
        target = directory / name
        if target.is_dir() and not target.is_symlink():
            raise NotOurs(f"{target} is a directory; refusing to replace it with a file")
        if (target.exists() or target.is_symlink()) and name not in old_files and not legacy:
            raise NotOurs(f"{target} was not written by phblab; refusing to replace it")
    pending = {name: None for name in old_files} | new
    _write_manifest(directory, {"kind": kind, "phblab_version": version, "state": "writing", "files": pending})
    for name in new:
        target = directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / name, target)
    for name in sorted(old_files - set(new)):
        with contextlib.suppress(FileNotFoundError):
            (directory / name).unlink()
    _write_manifest(directory, {"kind": kind, "phblab_version": version, "state": "complete", "files": new})


def _clear_stale_staging(directory: Path) -> None:
    """Removes staging directories that killed writers left behind (the
    lock is held, so none of them is in use)."""
    for p in directory.iterdir():
        if p.name.startswith(STAGING_PREFIX) and p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)


@contextlib.contextmanager
def writing(directory: str | os.PathLike, kind: str) -> Iterator[Path]:
    """Claims and locks `directory`, yields an empty staging directory to
    write the new files into (subdirectories allowed), and commits them when
    the body ends without an exception. The new files replace those of the
    previous write; files phblab did not write are left alone."""
    from phblab import _core

    directory = Path(directory)
    claim(directory, kind)
    with lock(directory):
        _clear_stale_staging(directory)
        staging = directory / f"{STAGING_PREFIX}{os.getpid()}"
        staging.mkdir()
        try:
            yield staging
            _commit(directory, staging, kind, _core.version())
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def verify(directory: str | os.PathLike) -> str | None:
    """None if `directory` holds a complete write whose files all match the
    manifest; otherwise what is wrong, in a few words."""
    directory = Path(directory)
    if not directory.is_dir():
        return "absent"
    doc = _read_manifest(directory)
    if doc is None:
        return "no manifest"
    if doc.get("state") != "complete":
        return "its writing was interrupted"
    for name, recorded in sorted(doc["files"].items()):
        path = directory / name
        if not path.is_file():
            return f"{name} is missing"
        if not isinstance(recorded, dict) or digest(path) != recorded:
            return f"{name} does not match its manifest"
    return None


# ----------------------------------------------------------------- plots

#: where `phblab plot` draws a run's or a sweep's figures, inside its directory
PLOTS = "plots"


def data_identity(directory: str | os.PathLike) -> str | None:
    """A digest of the tables (Parquet files) `directory`'s manifest records:
    what a plot of them was drawn from. None without a complete manifest.
    (Tables alone: rerunning a run gives the same tables and another
    summary.json, whose wall time differs.)"""
    doc = _read_manifest(Path(directory))
    if doc is None or doc.get("state") != "complete":
        return None
    tables = {
        name: recorded.get("sha256")
        for name, recorded in doc["files"].items()
        if name.endswith(".parquet") and isinstance(recorded, dict)
    }
    return hashlib.sha256(json.dumps(tables, sort_keys=True).encode()).hexdigest()


def record_plots(directory: str | os.PathLike, paths: list[Path]) -> None:
    """Records the files of `paths` that lie in `directory/plots/` (figures
    `phblab plot` drew from the tables in `directory`) in
    `plots/manifest.json`, with the tables' identity, so that a later write
    of other tables removes them (`drop_stale_plots`)."""
    directory = Path(directory)
    plots = directory / PLOTS
    identity = data_identity(directory)
    if identity is None or plots.is_symlink():
        return
    drop_stale_plots(directory)
    doc = _read_manifest(plots)
    files = dict(doc["files"]) if doc is not None and doc.get("kind") == "plots" else {}
    for p in map(Path, paths):
        if p.parent.resolve() == plots.resolve() and p.is_file() and not p.is_symlink():
            files[p.name] = digest(p)
    if files:
        _write_manifest(plots, {"kind": "plots", "drawn_from": identity, "state": "complete", "files": files})


def drop_stale_plots(directory: str | os.PathLike) -> list[Path]:
    """Removes the figures `phblab plot` drew from tables `directory` no
    longer holds: each file `plots/manifest.json` records, if it is still
    as drawn (one replaced or edited since is kept), then that manifest, and
    `plots/` if nothing else is in it. Returns the removed files."""
    plots = Path(directory) / PLOTS
    doc = _read_manifest(plots)
    if plots.is_symlink() or doc is None or doc.get("kind") != "plots":
        return []
    if doc.get("drawn_from") == data_identity(directory):
        return []
    removed = []
    for name, recorded in sorted(doc["files"].items()):
        path = plots / name
        if path.parent == plots and path.is_file() and not path.is_symlink() and digest(path) == recorded:
            path.unlink()
            removed.append(path)
    (plots / MANIFEST).unlink()
    with contextlib.suppress(OSError):
        plots.rmdir()  # only if empty
    return removed
