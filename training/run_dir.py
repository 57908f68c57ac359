"""The run directory: one run at a time, never a finished run overwritten by accident, writable from the start.

`claim_run_dir(path, resume=..., overwrite=...)` takes an OS lock on `<run>/.lock` (`fcntl.flock`: it dies
with the process, so a crash or SIGKILL never leaves a stale lock) and keeps it until the process exits. A
second run into a directory in use is refused, naming the pid that holds it. A directory that already holds
a run is refused unless the run is continued (`--resume`) or replaced (`--overwrite`, which deletes that
run's files first). Then a file is written and removed, so a directory that cannot be written fails here,
in one line, not at the first checkpoint.
"""

import fcntl
import os
import shutil
import tempfile
from pathlib import Path

LOCK_NAME = ".lock"
# What marks a directory as a run's: the lock file of any run since locking, or an older run's outputs.
RUN_MARKERS = (LOCK_NAME, "store.db", "metrics.jsonl", "summary.json", "checkpoints")


class RunDirError(ValueError):
    """A run directory that cannot be used or written; one line naming the path."""


class RunDirectory:
    """A claimed run directory; the lock is held until `release()` or the end of the process."""

    def __init__(self, path: Path, lock_fd: int):
        self.path = path
        self._lock_fd: int | None = lock_fd
        # Runner processes are forked from this one: their copy of the descriptor must not keep the lock
        # alive after this process is gone.
        os.register_at_fork(after_in_child=self._forget_in_child)

    def _forget_in_child(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the last descriptor releases the flock
            self._lock_fd = None


def claim_run_dir(path: Path, *, resume: bool = False, overwrite: bool = False) -> RunDirectory:
    """Create (if needed), lock and check `path` for a run; raises RunDirError with a one-line reason."""
    if path.exists() and not path.is_dir():
        raise RunDirError(f"{path}: exists and is not a directory; choose another --output-dir")
    was_a_run = any((path / marker).exists() for marker in RUN_MARKERS)
    try:
        path.mkdir(parents=True, exist_ok=True)
        lock_fd = os.open(path / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise RunDirError(f"{path}: cannot be used as a run directory ({e.strerror or e})") from None
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(lock_fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(lock_fd)
        raise RunDirError(f"{path}: in use by another run (pid {holder}); wait for it to end or choose another "
                          "--output-dir") from None
    run = RunDirectory(path, lock_fd)
    try:
        os.ftruncate(lock_fd, 0)
        os.pwrite(lock_fd, f"{os.getpid()}\n".encode(), 0)
        _check_contents(path, resume, overwrite, was_a_run)
        _check_writable(path)
    except BaseException:
        run.release()
        raise
    return run


def _check_contents(path: Path, resume: bool, overwrite: bool, was_a_run: bool) -> None:
    contents = sorted(p.name for p in path.iterdir() if p.name != LOCK_NAME)
    if resume or not contents:
        return
    if not overwrite:
        shown = ", ".join(contents[:4]) + (", ..." if len(contents) > 4 else "")
        raise RunDirError(f"{path}: already holds a run ({shown}); continue it with --resume {path}, replace it with "
                          "--overwrite, or choose another --output-dir")
    if not was_a_run:
        raise RunDirError(f"{path}: holds files that are not a run's ({', '.join(contents[:4])}); --overwrite only "
                          "replaces a run directory")
    for name in contents:
        target = path / name
        try:
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink()
        except OSError as e:
            raise RunDirError(f"{target}: cannot remove the old run's file ({e.strerror or e})") from None


def _check_writable(path: Path) -> None:
    try:
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-check-") as probe:
            probe.write(b"ok")
            probe.flush()
    except OSError as e:
        raise RunDirError(f"{path}: not writable ({e.strerror or e})") from None
