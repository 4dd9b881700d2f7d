"""A decoding rule for local models: a fenced code block, once opened, holds something.

A small model often opens its command block and closes it at once (` ```bash ` then ` ``` `), step
after step, greedy or sampled: told the block was empty, it writes the same. Where the backend can
shape each token's choice (llama.cpp), the tokens that would close or end an empty block are taken
out of the choice, so the model writes the command its plan is about instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any

import numpy as np

# A fence line: three backticks at the start of a line (an indented one too).
_FENCE = re.compile(r"^[ \t]*```", re.MULTILINE)


class BlockState(Enum):
    """Where generated text stands with respect to an open, still empty code block."""

    FENCE = "fence"  # on the opening fence's line (its language label)
    BODY = "body"  # past that line, with nothing but whitespace written inside


def empty_open_block(text: str) -> BlockState | None:
    """The state of `text`'s last code block when it is open and empty, else None."""
    fences = list(_FENCE.finditer(text))
    if len(fences) % 2 == 0:  # no block, or the last one is closed
        return None
    after = text[fences[-1].end() :]
    line_end = after.find("\n")
    if line_end < 0:
        return BlockState.FENCE
    return BlockState.BODY if not after[line_end + 1 :].strip() else None


class NonEmptyBlocks:
    """The token ids to forbid in each state, from the model's vocabulary pieces."""

    def __init__(self, pieces: Sequence[bytes], end_of_generation: Sequence[int]) -> None:
        closing = [i for i, piece in enumerate(pieces) if piece.lstrip().startswith(b"`")]
        # Blank lines (and pieces of no text) go; spaces stay, as the indent of an indented block's code.
        blank = [i for i, piece in enumerate(pieces) if not piece.strip() and (not piece or b"\n" in piece)]
        # On the fence line a newline is how the block opens; only a fence that would close it goes.
        self.forbidden = {
            BlockState.FENCE: np.array(sorted({*closing, *end_of_generation}), dtype=np.intc),
            BlockState.BODY: np.array(sorted({*closing, *blank, *end_of_generation}), dtype=np.intc),
        }

    def processor(self, generated: Callable[[], str]) -> Callable[[Any, Any], Any]:
        """A llama-cpp-python logits processor that reads the text generated so far from `generated`."""

        def forbid(_input_ids: Any, logits: Any) -> Any:
            state = empty_open_block(generated())
            if state is not None:
                logits[self.forbidden[state]] = -np.inf
            return logits

        return forbid
