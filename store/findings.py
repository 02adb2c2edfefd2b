"""Findings: the list the CLI prints, and the findings queue (filtered by kind, code, tool, pack version and
label state, paged by keyset on id, with progress and facets); plus the rows a finding's evidence rests on
(assembled into evidence by `reviewer.review.evidence`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from store import runs
from store.db.derived import KIND_TOOL_SEP, named_in_refs
from store.db.postgres import is_postgres
from store.errors import NotFound
from store.labels import current_by_target, history, state_condition
from store.rows import Count, fetch_rows, finding_out
from store.runs import resolve_run
from store.tallies import FINDING_FILTER_FACETS, tally, tally_values
from store.vocab import DANGLING_REFERENCE, DISAGREEMENT, disagreement_sql
from store.windows import count_by_windows


def list_findings(
    db: Database,
    *,
    kind: str | None = None,
    run: str | None = None,
    after: str | None = None,
    limit: int | None = None,
    unlabelled: bool = False,
) -> list[dict[str, Any]]:
    """Findings across runs (or of one run) in the queue's order: by run, then position in the run (with
    `after`, by id); `unlabelled`: only those nobody has a current label on."""
    where: list[str] = []
    params: list[Any] = []
    if unlabelled:
        condition = state_condition("unlabelled", None)
        assert condition is not None
        where.append(condition[0])
    if kind:
        where.append("f.kind = ?")
        params.append(kind)
    if run:
        where.append("f.run_key = ?")
        params.append(resolve_run(db, run))
    if after:
        where.append("f.id > ?")
        params.append(after)
    sql = "SELECT f.* FROM findings f" + (" WHERE " + " AND ".join(where) if where else "")
    sql += " ORDER BY f.id" if after else f" ORDER BY {', '.join(QUEUE_SORTS['run'])}"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [finding_out(f) for f in fetch_rows(db, sql, params)]


def _filters(
    db: Database | None = None,
    *,
    kind: str | None = None,
    code: str | None = None,
    tool: str | None = None,
    pack_version: str | None = None,
    state: str = "any",
    reviewer: str | None = None,
    run_key: str | None = None,
    tool_as_range: bool = False,
) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    if kind:
        where.append("f.kind = ?")
        params.append(kind)
    if code:
        # one probe of the (code, finding) index (schema m021), where reading each finding's codes as JSON made
        # a rare code's queue a scan of every finding
        where.append("EXISTS (SELECT 1 FROM finding_codes c WHERE c.code = ? AND c.finding = f.id)")
        params.append(code)
    if tool and db is not None and _named_only_as_own(db, tool):
        # as the tool index spells it (a tool is never the empty name here); in the tool order on SQLite as a
        # range of one value: under an equality on its index's expression SQLite 3.40 sorted every finding of
        # the tool (47,340 at a million runs: 40 ms), and reads a range in the index's order (in other orders
        # the range made it choose the tool's index and sort, where the equality let it walk the order's)
        if tool_as_range and not is_postgres(db):
            where.append(f"{TOOL} BETWEEN ? AND ?")
            params.extend([tool, tool])
        else:
            where.append(f"{TOOL} = ?")
            params.append(tool)
    elif tool:
        # a finding's refs are parsed only where their text holds the name (orjson writes such a name as it
        # is): parsing every finding's refs made the queue by tool 150-300 ms a page on PostgreSQL
        written_as_is = tool.isprintable() and '"' not in tool and "\\" not in tool
        # the names are those the `tool_named` tally counts (refs that are not JSON, elements that are not
        # objects and values that are not text name none: they raised "malformed JSON" here before)
        held = "f.refs LIKE ? AND " if written_as_is else ""
        where.append(
            f"(f.tool_name = ? OR ({held}EXISTS ({named_in_refs('f.refs', value='1')} AND k.value = ?)))"
        )
        params.extend([tool, *([f"%{tool}%"] if written_as_is else []), tool])
    if pack_version:
        where.append("f.pack_version = ?")
        params.append(pack_version)
    if run_key:
        where.append("f.run_key = ?")
        params.append(run_key)
    condition = state_condition(state, reviewer)
    if condition is not None:
        where.append(condition[0])
        params.extend(condition[1])
    if _never_meet(db, {"kind": kind, "code": code, "tool": tool, "pack_version": pack_version}):
        where.insert(0, _NONE)
    return where, params


#: The index of findings by id that holds every queue sort's keys (schema m024): a set read by id is read and
#: sorted from it alone, never from the findings' rows.
FINDING_KEYS_INDEX = "findings_keys"
#: On PostgreSQL a code's findings with their queue keys, named as the findings' columns (schema m031: the
#: view over `finding_codes`, read from its keys index alone): a set read whole there with no probe of the
#: findings by id (a code of 14,600 findings: 2.5 us a finding).
CODE_KEYS_SOURCE = "finding_code_keys"


def _named_only_as_own(db: Database, tool: str) -> bool:
    """Whether every finding that names `tool` has it as its own tool: the tallies hold as many findings
    naming it (`tool_named`, its own or in their refs) as having it as their own (`tool`), and the latter are
    among the former. The tool filter is then the finding's own tool alone, one range of the tool index:
    at a million runs on PostgreSQL, testing every finding's refs while walking the run order cost
    40-60 ms a read for a tool whose first finding is 10,000 findings in (the page, where the queue opens
    and its row there each read them)."""
    return tally(db, "tool_named", tool) == tally(db, "tool", tool)


#: A finding's position in its run (the recording event it was filed at; run-level findings, with no event,
#: first): the key the store's queue-order indexes (schema m013) are built on, spelled the same here.
POSITION = "coalesce(f.seq, -1)"
#: A run's start, newest first as an ascending key (unknown starts last), as `runs_newest_first` indexes it.
NEWEST = "-coalesce(r.started_ms, -1)"
#: A finding's run's start, newest first, as the finding carries it (schema m030): PostgreSQL's newest-first
#: order, read from one index of findings (`findings_newest_order`; a kind's, `findings_kind_newest_order`).
NEWEST_OF_FINDING = "-coalesce(f.run_started_ms, -1)"
#: A finding's tool (findings of no tool, or an empty name, are read last, as a part of their own: `_parts`).
TOOL = "ifnull(f.tool_name, '')"
#: The label-state condition "reviewers' current verdicts on it differ", driven from the labels (few).
_DISAGREEING_IDS = "SELECT l.target_id FROM current_labels l GROUP BY l.target_id HAVING " + disagreement_sql(
    "l.verdict"
)
_DISAGREEING = f"f.id IN ({_DISAGREEING_IDS})"
#: Where the disagreeing findings are read: by their ids, from the index that leads with the id (m024).
_DISAGREEING_SOURCE = "findings f INDEXED BY findings_keys CROSS JOIN runs r ON r.key = f.run_key"

#: queue sort -> its ascending key expressions (each ends with the run, the position in it and `f.id`, so
#: findings of one run stay together and the order is total). Each is the column list of an index.
QUEUE_SORTS: dict[str, tuple[str, ...]] = {
    "run": ("f.run_key", POSITION, "f.id"),
    "newest": (NEWEST, "r.key", POSITION, "f.id"),
    "kind": ("f.kind", "f.run_key", POSITION, "f.id"),
    "tool": (TOOL, "f.run_key", POSITION, "f.id"),
    DISAGREEMENT: ("f.run_key", POSITION, "f.id"),
}
#: what each sort is called where the reviewer picks it
QUEUE_SORT_TITLES: dict[str, str] = {
    "run": "by run",
    "newest": "newest run first",
    "kind": "by kind",
    "tool": "by tool",
    DISAGREEMENT: "disagreements first",
}


#: The newest-first keys as PostgreSQL reads them: the same values as QUEUE_SORTS["newest"] (a finding's
#: `run_started_ms` is its run's `started_ms`, its `run_key` the run's key), so cursors are the same.
_NEWEST_BY_FINDING = (NEWEST_OF_FINDING, "f.run_key", POSITION, "f.id")


def _runs_walked(db: Database, sort: str) -> bool:
    """Whether `sort` is read by walking the runs newest first a chunk at a time (SQLite, where that walk is
    the cheaper: its keys index holds no start, and probing a run's findings costs it little), rather than
    from the findings' own newest-first index (PostgreSQL, schema m030: the walk cost a filter's page
    55-105 ms at a million runs there, and a kind read whole and sorted 90 ms)."""
    return sort == "newest" and not is_postgres(db)


def sort_keys(db: Database, sort: str) -> tuple[str, ...]:
    """The key expressions of `sort` on `db`'s backend (QUEUE_SORTS, but newest first on PostgreSQL)."""
    return _NEWEST_BY_FINDING if sort == "newest" and not _runs_walked(db, sort) else QUEUE_SORTS[sort]


def _sort(sort: str | None) -> str:
    name = sort or "run"
    if name not in QUEUE_SORTS:
        raise ValueError(f"unknown queue sort {name!r}; known: {', '.join(QUEUE_SORTS)}")
    return name


def _parts(sort: str) -> list[tuple[int, list[str]]]:
    """The parts of the queue in reading order, each (tag, conditions): one for most sorts; for
    "disagreements first", the findings whose reviewers disagree (read from the labels), then the rest; for
    "by tool", the findings of a tool, then those of none."""
    if sort == DISAGREEMENT:
        return [(0, [_DISAGREEING]), (1, [f"NOT {_DISAGREEING}"])]
    if sort == "tool":
        return [(0, [f"{TOOL} > ''"]), (1, [f"{TOOL} = ''"])]
    return [(0, [])]


def _source(db: Database, sort: str, *, runs_needed: bool = True) -> str:
    """The FROM clause of `sort`: findings (and their runs, for the columns a page shows) in an order SQLite
    does not get to choose, since with statistics it may otherwise walk every run to sort their findings."""
    if _runs_walked(db, sort):
        # the runs in start order by their index (SQLite would rather sort the table: the index does not
        # hold `started_ms` itself), each run's findings by the run index
        return "runs r INDEXED BY runs_newest_first CROSS JOIN findings f ON f.run_key = r.key"
    return "findings f CROSS JOIN runs r ON r.key = f.run_key" if runs_needed else "findings f"


def _after(db: Database, sort: str, cursor: list[Any]) -> tuple[list[str], list[Any]]:
    """Conditions for the rows after `cursor` (the part's key values) in one part of `sort`: the whole key
    compared as a row, and its first expression alone (what lets SQLite seek an expression index there)."""
    exprs = sort_keys(db, sort)
    marks = ", ".join("?" for _ in exprs)
    return [f"{exprs[0]} >= ?", f"({', '.join(exprs)}) > ({marks})"], [cursor[0], *cursor]


#: The newest-first walk reads runs this many at a time at first (then four times more each round, up to
#: RUN_CHUNK_MAX), and their findings by the run index: one join over every run would make SQLite build a
#: Bloom filter over every finding first (a second at a million runs) under a label-state filter.
RUN_CHUNK = 64
RUN_CHUNK_MAX = 1_024


#: Reading a set of findings whole and sorting it costs about READ_ROW_US a finding (each a random row of
#: the findings and runs tables); walking a sort's index and testing each entry about WALK_ENTRY_US (measured
#: at a million runs). So a filter leaving `m` of `n` findings is read whole while m x READ_ROW_US is below
#: the walk's n / m x page x WALK_ENTRY_US: m below sqrt(n x page x WALK_ENTRY_US / READ_ROW_US), about
#: 3,000 at a million runs. At a million runs a reviewer's own labels ("mine", none yet) newest first walked
#: every finding (3.9 s); read whole they cost a few milliseconds.
READ_ROW_US = 20
WALK_ENTRY_US = 2
#: On PostgreSQL a walk costs more an entry in the run and newest orders (each entry's row is read to test
#: the filter: the order's index is one of expressions), so a set read by its keys index (schema m024: a
#: code, a labelled state) is read whole up to about 18,000 findings there: at a million runs a rare code
#: (14,600 findings) newest first opened in 65-80 ms walking the runs by chunks and 26-31 ms read whole, by
#: run 22-36 ms and 17-20 ms; walking the findings' own newest-first index (m030) it took 175 ms, read whole
#: 46 ms (15-22 ms in every order from `finding_code_keys`, m031). Disagreements first likewise, now that the
#: disagreeing findings are read by id (a set read whole is read for the rest alone; reading it for each of
#: the two parts took 240-270 ms): the rare code walked 48-60 ms, read whole 22-39 ms.
WALK_ENTRY_US_POSTGRES = 7
_POSTGRES_WALK_SORTS = ("run", "newest", DISAGREEMENT)
#: A set read by id from FINDING_KEYS_INDEX, its runs' starts from `runs_key_started` (schema m024), costs
#: about this much a finding instead: a rare code's 13,790 findings read and sorted newest first in 16 ms at
#: a million runs (113 ms from the tables' rows).
READ_KEY_US = 2
#: The rows of a queue page the app reads at a time (its block).
QUEUE_BLOCK = 100
#: Where the walk's cost cannot be judged, a set is read whole while reading it costs at most this (400 ms,
#: where a walk may pass every finding at a million runs: 20,000 findings from their rows, 200,000 from the
#: keys index): under two or more filters whose meeting is not counted (a kind and a code no finding has
#: together walked every finding of the kind: 12 s newest first, 314 ms by run), and in the "kind" and "tool"
#: sorts, along which a code or a pack version is bunched in the kinds or tools that file it, not spread (a
#: rare code by kind walked 1.3 s; a code of 24,440 findings, past the 20,000 a read of rows could afford,
#: 1.2 s).
READ_WHOLE_BUDGET_US = 400_000
READ_WHOLE_AT_MOST = READ_WHOLE_BUDGET_US // READ_ROW_US
#: The finding ids under a labelled state (few while few findings are labelled): the set such a page reads.
_LABELLED_IDS: dict[str, str] = {
    "labelled": "SELECT l.target_id FROM current_labels l",
    "mine": "SELECT l.target_id FROM current_labels l WHERE l.reviewer = ?",
    DISAGREEMENT: _DISAGREEING_IDS,
}


def _ids_in(db: Database, ids: str) -> str:
    """The condition "the finding's id is one of `ids`" (a subquery) for a set read whole by its ids: on
    PostgreSQL as an array, which it reads by probing `findings_keys` for each id, where as a semi-join it
    chose to scan every finding of a kind and hash them (a kind and a code, disagreements first: 444 ms
    against 51 ms at a million runs)."""
    return f"f.id = ANY(ARRAY({ids}))" if is_postgres(db) else f"f.id IN ({ids})"


@dataclass(frozen=True)
class _Driver:
    """How a page reads a filter's findings whole: the index SQLite must read them by, and a condition (with
    its parameters) that lets it, beside the filters themselves."""

    index: str
    conds: tuple[str, ...] = ()
    params: tuple[Any, ...] = ()
    #: the filter its condition stands for (the filter's own condition is then left out: a second probe of
    #: the same index per finding)
    replaces: str | None = None

    @property
    def row_us(self) -> int:
        """What reading one of its findings whole costs (READ_KEY_US where its index holds the sort keys)."""
        return (
            READ_KEY_US if self.index in (FINDING_KEYS_INDEX, _TOOL_ORDER, CODE_KEYS_SOURCE) else READ_ROW_US
        )

    @property
    def at_most(self) -> int:
        """The most findings it reads whole where the walk's cost cannot be judged (READ_WHOLE_BUDGET_US)."""
        return READ_WHOLE_BUDGET_US // self.row_us


def _at_most(db: Database, select: str, params: list[Any], cap: int = READ_WHOLE_AT_MOST) -> int:
    """How many rows `select` has, counted up to `cap` + 1."""
    return int(db.execute(f"SELECT count(*) FROM ({select} LIMIT {cap + 1})", params).fetchone()[0])


#: The sorts whose walk reads a kind's findings in order from one index (findings_kind_order: kind, run,
#: position, id): a kind alone walks there whatever its size.
_KIND_ORDERED_SORTS = ("run", "kind", "tool", DISAGREEMENT)
#: A kind's findings by tool, in the tool sort's order (schema m020): walking the tool index and testing each
#: finding's kind read whole tools of other kinds (a rare kind by tool 2.3 s at a million runs), and
#: counting the rows before a finding read the whole kind (the first coverage gap by tool: 1.2 s).
_KIND_BY_TOOL = "findings f INDEXED BY findings_kind_tool_order"
#: The tool order's index (schema m013; m028 with each finding's pack version): a tool's findings and their
#: queue keys, read whole from it alone.
_TOOL_ORDER = "findings_tool_order"
#: Each sort's own index of findings (schema m013), which a walk reads in order.
_ORDER_INDEX = {
    "run": "findings_queue_order",
    "kind": "findings_kind_order",
    "tool": "findings_tool_order",
    DISAGREEMENT: "findings_queue_order",
}


def _driver(db: Database, filters: dict[str, Any], sort: str) -> _Driver | None:
    """The most selective filter's way to read its findings whole, when that is cheaper than walking the
    sort's index (READ_ROW_US); None: walk. Each filter's size is cheap to know: a run's findings, a tally (a kind, a
    code, a pack version), the pair of a pack version and a kind counted on their index, the labels of a
    labelled state."""
    active = _active_filters(filters)
    if active.get("run_key"):
        return _Driver("findings_run")
    sizes: list[tuple[int, _Driver]] = []
    kind, pack = active.get("kind"), active.get("pack_version")
    # newest first on PostgreSQL: the kind's own newest-first index (m030)
    kind_ordered = sort in _KIND_ORDERED_SORTS or (sort == "newest" and not _runs_walked(db, sort))
    if kind and not kind_ordered and is_postgres(db):
        # the kind's ids from its index alone, their sort keys from the keys index (schema m024), as a code's
        ids = _ids_in(db, "SELECT k.id FROM findings k WHERE k.kind = ?")
        sizes.append((tally(db, "kind", str(kind)), _Driver(FINDING_KEYS_INDEX, (ids,), (kind,))))
    elif kind and not kind_ordered:
        sizes.append((tally(db, "kind", str(kind)), _Driver("findings_kind")))
    tool = active.get("tool")
    # newest first, a tool's findings with a pack version from the tool order's index alone, which holds
    # their keys and (schema m028) their pack version: where the two seldom meet the walk visited tens of
    # thousands of runs (a common tool with the extension pack version at a million runs: 72-75 ms a page,
    # 27-40 so); with any other filter each finding's row would be read (a kind: 94 ms). PostgreSQL tests both
    # on its newest-first index's own columns (schema m030)
    tool_with_pack = set(active) == {"tool", "pack_version"} and sort == "newest" and not is_postgres(db)
    if tool_with_pack and _named_only_as_own(db, str(tool)):
        sizes.append((tally(db, "tool", str(tool)), _Driver(_TOOL_ORDER)))
    # the view holds no refs: a tool some findings name only in their refs is tested on the findings' rows
    code = active.get("code")
    if code and is_postgres(db) and not (tool and not _named_only_as_own(db, str(tool))):
        by_code = _Driver(CODE_KEYS_SOURCE, ("f.code = ?",), (code,), replaces="code")
        sizes.append((tally(db, "code", str(code)), by_code))
    elif code:
        codes = _ids_in(db, "SELECT c.finding FROM finding_codes c WHERE c.code = ?")
        sizes.append(
            (tally(db, "code", str(code)), _Driver(FINDING_KEYS_INDEX, (codes,), (code,), replaces="code"))
        )
    if pack and kind:
        pair = (
            "SELECT 1 FROM findings f INDEXED BY findings_pack_kind WHERE f.pack_version = ? AND f.kind = ?"
        )
        sizes.append((_at_most(db, pair, [pack, kind]), _Driver("findings_pack_kind")))
    elif pack:
        sizes.append((tally(db, "pack_version", str(pack)), _Driver("findings_pack_kind")))
    state = filters.get("state") or "any"
    if state in _LABELLED_IDS:
        condition = _ids_in(db, _LABELLED_IDS[state])
        params = [filters.get("reviewer") or ""] if "?" in condition else []
        by_id = _Driver(FINDING_KEYS_INDEX, (condition,), tuple(params))
        labelled = _at_most(db, f"SELECT 1 FROM findings f WHERE {condition}", params, by_id.at_most)
        sizes.append((labelled, by_id))
    if not sizes:
        return None
    # the cheapest read, not the smallest set: a kind read from its rows costs ten times a code read from the
    # keys index a finding (a rare kind and a rare code of 13,790 findings each, newest first at a million
    # runs, read by the kind: 60-96 ms)
    size, driver = min(sizes, key=lambda s: (s[0] * s[1].row_us, s[0]))
    # how the filters meet is counted for one filter, or a pack version and a kind (their pair's size); any
    # other two (a code within a kind, anything with a tool) may share no finding, and a walk then passes
    # every finding of the walked index
    counted = len(active) <= 1 or (len(active) == 2 and bool(pack and kind))
    if sort in ("kind", "tool") or len(sizes) > 1 or not counted:
        return driver if size <= driver.at_most else None
    keys_read = driver.index in (FINDING_KEYS_INDEX, CODE_KEYS_SOURCE) and sort in _POSTGRES_WALK_SORTS
    entry_us = WALK_ENTRY_US_POSTGRES if keys_read and is_postgres(db) else WALK_ENTRY_US
    walked = tally(db, "findings") * QUEUE_BLOCK * entry_us
    return driver if size * size * driver.row_us <= walked else None


def _kinds_holding(db: Database, filters: dict[str, Any]) -> list[str] | None:
    """The kinds that hold findings of the filters' code (its `kind_code` tallies, schema m027), tool
    (`kind_tool`, m023) and pack version (a seek of `findings_pack_kind` a kind), within the filters' kind;
    None when none of those is set, or when the tallies cannot say (a value holding their separator, a
    finding with no kind). At most four statements, whatever the number of kinds (PostgreSQL pays a round
    trip each)."""
    kind, code, tool, pack = (filters.get(name) for name in ("kind", "code", "tool", "pack_version"))
    if not (code or tool or pack) or any(KIND_TOOL_SEP in str(v) for v in (kind, code, tool) if v):
        return None
    counts = db.execute(
        "SELECT facet, value, n FROM tallies WHERE facet = 'findings' OR (facet = 'kind' AND value != '') "
        f"LIMIT {_KINDS_AT_MOST}"
    ).fetchall()
    every_kind = sorted(str(value) for facet, value, _ in counts if facet == "kind")
    findings_n = sum(int(n) for facet, _, n in counts if facet == "findings")
    if len(counts) >= _KINDS_AT_MOST or sum(int(n) for f, _, n in counts if f == "kind") != findings_n:
        return None
    kinds = [str(kind)] if kind else every_kind
    for facet, value in (("kind_code", code), ("kind_tool", tool)):
        if value and kinds:
            pairs = {f"{k}{KIND_TOOL_SEP}{value}": k for k in kinds}
            marks = ", ".join("?" for _ in pairs)
            held = {
                pairs[str(r[0])]
                for r in db.execute(
                    f"SELECT value FROM tallies WHERE facet = ? AND value IN ({marks}) AND n > 0",
                    [facet, *pairs],
                )
            }
            kinds = [k for k in kinds if k in held]
    if pack and kinds:
        seek = (
            "SELECT ? AS kind WHERE EXISTS (SELECT 1 FROM findings f INDEXED BY findings_pack_kind "
            "WHERE f.pack_version = ? AND f.kind = ?)"
        )
        held = {
            str(r[0])
            for r in db.execute(
                " UNION ALL ".join(seek for _ in kinds), [v for k in kinds for v in (k, str(pack), k)]
            )
        }
        kinds = [k for k in kinds if k in held]
    return kinds


#: More kinds than this and the tallies are not read for them (the framework files a handful).
_KINDS_AT_MOST = 1_000
#: A condition no finding meets, in either dialect.
_NONE = "1 = 0"


def _never_meet(db: Database | None, filters: dict[str, Any]) -> bool:
    """Whether two or more filters are filed under no common kind, so no finding meets them all: known from
    the tallies in a few reads, where a walk read every finding of the store to learn it."""
    named = [name for name in ("kind", "code", "tool", "pack_version") if filters.get(name)]
    return db is not None and len(named) >= 2 and _kinds_holding(db, filters) == []


def _driven_filters(
    db: Database, filters: dict[str, Any], sort: str
) -> tuple[list[str], list[Any], _Driver | None]:
    """The filters' conditions and parameters, with the driver's (when a set is read whole) appended."""
    driver = _driver(db, filters, sort)
    where, params = _filters(
        db,
        **{k: v for k, v in filters.items() if driver is None or k != driver.replaces},
        tool_as_range=sort == "tool",
    )
    if driver is not None:
        where, params = [*where, *driver.conds], [*params, *driver.params]
        if driver.replaces and _NONE not in where and _never_meet(db, filters):
            where.insert(0, _NONE)  # the replaced filter is one of two that never meet (`_filters` saw one)
    return where, params, driver


def _active_filters(filters: dict[str, Any]) -> dict[str, Any]:
    """The queue filters that filter (label state and reviewer aside)."""
    return {k: v for k, v in filters.items() if k not in ("state", "reviewer") and v not in (None, "", False)}


def _driven_source(db: Database, sort: str, driver: _Driver | None, *, kind: bool = False) -> str:
    """The FROM clause of a count or an offset in `sort` order: the driver's index when there is one (`kind`:
    the filters name a kind)."""
    walked = _runs_walked(db, sort)
    if driver is None and kind and sort in ("tool", "run", "kind"):
        return _KIND_BY_TOOL if sort == "tool" else "findings f INDEXED BY findings_kind_order"
    if driver is None:
        return _source(db, sort, runs_needed=walked)
    # a run's start by its key from the index that holds both (schema m024), not the run's row; on
    # PostgreSQL the keys index holds the finding's own (m030)
    runs_join = " CROSS JOIN runs r INDEXED BY runs_key_started ON r.key = f.run_key" if walked else ""
    if driver.index == CODE_KEYS_SOURCE:  # a view, not an index of the findings (PostgreSQL)
        return f"{CODE_KEYS_SOURCE} f{runs_join}"
    return f"findings f INDEXED BY {driver.index}{runs_join}"


def _where(conds: list[str]) -> str:
    return " WHERE " + " AND ".join(conds) if conds else ""


def _part_rows(
    db: Database,
    sort: str,
    select: str,
    conds: list[str],
    params: list[Any],
    after: list[Any] | None,
    want: int,
    *,
    source: str | None = None,
    findings_source: str = "findings f",
    driver: _Driver | None = None,
) -> list[dict[str, Any]]:
    """Up to `want` rows of one part of `sort` after the key values `after`, in order (from `source`, else
    the sort's own; newest first, each chunk of runs' findings from `findings_source`). With a `driver`,
    its findings are read whole by its index (`_read_whole`)."""
    if _NONE in conds:  # filters that never meet (`_never_meet`): newest first would still walk every run
        return []
    keys_of_sort = sort_keys(db, sort)
    order = ", ".join(keys_of_sort)
    extra, extra_params = _after(db, sort, after) if after is not None else ([], [])
    if driver is not None:
        whole = _driven_source(db, sort, driver)
        return _read_whole(db, select, whole, keys_of_sort, [*conds, *extra], [*params, *extra_params], want)
    if not _runs_walked(db, sort):
        from_ = source or _source(db, sort)
        sql = f"SELECT {select} FROM {from_}{_where([*conds, *extra])} ORDER BY {order} LIMIT {want}"
        return fetch_rows(db, sql, [*params, *extra_params])
    out: list[dict[str, Any]] = []
    bound: tuple[Any, Any] | None = None if after is None else (after[0], after[1])
    inclusive, chunk = True, RUN_CHUNK
    while len(out) < want:
        run_conds: list[str] = []
        run_params: list[Any] = []
        if bound is not None:
            run_conds = [f"{NEWEST} >= ?", f"({NEWEST}, r.key) {'>=' if inclusive else '>'} (?, ?)"]
            run_params = [bound[0], *bound]
        run_rows = db.execute(
            f"SELECT {NEWEST}, r.key FROM runs r INDEXED BY runs_newest_first{_where(run_conds)} "
            f"ORDER BY {NEWEST}, r.key LIMIT {chunk}",
            run_params,
        ).fetchall()
        if not run_rows:
            break
        in_chunk, chunk_params = _run_keys_in(db, [key for _, key in run_rows])
        sql = (
            f"SELECT {select} FROM {findings_source} CROSS JOIN runs r ON r.key = f.run_key"
            f"{_where([*conds, in_chunk, *extra])} ORDER BY {order} LIMIT {want - len(out)}"
        )
        out += fetch_rows(db, sql, [*params, *chunk_params, *extra_params])
        if len(run_rows) < chunk:
            break
        bound, inclusive, chunk = run_rows[-1], False, min(chunk * 4, RUN_CHUNK_MAX)
    return out


def _run_keys_in(db: Database, keys: list[str]) -> tuple[str, list[Any]]:
    """The condition "the finding's run is one of `keys`" (a chunk of the newest-first walk) and its
    parameters: on PostgreSQL one array parameter, where a list of up to 1,024 placeholders cost 3-4 ms a
    chunk more to send and parse (7.6-9.5 against 4.5-5.2 ms for a chunk's findings at a million runs)."""
    if is_postgres(db):
        return "f.run_key = ANY(?)", [keys]
    return f"f.run_key IN ({', '.join('?' for _ in keys)})", list(keys)


def _walk(
    db: Database,
    sort: str,
    columns: str,
    filters: dict[str, Any],
    *,
    after: list[Any] | None = None,
    limit: int = 200,
) -> list[dict[str, Any]]:
    """Up to `limit` rows of the queue in `sort` order after the cursor `after`, each with its `cursor`
    (the part's tag, then its key values). Each part is one keyset range of an index."""
    exprs = sort_keys(db, sort)
    where, params, driver = _driven_filters(db, filters, sort)
    select = f"{columns}, " + ", ".join(f"{e} AS _k{i}" for i, e in enumerate(exprs))
    source = None
    if driver is None and sort == "tool" and filters.get("kind"):
        source = f"{_KIND_BY_TOOL} CROSS JOIN runs r ON r.key = f.run_key"
    elif driver is None and sort in ("run", "kind", DISAGREEMENT) and filters.get("kind"):
        # named: with statistics that do not know the kind-by-tool index (a store's from before m020), SQLite
        # read the kind through it and sorted it all (0.7 s a page for the commonest kind at a million runs)
        source = "findings f INDEXED BY findings_kind_order CROSS JOIN runs r ON r.key = f.run_key"
    elif driver is None and sort in _ORDER_INDEX and filters.get("pack_version"):
        # named: SQLite's statistics put a pack version's findings at about 2,001 (most findings have none, and
        # the sample counts their NULL as one value), so it read a pack version's 217,190 whole by its index
        # and sorted them (320 ms by run at a million runs, 500 ms by kind) instead of walking the order
        source = f"findings f INDEXED BY {_ORDER_INDEX[sort]} CROSS JOIN runs r ON r.key = f.run_key"
    if driver is None and sort == "kind" and not filters.get("kind"):
        # by kind, only the kinds that hold the filter's findings: a pack version or a tool is bunched in a few
        # kinds, and the walk passed every finding of the others first (a pack version by kind 500 ms at a
        # million runs, every coverage gap walked; a tool 56-72 ms)
        kinds = _kinds_holding(db, filters)
        if kinds is not None:
            source = "findings f INDEXED BY findings_kind_order CROSS JOIN runs r ON r.key = f.run_key"
            where = [*where, f"f.kind IN ({', '.join('?' for _ in kinds)})" if kinds else _NONE]
            params = [*params, *kinds]
    # newest first under a kind, each run is probed on the kind's index alone (its rows are read for matches);
    # else on the run order's index (under a pack version SQLite would read the pack's findings whole)
    by_run = (
        "findings f INDEXED BY findings_kind_run"
        if filters.get("kind")
        else "findings f INDEXED BY findings_queue_order"
    )
    if driver is not None and sort == "tool":
        return _tool_parts_read_whole(db, select, where, params, after, limit, driver)
    out: list[dict[str, Any]] = []
    for tag, conds in _parts(sort):
        if after is not None and tag < after[0]:
            continue
        want = limit - len(out)
        if want <= 0:
            break
        start = after[1:] if after is not None and tag == after[0] else None
        if sort == DISAGREEMENT and tag == 0:
            # the disagreeing findings first are read by id and the filters tested on them, never a filter's
            # set read whole nor an index walked (as SQLite chose under a common tool: 47,340 findings): there
            # are no more of them than labelled findings, whose list the condition reads anyway (PostgreSQL
            # read a kind's code whole twice, once for them: 68 ms at a million runs)
            plain, plain_params = _filters(db, **filters)
            part = _part_rows(
                db,
                sort,
                select,
                [_ids_in(db, _DISAGREEING_IDS), *plain],
                plain_params,
                start,
                want,
                source=_DISAGREEING_SOURCE,
            )
        else:
            part = _part_rows(
                db,
                sort,
                select,
                [*where, *conds],
                params,
                start,
                want,
                source=source,
                findings_source=by_run,
                driver=driver,
            )
        for row in part:
            row["cursor"] = [tag, *(row.pop(f"_k{i}") for i in range(len(exprs)))]
            out.append(row)
    return out


def _read_whole(
    db: Database,
    select: str,
    source: str,
    keys: tuple[str, ...],
    conds: list[str],
    params: list[Any],
    want: int,
) -> list[dict[str, Any]]:
    """The first `want` rows, in `keys` order, of a set read whole from `source` under `conds`: the set's
    keys sorted alone (a sort carrying every column of every finding cost 10 microseconds a row), then the
    page's own rows read. The set is read in a subquery of its own (a LIMIT no set reaches, which both
    backends accept, keeps PostgreSQL, which reads no INDEXED BY, from walking the order's index for the
    page's LIMIT instead: a rare code by kind took 13 s at a million runs)."""
    chosen = (
        f"SELECT w.rowid FROM (SELECT f.rowid AS rowid, {', '.join(f'{e} AS _o{i}' for i, e in enumerate(keys))}"
        f" FROM {source}{_where(conds)} LIMIT {1 << 62}) w "
        f"ORDER BY {', '.join(f'w._o{i}' for i in range(len(keys)))} LIMIT {want}"
    )
    sql = (
        f"SELECT {select} FROM findings f CROSS JOIN runs r ON r.key = f.run_key "
        f"WHERE f.rowid IN ({chosen}) ORDER BY {', '.join(keys)}"
    )
    return fetch_rows(db, sql, params)


#: By tool, which part a finding is read in (`_parts`): a tool's findings (0), then those of none (1).
_TOOL_PART = f"CASE WHEN {TOOL} > '' THEN 0 ELSE 1 END"


def _tool_parts_read_whole(
    db: Database,
    select: str,
    where: list[str],
    params: list[Any],
    after: list[Any] | None,
    want: int,
    driver: _Driver,
) -> list[dict[str, Any]]:
    """Up to `want` rows by tool after the cursor `after`, of a set read whole (`driver`), both parts from one
    read of the set, its part the first key: read part by part, a set with fewer than a page of a tool's
    findings was read twice (a rare code by tool at a million runs: 26 ms, then 77 ms for the rest on
    PostgreSQL)."""
    if _NONE in where:  # filters that never meet (`_never_meet`)
        return []
    keys = (_TOOL_PART, *sort_keys(db, "tool"))
    extra, extra_params = [], []
    if after is not None:
        extra, extra_params = [f"({', '.join(keys)}) > ({', '.join('?' for _ in keys)})"], list(after)
    rows = _read_whole(
        db,
        f"{select}, {_TOOL_PART} AS _part",
        _driven_source(db, "tool", driver),
        keys,
        [*where, *extra],
        [*params, *extra_params],
        want,
    )
    for row in rows:
        row["cursor"] = [row.pop("_part"), *(row.pop(f"_k{i}") for i in range(len(keys) - 1))]
    return rows


def queue_cursor(db: Database, finding_id: str, *, sort: str | None = None) -> list[Any] | None:
    """Where `finding_id` stands in the `sort` order (the `cursor` its queue row carries), or None."""
    sort = _sort(sort)
    exprs = sort_keys(db, sort)
    for tag, conds in _parts(sort):
        row = db.execute(
            f"SELECT {', '.join(exprs)} FROM findings f JOIN runs r ON r.key = f.run_key WHERE "
            + " AND ".join([*conds, "f.id = ?"]),
            [finding_id],
        ).fetchone()
        if row is not None:
            return [tag, *row]
    return None


def queue_page(
    db: Database,
    *,
    after: list[Any] | None = None,
    limit: int = 200,
    sort: str | None = None,
    **filters: Any,
) -> list[dict[str, Any]]:
    """A page of the queue in `sort` order (default "run": each run's findings together, in their order in
    the run), after the `cursor` of the last row already read (keyset: any page costs what the first does),
    each finding with its current labels and its `cursor`."""
    sort = _sort(sort)
    columns = (
        "f.*, r.run_id AS run_id_, r.agent_id, r.outcome, r.delivered, r.delivered_as, "
        "r.started_at AS run_started_at"
    )
    rows = [finding_out(f) for f in _walk(db, sort, columns, filters, after=after, limit=limit)]
    ids = [r["id"] for r in rows]
    current = current_by_target(db, ids)
    for r in rows:
        r.pop("run_id_", None)
        r["delivered"] = None if r["delivered"] is None else bool(r["delivered"])
        r["labels"] = current.get(r["id"], {})
    return rows


#: Label states counted from the labels themselves (cheap while few of many findings are labelled).
_LABELLED_STATES = ("labelled", "mine", DISAGREEMENT)
#: Label states counted as the findings less those of a labelled state.
_COMPLEMENT_STATES = {"unlabelled": "labelled", "not-mine": "mine"}


def _tallied_findings(db: Database, filters: dict[str, Any]) -> int | None:
    """The exact count of findings under `filters` (label state aside) from the tallies (and, for a kind and a
    pack version, one range of their index), or None."""
    active = _active_filters(filters)
    if not active:
        return tally(db, "findings")
    if _never_meet(db, active):
        return 0
    for paired in ("tool", "code"):  # a kind with a tool or a code: their tally (schema m023, m027)
        if set(active) == {"kind", paired} and not any(KIND_TOOL_SEP in str(v) for v in active.values()):
            return tally(db, f"kind_{paired}", f"{active['kind']}{KIND_TOOL_SEP}{active[paired]}")
    if set(active) == {"kind", "pack_version"}:
        # one range of their index (schema m020), read from the index alone: counted window by window of
        # findings it took 25 ms and gave a lower bound (a rare kind and a common pack version, a million runs)
        return int(
            db.execute(
                "SELECT count(*) FROM findings f INDEXED BY findings_pack_kind WHERE f.pack_version = ? "
                "AND f.kind = ?",
                [str(active["pack_version"]), str(active["kind"])],
            ).fetchone()[0]
        )
    if len(active) > 1:
        return None
    [(name, value)] = active.items()
    facet = FINDING_FILTER_FACETS.get(name)
    return None if facet is None else tally(db, facet, str(value))


def _labelled_count(db: Database, state: str, filters: dict[str, Any]) -> int:
    """Findings under `filters` in a labelled state, read from the current labels (not from every finding)."""
    reviewer = filters.get("reviewer")
    where, params = _filters(db, **{k: v for k, v in filters.items() if k not in ("state", "reviewer")})
    if state == "mine":
        where.append("l.reviewer = ?")
        params.append(reviewer or "")
    having = f" HAVING {disagreement_sql('l.verdict')}" if state == DISAGREEMENT else ""
    sql = (
        "SELECT count(*) FROM (SELECT l.target_id FROM current_labels l CROSS JOIN findings f ON f.id = l.target_id"
        + (" WHERE " + " AND ".join(where) if where else "")
        + f" GROUP BY l.target_id{having})"
    )
    return int(db.execute(sql, params).fetchone()[0])


def queue_count(db: Database, **filters: Any) -> int:
    """How many findings the queue filters leave, exactly (tallies and labels when they answer it)."""
    counted = _counted(db, filters)
    if counted is not None:
        return counted
    where, params = _filters(db, **filters)
    sql = "SELECT count(*) FROM findings f" + (" WHERE " + " AND ".join(where) if where else "")
    return int(db.execute(sql, params).fetchone()[0])


def _counted(db: Database, filters: dict[str, Any]) -> int | None:
    state = filters.get("state") or "any"
    if state in _LABELLED_STATES:
        return _labelled_count(db, state, filters)
    total = _tallied_findings(db, filters)
    if total is None:
        return None
    if state == "any":
        return total
    if state in _COMPLEMENT_STATES:
        return total - _labelled_count(db, _COMPLEMENT_STATES[state], filters)
    return None


#: A queue count no tally answers (two filters, such as a kind and a tool) reads windows of findings newest
#: first, this many at first, for at most QUEUE_COUNT_BUDGET_S: counting up to 10,000 of one tool's findings
#: read 367 ms at a million runs, and the progress line's exact total 1.5 s (a tool alone has its tally now,
#: `tool_named`, schema m023).
COUNT_WINDOW_FINDINGS = 2_048
COUNT_WINDOW_FINDINGS_MAX = 65_536
#: The queue's share of its opening (count, progress, first page and where it opens, one trip to the store).
QUEUE_COUNT_BUDGET_S = 0.015


def queue_count_at_most(db: Database, *, cap: int | None = None, **filters: Any) -> Count:
    """What the queue shows: exact when the tallies and labels answer it, else counted window by window of
    findings up to `cap` or a time budget (`exact` False then: the screen says "1,234+")."""
    counted = _counted(db, filters)
    if counted is not None:
        return Count(counted)
    cap = runs.COUNT_CAP if cap is None else int(cap)
    where, params = _filters(db, **filters)
    return count_by_windows(
        db,
        "findings",
        "f",
        where,
        params,
        cap,
        first_width=COUNT_WINDOW_FINDINGS,
        max_width=COUNT_WINDOW_FINDINGS_MAX,
        budget_s=QUEUE_COUNT_BUDGET_S,
        own_btree=True,
    )


def next_unlabelled(
    db: Database,
    *,
    after: str | None = None,
    reviewer: str | None = None,
    sort: str | None = None,
    same_run: bool = False,
    **filters: Any,
) -> str | None:
    """The next finding in `sort` order (after the finding `after`, wrapping to the start) with no label (by
    anyone, or by `reviewer`). `same_run`: one of `after`'s run comes first (what labelling moves on to)."""
    sort = _sort(sort)
    state = "not-mine" if reviewer else "unlabelled"
    wanted = {**filters, "state": state, "reviewer": reviewer}
    cursor = queue_cursor(db, after, sort=sort) if after else None
    tries: list[tuple[dict[str, Any], list[Any] | None]] = []
    if cursor is not None and same_run:
        run_key = db.execute("SELECT run_key FROM findings WHERE id = ?", [after]).fetchone()[0]
        tries.append(({**wanted, "run_key": run_key}, cursor))
    if cursor is not None:
        tries.append((wanted, cursor))
    tries.append((wanted, None))
    for where, start in tries:
        rows = _walk(db, sort, "f.id", where, after=start, limit=1)
        if rows:
            return str(rows[0]["id"])
    return None


def first_unlabelled(
    db: Database,
    *,
    reviewer: str | None = None,
    sort: str | None = None,
    head: list[dict[str, Any]] | None = None,
    **filters: Any,
) -> tuple[str, int] | None:
    """The first finding in `sort` order `reviewer` has not labelled, and its row: where the queue opens.

    `head`: the queue's first rows under the same filters and sort, as `queue_page` returned them (each with
    its current `labels`), when the caller has read them already (the queue's opening reads its first page
    anyway): the first one `reviewer` has not labelled is where it opens, with no read of its own; past them,
    the walk starts after the last. Each walk of a filter read whole costs what reading the set does (a rare
    code newest first: about 230 ms at a million runs on PostgreSQL, three of them in an opening before)."""
    if head is not None:
        for row, finding in enumerate(head):
            held = finding.get("labels") or {}
            if (reviewer not in held) if reviewer else not held:
                return str(finding["id"]), row
        if not head:
            return None
        state = "not-mine" if reviewer else "unlabelled"
        wanted = {**filters, "state": state, "reviewer": reviewer}
        rows = _walk(db, _sort(sort), "f.id", wanted, after=head[-1]["cursor"], limit=1)
        if not rows:
            return None
        found = str(rows[0]["id"])
    else:
        found_or_none = next_unlabelled(db, reviewer=reviewer, sort=sort, **filters)
        if found_or_none is None:
            return None
        found = found_or_none
        # mostly it is among the first block of rows, whose walk is cheap; counting the rows before it may not
        # be (the first coverage gap by tool counted every coverage gap: 1.2 s at a million runs)
        first_ids = [
            r["id"]
            for r in _walk(db, _sort(sort), "f.id", {**filters, "reviewer": reviewer}, limit=QUEUE_BLOCK)
        ]
        if found in first_ids:
            return found, first_ids.index(found)
    position = queue_position(db, found, reviewer=reviewer, sort=sort, **filters)
    return None if position is None else (found, position)


def queue_page_at(
    db: Database, *, offset: int, limit: int = 200, sort: str | None = None, **filters: Any
) -> list[dict[str, Any]]:
    """A page of the queue starting at row `offset` (for jumps; sequential paging uses `queue_page(after=)`)."""
    sort = _sort(sort)
    if offset <= 0:
        return queue_page(db, limit=limit, sort=sort, **filters)
    exprs = sort_keys(db, sort)
    where, params, driver = _driven_filters(db, filters, sort)
    skip = int(offset) - 1
    for tag, conds in _parts(sort):
        every = [*where, *conds]
        from_where = (
            f" FROM {_driven_source(db, sort, driver, kind=bool(filters.get('kind')))}{_where(every)}"
        )
        row = db.execute(
            f"SELECT {', '.join(exprs)}{from_where} ORDER BY {', '.join(exprs)} LIMIT 1 OFFSET ?",
            [*params, skip],
        ).fetchone()
        if row is not None:
            return queue_page(db, after=[tag, *row], limit=limit, sort=sort, **filters)
        if len(_parts(sort)) > 1:
            skip -= int(db.execute(f"SELECT count(*){from_where}", params).fetchone()[0])
    return []


def queue_position(db: Database, finding_id: str, *, sort: str | None = None, **filters: Any) -> int | None:
    """The 0-based row of `finding_id` in the filtered queue in `sort` order, or None when the filters leave
    it out."""
    sort = _sort(sort)
    where, params = _filters(db, **filters)
    present = db.execute(
        "SELECT 1 FROM findings f WHERE " + " AND ".join([*where, "f.id = ?"]), [*params, finding_id]
    ).fetchone()
    cursor = queue_cursor(db, finding_id, sort=sort)
    if present is None or cursor is None:
        return None
    exprs = sort_keys(db, sort)
    where, params, driver = _driven_filters(db, filters, sort)
    source = _driven_source(db, sort, driver, kind=bool(filters.get("kind")))
    before = 0
    for tag, conds in _parts(sort):
        if tag > cursor[0]:
            break
        # a set read whole is counted in one pass; a walked one by one index range per key prefix (_before)
        marks = ", ".join("?" for _ in exprs)
        whole = [([f"({', '.join(exprs)}) < ({marks})"], list(cursor[1:]))]
        ranges = whole if driver is not None else _before(exprs, cursor[1:])
        for extra, bound in ranges if tag == cursor[0] else [([], [])]:
            if driver is None and _runs_walked(db, sort):
                before += _count_newest_before(db, [*where, *conds], params, len(extra), bound)
                continue
            before += int(
                db.execute(
                    f"SELECT count(*) FROM {source}{_where([*where, *conds, *extra])}", [*params, *bound]
                ).fetchone()[0]
            )
    return before


def _count_newest_before(
    db: Database, where: list[str], params: list[Any], prefix: int, bound: list[Any]
) -> int:
    """The findings under `where` before a cursor in the newest-first order, for one key prefix (`_before`'s
    conditions on the first `prefix` keys): the runs in the range by their index, each run's findings counted
    by a probe. Joined instead, SQLite built a Bloom filter over every finding first (620 ms at a million runs
    to count none)."""
    exprs = QUEUE_SORTS["newest"]
    conds = [*(f"{e} = ?" for e in exprs[: prefix - 1]), f"{exprs[prefix - 1]} < ?"]
    run_conds, finding_conds = conds[:2], conds[2:]
    run_values, finding_values = bound[:2], bound[2:]
    inner = (
        f"SELECT count(*) FROM findings f WHERE {' AND '.join(['f.run_key = r.key', *where, *finding_conds])}"
    )
    sql = f"SELECT coalesce(sum(({inner})), 0) FROM runs r INDEXED BY runs_newest_first{_where(run_conds)}"
    return int(db.execute(sql, [*params, *finding_values, *run_values]).fetchone()[0])


def _before(exprs: tuple[str, ...], at: list[Any]) -> list[tuple[list[str], list[Any]]]:
    """The rows before `at` in `exprs` order, as one condition per key prefix (`a < ?`, `a = ? AND b < ?`,
    ...), each counted alone: SQLite 3.40 narrows an index range by a row value's first column only, so
    `(kind, run_key, position, id) < (...)` counted every finding of the cursor's kind (1.1 s for the first
    coverage gap of 333,280 at a million runs); each prefix is one narrow range of the sort's index."""
    return [
        ([*(f"{e} = ?" for e in exprs[:i]), f"{exprs[i]} < ?"], [*at[:i], at[i]]) for i in range(len(exprs))
    ]


def queue_progress(
    db: Database, *, reviewer: str | None = None, total: Count | None = None, **filters: Any
) -> dict[str, int]:
    """How far labelling has come over the findings matching `filters` (the label-state filter is ignored):
    `total` (a `Count`: `exact` False when it is a lower bound; pass it when already counted under the
    same filters), `labelled` (by anyone), `mine` (by `reviewer`) and `disagreements` (reviewers' current
    verdicts differ). Driven from the labels, so it stays cheap when few of many findings are labelled."""
    filters = {k: v for k, v in filters.items() if k not in ("state",)}
    if total is None:
        total = queue_count_at_most(db, **filters)  # a lower bound when no tally answers it in time
    where, params = _filters(db, **filters)
    row = db.execute(
        "SELECT count(*), coalesce(sum(mine), 0), coalesce(sum(disagree), 0) FROM ("
        f" SELECT l.target_id, max(l.reviewer = ?) AS mine, {disagreement_sql('l.verdict')} AS disagree"
        " FROM current_labels l CROSS JOIN findings f ON f.id = l.target_id"
        + (" WHERE " + " AND ".join(where) if where else "")
        + " GROUP BY l.target_id)",
        [reviewer or "", *params],
    ).fetchone()
    return {"total": total, "labelled": int(row[0]), "mine": int(row[1]), "disagreements": int(row[2])}


def queue_facets(db: Database, *, cap: int = 500) -> dict[str, list[str]]:
    """Values the queue filters offer: finding kinds, codes, tools and phrase-pack versions (each capped),
    read from the tallies."""
    return {
        "kinds": tally_values(db, "kind", cap=cap),
        "codes": tally_values(db, "code", cap=cap),
        "tools": tally_values(db, "tool", cap=cap),
        "pack_versions": tally_values(db, "pack_version", cap=cap),
    }


def evidence_rows(db: Database, finding_id: str) -> dict[str, Any]:
    """What the evidence beside a finding rests on: the finding, its run (light: no tool results) and every
    label row on it, as `{finding, run, history}` for `reviewer.review.evidence.assemble_evidence`."""
    rows = fetch_rows(db, "SELECT * FROM findings WHERE id = ?", [finding_id])
    if not rows:
        raise NotFound(f"no finding {finding_id!r} in this database")
    finding = finding_out(rows[0])
    run = _evidence_run(db, finding["run_key"])
    if finding["kind"] == DANGLING_REFERENCE:
        run["ground_results"] = _evicted_results(db, finding["run_key"], run["evictions"])
    return {
        "finding": finding,
        "run": run,
        "history": history(db, finding_id),
    }


#: An evicted result is read up to this many characters to tell remembered argument values from seen ones.
GROUND_CHARS = 200_000


def _evicted_results(
    db: Database, run_key: str, evictions: list[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """call id -> {result, chars, cut} for every call whose result an eviction removed (bounded)."""
    ids = sorted({c for e in evictions for c in e.get("call_ids") or []})
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    rows = db.execute(
        f"SELECT call_id, substr(result, 1, ?), length(result) FROM tool_calls WHERE run_key = ? "
        f"AND call_id IN ({marks})",
        [GROUND_CHARS, run_key, *ids],
    ).fetchall()
    return {
        cid: {"result": text or "", "chars": n or 0, "cut": (n or 0) > GROUND_CHARS} for cid, text, n in rows
    }


#: Arguments shown beside a read are cut to this many characters (a read's result is not needed here).
ARGS_PREVIEW = 2_000


def _evidence_run(db: Database, run_key: str) -> dict[str, Any]:
    """What the evidence beside a finding needs of its run, light: no tool results, envelopes or payloads,
    so a run with thousands of findings or megabyte results costs what a small one does."""
    [run] = fetch_rows(
        db,
        "SELECT key AS run_key, run_id, agent_id, outcome, outcome_channel, outcome_detail, prompt, answer, "
        "started_at, delivered, delivered_as, delivery_headline, delivered_text, complete, dropped_events, "
        "starts_mid_run, disposition FROM runs WHERE key = ?",
        [run_key],
    )
    calls = fetch_rows(
        db,
        "SELECT call_id, seq, tool_name, iteration, status, error, absent, complete, substr(args, 1, ?) AS args "
        "FROM tool_calls WHERE run_key = ? ORDER BY seq",
        [ARGS_PREVIEW, run_key],
    )
    for c in calls:
        c["error"], c["absent"] = bool(c["error"]), bool(c["absent"])
    run["tool_calls"] = calls
    run["coverage"] = fetch_rows(
        db,
        "SELECT call_id, tool_name, list, what, why, origin, looked_for FROM coverage WHERE run_key = ? "
        "ORDER BY rowid",
        [run_key],
    )
    run["evictions"] = [
        {k: v for k, v in e.items() if k not in ("run_key", "record")}
        for e in fetch_rows(db, "SELECT * FROM evictions WHERE run_key = ? ORDER BY ordinal", [run_key])
    ]
    return run


def licensing_runs(db: Database, run_keys: list[str]) -> dict[str, dict[str, Any]]:
    """Per run key, what judging its findings' wording needs: `answer`, `tool_calls` (with the declared
    `complete`) and `coverage`. Light: no results, arguments or envelopes."""
    out: dict[str, dict[str, Any]] = {}
    for key in dict.fromkeys(run_keys):
        answer = db.execute("SELECT answer FROM runs WHERE key = ?", [key]).fetchone()
        out[key] = {
            "answer": answer[0] if answer else None,
            "tool_calls": fetch_rows(
                db,
                "SELECT call_id, tool_name, complete FROM tool_calls WHERE run_key = ? ORDER BY seq",
                [key],
            ),
            "coverage": fetch_rows(
                db,
                "SELECT call_id, list, what, why FROM coverage WHERE run_key = ? ORDER BY rowid",
                [key],
            ),
        }
    return out
