"""Keep LiteLLM and tiktoken off the network: local cost map, bundled tokenizer encodings."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path


def prepare_offline_environment() -> None:
    """Set before litellm or tiktoken is imported; values the user set are kept."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    if "TIKTOKEN_CACHE_DIR" not in os.environ and (encodings := bundled_tiktoken_dir()) is not None:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(encodings)


def bundled_tiktoken_dir() -> Path | None:
    """LiteLLM ships cl100k_base, o200k_base and p50k_base; find them without importing litellm."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return path if path.is_dir() else None
