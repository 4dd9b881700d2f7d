"""In-process local inference on llama-cpp-python.

The prompt is rendered with the chat template stored in the GGUF file and fed to the low-level
token generator, so an append-only conversation is an append-only token sequence and llama.cpp
evaluates only the new tokens each step. One model is loaded per process and shared by every
`LlamaCppModel` with the same settings; each instance's KV cache is parked and restored when
another instance (e.g. the summary role) uses the shared model in between.
"""

from __future__ import annotations

import array
import codecs
import contextlib
import ctypes
import importlib.util
import math
import os
import sys
import threading
import time
import weakref
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.errors import ComponentUnavailable, UsageError
from agentcli.models import lookup_decoding
from agentcli.models.base import ContextLengthExceeded, Message, ModelError, Reply, StreamCallback, Usage
from agentcli.models.cpu_kernels import extra_buffers_safe, without_extra_buffers
from agentcli.models.gguf import GGUFError, GGUFInfo, read_gguf
from agentcli.models.prefix_store import PrefixStore, opening_length, restore_state, saved_state

if TYPE_CHECKING:  # numpy comes with llama-cpp-python: imported only once a model runs
    from agentcli.models.nonempty_blocks import NonEmptyBlocks

DEFAULT_N_CTX = 8192
DEFAULT_MAX_TOKENS = 1024


def _llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:  # absent or built for another CPU
        raise ComponentUnavailable(
            f"llama-cpp-python cannot be imported ({exc}); install it with `pip install 'agentcli[local]'`"
        ) from exc
    return llama_cpp


def physical_cores() -> int:
    """Distinct (package, core) pairs in /proc/cpuinfo; `os.cpu_count()` elsewhere."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as cpuinfo:
            cores: set[tuple[str, str]] = set()
            package = ""
            for line in cpuinfo:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "physical id":
                    package = value.strip()
                elif key == "core id":
                    cores.add((package, value.strip()))
        if cores:
            return len(cores)
    except OSError:
        pass
    return os.cpu_count() or 1


def _gpu_present() -> bool:
    if sys.platform == "darwin":
        return True  # Metal
    return any(Path(p).exists() for p in ("/dev/nvidia0", "/dev/kfd", "/dev/dxg")) or any(
        Path("/dev/dri").glob("renderD*")
    )


def default_gpu_layers() -> int:
    """-1 (every layer) when llama.cpp was built with GPU offload and a GPU is present; else 0."""
    return -1 if _llama_cpp().llama_supports_gpu_offload() and _gpu_present() else 0


# --- the shared, loaded model -------------------------------------------------------------------


@dataclass
class _Parked:
    """One instance's KV cache for sequence 0, with the tokens it holds."""

    state: bytes
    tokens: list[int]


class _Engine:
    """A loaded `Llama` and which `LlamaCppModel` currently owns its KV cache."""

    def __init__(self, key: tuple[Any, ...], llama: Any) -> None:
        self.key = key
        self.llama = llama
        self.lock = threading.RLock()
        self.owner: weakref.ref[LlamaCppModel] | None = None
        self._nonempty_blocks: NonEmptyBlocks | None = None

    @property
    def nonempty_blocks(self) -> NonEmptyBlocks:
        """The empty-block rule for this model's vocabulary (built once: about 0.2 s for 150k tokens)."""
        if self._nonempty_blocks is None:
            from agentcli.models.nonempty_blocks import NonEmptyBlocks

            llama_cpp = _llama_cpp()
            vocab = self.llama._model.vocab
            ids = range(self.llama.n_vocab())
            pieces = [_piece(llama_cpp, vocab, i) for i in ids]
            ends = [i for i in ids if llama_cpp.llama_vocab_is_eog(vocab, i)]
            self._nonempty_blocks = NonEmptyBlocks(pieces, ends)
        return self._nonempty_blocks

    def acquire(self, model: LlamaCppModel) -> None:
        """Make `model`'s conversation the one in the KV cache, parking the previous owner's."""
        current = self.owner() if self.owner is not None else None
        if current is model:
            return
        if current is not None:
            current._parked = self._park()
        if model._parked is not None:
            self._restore(model._parked)
            model._parked = None
        self.owner = weakref.ref(model)

    def _park(self) -> _Parked | None:
        if self.llama.n_tokens == 0:
            return None
        state = saved_state(_llama_cpp(), self.llama)
        return _Parked(state, self.llama.input_ids[: self.llama.n_tokens].tolist()) if state else None

    def _restore(self, parked: _Parked) -> None:
        # Where the state does not take the cache stays empty: the next call evaluates its whole prompt.
        restore_state(_llama_cpp(), self.llama, parked.state, parked.tokens)


_ENGINE: _Engine | None = None
_ENGINE_LOCK = threading.Lock()


def _engine_for(key: tuple[Any, ...]) -> _Engine:
    """The process's one loaded model for `key`; a different key unloads the previous one."""
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is not None and _ENGINE.key == key:
            return _ENGINE
        if _ENGINE is not None:
            _ENGINE.llama.close()
            _ENGINE = None
        path, n_ctx, n_threads, n_gpu_layers = key
        llama_cpp = _llama_cpp()
        # Without extra buffer types where llama.cpp's AMX kernels crash on this CPU (see cpu_kernels).
        safe = extra_buffers_safe(llama_cpp, path)
        try:
            with contextlib.nullcontext() if safe else without_extra_buffers(llama_cpp):
                llama = llama_cpp.Llama(
                    model_path=path,
                    n_ctx=n_ctx,
                    n_threads=n_threads,
                    n_threads_batch=n_threads,
                    n_gpu_layers=n_gpu_layers,
                    verbose=False,
                )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ComponentUnavailable(f"llama.cpp cannot load {path}: {exc}") from exc
        _ENGINE = _Engine(key, llama)
        return _ENGINE


def unload() -> None:
    """Free the loaded model (tests and long-lived processes that switch models)."""
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is not None:
            _ENGINE.llama.close()
            _ENGINE = None


def _sampling_seed(tokens: list[int], seed: int = 0) -> int:
    """The seed for a sampled reply: the same prompt and run seed sample the same reply, so two runs
    of one version can be compared, while another prompt or another run seed samples afresh."""
    return zlib.crc32(array.array("i", tokens).tobytes(), seed & 0xFFFFFFFF)


# --- the backend --------------------------------------------------------------------------------


class LlamaCppModel:
    """A GGUF model run in-process by llama.cpp, behind the `Model` protocol."""

    def __init__(
        self,
        model_path: str | Path,
        *,
        name: str | None = None,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        n_gpu_layers: int | None = None,
        temperature: float = 0.0,
        seed: int = 0,
        top_p: float = 0.95,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        stop: Sequence[str] = (),
        speculative: bool = False,
        nonempty_blocks: bool = True,
        prefix_cache: bool | Path = False,
        check_memory: bool = True,
        header: GGUFInfo | None = None,
    ) -> None:
        """Read the header and check memory now; the weights load on first use (or `load()`).

        `speculative`: replies draft tokens from the conversation and check them in one batch (see
        `lookup_decoding`): each token still the model's own choice, greedy or sampled, sooner where
        the reply copies what the conversation holds.
        `nonempty_blocks`: a fenced code block the model opens cannot be closed or left before it holds
        something (see `nonempty_blocks`).
        `prefix_cache`: the KV state of the conversation's system message is kept on disk (in this
        folder; True: the user's cache) and a later process starts from it (see `prefix_store`)."""
        if importlib.util.find_spec("llama_cpp") is None:
            raise ComponentUnavailable(
                "llama-cpp-python is not installed; install it with `pip install 'agentcli[local]'`"
            )
        self.path = Path(model_path).resolve()
        try:
            self.header = header or read_gguf(self.path)
        except GGUFError as exc:
            raise UsageError(f"{self.path} is not a usable GGUF model: {exc}") from exc
        self.name = name or f"local/{self.path}"
        cap = n_ctx or DEFAULT_N_CTX
        self.n_ctx = min(cap, self.header.context_length or cap)
        self.n_threads = n_threads or physical_cores()
        self.n_gpu_layers = default_gpu_layers() if n_gpu_layers is None else n_gpu_layers
        self.temperature = temperature
        self.seed = seed
        self.top_p = top_p
        self.max_tokens = max_tokens
        self.stop = tuple(stop)
        self.speculative = speculative
        self.nonempty_blocks = nonempty_blocks
        self.prefix_cache = prefix_cache
        self._prefix_store: PrefixStore | None = None
        self._opening: tuple[str, int] = ("", 0)  # a system message and its length in tokens
        self._parked: _Parked | None = None
        self._formatter: Any = None
        self.continues_replies = True
        self.constrains_replies = True
        self.calls_tools = False  # the grammar shapes its replies instead
        if check_memory and self.n_gpu_layers == 0:
            from agentcli.models.store import check_memory as check

            check(self.header, self.n_ctx)

    @property
    def context_window(self) -> int:
        return self.n_ctx

    @property
    def _key(self) -> tuple[Any, ...]:
        return (str(self.path), self.n_ctx, self.n_threads, self.n_gpu_layers)

    def load(self) -> Any:
        """Load the weights now (if not already shared) and return the `Llama` object."""
        return self._engine().llama

    def _engine(self) -> _Engine:
        return _engine_for(self._key)

    # -- prompt ------------------------------------------------------------------------------

    def _render(self, llama: Any, messages: list[Message]) -> str:
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            template = llama.metadata.get("tokenizer.chat_template") or _CHATML
            model = llama._model
            eos = model.token_get_text(llama.token_eos()) if llama.token_eos() != -1 else ""
            bos = model.token_get_text(llama.token_bos()) if llama.token_bos() != -1 else ""
            self._formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
            self._bos_text = bos
        try:
            return self._formatter(messages=[dict(m) for m in messages]).prompt
        except Exception as exc:  # a template's raise_exception() or a Jinja error
            raise ModelError(f"the chat template of {self.name} rejected the messages: {exc}") from exc

    def _tokens(self, llama: Any, messages: list[Message], prefix: str = "") -> list[int]:
        prompt = self._render(llama, messages) + prefix
        add_bos = (
            str(llama.metadata.get("tokenizer.ggml.add_bos_token", "false")).lower() == "true"
            and bool(self._bos_text)
            and not prompt.startswith(self._bos_text)
        )
        return llama.tokenize(prompt.encode("utf-8"), add_bos=add_bos, special=True)

    def count_tokens(self, messages: list[Message]) -> int:
        engine = self._engine()
        with engine.lock:
            return len(self._tokens(engine.llama, messages))

    # -- generation --------------------------------------------------------------------------

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
        on_token: StreamCallback | None = None,
        stop: Sequence[str] | None = None,
        temperature: float | None = None,
        prefix: str = "",
        grammar: str | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> Reply:
        engine = self._engine()
        with engine.lock:
            engine.acquire(self)
            constraint = grammar if grammar and self.constrains_replies else None
            # A grammar states its own rule for blocks.
            rule = engine.nonempty_blocks if self.nonempty_blocks and constraint is None else None
            return self._complete(
                engine.llama, messages, max_tokens, on_token, stop, temperature, rule, prefix, constraint
            )

    def _complete(
        self,
        llama: Any,
        messages: list[Message],
        max_tokens: int | None,
        on_token: StreamCallback | None,
        stop: Sequence[str] | None,
        temperature: float | None,
        rule: NonEmptyBlocks | None = None,
        prefix: str = "",
        grammar: str | None = None,
    ) -> Reply:
        llama_cpp = _llama_cpp()
        started = time.perf_counter()
        tokens = self._tokens(llama, messages, prefix)
        if len(tokens) >= self.n_ctx:
            raise ContextLengthExceeded(
                f"the prompt is {len(tokens)} tokens; {self.name} runs with a {self.n_ctx}-token context"
            )
        budget = min(max_tokens or self.max_tokens, self.n_ctx - len(tokens))
        temp = self.temperature if temperature is None else temperature
        drafting = self.speculative
        opened = self._start_from_saved_opening(llama, messages, tokens) if self.prefix_cache else 0
        evaluated = opened + (
            lookup_decoding.evaluated(llama, tokens) if drafting else self._tokens_to_evaluate(llama, tokens)
        )
        stops = tuple(s for s in (*self.stop, *(stop or ())) if s)
        seed = _sampling_seed(tokens, self.seed)
        if temp > 0 and not drafting:
            llama.set_seed(seed)
        vocab = llama._model.vocab
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        if prefix and on_token is not None:
            on_token(prefix)  # the reply as the listener reads it starts with its prefix
        stream = _StopFilter(stops, on_token)
        generated = 0
        # What a trainer needs, token-exact: the ids sampled and the log-probability of each under the
        # model's own distribution (its raw logits).
        response_ids: list[int] = []
        logprobs: list[float] = []
        drafts: dict[str, int] = {}
        first: float | None = None
        last = started
        finish = "length"
        processors = None
        constraint = None
        if grammar is not None:
            from agentcli.models.grammar_filter import GrammarFilter

            try:
                constraint = GrammarFilter(llama_cpp, vocab, grammar)
            except ValueError as exc:
                raise ModelError(f"{exc} (see its log above)") from exc
        if rule is not None or constraint is not None:
            from llama_cpp import LogitsProcessorList

            processors = LogitsProcessorList(
                [rule.processor(lambda: prefix + stream.text)]
                if rule is not None
                else [constraint.processor(temp != 0)]
            )
        from agentcli.models import token_choice  # numpy: only once a model runs

        if drafting:
            if temp > 0:
                choose = token_choice.sampled(processors, temp, self.top_p, seed)
            else:
                choose = token_choice.greedy(processors)
            generator = lookup_decoding.decode(llama, tokens, choose, drafts)
        else:
            generator = _with_logits(
                llama,
                llama.generate(
                    tokens,
                    temp=temp,
                    top_k=token_choice.TOP_K,
                    top_p=self.top_p,
                    min_p=token_choice.MIN_P,
                    repeat_penalty=1.0,
                    reset=True,
                    logits_processor=processors,
                ),
            )
        try:
            for token, logits in generator:
                last = time.perf_counter()
                if first is None:
                    first = last
                response_ids.append(int(token))
                logprobs.append(_logprob(logits, token))
                if llama_cpp.llama_vocab_is_eog(vocab, token):
                    finish = "stop"
                    break
                if constraint is not None and not constraint.advance(int(token)):
                    finish = "grammar"  # never expected: the filter only lets allowed tokens through
                    break
                generated += 1
                if stream.feed(decoder.decode(_piece(llama_cpp, vocab, token))):
                    finish = stream.reason
                    break
                if generated >= budget:
                    break
        except (RuntimeError, ValueError) as exc:
            raise ModelError(f"llama.cpp failed: {exc}") from exc
        finally:
            generator.close()
            if constraint is not None:
                constraint.close()
        if not stream.stopped:  # end of text or length: nothing more can complete a stop sequence
            stream.flush(decoder.decode(b"", final=True))
        elapsed = last - first if first is not None else 0.0
        usage = Usage(
            prompt_tokens=len(tokens),
            completion_tokens=generated,
            prompt_evaluated=evaluated,
            time_to_first_token=(first - started) if first is not None else None,
            tokens_per_second=(generated - 1) / elapsed if generated > 1 and elapsed > 0 else None,
        )
        raw = {
            "finish_reason": finish,
            "grammar_full_checks": constraint.full_checks if constraint is not None else None,
            "drafted_tokens": drafts or None,
            "wall_time": time.perf_counter() - started,
            "tokens": {"prompt_ids": list(tokens), "response_ids": response_ids, "logprobs": logprobs},
        }
        return Reply(text=prefix + stream.text, usage=usage, raw=raw)

    def _start_from_saved_opening(self, llama: Any, messages: list[Message], tokens: list[int]) -> int:
        """Where the KV cache lacks the system message that `tokens` open with, restore it from disk, or
        evaluate it on its own and save it for the next process; the tokens evaluated here."""
        system = messages[0].get("content") if messages and messages[0].get("role") == "system" else None
        if not isinstance(system, str):
            return 0
        if self._opening[0] != system:
            try:
                self._opening = (system, opening_length(tokens, self._tokens(llama, messages[:1])))
            except ModelError:  # a template that wants more than a system message
                self._opening = (system, 0)
        length = self._opening[1]
        if length == 0 or length >= len(tokens) - 1 or lookup_decoding.cached_prefix(llama, tokens) >= length:
            return 0
        llama_cpp = _llama_cpp()
        if self._prefix_store is None:
            folder = self.prefix_cache if isinstance(self.prefix_cache, Path) else None
            self._prefix_store = PrefixStore.for_model(llama_cpp, self.path, self._key[1:], folder)
        opening = tokens[:length]
        state = self._prefix_store.load(opening)
        if state is not None and restore_state(llama_cpp, llama, state, opening):
            return 0
        # Evaluated on its own whether saved or not, so that every run's numbers are a warm start's.
        llama.reset()
        try:
            llama.eval(opening)
        except (RuntimeError, ValueError) as exc:
            raise ModelError(f"llama.cpp failed: {exc}") from exc
        if self._prefix_store.seen_before(opening):
            self._prefix_store.save(opening, saved_state(llama_cpp, llama))
        return length

    @staticmethod
    def _tokens_to_evaluate(llama: Any, tokens: list[int]) -> int:
        """How many prompt tokens `Llama.generate` will evaluate, mirroring its prefix reuse."""
        prefix = lookup_decoding.cached_prefix(llama, tokens)
        if prefix == len(tokens):
            if llama.n_tokens == len(tokens) and not llama._requires_eval:
                return 0
            return 1  # the last token is replayed to get fresh logits
        return len(tokens) - prefix


_CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _with_logits(llama: Any, tokens: Iterator[int]) -> Iterator[tuple[int, Any]]:
    """The library's tokens, each with the raw logits it was sampled from: the context's last row (the
    library keeps no others unless every position's logits are asked for)."""
    import numpy as np

    try:
        for token in tokens:
            yield token, np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),))
    finally:
        tokens.close()  # type: ignore[attr-defined]  # a generator


def _logprob(logits: Any, token: int) -> float:
    """log softmax(logits)[token]: the log-probability of `token` under the model's raw logits."""
    import numpy as np

    top = float(np.max(logits))
    return float(logits[token]) - top - math.log(float(np.sum(np.exp(logits - top))))


def _piece(llama_cpp: Any, vocab: Any, token: int) -> bytes:
    buffer = ctypes.create_string_buffer(64)
    n = llama_cpp.llama_token_to_piece(vocab, token, buffer, 64, 0, False)
    if n < 0:  # the buffer was too small: -n is the size needed
        buffer = ctypes.create_string_buffer(-n)
        n = llama_cpp.llama_token_to_piece(vocab, token, buffer, -n, 0, False)
    return buffer.raw[:n]


class _StopFilter:
    """Streams text to a callback, holding back what might be the start of a stop sequence."""

    def __init__(self, stops: tuple[str, ...], on_token: StreamCallback | None) -> None:
        self.stops = stops
        self.on_token = on_token
        self.text = ""
        self.sent = 0
        self.stopped = False
        self.reason = "stop"

    def feed(self, piece: str) -> bool:
        """Add generated text; True when generation should end (stop sequence or callback)."""
        if not piece:
            return False
        start = len(self.text)
        self.text += piece
        hits = [
            i for s in self.stops if (i := self.text.find(s, max(0, start - len(s) + 1))) >= 0
        ]  # earliest stop sequence that the new piece completes
        if hits:
            self.text = self.text[: min(hits)]
            self.stopped = True
            self._send(len(self.text))
            return True
        hold = max((k for s in self.stops for k in range(1, len(s)) if self.text.endswith(s[:k])), default=0)
        if self._send(len(self.text) - hold):
            self.text = self.text[: self.sent]
            self.stopped = True
            self.reason = "callback"
            return True
        return False

    def flush(self, tail: str) -> None:
        self.text += tail
        self._send(len(self.text))

    def _send(self, upto: int) -> bool:
        if upto <= self.sent:
            return False
        chunk = self.text[self.sent : upto]
        self.sent = upto
        return bool(self.on_token(chunk)) if self.on_token else False


def load_local_model(name: str, *, pull: bool = False, **options: Any) -> LlamaCppModel:
    """A `LlamaCppModel` for `local/NAME` (catalog) or `local/PATH.gguf`.

    The file is verified first (a broken managed file is removed). `pull=True` fetches a
    catalog model that is not there yet; otherwise a missing one is a one-line `UsageError`.
    Options go to `LlamaCppModel` (n_ctx, n_threads, n_gpu_layers, temperature, stop, speculative...).
    """
    from agentcli.models import store

    ref = store.resolve(name)
    if pull and ref.entry is not None and not ref.path.is_file():
        store.pull(name, progress=True)
    header = store.verify(ref)
    return LlamaCppModel(ref.path, name=ref.name, header=header, **options)
