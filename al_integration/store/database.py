"""One SQLite file: validation on open, schema, pragmas and the transaction that backs agl's `atomic()`.

Why it looks like this:
- Every write runs inside one SQLite transaction (`BEGIN IMMEDIATE`) and every read or write holds
  one process-wide async lock, so agl's multi-step operations never interleave, whichever thread or
  event loop calls them (the LightningStoreServer runs uvicorn in its own thread and loop).
- WAL journal: readers in other processes (the `inspect` CLI, a dashboard) never block the writer.
  `synchronous=NORMAL` keeps every committed transaction across a process crash or SIGKILL; only a
  power cut may lose the last ones (`synchronous="FULL"` closes that gap at a speed cost).
- The file is checked read-only before anything is written, so a file that is not a store, or a
  store of another schema version, is refused and left byte-for-byte untouched.
- A connection belongs to the process that opened it: agl forks runner processes after the store
  exists, and a forked child must never use (or close) its parent's SQLite handle.
"""

from __future__ import annotations

import contextvars
import os
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import aiologic

R = TypeVar("R")

SCHEMA_VERSION = 1
APPLICATION_ID = 0x41474C53  # "AGLS" in the SQLite header: marks the file as one of our stores.

# Handles inherited through fork(): kept alive and never closed in the child (closing a handle
# copied from the parent is undefined behaviour in SQLite).
_INHERITED_CONNECTIONS: list[sqlite3.Connection] = []


class StoreFileError(RuntimeError):
    """The store file cannot be used: not a store, other schema version, read-only, full or corrupt."""


@dataclass(frozen=True)
class Column:
    """A model field mirrored into its own SQL column so filters and sorts run in SQLite."""

    name: str
    text: bool = False  # str-valued: `contains` filters may run as SQL


@dataclass(frozen=True)
class TableSpec:
    """How one agl collection is laid out: primary-key columns, mirrored columns, JSON of the model."""

    name: str
    primary_keys: tuple[str, ...]
    columns: tuple[Column, ...]
    indexes: tuple[tuple[str, ...], ...] = ()

    @property
    def all_columns(self) -> tuple[Column, ...]:
        return tuple(Column(pk, text=True) for pk in self.primary_keys) + self.columns

    def ddl(self) -> list[str]:
        # Columns are declared without a type: no affinity, so 1 never equals '1' (as in Python).
        cols = ", ".join(c.name for c in self.all_columns)
        pks = ", ".join(self.primary_keys)
        statements = [
            f"CREATE TABLE {self.name} (_row INTEGER PRIMARY KEY, {cols}, data TEXT NOT NULL, UNIQUE ({pks}))"
        ]
        for i, index in enumerate(self.indexes):
            statements.append(f"CREATE INDEX {self.name}_idx{i} ON {self.name} ({', '.join(index)})")
        return statements


TABLES: tuple[TableSpec, ...] = (
    TableSpec(
        "rollouts",
        ("rollout_id",),
        (
            Column("status", True),
            Column("mode", True),
            Column("resources_id", True),
            Column("start_time"),
            Column("end_time"),
        ),
        (("status",),),
    ),
    TableSpec(
        "attempts",
        ("rollout_id", "attempt_id"),
        (
            Column("sequence_id"),
            Column("status", True),
            Column("worker_id", True),
            Column("start_time"),
            Column("end_time"),
            Column("last_heartbeat_time"),
        ),
        (("rollout_id", "sequence_id"),),
    ),
    TableSpec(
        "spans",
        ("rollout_id", "attempt_id", "span_id"),
        (
            Column("sequence_id"),
            Column("trace_id", True),
            Column("parent_id", True),
            Column("name", True),
            Column("start_time"),
            Column("end_time"),
        ),
        (("rollout_id", "sequence_id"),),
    ),
    TableSpec(
        "resources",
        ("resources_id",),
        (Column("create_time"), Column("update_time"), Column("version")),
        (("update_time",),),
    ),
    TableSpec(
        "workers",
        ("worker_id",),
        (
            Column("status", True),
            Column("last_heartbeat_time"),
            Column("last_dequeue_time"),
            Column("last_busy_time"),
            Column("last_idle_time"),
            Column("current_rollout_id", True),
        ),
    ),
)

EXTRA_DDL = (
    "CREATE TABLE rollout_queue (_row INTEGER PRIMARY KEY AUTOINCREMENT, item TEXT NOT NULL)",
    "CREATE INDEX rollout_queue_item ON rollout_queue (item)",
    "CREATE TABLE span_sequence_ids (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)

_ERRORS = {
    sqlite3.SQLITE_FULL: "the disk or the file's size limit is full",
    sqlite3.SQLITE_READONLY: "the file is read-only",
    sqlite3.SQLITE_IOERR: "an I/O error occurred",
    sqlite3.SQLITE_CORRUPT: "the file is corrupt",
    sqlite3.SQLITE_NOTADB: "the file is not a SQLite database",
    sqlite3.SQLITE_CANTOPEN: "the file cannot be opened",
    sqlite3.SQLITE_PERM: "permission denied",
}
_TRANSIENT = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def as_store_error(path: Path, exc: sqlite3.Error) -> Exception:
    """Turn a SQLite error about the file itself into a one-line StoreFileError; keep the others."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in _ERRORS:
        return StoreFileError(f"store file {path}: {_ERRORS[primary]} ({exc})")
    return exc


def is_transient(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.OperationalError) and isinstance(code, int) and (code & 0xFF) in _TRANSIENT


class SqliteDatabase:
    """The file, its per-process connection, and the lock + transaction behind every store operation."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        synchronous: str = "NORMAL",
        busy_timeout_s: float = 30.0,
        max_bytes: int | None = None,
    ) -> None:
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, got {synchronous!r}")
        self.path = Path(path)
        self.read_only = read_only
        self.synchronous = synchronous.upper()
        self.busy_timeout_s = busy_timeout_s
        self.max_bytes = max_bytes
        self._pid = os.getpid()
        self._conn: sqlite3.Connection | None = None
        self._lock = aiologic.Lock()
        self._active: contextvars.ContextVar[sqlite3.Connection | None] = contextvars.ContextVar(
            f"sqlite_tx_{id(self)}", default=None
        )
        self._check_or_create()

    # ------------------------------------------------------------------ opening

    def _check_or_create(self) -> None:
        """Refuse a file that is not ours before touching it; create the schema in a new file."""
        if self.path.is_dir():
            raise StoreFileError(f"store file {self.path}: is a directory")
        new = not self.path.exists() or self.path.stat().st_size == 0
        if new:
            if self.read_only:
                raise StoreFileError(f"store file {self.path}: does not exist")
            if not self.path.parent.is_dir():
                raise StoreFileError(f"store file {self.path}: directory {self.path.parent} does not exist")
            conn = self._open()
            try:
                with conn:
                    conn.execute("BEGIN IMMEDIATE")
                    for table in TABLES:
                        for statement in table.ddl():
                            conn.execute(statement)
                    for statement in EXTRA_DDL:
                        conn.execute(statement)
                    conn.executemany(
                        "INSERT INTO store_meta (key, value) VALUES (?, ?)",
                        [("schema_version", str(SCHEMA_VERSION)), ("created_by", "al_integration.store")],
                    )
                    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            except sqlite3.Error as exc:
                raise as_store_error(self.path, exc) from exc
            finally:
                conn.close()
            return

        if not self.read_only and (not os.access(self.path, os.W_OK) or not self.path.stat().st_mode & 0o222):
            raise StoreFileError(
                f"store file {self.path}: the file is read-only (open it with read_only=True)"
            )
        try:
            probe = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
        except sqlite3.Error as exc:
            raise as_store_error(self.path, exc) from exc
        try:
            app_id = probe.execute("PRAGMA application_id").fetchone()[0]
            version = probe.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            if is_transient(exc):  # SQLITE_BUSY / LOCKED: a database, held by someone else
                raise StoreFileError(
                    f"store file {self.path}: locked by another process that holds it exclusively ({exc}); "
                    "try again when that process is done"
                ) from exc
            raise StoreFileError(f"store file {self.path}: not a SQLite database ({exc})") from exc
        finally:
            probe.close()
        if app_id != APPLICATION_ID:
            raise StoreFileError(f"store file {self.path}: not an Agent Lightning SQLite store")
        if version != SCHEMA_VERSION:
            raise StoreFileError(
                f"store file {self.path}: schema version {version}, this code reads version {SCHEMA_VERSION}"
            )

    def _open(self) -> sqlite3.Connection:
        if self.read_only:
            conn = sqlite3.connect(
                f"{self.path.resolve().as_uri()}?mode=ro",
                uri=True,
                isolation_level=None,
                check_same_thread=False,
            )
        else:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
        if not self.read_only:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            if self.max_bytes is not None:
                page_size = conn.execute("PRAGMA page_size").fetchone()[0]
                conn.execute(f"PRAGMA max_page_count = {max(1, self.max_bytes // page_size)}")
        return conn

    def connection(self) -> sqlite3.Connection:
        """This process's connection, opened on first use (after a fork the child opens its own)."""
        if self._pid != os.getpid():
            if self._conn is not None:
                _INHERITED_CONNECTIONS.append(self._conn)
            self._conn = None
            self._lock = aiologic.Lock()  # the parent's lock may have been held at fork time
            self._pid = os.getpid()
        if self._conn is None:
            try:
                self._conn = self._open()
            except sqlite3.Error as exc:
                raise as_store_error(self.path, exc) from exc
        return self._conn

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None

    # ------------------------------------------------------------------ transactions

    def current(self) -> sqlite3.Connection | None:
        """The connection of the transaction this task is inside, if any."""
        return self._active.get()

    @asynccontextmanager
    async def transaction(self, write: bool, snapshot: bool = False) -> AsyncIterator[sqlite3.Connection]:
        """One atomic unit under the process-wide lock; nested calls in the same task join it.

        Writes (and snapshot reads) run in an explicit transaction; plain reads run statement by
        statement under the lock, which saves a BEGIN/COMMIT pair on the hottest path.
        """
        active = self._active.get()
        if active is not None:
            if write and not active.in_transaction:  # a write inside a plain read block
                with self._begun(active, write=True):
                    yield active
            else:
                yield active
            return
        conn = self.connection()
        lock = self._lock
        await lock.async_acquire()
        token = self._active.set(conn)
        try:
            if write or snapshot:
                with self._begun(conn, write):
                    yield conn
            else:
                yield conn
        finally:
            self._active.reset(token)
            lock.async_release()

    @contextmanager
    def _begun(self, conn: sqlite3.Connection, write: bool) -> Iterator[None]:
        try:
            conn.execute("BEGIN IMMEDIATE" if write and not self.read_only else "BEGIN")
        except sqlite3.Error as exc:
            raise as_store_error(self.path, exc) from exc
        try:
            yield
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise as_store_error(self.path, exc) from exc

    async def run(self, write: bool, work: Callable[[], R]) -> R:
        """Run synchronous SQL work atomically: inline inside the caller's transaction, else in a new one."""
        active = self._active.get()
        if active is not None and (not write or active.in_transaction):
            return work()
        async with self.transaction(write):
            return work()

    def execute(self, sql: str, params: Sequence[object] = ()) -> sqlite3.Cursor:
        """Run one statement inside the current transaction, translating file-level errors."""
        conn = self._active.get()
        if conn is None:
            raise RuntimeError("SQL outside a transaction: wrap the call in collections.atomic()")
        try:
            return conn.execute(sql, params)
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            raise as_store_error(self.path, exc) from exc

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> sqlite3.Cursor:
        conn = self._active.get()
        if conn is None:
            raise RuntimeError("SQL outside a transaction: wrap the call in collections.atomic()")
        try:
            return conn.executemany(sql, rows)
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            raise as_store_error(self.path, exc) from exc

    def file_bytes(self) -> int:
        """Bytes on disk: the database file plus its write-ahead log."""
        total = 0
        for suffix in ("", "-wal"):
            p = Path(f"{self.path}{suffix}")
            if p.exists():
                total += p.stat().st_size
        return total
