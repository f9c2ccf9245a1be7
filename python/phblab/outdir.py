"""Directories phblab writes into: what it wrote is recorded with the
directory's kind, only that is ever replaced, nothing is written through a
symbolic link, and one writer at a time.

Every directory phblab writes holds `manifest.json`: the directory's kind
(`KINDS`: a run's results, an emulated run's, a sweep, a reproduction, the
report) and the files phblab put there with their size and SHA-256 digest.
Writing into a directory:

1. **Claim.** The directory must be new, empty, or phblab's *of the same
   kind*: its manifest says so, or (written by phblab before manifests
   existed) it holds the file that marks its kind, e.g. `summary.json` for
   a run. Anything else is refused (`NotOurs`), so a mistyped `--out` never
   touches a user's directory, and one kind of results never silently
   replaces another (a run's results never replace a sweep; simulated
   results never replace emulated ones, which cannot be reproduced).
2. **Lock.** An OS file lock on `.phblab.lock` in the directory, released
   on any exit of the process, keeps a second writer out (`Busy`). A lock
   file that is not a regular file of its own (a symbolic link, a FIFO, a
   hard link to another file) is refused.
3. **Stage.** The new files are written into a fresh staging directory
   inside it (`.phblab-staging-*`), so a crash leaves the old files whole.
4. **Commit.** The manifest is first rewritten in state `writing` (naming
   old and new files, so an interrupted commit is still known to be
   phblab's and incomplete), then each staged file replaces its target
   (an atomic rename per file), files of the previous manifest that the
   new set no longer has are removed, and the manifest is written in state
   `complete` with the new digests.

Paths stay inside. Every file is reached from the directory's own file
descriptor one component at a time, never following a symbolic link
(`O_NOFOLLOW`): a subdirectory that is a link is refused, a file that is a
link is neither read nor removed, and new files (the manifest too) are
created under fresh names (`O_EXCL`) and renamed into place. A manifest
whose entries are absolute, hold `..` or are not plain relative names is
not phblab's: the directory is then refused like a user's (inside a sweep,
whose runs' directories phblab owns, such a run is rerun instead).

A file in the directory that phblab did not record (a user's `notes.txt`,
`plots/` from `phblab plot`) is never replaced or removed; a new file whose
name collides with such a file is refused. `verify` checks a directory
against its manifest; sweeps use it to decide which runs to reuse.
`write_file` writes one file outside any such directory (a plot at a path
the user chose) by the same rules: fresh name, rename, no link followed,
and an existing file replaced only if the caller recognises it as
phblab's.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

MANIFEST = "manifest.json"
LOCK = ".phblab.lock"
STAGING_PREFIX = ".phblab-staging-"
#: prefix of the fresh names new files get before they are renamed into place
TEMPORARY_PREFIX = ".phblab-tmp-"

#: the kinds of directory phblab writes, as a manifest records them, and how messages name them
KINDS = {
    "run": "a run's results",
    "emulated-run": "an emulated run's results",
    "sweep": "a sweep",
    "reproduction": "a reproduction",
    "report": "a report",
    "plots": "the figures phblab plot drew",
}
#: kinds as manifests of earlier versions named them
_OLD_KIND_NAMES = {"reproduce": "reproduction"}

#: the file that marks a directory of each kind written before manifests
LEGACY_MARKERS = {
    "run": "summary.json",
    "emulated-run": "summary.json",
    "sweep": "sweep.json",
    "reproduction": "comparison.json",
    "report": ".phblab-report",
}

#: the largest manifest read (a sweep of a million runs has a few hundred bytes each at the top)
_MAX_MANIFEST_BYTES = 64 << 20

# Locks this process holds: resolved path -> open file. A second `lock` on
# the same directory from this process is a no-op (flock locks belong to an
# open file, so a second open would conflict with our own).
_HELD: dict[Path, object] = {}

_O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class NotOurs(FileExistsError):
    """The directory, or a file in it, was not written by phblab, or holds
    another kind of phblab directory."""


class Busy(RuntimeError):
    """Another process is writing into the directory."""


# ------------------------------------------------------------- path walking


def _valid_name(name: object) -> bool:
    """A manifest entry phblab could have written: a relative name of
    plain components (no `..`, `.`, empty component, NUL or leading `/`)
    that is not the manifest, the lock or a temporary name."""
    if not isinstance(name, str) or not name or len(name) > 4096 or "\0" in name or name.startswith("/"):
        return False
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return False
    return parts[0] not in (MANIFEST, LOCK) and not parts[0].startswith((STAGING_PREFIX, TEMPORARY_PREFIX))


def inside(name: object) -> bool:
    """Whether `name` (read from a file phblab wrote, such as a plot named in
    comparison.json) is a plain relative name inside its directory."""
    return _valid_name(name)


def _open_subdir(dfd: int, name: str, create: bool) -> int:
    """The descriptor of directory `name` in directory `dfd`, made if
    `create`; NotOurs if it is a symbolic link or not a directory,
    FileNotFoundError if absent (and not `create`)."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=dfd)
    try:
        return os.open(name, _O_DIR | os.O_NOFOLLOW, dir_fd=dfd)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            what = "a symbolic link" if _is_link(dfd, name) else "not a directory"
            raise NotOurs(f"{name} is {what}; phblab writes only into directories of its own") from None
        raise


def _is_link(dfd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode)
    except OSError:
        return False


@contextlib.contextmanager
def _parent_of(dfd: int, name: str, create: bool) -> Iterator[tuple[int, str]]:
    """(descriptor of the directory holding `name`, its last component),
    walking `name`'s components below `dfd` without following links."""
    parts = name.split("/")
    fds = []
    try:
        cur = dfd
        for i, part in enumerate(parts[:-1]):
            try:
                cur = _open_subdir(cur, part, create)
            except NotOurs:
                raise NotOurs(f"{'/'.join(parts[: i + 1])} is a symbolic link or not a directory") from None
            fds.append(cur)
        yield cur, parts[-1]
    finally:
        for fd in fds:
            os.close(fd)


def _lstat(dfd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _open_regular(dfd: int, name: str) -> int:
    """A read descriptor of the regular file `name` below `dfd`; OSError
    (ELOOP for a link, EINVAL for anything else that is not a regular
    file) otherwise."""
    with _parent_of(dfd, name, create=False) as (parent, last):
        fd = os.open(last, os.O_RDONLY | _NOFOLLOW, dir_fd=parent)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", name)
    return fd


def _digest_fd(fd: int) -> dict:
    h = hashlib.sha256()
    size = 0
    with os.fdopen(fd, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
            size += len(chunk)
    return {"bytes": size, "sha256": h.hexdigest()}


def digest(path: Path) -> dict:
    """A file's size and SHA-256, as the manifest records them."""
    return _digest_fd(os.open(path, os.O_RDONLY | os.O_CLOEXEC))


def _create_fresh(dfd: int, prefix: str) -> tuple[int, str]:
    """A new, empty file with a fresh name in `dfd` (`O_EXCL`: never an
    existing file or link): its descriptor and name."""
    for _ in range(100):
        name = f"{prefix}{os.getpid()}-{os.urandom(6).hex()}"
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644, dir_fd=dfd), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no fresh temporary name", prefix)


def _write_into(dfd: int, name: str, data: bytes) -> None:
    """Writes `data` as `name` in `dfd`: a fresh file renamed over it."""
    fd, tmp = _create_fresh(dfd, TEMPORARY_PREFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        raise


# ----------------------------------------------------------------- manifest


def _read_manifest(dfd: int) -> tuple[dict | None, str | None]:
    """(manifest, None) for a manifest phblab wrote; (None, None) if there
    is none; (None, why) if there is one phblab did not write (not a
    regular file, not JSON of the manifest's shape, or an entry that is not
    a plain relative name inside the directory)."""
    try:
        fd = os.open(MANIFEST, os.O_RDONLY | _NOFOLLOW, dir_fd=dfd)
    except FileNotFoundError:
        return None, None
    except OSError as e:
        return None, f"{MANIFEST} cannot be read ({e.strerror})"
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None, f"{MANIFEST} is not a regular file"
        data = f.read(_MAX_MANIFEST_BYTES + 1)
    if len(data) > _MAX_MANIFEST_BYTES:
        return None, f"{MANIFEST} is larger than any phblab writes"
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, f"{MANIFEST} is not JSON"
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict):
        return None, f"{MANIFEST} is not a manifest (no table of files)"
    kind = _OLD_KIND_NAMES.get(doc.get("kind"), doc.get("kind"))
    if kind is not None and kind not in KINDS:
        return None, f"{MANIFEST} names an unknown kind of directory"
    doc["kind"] = kind
    for name, record in doc["files"].items():
        if not _valid_name(name):
            return None, f"{MANIFEST} names {_shown(name)}, which is not a file inside the directory"
        if record is not None and not (
            isinstance(record, dict) and isinstance(record.get("bytes"), int) and isinstance(record.get("sha256"), str)
        ):
            return None, f"{MANIFEST} records {_shown(name)} without its size and digest"
    return doc, None


def _shown(name: str, limit: int = 60) -> str:
    """`name` quoted for a message, cut to `limit` characters."""
    text = repr(name)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _write_manifest(dfd: int, doc: dict) -> None:
    _write_into(dfd, MANIFEST, (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def _summary_backend(dfd: int) -> str | None:
    """The backend a run's `summary.json` records ("simulate" if none);
    None if it has none or cannot be read."""
    try:
        fd = _open_regular(dfd, "summary.json")
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        data = f.read(_MAX_MANIFEST_BYTES)
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return doc.get("backend", "simulate") if isinstance(doc, dict) else None


def _kind_found(dfd: int, doc: dict | None) -> str | None:
    """The kind of the directory: its manifest's (a run whose summary
    records the emulate backend, written before emulated runs had a kind
    of their own, is an emulated run), or that of the legacy marker it
    holds; None if neither says."""
    kind = doc["kind"] if doc is not None else None
    if doc is None:
        found = [k for k, marker in LEGACY_MARKERS.items() if _is_regular(dfd, marker)]
        kind = found[0] if found else None
    if kind == "run" and _summary_backend(dfd) == "emulate":
        return "emulated-run"
    return kind


def _is_regular(dfd: int, name: str) -> bool:
    st = _lstat(dfd, name)
    return st is not None and stat.S_ISREG(st.st_mode)


def _visible_entries(dfd: int) -> list[str]:
    return sorted(
        n
        for n in os.listdir(dfd)
        if n != LOCK and not n.startswith((STAGING_PREFIX, TEMPORARY_PREFIX)) and n != MANIFEST
    )


def _open_top(directory: Path) -> int | None:
    """The directory's descriptor (the path the user gave may pass through
    links: that is their choice, unless the link is inside a phblab
    directory, such as a reproduction's `sweep`); None if it does not
    exist; NotOurs if it is not a directory."""
    if directory.is_symlink() and _has_manifest(directory.parent):
        raise NotOurs(f"{directory} is a symbolic link inside a phblab directory; refusing to write through it")
    try:
        return os.open(directory, _O_DIR)
    except FileNotFoundError:
        if directory.is_symlink():
            raise NotOurs(
                f"{directory} is a symbolic link to nothing; refusing to create its target: choose another output"
            ) from None
        return None
    except NotADirectoryError:
        raise NotOurs(
            f"{directory} exists and is not a directory; refusing to write there: choose another output"
        ) from None


# -------------------------------------------------------------------- claim


def _check(directory: Path, dfd: int, kind: str, owned: bool) -> tuple[dict | None, bool]:
    """(manifest to build on, whether the directory's files are to be
    treated as phblab's though no manifest lists them), or NotOurs."""
    doc, foreign = _read_manifest(dfd)
    if foreign is not None and not owned:
        raise NotOurs(
            f"{directory}: {foreign}, so phblab did not write it; refusing to write there: "
            "choose another output directory"
        )
    found = _kind_found(dfd, doc)
    if found is not None and found != kind:
        raise NotOurs(
            f"{directory} holds {KINDS[found]}; refusing to replace it with {KINDS[kind]}: "
            "choose another output directory (or remove that one)"
        )
    if doc is not None:
        return doc, False
    if found is not None or owned:
        return None, True
    entries = _visible_entries(dfd)
    if entries:
        shown = ", ".join(_shown(e, 40).strip("'\"") for e in entries[:3]) + (", ..." if len(entries) > 3 else "")
        raise NotOurs(
            f"{directory} holds files phblab did not write ({shown}); refusing to write there: "
            "choose another output directory (or empty this one)"
        )
    return None, False


def _check_kind(kind: str) -> str:
    """`kind` as manifests record it; ValueError for an unknown kind."""
    kind = _OLD_KIND_NAMES.get(kind, kind)
    if kind not in KINDS:
        raise ValueError(f"unknown kind of directory {kind!r}: one of {', '.join(KINDS)}")
    return kind


def claim(directory: str | os.PathLike, kind: str, *, owned: bool = False) -> None:
    """Raises `NotOurs` unless `directory` is absent, empty or phblab's
    directory of `kind` (`KINDS`). `owned`: a directory phblab owns by
    where it is (a run's directory in a sweep), whose files are phblab's
    even if its manifest is missing or unreadable."""
    kind = _check_kind(kind)
    directory = Path(directory)
    dfd = _open_top(directory)
    if dfd is None:
        return
    try:
        _check(directory, dfd, kind, owned)
    finally:
        os.close(dfd)


def kind_of(directory: str | os.PathLike) -> str | None:
    """The kind (`KINDS`) of phblab directory `directory` is, if it is one."""
    try:
        dfd = os.open(Path(directory), _O_DIR)
    except OSError:
        return None
    try:
        doc, foreign = _read_manifest(dfd)
        return None if foreign else _kind_found(dfd, doc)
    finally:
        os.close(dfd)


def _has_manifest(directory: Path) -> bool:
    """Whether `directory` holds a manifest phblab wrote."""
    try:
        dfd = os.open(directory, _O_DIR)
    except OSError:
        return False
    try:
        return _read_manifest(dfd)[0] is not None
    finally:
        os.close(dfd)


def subdirectory(directory: str | os.PathLike, name: str) -> Path:
    """`directory/name`, made if absent: a subdirectory phblab writes into
    (a sweep's `runs`, a reproduction's `sweep`, `plots`). NotOurs if it is
    a symbolic link or not a directory."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    dfd = os.open(directory, _O_DIR)
    try:
        try:
            os.close(_open_subdir(dfd, name, create=True))
        except NotOurs as e:
            raise NotOurs(f"{directory / name}: {str(e).split(': ', 1)[-1]}") from None
    finally:
        os.close(dfd)
    return directory / name


# --------------------------------------------------------------------- lock


def _holder(fd: int) -> str:
    """Who holds the lock, as its file says, if that is a phblab process
    still running; otherwise "another process"."""
    try:
        text = os.pread(fd, 64, 0).decode("ascii")
    except (OSError, UnicodeDecodeError):
        return "another process"
    m = re.fullmatch(r"phblab \(pid (\d{1,10})\)\n?", text)
    if m is None:
        return "another process"
    try:
        os.kill(int(m.group(1)), 0)
    except ProcessLookupError:
        return "another process"
    except OSError:
        pass
    return f"phblab (pid {m.group(1)})"


def _open_lock(directory: Path, dfd: int) -> int:
    try:
        fd = os.open(LOCK, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o644, dir_fd=dfd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise NotOurs(
                f"{directory / LOCK} is a symbolic link; phblab's lock is a file of its own: remove it"
            ) from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        os.close(fd)
        what = "not a regular file" if not stat.S_ISREG(st.st_mode) else "a hard link to another file"
        raise NotOurs(f"{directory / LOCK} is {what}; phblab's lock is a file of its own: remove it")
    return fd


@contextlib.contextmanager
def lock(directory: str | os.PathLike, kind: str | None = None) -> Iterator[None]:
    """Holds the directory's lock (creating the directory) for the `with`
    body; raises `Busy` if another process holds it. A new directory is
    recorded as phblab's directory of `kind` at once."""
    import fcntl

    directory = Path(directory)
    if kind is not None:
        kind = _check_kind(kind)
    directory.mkdir(parents=True, exist_ok=True)
    key = directory.resolve()
    if key in _HELD:
        yield
        return
    dfd = os.open(directory, _O_DIR)
    try:
        fd = _open_lock(directory, dfd)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                raise Busy(
                    f"{directory} is being written by {_holder(fd)}; wait for it to finish or choose another output"
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"phblab (pid {os.getpid()})\n".encode(), 0)
            doc, foreign = _read_manifest(dfd)
            if doc is None and foreign is None and not _visible_entries(dfd):
                _mark_new(dfd, kind)
            _HELD[key] = fd
            try:
                yield
            finally:
                del _HELD[key]
        finally:
            os.close(fd)  # closing the file releases the lock
    finally:
        os.close(dfd)


def _mark_new(dfd: int, kind: str | None) -> None:
    """Records a new (or empty) directory as phblab's before anything is
    written into it, so that what a long job puts there first (a sweep's
    `runs/`) is known to be phblab's if the job is interrupted."""
    from phblab import _core

    _write_manifest(dfd, {"kind": kind, "phblab_version": _core.version(), "state": "writing", "files": {}})


# ------------------------------------------------------------------ writing


def _staged_files(staging: Path) -> list[str]:
    found = []
    for root, dirs, files in os.walk(staging):
        base = Path(root).relative_to(staging)
        found += [(base / f).as_posix() for f in files if stat.S_ISREG(os.lstat(Path(root) / f).st_mode)]
        dirs[:] = [d for d in dirs if not os.path.islink(Path(root) / d)]
    return sorted(found)


def _commit(directory: Path, dfd: int, staging: Path, kind: str, version: str, old: dict | None, legacy: bool) -> None:
    old_files = set(old["files"]) if old is not None else set()
    new = {name: digest(staging / name) for name in _staged_files(staging)}
    for name in new:
        try:
            with _parent_of(dfd, name, create=False) as (parent, last):
                st = _lstat(parent, last)
        except FileNotFoundError:
            continue
        except NotOurs as e:
            raise NotOurs(f"{directory}: {e}; refusing to write through it") from None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise NotOurs(f"{directory / name} is a directory; refusing to replace it with a file")
        if st is not None and (not stat.S_ISREG(st.st_mode) or (name not in old_files and not legacy)):
            raise NotOurs(f"{directory / name} was not written by phblab; refusing to replace it")
    pending = {name: None for name in old_files} | new
    _write_manifest(dfd, {"kind": kind, "phblab_version": version, "state": "writing", "files": pending})
    sfd = os.open(staging, _O_DIR | os.O_NOFOLLOW)
    try:
        for name in new:
            with (
                _parent_of(sfd, name, create=False) as (src, src_last),
                _parent_of(dfd, name, create=True) as (
                    dst,
                    last,
                ),
            ):
                os.replace(src_last, last, src_dir_fd=src, dst_dir_fd=dst)
    finally:
        os.close(sfd)
    for name in sorted(old_files - set(new)):
        _remove_recorded(dfd, name)
    _write_manifest(dfd, {"kind": kind, "phblab_version": version, "state": "complete", "files": new})


def _remove_recorded(dfd: int, name: str) -> None:
    """Removes file `name` of an earlier manifest if it is still a regular
    file below `dfd` (through no link)."""
    try:
        with _parent_of(dfd, name, create=False) as (parent, last):
            st = _lstat(parent, last)
            if st is not None and stat.S_ISREG(st.st_mode):
                os.unlink(last, dir_fd=parent)
    except (FileNotFoundError, NotOurs):
        pass


def _clear_stale_staging(directory: Path, dfd: int) -> None:
    """Removes staging directories and temporary files that killed writers
    left behind (the lock is held, so none of them is in use); rmtree never
    follows a link."""
    for name in os.listdir(dfd):
        st = _lstat(dfd, name)
        if st is None:
            continue
        if name.startswith(STAGING_PREFIX) and stat.S_ISDIR(st.st_mode):
            shutil.rmtree(directory / name, ignore_errors=True)
        elif name.startswith(TEMPORARY_PREFIX) and stat.S_ISREG(st.st_mode):
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dfd)


@contextlib.contextmanager
def writing(directory: str | os.PathLike, kind: str, *, owned: bool = False) -> Iterator[Path]:
    """Claims and locks `directory` for a write of `kind` (`KINDS`), yields
    an empty staging directory to write the new files into (subdirectories
    allowed), and commits them when the body ends without an exception. The
    new files replace those of the previous write; files phblab did not
    write are left alone. `owned` as for `claim`."""
    from phblab import _core

    kind = _check_kind(kind)
    directory = Path(directory)
    claim(directory, kind, owned=owned)
    with lock(directory, kind):
        dfd = os.open(directory, _O_DIR)
        try:
            old, legacy = _check(directory, dfd, kind, owned)
            _clear_stale_staging(directory, dfd)
            staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=directory))
            try:
                yield staging
                _commit(directory, dfd, staging, kind, _core.version(), old, legacy)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        finally:
            os.close(dfd)


def verify(directory: str | os.PathLike) -> str | None:
    """None if `directory` holds a complete write whose files all match the
    manifest; otherwise what is wrong, in a few words."""
    directory = Path(directory)
    try:
        dfd = os.open(directory, _O_DIR)
    except OSError:
        return "absent" if not os.path.lexists(directory) else "not a directory"
    try:
        doc, foreign = _read_manifest(dfd)
        if foreign is not None:
            return f"{foreign}, so phblab did not write it"
        if doc is None:
            return "no manifest"
        if doc.get("state") != "complete":
            return "its writing was interrupted"
        for name, recorded in sorted(doc["files"].items()):
            try:
                found = _digest_fd(_open_regular(dfd, name))
            except FileNotFoundError:
                return f"{name} is missing"
            except (OSError, NotOurs):
                return f"{name} is not a regular file inside the directory"
            if found != recorded:
                return f"{name} does not match its manifest"
        return None
    finally:
        os.close(dfd)


# ----------------------------------------------------------------- plots

#: where `phblab plot` draws a run's or a sweep's figures, inside its directory
PLOTS = "plots"


def data_identity(directory: str | os.PathLike) -> str | None:
    """A digest of the tables (Parquet files) `directory`'s manifest records:
    what a plot of them was drawn from. None without a complete manifest.
    (Tables alone: rerunning a run gives the same tables and another
    summary.json, whose wall time differs.)"""
    try:
        dfd = os.open(Path(directory), _O_DIR)
    except OSError:
        return None
    try:
        doc, _ = _read_manifest(dfd)
    finally:
        os.close(dfd)
    if doc is None or doc.get("state") != "complete":
        return None
    tables = {
        name: recorded["sha256"]
        for name, recorded in doc["files"].items()
        if name.endswith(".parquet") and recorded is not None
    }
    return hashlib.sha256(json.dumps(tables, sort_keys=True).encode()).hexdigest()


@contextlib.contextmanager
def _plots_of(directory: Path) -> Iterator[int | None]:
    """The descriptor of `directory/plots`; None if it is absent, a
    symbolic link or not a directory (then phblab records nothing there)."""
    try:
        dfd = os.open(directory, _O_DIR)
    except OSError:
        yield None
        return
    try:
        pfd = _open_subdir(dfd, PLOTS, create=False)
    except (OSError, NotOurs):
        pfd = None
    finally:
        os.close(dfd)
    try:
        yield pfd
    finally:
        if pfd is not None:
            os.close(pfd)


def _plots_manifest(pfd: int) -> dict | None:
    doc, _ = _read_manifest(pfd)
    return doc if doc is not None and doc.get("kind") == "plots" else None


def record_plots(directory: str | os.PathLike, paths: list[Path]) -> None:
    """Records the files of `paths` that lie in `directory/plots/` (figures
    `phblab plot` drew from the tables in `directory`) in
    `plots/manifest.json`, with the tables' identity, so that a later write
    of other tables removes them (`drop_stale_plots`)."""
    directory = Path(directory)
    identity = data_identity(directory)
    if identity is None:
        return
    drop_stale_plots(directory)
    with _plots_of(directory) as pfd:
        if pfd is None:
            return
        doc = _plots_manifest(pfd)
        files = dict(doc["files"]) if doc is not None else {}
        plots = (directory / PLOTS).resolve()
        for p in map(Path, paths):
            if p.parent.resolve() != plots:
                continue
            try:
                files[p.name] = _digest_fd(_open_regular(pfd, p.name))
            except OSError:
                continue
        if files:
            _write_manifest(pfd, {"kind": "plots", "drawn_from": identity, "state": "complete", "files": files})


def drop_stale_plots(directory: str | os.PathLike) -> list[Path]:
    """Removes the figures `phblab plot` drew from tables `directory` no
    longer holds: each file `plots/manifest.json` records, if it is still
    a regular file as drawn (one replaced or edited since is kept), then
    that manifest, and `plots/` if nothing else is in it. Returns the
    removed files."""
    directory = Path(directory)
    removed = []
    with _plots_of(directory) as pfd:
        doc = _plots_manifest(pfd) if pfd is not None else None
        if doc is None or doc.get("drawn_from") == data_identity(directory):
            return []
        for name, recorded in sorted(doc["files"].items()):
            try:
                found = _digest_fd(_open_regular(pfd, name))
            except OSError:
                continue
            if "/" not in name and found == recorded:
                os.unlink(name, dir_fd=pfd)
                removed.append(directory / PLOTS / name)
        os.unlink(MANIFEST, dir_fd=pfd)
    with contextlib.suppress(OSError):
        (directory / PLOTS).rmdir()  # only if empty (and never through a link)
    return removed


# ------------------------------------------------------------ single files


def write_file(
    path: str | os.PathLike, write: Callable[[IO[bytes]], None], is_ours: Callable[[IO[bytes]], bool]
) -> Path:
    """Writes one file at `path` (a plot where the user asked for it):
    `write` fills a fresh file in the same directory, which then replaces
    `path` by a rename. An existing `path` is replaced only if it is a
    regular file `is_ours` recognises (given it open for reading), never
    through a link; otherwise NotOurs."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    dfd = os.open(path.parent, _O_DIR)
    try:
        st = _lstat(dfd, path.name)
        if st is not None:
            if not stat.S_ISREG(st.st_mode):
                what = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
                raise NotOurs(f"{path} is {what}; refusing to replace it: choose another output")
            with os.fdopen(os.open(path.name, os.O_RDONLY | _NOFOLLOW, dir_fd=dfd), "rb") as existing:
                if not is_ours(existing):
                    raise NotOurs(f"{path} was not written by phblab; refusing to replace it: choose another output")
        fd, tmp = _create_fresh(dfd, f".{path.name}{TEMPORARY_PREFIX}")
        try:
            with os.fdopen(fd, "wb") as f:
                write(f)
            os.replace(tmp, path.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
    finally:
        os.close(dfd)
    return path
