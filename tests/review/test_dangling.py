"""Calls made on an evicted ground while the reference stayed dangling, argument values marked."""

from __future__ import annotations

from reviewer.review.dangling import dangling_calls, failed_passes

FINDING = {
    "tool_name": "screen_fire",
    "refs": [{"kind": "tool", "id": "screen_fire"}, {"kind": "tool", "id": "whats_here"}],
}
EVICTIONS = [{"seq": 10, "dropped_tools": ["whats_here"], "call_ids": ["h1"]}]
GROUND = {"h1": {"result": '{"facts":[{"screen_id":"scr-9000"},{"screen_id":"scr-9001"}]}', "cut": False}}


def _call(cid: str, seq: int, tool: str, **args: object) -> dict:
    return {"call_id": cid, "seq": seq, "tool_name": tool, "iteration": seq // 10, "args": args}


def test_calls_after_the_eviction_until_the_ground_is_read_again() -> None:
    calls = [
        _call("h1", 2, "whats_here"),
        _call("f1", 5, "screen_fire", screen_id="scr-9000"),  # before the eviction: grounded
        _call("f2", 12, "screen_fire", screen_id="scr-9001"),
        _call("f3", 14, "screen_fire", screen_id="scr-900"),  # a prefix of a seen id is not seen
        _call("h2", 16, "whats_here"),
        _call("f4", 18, "screen_fire", screen_id="scr-9042"),  # re-grounded: not listed
    ]
    got = dangling_calls(FINDING, calls, EVICTIONS, GROUND)
    assert [c["call_id"] for c in got["calls"]] == ["f2", "f3"]
    assert [a["in_evicted_result"] for c in got["calls"] for a in c["args"]] == [True, False]
    assert got["reestablished_by"] == "h2" and got["since_seq"] == 10


def test_no_eviction_of_the_ground_lists_nothing() -> None:
    got = dangling_calls(FINDING, [_call("f2", 12, "screen_fire", screen_id="x")], [], {})
    assert got["calls"] == [] and got["since_seq"] is None


def test_failed_passes_read_from_the_disposition() -> None:
    disposition = {"rows": [{"check": "dangling-reference", "seam": "compose", "checked": 6, "findings": 6}]}
    assert failed_passes(disposition) == {"checked": 6, "findings": 6}
    assert failed_passes(None) is None
