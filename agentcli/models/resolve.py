"""Turn a model name into a `Model`: scripted:FILE, local/NAME or local/PATH.gguf, or a LiteLLM provider."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

from agentcli.config import Settings
from agentcli.errors import UsageError
from agentcli.models.base import Model
from agentcli.models.catalog import DEFAULT_LOCAL_MODEL


def default_model_name() -> str:
    """The embedded local model, unless a provider key in the environment says otherwise."""
    from agentcli.models.litellm_backend import default_hosted_model

    return default_hosted_model() or DEFAULT_LOCAL_MODEL


def create_model(
    name: str,
    settings: Settings,
    *,
    notify: Callable[[str], None] = lambda message: None,
    on_retry: Callable[[int, float, Exception], None] | None = None,
    on_cache_hit: Callable[[str, str], None] | None = None,
    cache_masks: tuple[str, ...] = (),
) -> Model:
    """One model by name, with the settings' retries, timeout and rate limit, behind the response cache when
    `settings.cache` is on (a scripted model is never cached: it answers by its call count, not the prompt)."""
    model = _backend(name, settings, notify=notify, on_retry=on_retry)
    if settings.cache and not name.startswith("scripted:"):
        from agentcli.models.cache import CachedModel, ResponseCache

        cache = ResponseCache(max_bytes=settings.cache_max_mb << 20)
        return CachedModel(model, cache, on_hit=on_cache_hit, masks=cache_masks)
    return model


def create_routed_model(
    name: str,
    settings: Settings,
    *,
    notify: Callable[[str], None] = lambda message: None,
    on_retry: Callable[[int, float, Exception], None] | None = None,
    on_cache_hit: Callable[[str, str], None] | None = None,
    on_switch: Callable[[str, str, str], None] | None = None,
    cache_masks: tuple[str, ...] = (),
) -> Model:
    """`name` followed by `settings.fallbacks`: a router over the chain, or the one model when there is none.

    `api_base` is the main model's endpoint; a fallback names its own as `NAME@URL` (e.g.
    `openai/qwen@http://127.0.0.1:8080/v1`) or uses its provider's. The first model is created now (a bad name
    or a missing key is found before the run), the fallbacks when first needed."""

    def create(model_name: str, model_settings: Settings) -> Model:
        return create_model(
            model_name,
            model_settings,
            notify=notify,
            on_retry=on_retry,
            on_cache_hit=on_cache_hit,
            cache_masks=cache_masks,
        )

    first = create(name, settings)
    fallbacks = [f for f in dict.fromkeys(settings.fallbacks) if f != name]
    if not fallbacks:
        return first
    from agentcli.models.router import ModelRouter

    def create_fallback(entry: str) -> Model:
        model_name, endpoint = split_endpoint(entry)
        return create(model_name, dataclasses.replace(settings, api_base=endpoint))

    return ModelRouter(first, fallbacks, create_fallback, cooldown=settings.fallback_cooldown, on_switch=on_switch)


def split_endpoint(entry: str) -> tuple[str, str]:
    """`openai/qwen@http://host:8080/v1` -> (`openai/qwen`, `http://host:8080/v1`); no `@http`: no endpoint.
    Only `@` before `http://` or `https://` separates, as model names may hold an `@` of their own."""
    match = re.search(r"@(https?://\S+)$", entry)
    if match is None:
        return entry, ""
    return entry[: match.start()], match.group(1)


def _backend(
    name: str,
    settings: Settings,
    *,
    notify: Callable[[str], None],
    on_retry: Callable[[int, float, Exception], None] | None,
) -> Model:
    if name.startswith("scripted:"):
        from agentcli.models.scripted import ScriptedModel

        path = name.removeprefix("scripted:")
        if not path:
            raise UsageError("scripted model needs a file: --model scripted:REPLIES.json")
        return ScriptedModel.from_file(Path(path))
    if name.startswith("local/"):
        from agentcli.models import store
        from agentcli.models.llamacpp import load_local_model

        ref = store.resolve(name)
        if ref.entry is not None and not ref.path.is_file():
            notify(f"{name} is not on this machine yet: fetching it once ({ref.entry.size / 1e9:.1f} GB, verified)")
        return load_local_model(
            name,
            pull=True,
            n_ctx=settings.n_ctx,
            n_threads=settings.n_threads or None,
            speculative=settings.speculative,
            prefix_cache=settings.prefix_cache,
            temperature=settings.temperature,
            seed=settings.seed,
        )
    if "/" not in name and not settings.api_base:
        raise UsageError(
            f"unknown model {name!r}: use provider/model (e.g. openai/gpt-4.1), local/NAME, or scripted:FILE"
        )
    from agentcli.models.litellm_backend import LiteLLMModel, missing_api_keys
    from agentcli.models.ratelimit import RateLimiter
    from agentcli.models.retry import RetryPolicy

    if not settings.api_base and (missing := missing_api_keys(name)):
        raise UsageError(f"{name} needs an API key: set {' or '.join(missing)} in the environment")
    return LiteLLMModel(
        name,
        api_base=settings.api_base,
        temperature=settings.temperature,
        seed=settings.seed,
        retry=RetryPolicy(attempts=settings.retries + 1, retry_after_cap=settings.retry_after_cap),
        on_retry=on_retry,
        timeout=settings.request_timeout,
        limiter=RateLimiter(
            f"{settings.api_base}|{name}",
            requests_per_minute=settings.requests_per_minute,
            tokens_per_minute=settings.tokens_per_minute,
        ),
        tool_calls=settings.tool_calls,
    )
