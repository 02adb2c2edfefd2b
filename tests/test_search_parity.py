"""The same search words find the same runs on SQLite (FTS5) and on PostgreSQL (tsvector): words inside a path,
a URL or an email, a hyphenated word's parts, a dotted version, an accented word with and without its accent,
a word in another case. PostgreSQL's own parser (`to_tsvector('simple', ...)`) keeps `/var/log/app-server`,
`v2.14.3` or `ops@example.com` as one token and folds no accent, so `log`, `14` or `cafe` found nothing there
that SQLite found; schema m015 tokenizes as FTS5 does (`store/db/fts5_chars.py`, read from SQLite itself)."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from store.db.connection import open_database
from store.db.fts5_tables import folds, separator_ranges
from store.db.ingest import ingest
from store.runs import count_runs, runs_page
from tests.conftest import FIXTURE_RECORDINGS, fresh_postgres_database

#: What the tool of a copy of `plain-tool-run.json` answers instead of "sunny", one copy each.
CONDITIONS = (
    "rotated logs under /var/log/app-server/current",
    "see https://status.example.com/incidents/42 or mail ops@example.com",
    "self-service portal is read-only today",
    "release v2.14.3 rolled back to 2.13.9",
    "Café Zürich: naïve forecast, ÉTÉ CHAUD",
    "cafe\u0301 au lait, Ærøskøbing fjord",
    "Ωμέγα storm over Москва",
)

#: (search text, whether SQLite finds at least one run): every word of the brief's list, and some of each kind
#: that find nothing, so "no run" agrees too.
WORDS = (
    ("weather", True),  # plain
    ("Weather", True),  # case
    ("WEATHER", True),
    ("log", True),  # inside a path
    ("/var/log", True),
    ("var/log/app", True),
    ("app-server", True),
    ("server/current", True),
    ("var/app", False),  # not adjacent: a phrase, on both
    ("example", True),  # inside a URL and an email
    ("status.example.com", True),
    ("ops@example.com", True),
    ("https", True),
    ("self", True),  # a hyphenated word's parts
    ("service", True),
    ("self-service", True),
    ("read-only", True),
    ("14", True),  # a dotted version
    ("v2", True),
    ("2.13.9", True),
    ("2.14.3", False),  # "v2" is one token: v2.14.3 holds no "2" followed by "14"
    ("v2.14.3", True),
    ("2.14.4", False),
    ("cafe", True),  # accented, without and with its accent
    ("café", True),
    ("CAFÉ", True),
    ("zurich", True),
    ("Zürich", True),
    ("naive", True),
    ("ete", True),
    ("été", True),
    ("ærøskøbing", True),  # kept as FTS5 keeps it (no decomposition)
    ("aeroskobing", False),
    ("ωμέγα", True),  # folded case outside Latin; the Greek accent stays (as in FTS5)
    ("ωμεγα", False),
    ("москва", True),
    ("sunny francisco", True),  # two words: both in one document (the answer)
    ("weather sunny", False),  # the prompt has one, the answer the other
    ("nothing-like-this", False),
    ("---", False),  # no token at all: nothing, on both
)


def _copies(folder: Path) -> list[Path]:
    """Copies of a real recording whose tool says one of CONDITIONS instead of "sunny" (and run ids of their own)."""
    base = (FIXTURE_RECORDINGS / "plain-tool-run.json").read_text()
    out = []
    for n, text in enumerate(CONDITIONS):
        copy = base.replace('"sunny"', json.dumps(text)).replace(
            '"runId": "run-', f'"runId": "run-parity{n}-'
        )
        path = folder / f"parity-{n}.json"
        path.write_text(copy)
        out.append(path)
    return out


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    """The fixture recordings and the copies above, ingested into SQLite and into PostgreSQL."""
    folder = tmp_path_factory.mktemp("parity")
    sources = [FIXTURE_RECORDINGS, *_copies(folder)]
    lite_path = folder / "review.db"
    lite = open_database(lite_path)
    ingest(lite, sources, db_path=str(lite_path))
    with fresh_postgres_database() as url:
        pg = open_database(url)
        ingest(pg, sources, db_path=url)
        yield lite, pg
        pg.close()
    lite.close()


def _found(db: Any, words: str) -> list[str]:
    return [r["run_key"] for r in runs_page(db, search=words, limit=None)]


@pytest.mark.parametrize(("words", "found_on_sqlite"), WORDS, ids=[w for w, _ in WORDS])
def test_a_word_finds_the_same_runs_on_both_backends(
    stores: tuple[Any, Any], words: str, found_on_sqlite: bool
) -> None:
    lite, pg = stores
    on_sqlite = _found(lite, words)
    assert bool(on_sqlite) == found_on_sqlite, on_sqlite
    assert _found(pg, words) == on_sqlite
    assert count_runs(pg, search=words) == count_runs(lite, search=words) == len(on_sqlite)


def test_every_fixture_word_finds_the_same_runs_on_both_backends(stores: tuple[Any, Any]) -> None:
    """Every distinct token FTS5 indexed from the real recordings (numbers, ids, hyphenated parts, words next to
    punctuation) finds the same runs on PostgreSQL."""
    lite, pg = stores
    lite.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.parity_vocab USING fts5vocab(main, search, 'row')")
    terms = [r[0] for r in lite.execute("SELECT term FROM temp.parity_vocab ORDER BY term")]
    assert len(terms) > 300
    sql = "SELECT s.rowid FROM search s WHERE search MATCH ? ORDER BY 1"
    on_sqlite = {t: [r[0] for r in lite.execute(sql, [f'"{t}"'])] for t in terms}
    on_postgres: dict[str, list[int]] = {t: [] for t in terms}
    for term, doc in pg.execute(  # one statement for every term (the same match as `search MATCH ?`)
        "SELECT q.t, s.id FROM unnest(?::text[]) AS q(t) JOIN search_text s "
        "ON s.tsv @@ fts5_query('\"' || q.t || '\"') ORDER BY q.t, s.id",
        [terms],
    ):
        on_postgres[term].append(doc)
    differ = {t: (on_sqlite[t], on_postgres[t]) for t in terms if on_sqlite[t] != on_postgres[t]}
    assert not differ, list(differ.items())[:5]


def _sample_text() -> str:
    """Every code point FTS5 folds, its folded form, and each end of every separator range and the code points
    beside it, each alone between letters and in runs of random neighbours (deterministic)."""
    points: set[int] = set()
    for code, folded in folds().items():
        points.add(code)
        if folded is not None:
            points.add(folded)
    for first, last in separator_ranges():
        points.update({first - 1, first, last, last + 1})
    chosen = sorted(p for p in points if 0 < p < 0x110000 and not 0xD800 <= p <= 0xDFFF)
    rng = random.Random(15)
    alone = " ".join(f"q{chr(p)}Q" for p in chosen)
    mixed = " ".join("".join(chr(rng.choice(chosen)) for _ in range(rng.randint(1, 9))) for _ in range(600))
    return f"{alone} {mixed}"


def test_postgresql_makes_the_tokens_fts5_makes_of_every_edge_character(stores: tuple[Any, Any]) -> None:
    """`fts5_tokens` against this SQLite's FTS5 on every folded character and every separator range's ends:
    also fails when a newer SQLite changes its tables (then run `python tools/fts5_chars.py`)."""
    text = _sample_text()
    fts = sqlite3.connect(":memory:")
    fts.execute("CREATE VIRTUAL TABLE s USING fts5(text, tokenize='unicode61 remove_diacritics 2')")
    fts.execute("CREATE VIRTUAL TABLE v USING fts5vocab(s, 'instance')")
    fts.execute("INSERT INTO s (text) VALUES (?)", [text])
    expected = [r[0] for r in fts.execute("SELECT term FROM v ORDER BY offset")]
    got = stores[1].execute("SELECT fts5_tokens(?)", [text]).fetchone()[0]
    assert len(expected) > 4_000
    first = next((i for i, (a, b) in enumerate(zip(got, expected, strict=False)) if a != b), None)
    assert got == expected, (
        first,
        got[first or 0 : (first or 0) + 3],
        expected[first or 0 : (first or 0) + 3],
    )
