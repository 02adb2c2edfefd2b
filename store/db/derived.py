"""SQL for what the store derives from a finding's JSON columns (the tools its refs name, its codes), written
once for the schema's triggers, the tallies' rebuild and the queue's filters, which must agree row for row."""

from __future__ import annotations

#: Between a kind and a tool in a `kind_tool` tally's value. A kind and a tool that hold none make a value
#: no other pair makes, so the tally is read only for such (`store.findings`).
KIND_TOOL_SEP = "\x1f"


def named_in_refs(refs: str, *, value: str = "k.value AS v", source: str = "") -> str:
    """A SELECT of `value` over every name the findings' refs `refs` give a tool (`k.value`): each text
    `toolName` or `id` of an object among the elements of the JSON array (json_each's rows); refs that are
    not valid JSON, elements that are not objects and values that are not text name none. What the queue's
    tool filter matches besides a finding's own tool (`store.findings._filters`), and the `tool_named` tally
    counts (a finding once per distinct name, its own tool's included). `source`: tables read before
    (with a trailing comma), the refs' row among them."""
    return (
        f"SELECT {value} FROM {source}json_each(CASE WHEN json_valid({refs}) THEN {refs} ELSE '[]' END) r, "
        "json_each(CASE WHEN r.type = 'object' THEN r.value ELSE '{}' END) k "
        "WHERE k.key IN ('toolName', 'id') AND k.type = 'text'"
    )


def finding_codes(row: str) -> str:
    """The text values of the JSON `codes` of the finding `row` names (a trigger's NEW or OLD, or an alias)."""
    return (
        f"json_each(CASE WHEN json_valid({row}.codes) THEN {row}.codes ELSE '[]' END) j WHERE j.type = 'text'"
    )


#: (Re)fill `finding_codes` from the findings (the migration; `store.tallies.rebuild_tallies`): each code of
#: a finding once, as the `code` tally counts it. The same statement on both backends.
FINDING_CODES_REFILL = (
    f"INSERT INTO finding_codes (code, finding) SELECT j.value, f.id FROM findings f, {finding_codes('f')} "
    "ON CONFLICT DO NOTHING"
)


#: The queue keys of a finding that `finding_codes` carries on PostgreSQL (schema m031): its column -> the
#: finding's. Read through the view `finding_code_keys`, whose columns are named as the findings' (`f.id`,
#: `f.rowid`...), so a page's conditions read it as they read the findings.
CODE_KEYS = {
    "frowid": "rowid",
    "run_key": "run_key",
    "seq": "seq",
    "kind": "kind",
    "tool_name": "tool_name",
    "pack_version": "pack_version",
    "run_started_ms": "run_started_ms",
}


def code_pairs_with_keys(rows: str) -> str:
    """The statement adding a `finding_codes` row, with its finding's keys, for each code of each finding of
    `rows` (a transition table, or `findings`), as m031's triggers and `rebuild_tallies` write them."""
    return (
        f"INSERT INTO finding_codes (code, finding, {', '.join(CODE_KEYS)}) SELECT j.value, n.id, "
        f"{', '.join(f'n.{c}' for c in CODE_KEYS.values())} FROM {rows} n, {finding_codes('n')} "
        "ON CONFLICT DO NOTHING"
    )
