"""The empty-block rule's reading of generated text, and its forbidden tokens on a small vocabulary."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy", reason="numpy comes with llama-cpp-python, which is not installed")

from agentcli.models.nonempty_blocks import BlockState, NonEmptyBlocks, empty_open_block  # noqa: E402


@pytest.mark.parametrize(
    ("text", "state"),
    [
        ("PLAN: 1. look", None),
        ("PLAN:\n```", BlockState.FENCE),
        ("PLAN:\n```ba", BlockState.FENCE),
        ("PLAN:\n```bash\n", BlockState.BODY),
        ("PLAN:\n```bash\n  \n", BlockState.BODY),
        ("```bash\nls", None),
        ("```bash\nls\n```", None),  # closed
        ("```bash\nls\n```\nthen\n```python\n", BlockState.BODY),
        ("Use ```bash``` blocks", None),  # inline, not a fence line
        ("  ```\n", BlockState.BODY),  # an indented fence opens a block too
    ],
)
def test_an_open_empty_block_is_recognised(text: str, state: BlockState | None) -> None:
    assert empty_open_block(text) is state


PIECES = [b"```", b"\n```", b"ls", b"\n", b"   ", b"bash", b"`x`", b"", b"echo"]
END = 7


def _choice(rule: NonEmptyBlocks, generated: str) -> bytes:
    logits = np.zeros(len(PIECES), dtype=np.single)
    logits[0] = logits[1] = logits[3] = logits[END] = 5.0  # the model would rather close or end
    logits[2] = 1.0
    logits = rule.processor(lambda: generated)(None, logits)
    return PIECES[int(np.argmax(logits))]


def test_the_indent_of_an_indented_blocks_code_stays_free() -> None:
    rule = NonEmptyBlocks(PIECES, [END])
    logits = np.zeros(len(PIECES), dtype=np.single)
    logits[4] = 5.0  # "   " before the code of a block indented under a list item
    logits = rule.processor(lambda: "1. Look:\n   ```python\n")(None, logits)
    assert PIECES[int(np.argmax(logits))] == b"   "


def test_closing_and_ending_are_forbidden_only_in_an_empty_block() -> None:
    rule = NonEmptyBlocks(PIECES, [END])
    assert _choice(rule, "PLAN: 1. list\n```bash") == b"\n"  # the block opens
    assert _choice(rule, "PLAN: 1. list\n```bash\n") == b"ls"  # and must hold something
    assert _choice(rule, "```bash\nls\n") in (b"```", b"\n```", b"\n", b"")  # free once it does
    assert _choice(rule, "no block here") in (b"```", b"\n```", b"\n", b"")
