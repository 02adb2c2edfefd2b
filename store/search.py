"""Full-text search of runs: which read a page of matching runs takes, and the capped count the runs screen
shows, on SQLite (FTS5) and on PostgreSQL (a GIN-indexed tsvector, schema m015), without ever reading every
match of a common word.

A document's id is its run's rowid shifted left by SEARCH_DOC_BITS (schema m011), so the runs a query matches
are read from the ids alone, and one run's documents are one id range. The reads of a page:

* "drive" (a rare word): read the matching runs, then sort them (on PostgreSQL a one-token query's runs
  from `search_runs`, schema m018: one row a run with every token of its documents);
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

On PostgreSQL a page searching for one token and nothing else takes none of these: `SortedRuns` chooses
its runs from `search_runs` (schema m018), which holds every sort's keys, and the planner picks the read.
Nor does one within equality filters (a finding kind, an agent, an outcome, a tenant, a pack version):
`search_runs` holds each run's values of those as lexemes beside its tokens (schema m022), so the word and
the filters are one tsquery (the GIN index intersects their runs, or the planner walks an order's index),
for the page and for the capped count alike; nor within `f` (runs with findings: the row's `findings`),
withheld runs (one of the withholding outcomes' lexemes) or `w` (a lexeme of its own, schema m026). A query
of more tokens (two words, a phrase) walks `search_runs` testing each run's documents, and reads the runs
of its matching documents instead where the walk would be long (`postgres_phrase_runs`). Measured at a million runs (load 2.7): a count of a word's
runs within a finding kind 4-51 ms, and a page within an agent 6-26 ms; main's code on the same store (load
3-8) took 38-2,268 ms and 37-409 ms.

SQLite chooses from a count up to RARE_DOCS and a sample of SAMPLE_DOCS matches at most; PostgreSQL from its
planner's statistics of `search_runs` (a GIN match visits the row of every match, so even counting the
matches of a common word took 585 ms there), counting runs up to PG_RARE_RUNS only when there are none.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from store.db.postgres import is_postgres
from store.db.schema import SEARCH_DOC_BITS
from store.db.schema_pg import FACET_PREFIXES, FLAG_LEXEMES, facet_lexeme
from store.rows import Count
from store.sorted_runs import BandedRuns, SortedRuns, WalkedRuns
from store.tallies import tally
from store.vocab import WITHHOLDING
from store.windows import rowid_bounds

#: The rowids of the runs a full-text query matches, read from the document ids alone (schema m011).
MATCHED_RUNS = f"SELECT s.rowid >> {SEARCH_DOC_BITS} FROM search s WHERE search MATCH ?"
#: PostgreSQL (schema m018): a run (alias `w`, its row of `search_runs`: every token of its documents,
#: GIN-indexed) holds a one-token query's token. Reading runs so, not their matching documents, visits one
#: narrow row a run. A query of more tokens (two words, a phrase) is matched document by document (FTS5
#: wants them in one document): a run holding all of them is only a candidate (`postgres_phrase_runs`).
PG_RUN_HOLDS = "w.tokens @@ fts5_query(?)"
#: The same, and the run's facet lexemes (schema m022: its finding kinds, agent, outcome...) hold each of a
#: tsquery's: one match of the GIN index, or of each row walked, for a word and other filters.
PG_RUN_HOLDS_FACETS = "w.tokens @@ (fts5_query(?) && ?::tsquery)"
#: PostgreSQL, a query of more tokens: the tsquery of every one of its tokens, anywhere in a run (a stripped
#: tsvector, such as `search_runs.tokens`, holds no positions and matches no phrase: `<->` becomes `&`).
PG_ALL_TOKENS = "replace(fts5_query(?)::text, ' <-> ', ' & ')::tsquery"
#: A run (alias `w`) holds every token of a query of more tokens: a candidate, its documents to be matched.
PG_RUN_HOLDS_TOKENS = f"w.tokens @@ {PG_ALL_TOKENS}"
#: One of a run's (alias `w`) documents matches a query (PostgreSQL): a seek of the run's id range in the
#: primary key, its few documents tested (schema m025).
PG_RUN_DOCS_MATCH = "run_docs_match(w.run, fts5_query(?))"
#: The runs of at most `?` documents matching a query, and how many documents were read (PostgreSQL: by the
#: documents' GIN index alone, schema m025).
PG_DOC_RUNS_UP_TO = "SELECT count(*), array_agg(DISTINCT m.run) FROM search_doc_runs(fts5_query(?), ?) AS m"
#: The rowids of the runs holding a one-token query's token, on PostgreSQL.
PG_TOKEN_RUNS = f"SELECT w.run FROM search_runs w WHERE {PG_RUN_HOLDS}"
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
#: PostgreSQL: below this many matching runs (by its statistics) a page `SortedRuns` does not read drives,
#: from it probes (both cost 40-85 ms a page at 14,000-16,000 runs of a million: see `_postgres_read`).
PG_RARE_RUNS = 16_000
#: PostgreSQL, a query of more tokens: a page walks `search_runs` from a block of PG_FIRST_BLOCK runs; where
#: the matches met say it would walk more than PG_MAX_WALK runs, up to PG_FEW_DOCS of its matching documents
#: are read (their runs then sorted), or, more matching, every match.
PG_FEW_DOCS = 8_000
#: PostgreSQL, the capped count of a query of more tokens reads up to this many of its matching documents
#: per run counted (a run's documents are 3.7 on average, those matching fewer).
PG_COUNT_DOCS_PER_RUN = 2
PG_FIRST_BLOCK = 1_000
PG_MAX_WALK = 20_000
#: PostgreSQL: a one-token page most findings first reads its runs band by band of the findings count
#: (`BandedRuns`) up to this many matching runs (by the statistics); a commoner word is walked, its first
#: band's GIN bitmap costing more than the walk (the word's runs are 0.16 us each in the bitmap).
PG_BANDED_RUNS = 64_000


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

    def condition(self, query: str, *, token_runs: bool = False) -> tuple[str, list[Any]]:
        """The SQL condition on alias `r` and its parameters (`token_runs`: a one-token query on PostgreSQL,
        whose runs are read from `search_runs`)."""
        if self.name == "drive" and token_runs:
            return f"r.rowid IN ({PG_TOKEN_RUNS})", [query]
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


def postgres_one_token(db: Database, query: str) -> bool:
    """Whether the FTS5 `query` is one token on PostgreSQL (its runs are then read from `search_runs`)."""
    return bool(db.execute("SELECT numnode(fts5_query(?)) = 1", [query]).fetchone()[0])


def postgres_sorted_runs(
    db: Database, text: str, facets: Facets | None = None
) -> SortedRuns | WalkedRuns | BandedRuns | None:
    """Where a page of runs matching `text` (and the filters `facets`, if any) chooses its runs, on
    PostgreSQL, in any of the runs screen's orders (`search_runs` holds each one's keys and, schema m022,
    each run's facets; None on SQLite): a query of one token from `search_runs` alone (a rare one's runs
    read whole, a commoner one's as the planner walks an order, but most findings first, up to
    PG_BANDED_RUNS, band by band of the findings count: `BandedRuns`); a query of more
    (`postgres_phrase_runs`) from the runs of its few matching documents, or by a walk of `search_runs`."""
    query = fts_query(text)
    if not is_postgres(db):
        return None
    if not postgres_one_token(db, query):
        return postgres_phrase_runs(db, query, facets)
    match, params = facets.holds(query) if facets else (PG_RUN_HOLDS, [query])
    estimate = postgres_runs_estimate(db, query, facets)
    rare = _rare_as_estimated(db, query, facets, estimate)
    walked = SortedRuns("search_runs", match, tuple(params), "run", "rowid", fenced=rare)
    if rare or estimate is None or estimate > PG_BANDED_RUNS:
        return walked
    return BandedRuns(db, "search_runs", match, tuple(params), "run", "rowid", walked, estimate)


def postgres_doc_runs(db: Database, query: str, cap: int) -> list[int] | None:
    """The rowids of the runs whose documents match `query` (PostgreSQL, a query of more tokens), read from
    at most `cap` matching documents; None when more match. The documents' GIN index intersects the tokens'
    entries, so a pair of common words that few documents hold together costs the few."""
    found, rowids = db.execute(PG_DOC_RUNS_UP_TO, [query, int(cap) + 1]).fetchone()
    return None if int(found) > cap else sorted(int(r) for r in rowids or [])


def postgres_phrase_runs(db: Database, query: str, facets: Facets | None) -> WalkedRuns:
    """A page of runs matching `query`, a query of more tokens (two words, a phrase), within `facets`: runs
    are walked in the page's order in `search_runs`, each run holding every token (positions aside: a
    stripped tsvector holds none, so a phrase is tested as its tokens) sought in its own documents; where
    the matches walked say the walk would be long, the runs of its matching documents are read and sorted
    if at most PG_FEW_DOCS documents match (`postgres_doc_runs`: the documents' GIN index intersects the
    tokens' entries), else every match is read. The per-token statistics cannot choose: two common words
    may share few documents; and reading the few first costs what intersecting two common words' entries
    does (40 ms at a million runs for "source gateway", whose walk fills a page in 1,200 runs)."""
    on_w, facet_params = (facets or Facets(())).on_w()
    tokens_sql, tokens_params = (facets or Facets(())).holds_tokens(query)
    walk = f"{tokens_sql} AND {PG_RUN_DOCS_MATCH}"
    whole = " AND ".join([f"w.run IN ({MATCHED_RUNS})", *on_w])

    def drive() -> SortedRuns | None:
        found = postgres_doc_runs(db, query, PG_FEW_DOCS)
        if found is None:
            return None
        match = " AND ".join(["w.run = ANY(?)", *on_w])
        return SortedRuns("search_runs", match, (found, *facet_params), "run", "rowid", fenced=True)

    return WalkedRuns(
        db,
        "search_runs",
        walk,
        (*tokens_params, query),
        "run",
        "rowid",
        SortedRuns("search_runs", whole, (query, *facet_params), "run", "rowid", fenced=True),
        drive=drive,
        first_block=PG_FIRST_BLOCK,
        max_walk=PG_MAX_WALK,
    )


@dataclass(frozen=True)
class Facets:
    """Filters of the runs screen as `search_runs` holds them on PostgreSQL: the lexemes of equality filters'
    values (schema m022), every one required; groups of lexemes of which one is required (withheld: the
    withholding outcomes); and whether the run has findings (`has_findings`: the row's `findings` column)."""

    lexemes: tuple[str, ...]
    any_of: tuple[tuple[str, ...], ...] = ()
    has_findings: bool = False

    @property
    def tsquery(self) -> str:
        """The tsquery text requiring every lexeme and one of each group (each quoted: a value may hold any
        character); empty when there are none."""
        groups = ["(" + " | ".join(_quoted(lexeme) for lexeme in group) + ")" for group in self.any_of]
        return " & ".join([*(_quoted(lexeme) for lexeme in self.lexemes), *groups])

    def holds(self, query: str) -> tuple[str, list[Any]]:
        """The condition on alias `w` (a row of `search_runs`) that the run holds the one-token `query`
        within these filters, and its parameters."""
        sql, params = (
            (PG_RUN_HOLDS_FACETS, [query, self.tsquery]) if self.tsquery else (PG_RUN_HOLDS, [query])
        )
        return (f"{sql} AND w.findings > 0" if self.has_findings else sql), params

    def holds_tokens(self, query: str) -> tuple[str, list[Any]]:
        """The condition on alias `w` that the run holds every token of `query`, a query of more tokens
        (anywhere in its documents: a candidate, whose documents are still to be matched), within these
        filters, and its parameters."""
        sql, params = (
            (f"w.tokens @@ ({PG_ALL_TOKENS} && ?::tsquery)", [query, self.tsquery])
            if self.tsquery
            else (PG_RUN_HOLDS_TOKENS, [query])
        )
        return (f"{sql} AND w.findings > 0" if self.has_findings else sql), params

    def on_w(self) -> tuple[list[str], list[Any]]:
        """The conditions on alias `w` (a row of `search_runs`) that the run meets these filters, and their
        parameters."""
        conds, params = [], []
        if self.tsquery:
            conds.append("w.tokens @@ ?::tsquery")
            params.append(self.tsquery)
        if self.has_findings:
            conds.append("w.findings > 0")
        return conds, params

    def __bool__(self) -> bool:
        return bool(self.lexemes or self.any_of or self.has_findings)


def _quoted(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def postgres_facets(db: Database, filters: dict[str, Any]) -> Facets | None:
    """The active `filters` other than the search as `search_runs`' facet lexemes and flags (PostgreSQL),
    or None when one of them is not held there (a value too long for a lexeme)."""
    if not is_postgres(db):
        return None
    lexemes: list[str] = []
    any_of: list[tuple[str, ...]] = []
    has_findings = False
    for name, value in filters.items():
        if name == "search" or value in (None, "", False):
            continue
        if name == "has_findings":
            has_findings = True
            continue
        if name == "withheld":
            any_of.append(tuple(facet_lexeme("outcome", o) or "" for o in WITHHOLDING))
            continue
        if name in FLAG_LEXEMES:  # `w` (schema m026)
            lexemes.append(FLAG_LEXEMES[name])
            continue
        if name not in FACET_PREFIXES or not isinstance(value, str):
            return None
        lexeme = facet_lexeme(name, value)
        if lexeme is None:
            return None
        lexemes.append(lexeme)
    return Facets(tuple(lexemes), tuple(any_of), has_findings)


def fts_query(text: str) -> str:
    """Quote user input as FTS5 phrases (every word must appear), so no syntax error reaches the user (a NUL,
    which FTS5 reads as the end of the query, separates words like a space)."""
    words = [w for w in text.replace('"', " ").replace("\x00", " ").split() if w]
    return " ".join(f'"{w}"' for w in words) or '""'


def search_condition(db: Database, text: str, walk: Walk | None) -> tuple[str, list[Any]]:
    """The condition on alias `r` for runs matching the search `text`: read as `walk` is best served by, or
    (no walk: a count) by reading the matching runs."""
    query = fts_query(text)
    if is_postgres(db) and not postgres_one_token(db, query):
        found = postgres_doc_runs(db, query, PG_FEW_DOCS)
        if found is not None:  # few documents match: their runs, read first
            return "r.rowid = ANY(?)", [found]
    read = DRIVE if walk is None else search_read(db, query, walk)
    token_runs = read == DRIVE and is_postgres(db) and postgres_one_token(db, query)
    return read.condition(query, token_runs=token_runs)


def search_read(db: Database, query: str, walk: Walk) -> SearchRead:
    """The read of a page of runs matching `query` walked as `walk`, without reading every match."""
    if is_postgres(db):
        return _postgres_read(db, query, walk)
    density = _density(db, query)
    if density is None:
        return DRIVE
    lo, hi, docs_per_run = density
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
    """PostgreSQL, a page that `SortedRuns` does not read (one jumped to by an offset, or a filter value too
    long for a lexeme) of a query that is one token or whose matching documents are not few: a GIN match visits the row of every match, and reading every match of a window costs what
    reading them all does, so a page reads a rare word's runs (from `search_runs`, one row a run) and tests
    any other word run by run as it walks. Measured at a million runs with an agent filter (4.5% of the
    runs; pages of 100 newest first with their unlabelled counts, default server settings, load 0.7-0.9 on
    2 cores), driving / probing: 3,500 runs 35 / 272 ms; 7,900: 104 / 136; 9,700: 96 / 194; 14,600: 58 / 61;
    15,600: 85 / 55; 16,100: 45 / 38; 18,500: 38 / 52; 22,900: 42 / 34; 46,100: 19 / 13 (not met between
    about 7,000 and 16,000 runs either way). A page in an order no index walks drives (it sorts whatever it
    reads)."""
    if walk.sort not in WINDOWED_SORTS or _postgres_rare(db, query):
        return DRIVE
    return PROBE


def _postgres_rare(db: Database, query: str, facets: Facets | None = None) -> bool:
    """Whether `query` (within `facets`) matches fewer than PG_RARE_RUNS runs (`_rare_as_estimated`)."""
    return _rare_as_estimated(db, query, facets, postgres_runs_estimate(db, query, facets))


def _rare_as_estimated(db: Database, query: str, facets: Facets | None, estimate: float | None) -> bool:
    """Whether `query` (within `facets`) matches fewer than PG_RARE_RUNS runs: by the statistics' `estimate`,
    or counted up to that bound when there is none (a column never analysed)."""
    if estimate is None:
        return _postgres_runs_up_to(db, query, PG_RARE_RUNS, facets)[0] < PG_RARE_RUNS
    return estimate < PG_RARE_RUNS


def _density(db: Database, query: str) -> tuple[int, int, float] | None:
    """The runs' rowid bounds and `query`'s documents per run, judged from a sample (SQLite); None when the
    word is rare (counted exactly below RARE_DOCS: a walk would find few) or there are no runs."""
    if _matches_up_to(db, query, RARE_DOCS) < RARE_DOCS:
        return None
    rowids = rowid_bounds(db, "runs")
    if rowids is None:
        return None
    lo, hi = rowids
    # at least RARE_DOCS in all: a sample that misses them all still sizes a window by that
    return lo, hi, max(_sampled_docs_per_run(db, query, lo, hi), RARE_DOCS / (hi - lo + 1))


def _matches_up_to(db: Database, query: str, cap: int) -> int:
    """How many documents `query` matches, counted no further than `cap`."""
    sql = "SELECT count(*) FROM (SELECT 1 FROM search WHERE search MATCH ? LIMIT ?)"
    return int(db.execute(sql, [query, int(cap)]).fetchone()[0])


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


#: For each token of a query and each facet lexeme (PostgreSQL): the share of runs holding it by the planner's statistics of
#: `search_runs.tokens` (schema m018) when it is one of their most common lexemes (else NULL), the least such
#: share (what a lexeme not among them stays under), and the runs with a document now (the planner's own
#: estimate: rows per page of the last ANALYZE times the pages now). No row at all when the column was never
#: analysed.
POSTGRES_TOKEN_SHARES = (
    "SELECT st.freqs[array_position(st.elems, w.token)], st.freqs[cardinality(st.elems) + 1], "
    "(SELECT CASE WHEN c.relpages > 0 THEN c.reltuples / c.relpages * "
    "(pg_relation_size(c.oid) / current_setting('block_size')::float8) ELSE c.reltuples END "
    "FROM pg_class c WHERE c.oid = 'search_runs'::regclass) "
    "FROM unnest(fts5_tokens(?) || ?::text[]) AS w(token) CROSS JOIN (SELECT most_common_elems::text::text[] AS elems, "
    "most_common_elem_freqs AS freqs FROM pg_stats WHERE schemaname = current_schema() "
    "AND tablename = 'search_runs' AND attname = 'tokens') AS st"
)


def postgres_runs_estimate(db: Database, query: str, facets: Facets | None = None) -> float | None:
    """About how many runs `query` (within `facets`) matches by PostgreSQL's statistics (None when it has
    none): its rarest token's share of them, since every token is required (a word's tokens go together),
    times each facet's share (a group's: the sum of its lexemes'; runs with findings: the tallies' share),
    each taken as independent of the word, as the planner takes them. A lexeme not among the most common
    counts as their least share, which it is under."""
    lexemes = list(facets.lexemes) if facets else []
    groups = list(facets.any_of) if facets else []
    listed = [*lexemes, *(lexeme for group in groups for lexeme in group)]
    rows = db.execute(POSTGRES_TOKEN_SHARES, [query, listed]).fetchall()
    if not rows or any(least is None for _, least, _ in rows):
        return None
    shares = [float(least if share is None else share) for share, least, _ in rows]
    word_shares = shares[: len(shares) - len(listed)]
    estimate = (min(word_shares) if word_shares else 1.0) * float(rows[0][2])
    rest = shares[len(word_shares) :]
    for share in rest[: len(lexemes)]:
        estimate *= share
    at = len(lexemes)
    for group in groups:
        estimate *= min(1.0, sum(rest[at : at + len(group)]))
        at += len(group)
    if facets is not None and facets.has_findings:
        estimate *= tally(db, "has_findings") / max(1, tally(db, "runs"))
    return estimate


def count_matching_runs_at_most(
    db: Database, text: str, cap: int, facets: Facets | None = None, *, budget_s: float | None = None
) -> Count:
    """How many runs match the search `text` (and, on PostgreSQL, the filters `facets`: schema m022, for a
    one-token query), read up to `cap` (`exact` False beyond it). With `budget_s` (PostgreSQL), a count that
    reads for longer stops there with what it has counted (`exact` False: a lower bound)."""
    query = fts_query(text)
    if is_postgres(db):
        n, every_row = _postgres_runs_up_to(db, query, int(cap) + 1, facets, budget_s=budget_s)
        return Count.read_up_to(n, cap, every_row=every_row)
    n = int(db.execute(SQLITE_RUNS_UP_TO, [query, int(cap) + 1]).fetchone()[0])
    return Count.read_up_to(n, cap)


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
    query = fts_query(text)
    density = _density(db, query)
    return None if density is None else SearchWindows(query, max(1, int(COUNT_WINDOW_DOCS / density[2])))


#: The distinct runs of a query's matches, up to a limit: FTS5 reads its matches from the index alone.
SQLITE_RUNS_UP_TO = f"SELECT count(*) FROM (SELECT DISTINCT s.rowid >> {SEARCH_DOC_BITS} FROM search s WHERE search MATCH ? LIMIT ?)"
#: The same on PostgreSQL for a one-token query (the rows to count): its runs' rows of `search_runs` (schema
#: m018), up to the limit. Counting runs from their matching documents visited each document's row (a GIN match is not
#: index-only): 0.3-0.9 s for a middling word at a million runs (10,001 of its runs are needed).
POSTGRES_TOKEN_RUNS_UP_TO = f"{PG_TOKEN_RUNS} LIMIT ?"
#: For a query of more tokens (whose runs must be matched document by document; the rows to count): matches in id order, a run
#: counted where its run number changes (a run's ids are consecutive), so the planner may walk the primary
#: key and stop at the limit for common words, or read rarer ones' matches from the GIN index and sort them.
POSTGRES_DOC_RUNS_UP_TO = (
    f"SELECT 1 FROM (SELECT s.rowid >> {SEARCH_DOC_BITS} AS run, "
    f"lag(s.rowid >> {SEARCH_DOC_BITS}) OVER (ORDER BY s.rowid) AS prev FROM search s WHERE search MATCH ? "
    "ORDER BY s.rowid) AS m WHERE m.prev IS DISTINCT FROM m.run LIMIT ?"
)


def _postgres_runs_up_to(
    db: Database, query: str, cap: int, facets: Facets | None = None, *, budget_s: float | None = None
) -> tuple[int, bool]:
    """How many runs `query` (within `facets`) matches on PostgreSQL, counted no further than `cap`, and
    whether every one was counted (False only when `budget_s` ran out first: the count is then a lower
    bound). A query of more tokens reads up to PG_COUNT_DOCS_PER_RUN x `cap` of its matching documents (by
    the documents' GIN index): their runs are the count when they are all the matches, or reach `cap`;
    else (documents bunched in few runs, or other filters) runs are tested one by one."""
    started = time.perf_counter()

    def rows(inner: str, params: list[Any]) -> tuple[int, bool]:
        """The rows of the query `inner`, read within what is left of the budget (at least half of it)."""
        if budget_s is None:
            return int(db.execute(f"SELECT count(*) FROM ({inner}) AS m", params).fetchone()[0]), True
        left = max(budget_s / 2, budget_s - (time.perf_counter() - started))
        return db.rows_within(inner, params, left)  # type: ignore[attr-defined]

    if not postgres_one_token(db, query):
        # without other filters, first as many documents as the count needs runs: a common pair of words,
        # each in a run of its own, is counted so (72 -> 44 ms at a million runs); pairs bunched in fewer runs
        # read on
        limit = PG_COUNT_DOCS_PER_RUN * int(cap)
        every_match, rowids = False, []
        for docs in ([int(cap)] if not facets and limit > cap else []) + [limit]:
            found, runs_of = db.execute(PG_DOC_RUNS_UP_TO, [query, docs + 1]).fetchone()
            every_match, rowids = int(found) <= docs, list(runs_of or [])
            if every_match or len(rowids) >= cap:
                break
        if every_match and facets:  # every match read: the filters tested on their runs alone
            on_w, params = facets.on_w()
            sql = f"SELECT 1 FROM search_runs w WHERE w.run = ANY(?) AND {' AND '.join(on_w)} LIMIT ?"
            return rows(sql, [rowids, *params, int(cap)])
        if every_match or len(rowids) >= cap:
            return min(len(rowids), int(cap)), True
        if not facets:
            return rows(POSTGRES_DOC_RUNS_UP_TO, [query, int(cap)])
        tokens_sql, tokens_params = facets.holds_tokens(query)
        sql = f"SELECT 1 FROM search_runs w WHERE {tokens_sql} AND {PG_RUN_DOCS_MATCH} LIMIT ?"
        return rows(sql, [*tokens_params, query, int(cap)])
    if facets:
        match, params = facets.holds(query)
        return rows(f"SELECT w.run FROM search_runs w WHERE {match} LIMIT ?", [*params, int(cap)])
    return rows(POSTGRES_TOKEN_RUNS_UP_TO, [query, int(cap)])
