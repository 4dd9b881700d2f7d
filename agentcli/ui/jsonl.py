"""`--json`: one JSON object per event on stdout; the last line is the result. Streamed tokens and
the prompts the model was sent are left out: the reply and the journal hold them."""

from __future__ import annotations

import json
import sys
from typing import TextIO

from agentcli.events import Event, ModelPrompt, TokenStreamed


class JsonLinesRenderer:
    def __init__(self, stream: TextIO | None = None):
        self.stream = stream or sys.stdout

    def __call__(self, event: Event) -> None:
        if isinstance(event, TokenStreamed | ModelPrompt):
            return
        self.stream.write(json.dumps(event.to_dict(), ensure_ascii=False) + "\n")
        self.stream.flush()
