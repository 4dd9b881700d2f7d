"""A response cache on disk: the same prompt to the same model with the same sampling gets the same reply.

On by default for `agentcli eval` (a re-run of a suite replays the calls it already paid for), off for
interactive work. Entries are JSON files under `cache_dir()/responses`, keyed by a SHA-256 of the model,
its endpoint, the messages and the sampling parameters; past a size cap the least recently used go first."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentcli.models.base import Message, ModelWrapper, Reply, StreamCallback, ToolCall, Usage
from agentcli.models.stream import StreamRelay

DEFAULT_MAX_BYTES = 256 << 20
# How long a command took differs from run to run and says nothing the model should answer differently.
_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds?)\b")


def default_directory() -> Path:
    from agentcli.paths import cache_dir

    return cache_dir() / "responses"


class ResponseCache:
    def __init__(self, directory: Path | None = None, max_bytes: int = DEFAULT_MAX_BYTES):
        self.directory = directory or default_directory()
        self.max_bytes = max_bytes

    @staticmethod
    def key(
        model: str,
        messages: list[Message],
        *,
        endpoint: str = "",
        temperature: float | None = None,
        seed: int = 0,
        max_tokens: int | None = None,
        prefix: str = "",
        grammar: str | None = None,
        tools: list[dict[str, Any]] | None = None,
        stop: tuple[str, ...] = (),
        masks: tuple[str, ...] = (),
    ) -> str:
        """The entry's name. Durations in the messages (`0.9s`, `12 ms`) and the `masks` (the run's own paths,
        which differ between two runs of one task) are left out, so a re-run finds what the first run stored."""
        material = {
            "model": model,
            "endpoint": endpoint,
            "messages": [[m.get("role"), _normalised(str(m.get("content")), masks)] for m in messages],
            "temperature": temperature,
            "seed": seed,
            "max_tokens": max_tokens,
            "prefix": prefix,
            "stop": list(stop),
        }
        if grammar is not None:  # keys of unconstrained replies stay as they were
            material["grammar"] = grammar
        if tools is not None:
            material["tools"] = tools
        return hashlib.sha256(json.dumps(material, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: evicted last
        return entry

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store atomically (a crash leaves the old entry or the new one), then evict down to the cap."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, temp = tempfile.mkstemp(prefix=".entry-", dir=path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(entry, f, ensure_ascii=False)
                os.replace(temp, path)
            except BaseException:
                Path(temp).unlink(missing_ok=True)
                raise
        except OSError:
            return  # a cache that cannot be written is no cache, not a failed run
        self.evict()

    def evict(self) -> int:
        """Remove the least recently used entries until the cache fits its cap; how many went."""
        entries = []
        total = 0
        for path in self.directory.glob("*/*.json"):
            try:
                stat = path.stat()
            except OSError:
                continue
            entries.append((stat.st_mtime_ns, stat.st_size, path))
            total += stat.st_size
        removed = 0
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size
            removed += 1
        return removed


def _normalised(text: str, masks: tuple[str, ...]) -> str:
    for i, mask in enumerate(sorted((m for m in masks if m), key=len, reverse=True)):
        text = text.replace(mask, f"<path{i}>")
    return _DURATION.sub("<t>", text)


class CachedModel(ModelWrapper):
    """A model whose replies are looked up in a `ResponseCache` before it is asked."""

    def __init__(
        self,
        inner: Any,
        cache: ResponseCache,
        on_hit: Callable[[str, str], None] | None = None,
        masks: tuple[str, ...] = (),
    ):
        self.inner = inner
        self.cache = cache
        self.on_hit = on_hit  # called with (model name, key) for each reply served from the cache
        self.masks = masks  # strings that differ between runs of one task (its directories), left out of keys

    @property
    def wrapped(self) -> Any:
        return self.inner

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
        on_token: StreamCallback | None = None,
        temperature: float | None = None,
        prefix: str = "",
        grammar: str | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> Reply:
        key = self.cache.key(
            self.inner.name,
            messages,
            endpoint=getattr(self.inner, "api_base", "") or "",
            temperature=temperature if temperature is not None else getattr(self.inner, "temperature", None),
            seed=int(getattr(self.inner, "seed", 0) or 0),
            max_tokens=max_tokens,
            prefix=prefix if self.inner.continues_replies else "",
            grammar=grammar if self.constrains_replies else None,
            tools=tools if self.calls_tools else None,
            stop=tuple(getattr(self.inner, "stop", ()) or ()),
            masks=self.masks,
        )
        entry = self.cache.get(key)
        if entry is not None:
            text = entry["text"]
            if on_token is not None:
                StreamRelay(on_token).deliver(text)
            if self.on_hit is not None:
                self.on_hit(self.inner.name, key)
            usage = Usage(
                prompt_tokens=int(entry.get("prompt_tokens", 0)),
                completion_tokens=int(entry.get("completion_tokens", 0)),
                prompt_evaluated=0,
            )
            call = entry.get("tool_call")
            tool_call = ToolCall(**call) if isinstance(call, dict) else None
            return Reply(text=text, usage=usage, cost=0.0, raw={"cached": key}, cached=True, tool_call=tool_call)
        reply = self.inner.complete(
            messages,
            max_tokens=max_tokens,
            on_token=on_token,
            temperature=temperature,
            prefix=prefix,
            grammar=grammar,
            tools=tools,
        )
        if reply.text or reply.tool_call is not None:
            self.cache.put(
                key,
                {
                    "model": self.inner.name,
                    "text": reply.text,
                    "prompt_tokens": reply.usage.prompt_tokens,
                    "completion_tokens": reply.usage.completion_tokens,
                    "cost": reply.cost,
                    "tool_call": dataclasses.asdict(reply.tool_call) if reply.tool_call is not None else None,
                },
            )
        return reply
