"""Whether llama.cpp's AMX kernels actually run on this machine.

A llama.cpp built with `-march=native` on a Xeon that reports AMX uses tile instructions for
matrix products. Some virtual machines report AMX but do not enable it, and the first prompt then
dies with a general protection fault: no exception, no message, the whole process gone. So where
the library has AMX kernels compiled in, one throwaway process tries them first (once per build of
the library, remembered in the cache) and, if it dies, models load without llama.cpp's extra buffer
types, which are where the AMX kernels live.
"""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentcli import paths

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 120.0
REBUILD_HINT = (
    'CMAKE_ARGS="-DCMAKE_C_FLAGS=-mno-amx-int8 -DCMAKE_CXX_FLAGS=-mno-amx-int8" '
    "pip install --force-reinstall --no-cache-dir --no-deps llama-cpp-python"
)
# Loads the model given as argv[1] and evaluates a prompt long enough to go through the batched
# matrix product, which is where the AMX kernels run.
_PROBE = """
import sys
import llama_cpp
llama = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=256, n_threads=1, n_gpu_layers=0, verbose=False)
llama.eval(llama.tokenize(b"def add(a, b):\\n    return a + b\\n" * 6))
"""


def amx_compiled(llama_cpp: Any) -> bool:
    info = llama_cpp.llama_print_system_info().decode(errors="replace")
    return "AMX_INT8 = 1" in info


def _library_key(llama_cpp: Any) -> str:
    """Changes whenever llama-cpp-python is rebuilt or reinstalled."""
    library = Path(llama_cpp.__file__).parent / "lib"
    parts = []
    for path in sorted(library.glob("libggml-cpu*")) or [Path(llama_cpp.__file__)]:
        with contextlib.suppress(OSError):
            stat = path.stat()
            parts.append(f"{path}:{stat.st_size}:{stat.st_mtime_ns}")
    return "|".join(parts)


def _probe(model_path: str) -> bool:
    """True unless a process trying the kernels is killed by a signal (the fault)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, model_path],
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return True  # no verdict: load as usual
    return done.returncode >= 0


def extra_buffers_safe(llama_cpp: Any, model_path: str, cache: Path | None = None) -> bool:
    """Whether models may load with llama.cpp's extra buffer types (AMX, weight repacking)."""
    if not amx_compiled(llama_cpp):
        return True
    cache = cache or paths.cache_dir() / "llamacpp-kernels.json"
    key = _library_key(llama_cpp)
    try:
        known = json.loads(cache.read_text())
    except (OSError, ValueError):
        known = {}
    known = known if isinstance(known, dict) else {}
    safe = known.get(key)
    if not isinstance(safe, bool):
        safe = known[key] = _probe(model_path)
        with contextlib.suppress(OSError):
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_text(json.dumps(known, indent=1))
    if not safe:
        log.warning(
            "llama.cpp's AMX kernels crash on this CPU; running without them. For full speed rebuild with: %s",
            REBUILD_HINT,
        )
    return safe


@contextlib.contextmanager
def without_extra_buffers(llama_cpp: Any) -> Iterator[None]:
    """Models loaded inside skip the extra buffer types.

    `Llama` takes its model parameters from `llama_model_default_params()` and offers no switch for
    `use_extra_bufts`, so the defaults are adjusted for the length of the load.
    """
    low = llama_cpp.llama_cpp
    defaults = low.llama_model_default_params

    def adjusted() -> Any:
        params = defaults()
        params.use_extra_bufts = False
        return params

    low.llama_model_default_params = adjusted
    try:
        yield
    finally:
        low.llama_model_default_params = defaults
