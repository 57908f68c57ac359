"""agl's collection abstraction (Collection, Queue, KeyValue, LightningCollections) on SQLite tables.

agl's `CollectionBasedLightningStore` holds all of the store's logic (queueing, attempts, retries,
span sequence ids, status propagation); it only needs these primitives. Each model is stored as its
JSON plus a few mirrored columns, and filters / sorts are translated to SQL when the semantics match
agl's in-memory collections exactly; anything else (an `or` over non-column fields, `within` on a
string, ...) falls back to agl's own in-memory matcher over the rows, so results never differ.
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar

from agentlightning.store.collection.base import (
    AtomicLabels,
    AtomicMode,
    Collection,
    DuplicatedPrimaryKeyError,
    KeyValue,
    LightningCollections,
    Queue,
    ensure_numeric,
    normalize_filter_options,
    resolve_sort_options,
    tracked,
)
from agentlightning.store.collection.memory import _get_sort_value, _item_matches_filters
from agentlightning.types import (
    Attempt,
    FilterOptions,
    PaginatedResult,
    ResourcesUpdate,
    Rollout,
    SortOptions,
    Span,
    Worker,
)
from agentlightning.utils.metrics import MetricsBackend
from pydantic import BaseModel

from al_integration.store.database import TABLES, SqliteDatabase, TableSpec, is_transient

T = TypeVar("T", bound=BaseModel)
Q = TypeVar("Q")
K = TypeVar("K")
V = TypeVar("V")
R = TypeVar("R")

_SCALARS = (str, int, float)
_SPECS = {spec.name: spec for spec in TABLES}


def _column_value(value: Any) -> Any:
    if value is None or isinstance(value, _SCALARS):
        return value
    return json.dumps(value, default=str)


class _SqlPlan:
    """WHERE / ORDER BY for a query, or None when agl's semantics need the Python matcher."""

    def __init__(self, where: str, params: list[Any], order: str) -> None:
        self.where, self.params, self.order = where, params, order


class SqliteCollection(Collection[T], Generic[T]):
    """A table of one pydantic model, keyed by agl's primary keys, ordered by insertion."""

    def __init__(
        self, db: SqliteDatabase, spec: TableSpec, item_type: type[T], tracker: MetricsBackend | None = None
    ):
        super().__init__(tracker=tracker)
        self._db, self._spec, self._item_type = db, spec, item_type
        self._columns = {c.name: c for c in spec.all_columns}
        names = [c.name for c in spec.all_columns]
        self._insert_sql = (
            f"INSERT INTO {spec.name} ({', '.join(names)}, data) VALUES ({', '.join('?' * (len(names) + 1))})"
        )
        pk_where = " AND ".join(f"{pk} = ?" for pk in spec.primary_keys)
        self._pk_where = pk_where
        self._update_sql = (
            f"UPDATE {spec.name} SET {', '.join(f'{n} = ?' for n in names)}, data = ? WHERE {pk_where}"
        )

    @property
    def collection_name(self) -> str:
        return self._spec.name

    def primary_keys(self) -> Sequence[str]:
        return self._spec.primary_keys

    def item_type(self) -> type[T]:
        return self._item_type

    # ------------------------------------------------------------------ helpers

    def _check_type(self, item: T) -> None:
        if not isinstance(item, self._item_type):
            raise TypeError(f"Expected item of type {self._item_type.__name__}, got {type(item).__name__}")

    def _pk(self, item: T) -> tuple[Any, ...]:
        return tuple(getattr(item, pk) for pk in self._spec.primary_keys)

    def _row(self, item: T) -> list[Any]:
        return [_column_value(getattr(item, c.name, None)) for c in self._spec.all_columns] + [
            item.model_dump_json()
        ]

    def _render(self, pk: Sequence[Any]) -> str:
        return ", ".join(f"{name}={value!r}" for name, value in zip(self._spec.primary_keys, pk, strict=True))

    def _load(self, data: str) -> T:
        return self._item_type.model_validate_json(data)

    def _fetch_existing(self, pk: Sequence[Any]) -> T | None:
        row = self._db.execute(
            f"SELECT data FROM {self._spec.name} WHERE {self._pk_where}", list(pk)
        ).fetchone()
        return self._load(row[0]) if row else None

    def _condition(self, field: str, op: str, expected: Any) -> tuple[str, list[Any]] | None:
        """One agl filter condition as SQL, or None when SQL would not match agl's Python semantics."""
        column = self._columns.get(field)
        if column is None:
            return None
        if op == "exact" and isinstance(expected, _SCALARS):
            return f"{field} = ?", [expected]
        if op == "within" and isinstance(expected, (list, tuple, set, frozenset)):
            values = list(expected)
            if not all(isinstance(v, _SCALARS) for v in values):
                return None
            if not values:
                return "0", []
            # One JSON parameter: any number of values (SQLite caps bound parameters at 32766).
            return f"{field} IN (SELECT value FROM json_each(?))", [json.dumps(values)]
        if op == "contains" and column.text and isinstance(expected, str):
            return f"instr({field}, ?) > 0", [expected]
        return None

    def _conditions(self, filters: Any) -> tuple[list[str], list[Any]] | None:
        clauses: list[str] = []
        params: list[Any] = []
        for field, ops in (filters or {}).items():
            for op, expected in ops.items():
                if op not in ("exact", "within", "contains"):
                    raise ValueError(f"Unsupported filter operator '{op}' for field '{field}'")
                if expected is None:  # agl ignores no-op conditions
                    continue
                condition = self._condition(field, op, expected)
                if condition is None:
                    return None
                clauses.append(condition[0])
                params.extend(condition[1])
        return clauses, params

    def _order(self, sort: SortOptions | None) -> str | None:
        sort_by, order = resolve_sort_options(sort)
        if sort_by is None:
            return "_row"
        fields = self._item_type.model_fields
        if sort_by not in fields:
            raise ValueError(
                f"Failed to sort items by '{sort_by}': field does not exist on {self._item_type.__name__}"
            )
        if sort_by not in self._columns:
            return None
        direction = "DESC" if order == "desc" else "ASC"
        if sort_by.endswith("_time"):  # agl: a missing time sorts as +inf
            return f"({sort_by} IS NULL) {direction}, {sort_by} {direction}, _row"
        annotation = str(fields[sort_by].annotation)
        default = "''" if ("str" in annotation or "Literal" in annotation) else "0"
        return f"COALESCE({sort_by}, {default}) {direction}, _row"

    def _plan(self, filter: FilterOptions | None, sort: SortOptions | None) -> _SqlPlan | None:
        filters, must, aggregate = normalize_filter_options(filter)
        order = self._order(sort)
        must_sql = self._conditions(must)
        regular_sql = self._conditions(filters)
        if order is None or must_sql is None or regular_sql is None:
            return None
        clauses, params = list(must_sql[0]), list(must_sql[1])
        if filters:
            regular, regular_params = regular_sql
            joiner = " AND " if aggregate == "and" else " OR "
            empty = "1" if aggregate == "and" else "0"  # agl: all([]) / any([])
            clauses.append(f"({joiner.join(regular) if regular else empty})")
            params.extend(regular_params)
        return _SqlPlan(" AND ".join(clauses) if clauses else "1", params, order)

    def _python_query(self, filter: FilterOptions | None, sort: SortOptions | None) -> list[T]:
        """agl's own matcher and sort over the rows (rows narrowed by the SQL-able `_must` filters)."""
        filters, must, aggregate = normalize_filter_options(filter)
        where, params = "1", []
        must_sql = self._conditions(must)
        if must_sql is not None and must_sql[0]:
            where, params = " AND ".join(must_sql[0]), must_sql[1]
        rows = self._db.execute(f"SELECT data FROM {self._spec.name} WHERE {where} ORDER BY _row", params)
        items = [
            item
            for item in map(self._load, (r[0] for r in rows))
            if _item_matches_filters(item, filters, aggregate, must)
        ]
        sort_by, order = resolve_sort_options(sort)
        if sort_by:
            items.sort(key=lambda x: _get_sort_value(x, sort_by), reverse=order == "desc")
        return items

    # ------------------------------------------------------------------ Collection API

    async def size(self) -> int:
        return await self._db.run(False, self._count)

    def _count(self) -> int:
        return self._db.execute(f"SELECT COUNT(*) FROM {self._spec.name}").fetchone()[0]

    @tracked("query")
    async def query(
        self,
        filter: FilterOptions | None = None,
        sort: SortOptions | None = None,
        limit: int = -1,
        offset: int = 0,
    ) -> PaginatedResult[T]:
        return await self._db.run(False, lambda: self._query(filter, sort, limit, offset))

    def _query(
        self, filter: FilterOptions | None, sort: SortOptions | None, limit: int, offset: int
    ) -> PaginatedResult[T]:
        plan = self._plan(filter, sort)
        if plan is None:
            matched = self._python_query(filter, sort)
            window = matched[offset:] if limit == -1 else matched[offset : offset + max(limit, 0)]
            return PaginatedResult(items=window, limit=limit, offset=offset, total=len(matched))
        table = self._spec.name
        items: list[T] = []
        if limit != 0:
            rows = self._db.execute(
                f"SELECT data FROM {table} WHERE {plan.where} ORDER BY {plan.order} LIMIT ? OFFSET ?",
                [*plan.params, limit if limit >= 0 else -1, max(offset, 0)],
            )
            items = [self._load(r[0]) for r in rows]
        if limit < 0 and (offset <= 0 or items):  # every match from `offset` on was read: no COUNT needed
            total = max(offset, 0) + len(items)
        else:
            total = self._db.execute(
                f"SELECT COUNT(*) FROM {table} WHERE {plan.where}", plan.params
            ).fetchone()[0]
        return PaginatedResult(items=items, limit=limit, offset=offset, total=total)

    @tracked("get")
    async def get(self, filter: FilterOptions | None = None, sort: SortOptions | None = None) -> T | None:
        return await self._db.run(False, lambda: self._get(filter, sort))

    def _get(self, filter: FilterOptions | None, sort: SortOptions | None) -> T | None:
        plan = self._plan(filter, sort)
        if plan is None:
            matched = self._python_query(filter, sort)
            return matched[0] if matched else None
        row = self._db.execute(
            f"SELECT data FROM {self._spec.name} WHERE {plan.where} ORDER BY {plan.order} LIMIT 1",
            plan.params,
        ).fetchone()
        return self._load(row[0]) if row else None

    @tracked("insert")
    async def insert(self, items: Sequence[T]) -> None:
        seen: set[tuple[Any, ...]] = set()
        for item in items:
            self._check_type(item)
            pk = self._pk(item)
            if pk in seen:
                raise DuplicatedPrimaryKeyError(
                    f"Insert payload contains duplicated primary key(s): {self._render(pk)}"
                )
            seen.add(pk)
        if items:
            await self._db.run(True, lambda: self._insert([self._row(item) for item in items]))

    def _insert(self, rows: list[list[Any]]) -> None:
        """All or nothing, even inside a larger transaction (agl catches the duplicate and goes on)."""
        self._db.execute("SAVEPOINT agl_insert")
        try:
            self._db.executemany(self._insert_sql, rows)
        except sqlite3.IntegrityError as exc:
            self._db.execute("ROLLBACK TO agl_insert")
            self._db.execute("RELEASE agl_insert")
            raise DuplicatedPrimaryKeyError(
                f"Item already exists in {self._spec.name} with one of the inserted primary keys: {exc}"
            ) from None
        self._db.execute("RELEASE agl_insert")

    def _merge(self, existing: T, item: T, update_fields: Sequence[str] | None) -> T:
        if update_fields is None:
            return item
        return existing.model_copy(update={field: getattr(item, field) for field in update_fields})

    def _write(self, merged: T) -> None:
        self._db.execute(self._update_sql, [*self._row(merged), *self._pk(merged)])

    @tracked("update")
    async def update(self, items: Sequence[T], update_fields: Sequence[str] | None = None) -> Sequence[T]:
        for item in items:
            self._check_type(item)
        return await self._db.run(True, lambda: self._update(items, update_fields, insert_missing=False))

    @tracked("upsert")
    async def upsert(self, items: Sequence[T], update_fields: Sequence[str] | None = None) -> Sequence[T]:
        for item in items:
            self._check_type(item)
        return await self._db.run(True, lambda: self._update(items, update_fields, insert_missing=True))

    def _update(
        self, items: Sequence[T], update_fields: Sequence[str] | None, insert_missing: bool
    ) -> list[T]:
        written: list[T] = []
        for item in items:
            existing = self._fetch_existing(self._pk(item))
            if existing is None:
                if not insert_missing:
                    raise ValueError(
                        f"Item does not exist with primary key(s): {self._render(self._pk(item))}"
                    )
                self._db.execute(self._insert_sql, self._row(item))
                written.append(item)
            else:
                merged = self._merge(existing, item, update_fields)
                self._write(merged)
                written.append(merged)
        return written

    @tracked("delete")
    async def delete(self, items: Sequence[T]) -> None:
        for item in items:
            self._check_type(item)
        await self._db.run(True, lambda: self._delete(items))

    def _delete(self, items: Sequence[T]) -> None:
        for item in items:
            pk = self._pk(item)
            deleted = self._db.execute(f"DELETE FROM {self._spec.name} WHERE {self._pk_where}", list(pk))
            if deleted.rowcount == 0:
                raise ValueError(f"Item does not exist with primary key(s): {self._render(pk)}")


class SqliteQueue(Queue[Q], Generic[Q]):
    """FIFO of JSON values; dequeue removes rows inside the caller's transaction."""

    def __init__(
        self, db: SqliteDatabase, table: str, item_type: type[Q], tracker: MetricsBackend | None = None
    ):
        super().__init__(tracker=tracker)
        self._db, self._table, self._item_type = db, table, item_type
        self.on_enqueue: Callable[[], None] | None = None  # SqliteLightningStore.ring_on_enqueue

    @property
    def collection_name(self) -> str:
        return self._table

    def item_type(self) -> type[Q]:
        return self._item_type

    def _check_type(self, item: Q) -> None:
        if not isinstance(item, self._item_type):
            raise TypeError(f"Expected item of type {self._item_type.__name__}, got {type(item).__name__}")

    @tracked("has")
    async def has(self, item: Q) -> bool:
        self._check_type(item)
        sql = f"SELECT 1 FROM {self._table} WHERE item = ? LIMIT 1"
        return await self._db.run(
            False, lambda: self._db.execute(sql, [json.dumps(item)]).fetchone() is not None
        )

    @tracked("enqueue")
    async def enqueue(self, items: Sequence[Q]) -> Sequence[Q]:
        for item in items:
            self._check_type(item)
        rows = [[json.dumps(item)] for item in items]
        await self._db.run(
            True, lambda: self._db.executemany(f"INSERT INTO {self._table} (item) VALUES (?)", rows)
        )
        if rows and self.on_enqueue is not None:
            self.on_enqueue()
        return items

    def _front(self, limit: int) -> list[tuple[int, Q]]:
        rows = self._db.execute(f"SELECT _row, item FROM {self._table} ORDER BY _row LIMIT ?", [limit])
        return [(row, json.loads(item)) for row, item in rows]

    def _pop_front(self, limit: int) -> list[Q]:
        front = self._front(limit)
        if front:
            self._db.execute(f"DELETE FROM {self._table} WHERE _row <= ?", [front[-1][0]])
        return [item for _, item in front]

    @tracked("dequeue")
    async def dequeue(self, limit: int = 1) -> Sequence[Q]:
        if limit <= 0:
            return []
        return await self._db.run(True, lambda: self._pop_front(limit))

    @tracked("peek")
    async def peek(self, limit: int = 1) -> Sequence[Q]:
        if limit <= 0:
            return []
        return await self._db.run(False, lambda: [item for _, item in self._front(limit)])

    @tracked("size")
    async def size(self) -> int:
        return await self._db.run(
            False, lambda: self._db.execute(f"SELECT COUNT(*) FROM {self._table}").fetchone()[0]
        )


class SqliteKeyValue(KeyValue[K, V], Generic[K, V]):
    """A key -> JSON value table; `inc`/`chmax` read-modify-write inside the caller's transaction."""

    def __init__(self, db: SqliteDatabase, table: str, tracker: MetricsBackend | None = None):
        super().__init__(tracker=tracker)
        self._db, self._table = db, table

    @property
    def collection_name(self) -> str:
        return self._table

    def _read(self, key: K) -> tuple[bool, Any]:
        row = self._db.execute(f"SELECT value FROM {self._table} WHERE key = ?", [json.dumps(key)]).fetchone()
        return (True, json.loads(row[0])) if row else (False, None)

    def _store(self, key: K, value: Any) -> None:
        self._db.execute(
            f"INSERT INTO {self._table} (key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [json.dumps(key), json.dumps(value)],
        )

    @tracked("has")
    async def has(self, key: K) -> bool:
        return await self._db.run(False, lambda: self._read(key)[0])

    @tracked("get")
    async def get(self, key: K, default: V | None = None) -> V | None:
        found, value = await self._db.run(False, lambda: self._read(key))
        return value if found else default

    @tracked("set")
    async def set(self, key: K, value: V) -> None:
        await self._db.run(True, lambda: self._store(key, value))

    @tracked("inc")
    async def inc(self, key: K, amount: V) -> V:
        assert ensure_numeric(amount, description="amount")
        return await self._db.run(True, lambda: self._update(key, lambda current: current + amount, amount))

    @tracked("chmax")
    async def chmax(self, key: K, value: V) -> V:
        assert ensure_numeric(value, description="value")
        return await self._db.run(True, lambda: self._update(key, lambda current: max(current, value), value))

    def _update(self, key: K, combine: Callable[[Any], Any], initial: V) -> V:
        found, current = self._read(key)
        if not found:
            new_value = initial
        else:
            assert ensure_numeric(current, description=f"value for key {key!r}")
            new_value = combine(current)
            if new_value == current:
                return current
        self._store(key, new_value)
        return new_value

    @tracked("pop")
    async def pop(self, key: K, default: V | None = None) -> V | None:
        return await self._db.run(True, lambda: self._pop(key, default))

    def _pop(self, key: K, default: V | None) -> V | None:
        found, value = self._read(key)
        if not found:
            return default
        self._db.execute(f"DELETE FROM {self._table} WHERE key = ?", [json.dumps(key)])
        return value

    @tracked("size")
    async def size(self) -> int:
        return await self._db.run(
            False, lambda: self._db.execute(f"SELECT COUNT(*) FROM {self._table}").fetchone()[0]
        )


class SqliteLightningCollections(LightningCollections):
    """The seven collections agl's store needs, sharing one SQLite transaction per `atomic()` block."""

    def __init__(self, db: SqliteDatabase, tracker: MetricsBackend | None = None, max_retries: int = 8):
        super().__init__(tracker=tracker)
        self.db = db
        self._max_retries = max_retries
        self._rollouts = SqliteCollection(db, _SPECS["rollouts"], Rollout, tracker)
        self._attempts = SqliteCollection(db, _SPECS["attempts"], Attempt, tracker)
        self._spans = SqliteCollection(db, _SPECS["spans"], Span, tracker)
        self._resources = SqliteCollection(db, _SPECS["resources"], ResourcesUpdate, tracker)
        self._workers = SqliteCollection(db, _SPECS["workers"], Worker, tracker)
        self._rollout_queue: SqliteQueue[str] = SqliteQueue(db, "rollout_queue", str, tracker)
        self._span_sequence_ids: SqliteKeyValue[str, int] = SqliteKeyValue(db, "span_sequence_ids", tracker)

    @property
    def collection_name(self) -> str:
        return "router"

    @property
    def rollouts(self) -> SqliteCollection[Rollout]:
        return self._rollouts

    @property
    def attempts(self) -> SqliteCollection[Attempt]:
        return self._attempts

    @property
    def spans(self) -> SqliteCollection[Span]:
        return self._spans

    @property
    def resources(self) -> SqliteCollection[ResourcesUpdate]:
        return self._resources

    @property
    def workers(self) -> SqliteCollection[Worker]:
        return self._workers

    @property
    def rollout_queue(self) -> SqliteQueue[str]:
        return self._rollout_queue

    @property
    def span_sequence_ids(self) -> SqliteKeyValue[str, int]:
        return self._span_sequence_ids

    @asynccontextmanager
    async def atomic(
        self,
        *,
        mode: AtomicMode = "rw",
        snapshot: bool = False,
        commit: bool = False,
        labels: Sequence[AtomicLabels] | None = None,
        **kwargs: Any,
    ):
        """One SQLite transaction: all-or-nothing, serialised with every other write (labels are moot)."""
        async with self.db.transaction(write=mode != "r", snapshot=snapshot):
            yield self

    async def execute(
        self,
        callback: Callable[[SqliteLightningCollections], Awaitable[R]],
        *,
        mode: AtomicMode = "rw",
        snapshot: bool = False,
        commit: bool = False,
        labels: Sequence[AtomicLabels] | None = None,
        **kwargs: Any,
    ) -> R:
        """Run `callback` in one transaction; retry when another process holds the write lock."""
        nested = self.db.current() is not None
        for attempt in range(self._max_retries + 1):
            try:
                async with self.atomic(mode=mode, snapshot=snapshot, labels=labels):
                    return await callback(self)
            except sqlite3.OperationalError as exc:
                if nested or not is_transient(exc) or attempt == self._max_retries:
                    raise
                await asyncio.sleep(random.uniform(0.01, 0.05) * (attempt + 1))
        raise AssertionError("unreachable")
