"""Write benchmarks/gpu_llamacpp.sh's measurement (its Python heredoc) and variants of it to DIR.

Used by benchmarks/gpu_device.sh (prepared by benchmarks/gpu_prepare.sh); usage: gpu_variants.py DIR THREADS.
gpu.py is the heredoc verbatim (every layer on the GPU); cpu.py runs it with n_gpu_layers=0 and THREADS threads;
*_noagent.py skip the agentcli import (for when agentcli's dependencies are missing); cpu_noextra.py also turns off
llama.cpp's extra buffer types (the AMX kernels), for a CPU whose run crashed with them.
"""

import re
import sys
from pathlib import Path

AGENT_IMPORT = "from agentcli.models.llamacpp import default_gpu_layers\n"
AGENT_PRINT = "; agentcli picks n_gpu_layers={default_gpu_layers()}"
NO_EXTRA = """import llama_cpp
_default = llama_cpp.llama_cpp.llama_model_default_params
def _params():
    params = _default()
    params.use_extra_bufts = False
    return params
llama_cpp.llama_cpp.llama_model_default_params = _params
print("(extra buffer types off)")
"""


def main(out: Path, threads: str) -> None:
    text = (Path(__file__).parent / "gpu_llamacpp.sh").read_text()
    match = re.search(r"<<'PY'\n(.*?)\nPY\n", text, re.S)
    assert match and "n_gpu_layers=-1," in match.group(1), "gpu_llamacpp.sh's heredoc changed"
    gpu = match.group(1)
    cpu = gpu.replace("n_gpu_layers=-1,", f"n_gpu_layers=0, n_threads={threads}, n_threads_batch={threads},")
    cpu_noagent = cpu.replace(AGENT_IMPORT, "").replace(AGENT_PRINT, "")
    scripts = {
        "gpu.py": gpu,
        "gpu_noagent.py": gpu.replace(AGENT_IMPORT, "").replace(AGENT_PRINT, " (agentcli import skipped)"),
        "cpu.py": cpu,
        "cpu_noagent.py": cpu_noagent,
        "cpu_noextra.py": NO_EXTRA + cpu_noagent,
    }
    out.mkdir(parents=True, exist_ok=True)
    for name, body in scripts.items():
        (out / name).write_text(body)
    print("measurement scripts written; cpu threads", threads)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
