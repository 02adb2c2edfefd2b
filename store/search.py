"""Full-text search of runs: which read a page of matching runs takes, and the capped count the runs screen
shows, on SQLite (FTS5) and on PostgreSQL (a GIN-indexed tsvector, schema m015), without ever reading every
match of a common word.

A document's id is its run's rowid shifted left by SEARCH_DOC_BITS (schema m011), so the runs a query matches
are read from the ids alone, and one run's documents are one id range. The reads of a page:

* "drive" (a rare word): read the matching runs, then sort them;
* "window" (SQLite, a newest- or oldest-first page): walk runs in the page's order; runs of a window of
  rowids where the walk starts are tested against that window's matches (read once), any other run is
  sought in the index by its id range. Runs are stored in about the order they ran, so the walk rarely
  leaves the window, and the window holds about WINDOW_DOCS matches whatever the word: at a million runs a
  middling word (60,000 documents) cost 17-29 ms a page by gathering every match, 3-4 ms this way (were runs
  stored in no order of time, a page would cost what seeking every run does, never more);
* "gather" (SQLite, when the window would be a quarter of the runs or more, or a middling word on a most-
  findings page): walk runs in the page's order testing the whole match set, read once;
* "probe" (PostgreSQL, a word its statistics do not call rare; SQLite, the commonest words on a most-findings
  page): walk runs seeking each in the index.

A most-findings page walks its own index (schema m016) in an order unrelated to the rowids, so SQLite picks
its read by what each costs (`_unwindowed_read`).

SQLite chooses from a count up to RARE_DOCS and a sample of SAMPLE_DOCS matches at most; PostgreSQL from its
planner's statistics (a GIN match visits the row of every match, so even counting the matches of a common
word took 585 ms there), counting only when there are none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from store.db.postgres import is_postgres
from store.db.schema import SEARCH_DOC_BITS
from store.rows import Count

#: The rowids of the runs a full-text query matches, read from the document ids alone (schema m011).
MATCHED_RUNS = f"SELECT s.rowid >> {SEARCH_DOC_BITS} FROM search s WHERE search MATCH ?"
#: One run's documents match: a seek of the run's id range in the index (a window's runs outside it).
RUN_MATCHES = (
    "EXISTS (SELECT 1 FROM search s WHERE search MATCH ? "
    f"AND s.rowid >= (r.rowid << {SEARCH_DOC_BITS}) AND s.rowid < ((r.rowid + 1) << {SEARCH_DOC_BITS}))"
)

#: Below this many matching documents a page reads the matching runs and sorts them ("drive"). Measured at a
#: million runs (quiet machine): 2,000 documents 14 ms driving, 9 ms gathering; 500: 3 ms against 33 ms.
RARE_DOCS = 2_000
#: A window holds about this many matching documents (reading them costs about a millisecond).
WINDOW_DOCS = 2_000
#: A window wider than this share of the runs gathers instead: at 5,000 documents (a window of 40% of the
#: runs) the window cost 7-10 ms a page, gathering 5 ms; at 10,000 (20%) both 4-5 ms; at 30,000 3 ms and 10 ms.
WINDOW_SHARE = 0.25
#: Pages whose walk follows the runs' rowids, and which end of them it starts from.
WINDOWED_SORTS = {"newest": -1, "oldest": 1}
#: SQLite: a word's documents per run are judged from SAMPLE_RUNS runs in SAMPLE_WINDOWS windows spread over
#: the rowids, reading at most SAMPLE_DOCS of its matches.
SAMPLE_RUNS = 8_000
SAMPLE_WINDOWS = 8
SAMPLE_DOCS = 2_000
#: PostgreSQL: below this many matching documents (by its statistics) a page drives, from it probes (both
#: cost about 110 ms a page at 7,000-8,000 documents at a million runs: see `_postgres_read`).
PG_RARE_DOCS = 8_000


@dataclass(frozen=True)
class Walk:
    """How a page walks runs: its sort, and the key of the run it continues after (None: from the start)."""

    sort: str
    after_key: str | None = None


@dataclass(frozen=True)
class SearchRead:
    """The read of a page of runs matching a query: "drive", "gather", "window" or "probe" (see the module
    docstring). For "window", the runs whose rowid is in [first, last] are tested against that range's
    matches and the others sought one by one."""

    name: str
    first: int = 0
    last: int = -1

    def condition(self, query: str) -> tuple[str, list[Any]]:
        """The SQL condition on alias `r` and its parameters."""
        if self.name == "drive":  # read the few matching runs by rowid, then sort them
            return f"r.rowid IN ({MATCHED_RUNS})", [query]
        if self.name == "gather":  # "+r.rowid": walk runs in list order testing the once-built match set
            return f"+r.rowid IN ({MATCHED_RUNS})", [query]
        if self.name == "probe":
            return RUN_MATCHES, [query]
        in_window = (
            f"r.rowid IN ({MATCHED_RUNS} AND s.rowid >= ? AND s.rowid < ?)"  # built once, for the window
        )
        bounds = [self.first << SEARCH_DOC_BITS, (self.last + 1) << SEARCH_DOC_BITS]
        return (
            f"CASE WHEN r.rowid BETWEEN ? AND ? THEN {in_window} ELSE {RUN_MATCHES} END",
            [self.first, self.last, query, *bounds, query],
        )


DRIVE = SearchRead("drive")
GATHER = SearchRead("gather")
PROBE = SearchRead("probe")


def fts_query(text: str) -> str:
    """Quote user input as FTS5 phrases (every word must appear), so no syntax error reaches the user (a NUL,
    which FTS5 reads as the end of the query, separates words like a space)."""
    words = [w for w in text.replace('"', " ").replace("\x00", " ").split() if w]
    return " ".join(f'"{w}"' for w in words) or '""'


def search_condition(db: Database, text: str, walk: Walk | None) -> tuple[str, list[Any]]:
    """The condition on alias `r` for runs matching the search `text`: read as `walk` is best served by, or
    (no walk: a count) by reading the matching runs."""
    query = fts_query(text)
    read = DRIVE if walk is None else search_read(db, query, walk)
    return read.condition(query)


def search_read(db: Database, query: str, walk: Walk) -> SearchRead:
    """The read of a page of runs matching `query` walked as `walk`, without reading every match."""
    if is_postgres(db):
        return _postgres_read(db, query, walk)
    if _matches_up_to(db, query, RARE_DOCS) < RARE_DOCS:  # exact where it matters: a walk would find few
        return DRIVE
    rowids = _rowid_bounds(db)
    if rowids is None:
        return DRIVE
    lo, hi = rowids
    # at least RARE_DOCS in all: a sample that misses them all still sizes the window by that
    docs_per_run = max(_sampled_docs_per_run(db, query, lo, hi), RARE_DOCS / (hi - lo + 1))
    if walk.sort not in WINDOWED_SORTS:
        return _unwindowed_read(docs_per_run, hi - lo + 1)
    width = max(1, int(WINDOW_DOCS / docs_per_run))
    if width >= WINDOW_SHARE * (hi - lo + 1):
        return GATHER
    start = _rowid_of(db, walk.after_key)
    if WINDOWED_SORTS[walk.sort] < 0:  # newest first: the window ends where the walk starts
        last = hi if start is None else start
        return SearchRead("window", max(lo, last - width + 1), last)
    first = lo if start is None else start
    return SearchRead("window", first, min(hi, first + width - 1))


#: What each read of a page in an order that does not follow the rowids (most findings first, walked on its
#: index) costs, in microseconds, measured at a million runs: driving reads and sorts the runs of every
#: match (161 ms for 38,000 documents), gathering builds the match set (190 ms for 726,000 documents) then
#: walks runs testing it, probing seeks each walked run in the index (40-55 us a run).
DRIVE_US_PER_DOC = 4.0
GATHER_US_PER_DOC = 0.26
WALK_US_PER_RUN = 1.0
PROBE_US_PER_RUN = 50.0
#: The runs a page shows (the app reads blocks of 100).
PAGE_RUNS = 100


def _unwindowed_read(docs_per_run: float, runs: int) -> SearchRead:
    """The cheapest read of a page walked in an order unrelated to the rowids, by the costs above: a page
    walks about PAGE_RUNS / (the share of runs matching) runs (a word in several documents of a run makes
    that share smaller than the documents per run, so the walk is judged short)."""
    docs = docs_per_run * runs
    walked = PAGE_RUNS / max(min(docs_per_run, 1.0), 1.0 / runs)
    costs = {
        DRIVE: DRIVE_US_PER_DOC * docs,
        GATHER: GATHER_US_PER_DOC * docs + WALK_US_PER_RUN * walked,
        PROBE: PROBE_US_PER_RUN * walked,
    }
    return min(costs, key=lambda read: costs[read])


def _postgres_read(db: Database, query: str, walk: Walk) -> SearchRead:
    """PostgreSQL: a GIN match visits the row of every match, and reading every match of a window costs what
    reading them all does (the index's whole entry is read, about a microsecond a match), so a page reads a
    rare word's matches and tests any other word run by run as it walks. Measured at a million runs (pages
    of 100, newest first, default server settings, load 3.5 on 2 cores), driving / probing: 500 documents
    9 / 3,300 ms; 2,000: 31 / 320; 7,000: 93-106 / 115-177; 8,000: 103-120 / 97-135; 9,000: 146-150 /
    87-131; 20,000: 380 / 84; 50,000: 1,440 / 17; 200,000 and more: seconds / 4-8. A page in an order no
    index walks drives (it sorts whatever it reads)."""
    if walk.sort not in WINDOWED_SORTS or _postgres_rare(db, query):
        return DRIVE
    return PROBE


def _postgres_rare(db: Database, query: str) -> bool:
    """Whether `query` matches fewer than PG_RARE_DOCS documents: by the statistics, or counted up to that
    bound when there are none (a column never analysed)."""
    estimate = postgres_matches_estimate(db, query)
    if estimate is None:
        return _matches_up_to(db, query, PG_RARE_DOCS) < PG_RARE_DOCS
    return estimate < PG_RARE_DOCS


def _matches_up_to(db: Database, query: str, cap: int) -> int:
    """How many documents `query` matches, counted no further than `cap`."""
    sql = "SELECT count(*) FROM (SELECT 1 FROM search WHERE search MATCH ? LIMIT ?)"
    return int(db.execute(sql, [query, int(cap)]).fetchone()[0])


def _rowid_bounds(db: Database) -> tuple[int, int] | None:
    # two subqueries: SQLite reads one min() or max() from the rowid's end, but scans for both in one (443 ms)
    lo, hi = db.execute("SELECT (SELECT min(rowid) FROM runs), (SELECT max(rowid) FROM runs)").fetchone()
    return None if lo is None else (int(lo), int(hi))


def _rowid_of(db: Database, key: str | None) -> int | None:
    if key is None:
        return None
    row = db.execute("SELECT rowid FROM runs WHERE key = ?", [key]).fetchone()
    return None if row is None else int(row[0])


def _sampled_docs_per_run(db: Database, query: str, lo: int, hi: int) -> float:
    """`query`'s documents per run in SAMPLE_RUNS runs of rowids `lo`-`hi` (FTS5 seeks a rowid range within a
    word's documents), reading at most SAMPLE_DOCS of them: at a million runs, 2,000 matches instead of
    up to 200,000."""
    width = max(1, min(SAMPLE_RUNS, hi - lo + 1) // SAMPLE_WINDOWS)
    sql = "SELECT count(*) FROM (SELECT 1 FROM search WHERE search MATCH ? AND rowid >= ? AND rowid < ? LIMIT ?)"
    found = sampled = 0
    for window in range(SAMPLE_WINDOWS):
        first = lo + (hi - lo + 1 - width) * window // max(1, SAMPLE_WINDOWS - 1)
        bounds = [first << SEARCH_DOC_BITS, (first + width) << SEARCH_DOC_BITS]
        found += int(db.execute(sql, [query, *bounds, SAMPLE_DOCS - found]).fetchone()[0])
        sampled += width
        if found >= SAMPLE_DOCS:  # a common word: the windows read so far tell enough (a lower bound)
            break
    return found / sampled


#: For each token of a query (PostgreSQL): the share of documents holding it by the planner's statistics of
#: `search_text.tsv` when it is one of their most common lexemes (else NULL), the least such share (what a
#: lexeme not among them stays under), and the documents now (the planner's own estimate: rows per page of
#: the last ANALYZE times the pages now). No row at all when the column was never analysed.
POSTGRES_TOKEN_SHARES = (
    "SELECT st.freqs[array_position(st.elems, w.token)], st.freqs[cardinality(st.elems) + 1], "
    "(SELECT CASE WHEN c.relpages > 0 THEN c.reltuples / c.relpages * "
    "(pg_relation_size(c.oid) / current_setting('block_size')::float8) ELSE c.reltuples END "
    "FROM pg_class c WHERE c.oid = 'search_text'::regclass) "
    "FROM unnest(fts5_tokens(?)) AS w(token) CROSS JOIN (SELECT most_common_elems::text::text[] AS elems, "
    "most_common_elem_freqs AS freqs FROM pg_stats WHERE schemaname = current_schema() "
    "AND tablename = 'search_text' AND attname = 'tsv') AS st"
)


def postgres_matches_estimate(db: Database, query: str) -> float | None:
    """About how many documents `query` matches by PostgreSQL's statistics (None when it has none): its
    rarest token's share of them, since every token is required. A token not among the most common
    lexemes counts as their least share, which it is under."""
    rows = db.execute(POSTGRES_TOKEN_SHARES, [query]).fetchall()
    if not rows or any(least is None for _, least, _ in rows):
        return None
    return min(float(least if share is None else share) for share, least, _ in rows) * float(rows[0][2])


def count_matching_runs_at_most(db: Database, text: str, cap: int) -> Count:
    """How many runs match the search `text`, read up to `cap` (`exact` False beyond it)."""
    sql = POSTGRES_RUNS_UP_TO if is_postgres(db) else SQLITE_RUNS_UP_TO
    n = int(db.execute(sql, [fts_query(text), int(cap) + 1]).fetchone()[0])
    return Count(min(n, int(cap)), exact=n <= cap)


#: A count of runs under a search and other filters (SQLite, `store.runs`) reads windows of rowids each
#: holding about this many of the word's matches (by the sample), tested against that window's matches
#: alone: reading every match of a common word to count the runs of one kind among them took 255 ms at a
#: million runs.
COUNT_WINDOW_DOCS = 4_000


@dataclass(frozen=True)
class SearchWindows:
    """How a count reads a word's matches window by window: windows of `width` runs, each run tested against
    its window's matches of `query`."""

    query: str
    width: int

    def condition(self, first: int, last: int) -> tuple[str, list[Any]]:
        """The condition on alias `r` for the runs of rowids `first`-`last` matching, and its parameters."""
        bounds = [first << SEARCH_DOC_BITS, (last + 1) << SEARCH_DOC_BITS]
        return f"r.rowid IN ({MATCHED_RUNS} AND s.rowid >= ? AND s.rowid < ?)", [self.query, *bounds]


def search_windows(db: Database, text: str) -> SearchWindows | None:
    """The windows a count of runs matching `text` (and other filters) reads; None to read every match at
    once (a rare word, an empty store, or PostgreSQL, where a window of a GIN match costs what all its
    matches do)."""
    if is_postgres(db):
        return None
    rowids = _rowid_bounds(db)
    query = fts_query(text)
    if rowids is None or _matches_up_to(db, query, RARE_DOCS) < RARE_DOCS:
        return None
    lo, hi = rowids
    return SearchWindows(query, max(1, int(COUNT_WINDOW_DOCS / _sampled_docs_per_run(db, query, lo, hi))))


def rowid_bounds(db: Database) -> tuple[int, int] | None:
    """The least and greatest rowid of runs (None: no runs)."""
    return _rowid_bounds(db)


#: The distinct runs of a query's matches, up to a limit: FTS5 reads its matches from the index alone.
SQLITE_RUNS_UP_TO = f"SELECT count(*) FROM (SELECT DISTINCT s.rowid >> {SEARCH_DOC_BITS} FROM search s WHERE search MATCH ? LIMIT ?)"
#: The same on PostgreSQL, where reading every match of a common word visited 725,000 rows (2-5 s at a
#: million runs): matches in id order, a run counted where its run number changes (a run's ids are
#: consecutive), so the planner may walk the primary key and stop at the limit for a common word ("source":
#: 39-65 ms), and read a rarer word's matches from the GIN index and sort them (1-22 ms up to 8,000
#: documents). Between the two (20,000-300,000 documents) either read is long: 100-870 ms measured.
POSTGRES_RUNS_UP_TO = (
    f"SELECT count(*) FROM (SELECT 1 FROM (SELECT s.rowid >> {SEARCH_DOC_BITS} AS run, "
    f"lag(s.rowid >> {SEARCH_DOC_BITS}) OVER (ORDER BY s.rowid) AS prev FROM search s WHERE search MATCH ? "
    "ORDER BY s.rowid) AS m WHERE m.prev IS DISTINCT FROM m.run LIMIT ?)"
)
