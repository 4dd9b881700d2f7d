"""The KV cache of a conversation's opening, kept on disk for the next process (llama.cpp).

Every run starts with the same system message, and a fresh process would evaluate it again before
the first reply: seconds on a small CPU. The second process to evaluate an opening saves the KV state
of its tokens here (the first only marks it seen: an opening that names a one-off folder never comes
back); a later one that starts with the same tokens, on the same model, build and CPU, restores it
and evaluates only what follows. The files live in the user's cache directory, where no sandbox can
write; a file that does not check out is removed and the opening evaluated again.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import struct
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.paths import cache_dir

MAGIC = b"agentcli-kv-prefix-1\n"
KEPT_FILES = 8  # openings kept; the least recently used go first
KEPT_MARKS = 64  # openings seen once
STALE_PART_S = 600.0  # a file being written for longer was left by a process that died
SHORTEST = 32  # tokens: a shorter opening is evaluated sooner than its file is read


def default_folder() -> Path:
    return cache_dir() / "kv-prefix"


@dataclass(frozen=True)
class PrefixStore:
    """Saved KV states of openings, for one model file, llama.cpp build and context setting."""

    folder: Path
    identity: str  # what else must match for a saved state to be valid

    @classmethod
    def for_model(
        cls, llama_cpp: Any, path: Path, settings: tuple[Any, ...], folder: Path | None = None
    ) -> PrefixStore:
        stat = path.stat()
        # The CPU's features too: a cache folder shared between machines must not mix their kernels' numbers.
        system = llama_cpp.llama_print_system_info().decode(errors="replace")
        build = [getattr(llama_cpp, "__version__", ""), system]
        identity = json.dumps([str(path), stat.st_size, stat.st_mtime_ns, *build, *settings])
        return cls(folder or default_folder(), identity)

    def _file(self, tokens: list[int], suffix: str = ".kv") -> Path:
        digest = hashlib.sha256(self.identity.encode() + struct.pack(f"<{len(tokens)}i", *tokens)).hexdigest()
        return self.folder / f"{digest[:32]}{suffix}"

    def seen_before(self, tokens: list[int]) -> bool:
        """Whether an earlier process evaluated this opening; marks it seen for the next one."""
        mark = self._file(tokens, ".seen")
        if mark.exists():
            return True
        with contextlib.suppress(OSError):
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            mark.touch()
            self._prune("*.seen", KEPT_MARKS)
        return False

    def load(self, tokens: list[int]) -> bytes | None:
        """The saved state of exactly `tokens`, or None (not saved, or a file that does not check out)."""
        path = self._file(tokens)
        try:
            blob = path.read_bytes()
        except OSError:
            return None
        state = _unpack(blob, self.identity, tokens)
        if state is None:
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: kept longer
        return state

    def save(self, tokens: list[int], state: bytes) -> None:
        """Keep `state` for `tokens` (written whole or not at all); the oldest files beyond `KEPT_FILES` go."""
        part = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            header = json.dumps({"identity": self.identity, "tokens": tokens}).encode()
            digest = hashlib.sha256(state).digest()
            with tempfile.NamedTemporaryFile(dir=self.folder, suffix=".part", delete=False) as out:
                part = Path(out.name)
                out.write(MAGIC + struct.pack("<Q", len(header)) + header + digest + state)
            os.replace(part, self._file(tokens))
        except BaseException as exc:
            if part is not None:
                with contextlib.suppress(OSError):
                    part.unlink()
            if isinstance(exc, OSError):
                return  # a cache: a full or read-only disk only costs the next process the evaluation
            raise
        self._prune("*.kv", KEPT_FILES)
        self._prune("*.part", 0, older_than=STALE_PART_S)

    def _prune(self, pattern: str, keep: int, older_than: float = 0.0) -> None:
        """Remove all but the `keep` latest files matching `pattern` (only those older than `older_than` s)."""
        dated = [(mtime, path) for path in self.folder.glob(pattern) if (mtime := _mtime(path)) is not None]
        dated.sort(reverse=True)
        now = time.time()
        for mtime, path in dated[keep:]:
            if now - mtime >= older_than:
                with contextlib.suppress(OSError):
                    path.unlink()


def _mtime(path: Path) -> float | None:
    """When `path` last changed, or None where another process removed it meanwhile."""
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _unpack(blob: bytes, identity: str, tokens: list[int]) -> bytes | None:
    if not blob.startswith(MAGIC) or len(blob) < len(MAGIC) + 8:
        return None
    start = len(MAGIC) + 8
    (length,) = struct.unpack_from("<Q", blob, len(MAGIC))
    try:
        header = json.loads(blob[start : start + length])
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("identity") != identity or header.get("tokens") != tokens:
        return None
    digest, state = blob[start + length : start + length + 32], blob[start + length + 32 :]
    return state if hashlib.sha256(state).digest() == digest and state else None


def opening_length(full: list[int], opening: list[int]) -> int:
    """How many tokens of the prompt `full` are the opening's (the common start of the two
    tokenisations: the opening rendered alone ends with a reply's start that the prompt does not hold)."""
    common = 0
    for a, b in zip(full, opening, strict=False):
        if a != b:
            break
        common += 1
    return common if common >= SHORTEST else 0


def saved_state(llama_cpp: Any, llama: Any) -> bytes:
    """The KV state of sequence 0 of `llama`'s context, as bytes."""
    ctx = llama._ctx.ctx
    size = llama_cpp.llama_state_seq_get_size(ctx, 0)
    data = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_seq_get_data(ctx, data, size, 0)
    return ctypes.string_at(data, written)


def restore_state(llama_cpp: Any, llama: Any, state: bytes, tokens: list[int]) -> bool:
    """Make `llama`'s KV cache hold `tokens` from `state`; False (and an empty cache) where it does not take."""
    llama._ctx.kv_cache_seq_rm(-1, 0, -1)
    llama.n_tokens = 0
    data = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
    if llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, data, len(state), 0) != len(state):
        llama._ctx.kv_cache_seq_rm(-1, 0, -1)
        return False
    llama.input_ids[: len(tokens)] = tokens
    llama.n_tokens = len(tokens)
    llama._requires_eval = True  # logits are not part of the state
    return True
