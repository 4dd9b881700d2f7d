"""Turn a model name into a `Model`: scripted:FILE, local/NAME or local/PATH.gguf, or a LiteLLM provider."""

from __future__ import annotations

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
            temperature=settings.temperature,
        )
    if "/" not in name and not settings.api_base:
        raise UsageError(
            f"unknown model {name!r}: use provider/model (e.g. openai/gpt-4.1), local/NAME, or scripted:FILE"
        )
    from agentcli.models.litellm_backend import LiteLLMModel, missing_api_keys
    from agentcli.models.retry import RetryPolicy

    if not settings.api_base and (missing := missing_api_keys(name)):
        raise UsageError(f"{name} needs an API key: set {' or '.join(missing)} in the environment")
    return LiteLLMModel(
        name,
        api_base=settings.api_base,
        temperature=settings.temperature,
        retry=RetryPolicy(attempts=settings.retries + 1),
        on_retry=on_retry,
    )
