"""The framework's appended coverage block, which its own checks never see.

`.limitsTravelWithTheAnswer()` appends, after the evidence gate has judged (agentfootprint
`src/core/agent/coverage/answer.ts`, `composeAnswerWithCoverage`):

    <answer with trailing whitespace removed>\n\n---\n\nCoverage of this answer — declared by the tools
    that produced it, not by the model:\n\n<Checked: / Not checked: / Cannot cover: sections>

or the block alone when the answer is empty. The observer reads the model's answer, so the replay must
too. Only a block in that exact form at the end is removed; any other text is left as it is.
"""

from __future__ import annotations

import re

COVERAGE_BLOCK_HEADING = "Coverage of this answer"
_HEADING_LINE = f"{COVERAGE_BLOCK_HEADING} \u2014 declared by the tools that produced it, not by the model:"
_SEPARATOR = "\n\n---\n\n"
_SECTION = r"(?:Checked|Not checked|Cannot cover):\n- [^\n]*(?:\n- [^\n]*)*"
_BLOCK = re.compile(re.escape(_HEADING_LINE) + r"\n\n" + _SECTION + r"(?:\n\n" + _SECTION + r")*\Z")


def strip_coverage_block(text: str) -> str:
    """`text` without the framework-appended coverage block (unchanged when there is none).

    The last heading wins: a model that quoted an earlier answer's block keeps its quote."""
    if text.startswith(_HEADING_LINE) and _BLOCK.match(text):
        return ""
    at = text.rfind(_SEPARATOR + _HEADING_LINE)
    if at < 0 or _BLOCK.match(text, at + len(_SEPARATOR)) is None:
        return text
    return text[:at]
