"""Tallies: how many runs and findings each filter value has, kept by triggers (schema m010) in the very
transaction that writes or deletes the rows, so facets and the counts a screen shows cost a few index reads
at any size. `rebuild_tallies` re-derives them all from the rows (the migration and `reextract` call it).

Facets: `runs` (value ''), `outcome`, `agent`, `tenant`, `has_findings` (''), `run_kind` (runs with at least
one finding of the kind), `run_pack` (runs whose findings name the pack version); `findings` (''), `kind`,
`code`, `tool` (a finding's own tool name), `tool_named` (findings naming the tool, as their own or in their
refs: what the queue's tool filter matches, each finding once per distinct name; schema m023), `kind_tool`
(the same by kind and tool, `KIND_TOOL_SEP` between), `kind_code` (findings by kind and code, the same
separator; schema m027),
`pack_version` (findings of that version).
"""

from __future__ import annotations

from sqlite_utils import Database

from store.db.derived import (
    CODE_KEYS,
    FINDING_CODES_REFILL,
    KIND_TOOL_SEP,
    code_pairs_with_keys,
    named_in_refs,
)

#: The runs filter answered by each run facet (filters not listed here are counted by reading rows).
RUN_FILTER_FACETS = {
    "outcome": "outcome",
    "agent": "agent",
    "tenant": "tenant",
    "kind": "run_kind",
    "pack_version": "run_pack",
}
#: The queue filter answered by each finding facet.
FINDING_FILTER_FACETS = {"kind": "kind", "code": "code", "tool": "tool_named", "pack_version": "pack_version"}

#: Every (finding, kind, tool it names), once each: its own tool and those its refs name (schema m023).
_NAMED = (
    "SELECT f.rowid AS fid, f.kind AS kind, f.tool_name AS v FROM findings f WHERE f.tool_name IS NOT NULL "
    f"UNION {named_in_refs('f.refs', value='f.rowid, f.kind, k.value', source='findings f, ')}"
)

#: Findings by kind and code (schema m027), each finding once per distinct code.
KIND_CODE_TALLY = (
    f"SELECT 'kind_code', kind || '{KIND_TOOL_SEP}' || value, count(*) FROM (SELECT DISTINCT f.rowid, f.kind, "
    "j.value FROM findings f, json_each(CASE WHEN json_valid(f.codes) THEN f.codes ELSE '[]' END) j "
    "WHERE j.type = 'text' AND f.kind IS NOT NULL) coded GROUP BY kind, value"
)

_REBUILD = (
    "SELECT 'runs', '', count(*) FROM runs",
    "SELECT 'outcome', outcome, count(*) FROM runs WHERE outcome IS NOT NULL GROUP BY outcome",
    "SELECT 'agent', agent_id, count(*) FROM runs WHERE agent_id IS NOT NULL GROUP BY agent_id",
    "SELECT 'tenant', tenant, count(*) FROM runs WHERE tenant IS NOT NULL GROUP BY tenant",
    "SELECT 'has_findings', '', count(*) FROM runs WHERE findings > 0",
    "SELECT 'run_pack', j.value, count(*) FROM runs r, json_each(CASE WHEN json_valid(r.pack_versions) "
    "THEN r.pack_versions ELSE '[]' END) j WHERE j.type = 'text' GROUP BY j.value",
    "SELECT 'findings', '', count(*) FROM findings",
    "SELECT 'kind', kind, count(*) FROM findings WHERE kind IS NOT NULL GROUP BY kind",
    "SELECT 'tool', tool_name, count(*) FROM findings WHERE tool_name IS NOT NULL GROUP BY tool_name",
    "SELECT 'pack_version', pack_version, count(*) FROM findings WHERE pack_version IS NOT NULL "
    "GROUP BY pack_version",
    "SELECT 'code', value, count(*) FROM (SELECT DISTINCT f.rowid, j.value FROM findings f, json_each(CASE "
    "WHEN json_valid(f.codes) THEN f.codes ELSE '[]' END) j WHERE j.type = 'text') GROUP BY value",
    "SELECT 'run_kind', kind, count(*) FROM (SELECT DISTINCT kind, run_key FROM findings "
    "WHERE kind IS NOT NULL) GROUP BY kind",
    f"SELECT 'tool_named', v, count(*) FROM ({_NAMED}) named GROUP BY v",
    f"SELECT 'kind_tool', kind || '{KIND_TOOL_SEP}' || v, count(*) FROM ({_NAMED}) named WHERE kind IS NOT NULL "
    "GROUP BY kind, v",
    KIND_CODE_TALLY,
)


def recount_kind_code(db: Database) -> None:
    """Count the `kind_code` tally again from the rows (schema m027, which adds it; an older store's m010
    rebuild, running this build's `_REBUILD`, may have counted it already)."""
    db.execute("DELETE FROM tallies WHERE facet = 'kind_code'")
    db.execute(f"INSERT INTO tallies (facet, value, n) SELECT * FROM ({KIND_CODE_TALLY}) counted")


def rebuild_tallies(db: Database, *, codes: bool = True) -> None:
    """Recount every tally from the rows (inside the caller's transaction, if any), and refill the findings'
    codes (`finding_codes`, the code filter's index, kept by triggers as the tallies are; `codes` False: the
    schema before m021, which has no such table)."""
    db.execute("DELETE FROM tallies")
    for select in _REBUILD:
        db.execute(f"INSERT INTO tallies (facet, value, n) SELECT * FROM ({select})")
    db.execute("DELETE FROM tallies WHERE n <= 0")
    if codes:
        db.execute("DELETE FROM finding_codes")
        # with each finding's queue keys where the table carries them (PostgreSQL, schema m031)
        columns = {str(d[0]) for d in db.execute("SELECT * FROM finding_codes LIMIT 0").description}
        keyed = set(CODE_KEYS) <= columns
        db.execute(code_pairs_with_keys("findings") if keyed else FINDING_CODES_REFILL)


def tally(db: Database, facet: str, value: str = "") -> int:
    """How many rows the tally `facet` holds for `value` (0 when none)."""
    row = db.execute("SELECT n FROM tallies WHERE facet = ? AND value = ?", [facet, value]).fetchone()
    return int(row[0]) if row else 0


def tally_values(db: Database, facet: str, *, cap: int) -> list[str]:
    """The values of `facet` that some row has, in order (at most `cap`; empty strings left out)."""
    rows = db.execute(
        "SELECT value FROM tallies WHERE facet = ? AND value != '' ORDER BY value LIMIT ?", [facet, int(cap)]
    )
    return [str(r[0]) for r in rows]


def tally_sum(db: Database, facet: str, values: list[str], *, exclude: bool) -> int:
    """The tallies of `facet` summed over `values` (or, with `exclude`, over every other value)."""
    marks = ", ".join("?" for _ in values) or "NULL"
    op = "NOT IN" if exclude else "IN"
    row = db.execute(
        f"SELECT coalesce(sum(n), 0) FROM tallies WHERE facet = ? AND value {op} ({marks})", [facet, *values]
    ).fetchone()
    return int(row[0])
