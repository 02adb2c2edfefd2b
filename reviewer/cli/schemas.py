"""The shapes of every `--json` output, as pydantic models: each command serializes THROUGH its model (so a
field the model does not describe with its type is refused, not printed), and `reviewer schema [NAME]` prints
the JSON Schema generated from the same model, so a script can validate what it reads.

The field names are a public interface (the README's JSON section): add fields, never rename or drop one.
Values recorded by an agent are typed loosely (`Any`) where a recording may hold any JSON; the store's own
columns and counts are typed exactly. Models allow extra keys so a new field is never lost on its way out,
and the tests check that every output has no key its model does not name.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, RootModel

#: A recorded JSON value (arguments, results, semantics envelopes): any JSON at all.
JSON = Any
Number = int | float


class Out(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True, populate_by_name=True)


# -- runs, show ---------------------------------------------------------------------------------------------------


class RunRow(Out):
    """One run of `reviewer runs --json` (newest first)."""

    run_key: str = Field(
        description="The run's key: run id @ the first 10 hex digits of its recording's sha256."
    )
    run_id: str | None
    agent_id: str | None
    tenant: str | None
    principal: str | None
    session_id: str | None
    conversation_id: str | None
    started_at: str | None = Field(
        description="ISO 8601 UTC: the envelope's startedAt, else the first event's."
    )
    started_ms: int | None
    outcome: str | None
    outcome_channel: str | None
    delivered: bool | None
    delivered_as: str | None
    tool_calls: int | None
    failed_calls: int | None
    findings: int | None
    negative_claims: int | None
    coverage_gaps: int | None
    evictions: int | None
    iterations: int | None
    complete: bool | None
    dropped_events: int | None
    starts_mid_run: bool | None
    model: str | None
    pack_versions: JSON
    source: str | None = Field(description="The path of the recording the run was first stored from.")
    sources: list[str] = Field(
        description="Every path the run was read from, in the order first seen: the same run (same run id, "
        "same events) read from a bare recording and from its envelope, a bundle or an artifact is one run."
    )


class RunsOut(RootModel[list[RunRow]]):
    pass


class ToolCall(Out):
    call_id: str
    seq: int | None
    ordinal: int | None
    tool_name: str | None
    args: JSON
    result: JSON
    error: bool
    status: str | None
    duration_ms: int | None
    iteration: int | None
    stage: str | None
    parallel_count: int | None
    completed: bool
    refused: JSON
    args_invalid: JSON
    repeated: JSON
    has_semantics: bool
    absent: bool
    complete: JSON
    decisions: JSON
    render: JSON
    semantics: JSON


class CoverageRow(Out):
    call_id: str | None
    tool_name: str | None
    list_: str | None = Field(alias="list", description="checked, not_checked or cannot_cover.")
    what: str | None
    why: str | None
    origin: str | None
    looked_for: JSON


class Eviction(Out):
    id: str
    ordinal: int | None
    seq: int | None
    iteration: int | None
    strategy: str | None
    stage: str | None
    dropped_tools: JSON
    removed_stage_ids: JSON
    call_ids: JSON
    removed_messages: int | None
    origin: str | None


class Span(Out):
    start: int | None
    end: int | None


class Finding(Out):
    id: str
    run_key: str
    run_id: str | None
    seq: int | None
    kind: str
    field: str | None
    codes: JSON
    message: str | None
    span_text: str | None
    placeable: bool | None
    pack_version: str | None
    iteration: int | None
    refs: JSON
    advisory: bool
    truncated: bool
    tool_name: str | None
    call_id: str | None
    span: Span | None
    span_utf16: Span | None


class FindingRow(Finding):
    """One finding of `reviewer findings --json`, with what licenses its claim."""

    assertion: str | None
    licensing: str | None


class FindingsOut(RootModel[list[FindingRow]]):
    pass


class Version(Out):
    run_key: str
    recording_sha: str
    ingested_at: str | None
    source: str | None
    sources: list[str] = Field(description="Every path this version was read from.")
    labels: int


class RecordingInfo(Out):
    id: int
    sha256: str
    source: str
    container: str
    form: str
    bytes_: int = Field(alias="bytes")
    agentfootprint_version: str | None
    footprintjs_version: str | None
    envelope_run: JSON


class ShowOut(Out):
    """`reviewer show RUN --json`: the run with everything extracted from it."""

    run_key: str
    recording_sha: str
    run_id: str | None
    agent_id: str | None
    model: str | None
    provider: str | None
    tenant: str | None
    principal: str | None
    session_id: str | None
    conversation_id: str | None
    trace_id: str | None
    correlation_id: str | None
    started_at: str | None
    started_ms: int | None
    ended_ms: int | None
    complete: bool | None
    dropped_events: int | None
    first_retained_index: int | None
    starts_mid_run: bool | None
    events: int | None
    prompt: str | None
    answer: str | None
    outcome: str | None
    outcome_channel: str | None
    outcome_detail: JSON
    iterations: int | None
    tokens_in: int | None
    tokens_out: int | None
    duration_ms: int | None
    failed_calls: int | None
    negative_claims: int | None
    coverage_gaps: int | None
    pack_versions: JSON
    answer_negatives: JSON
    delivered: bool | None
    delivered_as: str | None
    delivery_headline: str | None
    delivered_text: str | None
    disposition: JSON
    sources: list[str] = Field(description="Every path the run was read from (see `runs`).")
    recording: RecordingInfo | None
    tool_calls: list[ToolCall]
    coverage: list[CoverageRow]
    evictions: list[Eviction]
    findings: list[Finding]
    versions: list[Version] = Field(
        description="Every stored recording of this run id, oldest first: a changed recording of a run is a "
        "second version beside the first, each with its own labels and sources."
    )


# -- quarantine, labels, stats, ingest ----------------------------------------------------------------------------


class QuarantineRow(Out):
    path: str
    code: str
    reason: str
    sha256: str | None
    first_seen: str
    last_seen: str
    times: int


class QuarantineOut(RootModel[list[QuarantineRow]]):
    pass


class Label(Out):
    """One label row (`reviewer label --json`): append-only; undo appends a `cleared` row."""

    uid: str
    target_id: str
    target_kind: str
    verdict: str
    note: str | None
    reviewer: str
    created_at: str
    undoes: str | None
    run_key: str | None
    run_id: str | None
    field: str | None
    span_start: int | None
    span_end: int | None
    span_text: str | None
    list_: str | None = Field(alias="list")


class LabelExportRow(Label):
    """One row of `reviewer labels --json` (oldest first): the label with its finding and run."""

    finding_kind: str | None
    finding_message: str | None
    finding_span_text: str | None
    finding_codes: list[JSON] | None = Field(
        description="The finding's codes, a JSON array (in CSV: its JSON text)."
    )
    finding_pack_version: str | None
    delivered: bool | None
    delivered_as: str | None


class LabelsOut(RootModel[list[LabelExportRow]]):
    pass


class Agreement(Out):
    reviewers: list[str]
    shared: int
    agreed: int
    observed_agreement: Number | None
    kappa: Number | None = Field(
        description="Cohen's kappa over the findings both labelled (null: undefined)."
    )


class Disagreement(Out):
    target_id: str
    kind: str
    verdicts: dict[str, str]


class StatsOut(Out):
    """`reviewer stats --json`: counts per finding kind and label state, and agreement between reviewers."""

    kinds: dict[str, dict[str, int]]
    totals: dict[str, int]
    reviewers: dict[str, int]
    agreement: list[Agreement]
    disagreements: list[Disagreement]


class Quarantined(Out):
    path: str
    code: str
    reason: str


class IngestOut(Out):
    """`reviewer ingest --json`: what one ingest did."""

    seen: int
    stored: int
    unchanged: int
    runs: int = Field(description="Runs in the recordings stored.")
    merged_runs: int = Field(
        description="Of `runs`, those already stored from another recording (the same run): stored once, with "
        "this recording as one more of its sources."
    )
    events: int
    bytes_: int = Field(alias="bytes")
    seconds: Number
    quarantined: list[Quarantined]


# -- packs --------------------------------------------------------------------------------------------------------


class PackRef(Out):
    ref: str | None
    name: str | None
    version: int | None
    hash: str


class StoredPackOut(Out):
    """A saved pack version (`pack new/add/remove/import --json`)."""

    id: int
    name: str
    version: int
    ref: str
    content_hash: str
    parent_hash: str | None
    none: list[str]
    complete: list[str]
    created_at: str
    created_by: str | None
    note: str | None


class PackListRow(Out):
    name: str
    versions: int
    ref: str
    content_hash: str
    phrases: int
    updated_at: str
    updated_by: str | None
    deployed_as: list[str]


class PackListOut(RootModel[list[PackListRow]]):
    pass


class Deployment(Out):
    """`pack deployed --json`: a phrasePackVersion string linked to the stored pack it was deployed from."""

    id: int
    pack_version: str
    pack: str | None
    content_hash: str | None
    replaces: str | None
    created_at: str
    created_by: str | None
    note: str | None


class VersionString(Out):
    version: str
    findings: int
    negative_claims: int
    labelled_findings: int
    labels: int
    deployed_from: Deployment | None


class VersionsOut(RootModel[list[VersionString]]):
    pass


class ProductionSide(Out):
    version: str
    pack: str | None
    measured: dict[str, Any]
    predicted: dict[str, Any] | None


class ProductionRow(ProductionSide):
    replaces: ProductionSide | None


class ProductionOut(RootModel[list[ProductionRow]]):
    pass


class PackVersionRow(Out):
    id: int
    name: str
    version: int
    ref: str
    content_hash: str
    parent_hash: str | None
    created_at: str
    created_by: str | None
    note: str | None
    phrases: int


class PackShowOut(StoredPackOut):
    """`pack show REF --json`: one version with the pack's history and production figures."""

    versions: list[PackVersionRow]
    production: list[ProductionRow]


class PhraseLists(Out):
    none: list[str]
    complete: list[str]


class PackDiffOut(Out):
    """`pack diff A [B] --json`."""

    from_: PackRef = Field(alias="from")
    to: PackRef
    added: PhraseLists
    removed: PhraseLists
    unchanged: bool


class ReplayOut(Out):
    """`pack replay REF --json`: the what-if replay of a pack beside its baseline, measured against the labels."""

    candidate: PackRef
    baseline: PackRef
    seconds: Number
    answers_per_second: Number
    answers: int
    answers_read: int
    excluded: dict[str, Any]
    coverage_blocks_removed: int
    typed_answers: int
    prediction_shape: dict[str, str]
    notes: dict[str, Any]
    newly_flagged: int
    newly_flagged_unrecorded: int
    no_longer_flagged: int
    newly_flagged_examples: list[dict[str, Any]]
    no_longer_flagged_examples: list[dict[str, Any]]
    phrases: list[dict[str, Any]]
    figures: dict[str, Any]
    labels: dict[str, Any]
    holdout: dict[str, Any]
    caveat: str
    caveats: list[JSON]
    trial: dict[str, Any]


class SuggestOut(Out):
    """`pack suggest [REF] --json`: candidate phrases from missed-negative labels (training part only)."""

    pack: PackRef | None
    holdout: dict[str, Any]
    used: dict[str, int]
    suggestions: list[dict[str, Any]]


#: name -> (model, the command whose --json output it describes)
SCHEMAS: dict[str, tuple[type[BaseModel], str]] = {
    "runs": (RunsOut, "reviewer runs --json"),
    "show": (ShowOut, "reviewer show RUN --json"),
    "findings": (FindingsOut, "reviewer findings --json"),
    "quarantine": (QuarantineOut, "reviewer quarantine --json"),
    "stats": (StatsOut, "reviewer stats --json"),
    "label": (Label, "reviewer label ... --json"),
    "labels": (LabelsOut, "reviewer labels --json"),
    "ingest": (IngestOut, "reviewer ingest --json"),
    "pack-saved": (StoredPackOut, "reviewer pack new|add|remove|import --json"),
    "pack-list": (PackListOut, "reviewer pack list --json"),
    "pack-versions": (VersionsOut, "reviewer pack versions --json"),
    "pack-deployed": (Deployment, "reviewer pack deployed --json"),
    "pack-production": (ProductionOut, "reviewer pack production --json"),
    "pack-show": (PackShowOut, "reviewer pack show REF --json"),
    "pack-diff": (PackDiffOut, "reviewer pack diff --json"),
    "pack-replay": (ReplayOut, "reviewer pack replay REF --json"),
    "pack-suggest": (SuggestOut, "reviewer pack suggest --json"),
}


def serialized(name: str, value: Any) -> Any:
    """`value` validated by, and dumped through, the model of output `name` (its field names as printed)."""
    model = SCHEMAS[name][0]
    return model.model_validate(value).model_dump(mode="json", by_alias=True)


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema (2020-12) of output `name`, as the model serializes it."""
    model, command = SCHEMAS[name]
    schema = model.model_json_schema(by_alias=True, mode="serialization")
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    schema.setdefault("title", name)
    schema["description"] = f"{command}. " + (schema.get("description") or "").strip()
    return schema
