"""The default sandbox image: its content-addressed tag, and building it.

The image is built from `sandbox_images/default` on top of `debian:bookworm-slim`. Where no registry can
be reached (or when asked), the base is made here instead: `debootstrap --variant=minbase bookworm`,
imported into the engine as `agentcli-base:bookworm` and kept, so later builds skip that step.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.errors import ComponentUnavailable

if TYPE_CHECKING:
    from docker import APIClient, DockerClient

IMAGE_REPOSITORY = "agentcli-sandbox"
IMAGE_LABEL = "org.agentcli.image"
CONTEXT_LABEL = "org.agentcli.context"
DEFAULT_BASE = "debian:bookworm-slim"
OFFLINE_BASE = "agentcli-base:bookworm"
SUITE = "bookworm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
DEFAULT_SECURITY_MIRROR = "http://deb.debian.org/debian-security"
ENGINE_DOWN = "Docker engine not reachable: start Docker or use --sandbox bwrap"
BUILD_TIMEOUT = 3600  # seconds between two messages of a build; apt on a busy machine can be quiet for minutes

# (kind, text): kind "stage" starts a phase (a Dockerfile step, debootstrap, import), "line" is output within it.
Progress = Callable[[str, str], None]

# What a minbase debootstrap keeps and `debian:bookworm-slim` does not (~130 MB): downloaded packages,
# indexes, manuals and translations. Files named here survive (licences, the locale alias table, apt's locks).
_SLIM_PATHS = (
    "var/cache/apt",
    "var/lib/apt/lists",
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
    "usr/share/locale",
)
_SLIM_KEEP = {"copyright", "locale.alias", "lock"}


@dataclass
class BuildResult:
    """What `ensure_image` did: `built` is False when the image was already there."""

    tag: str
    built: bool
    base: str | None = None
    timings: dict[str, float] = field(default_factory=dict)  # phase -> seconds
    size: int | None = None  # bytes, as the engine reports it


def context_dir() -> Path:
    """The build context of the default image: `sandbox_images/default`, which the package carries
    as data (`agentcli/sandbox_images` links to the top-level directory in a source checkout)."""
    path = Path(__file__).resolve().parents[1] / "sandbox_images" / "default"
    if not (path / "Dockerfile").is_file():
        raise ComponentUnavailable(f"the sandbox image's build files are missing ({path}): reinstall agentcli")
    return path


def context_digest(context: Path | None = None) -> str:
    """sha256 over every file of the context: sorted relative paths, each with its length and bytes."""
    root = context or context_dir()
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        name = path.relative_to(root).as_posix().encode()
        data = path.read_bytes()
        # Lengths make the encoding unambiguous: no two different contexts hash the same stream.
        digest.update(b"%d:%s%d:" % (len(name), name, len(data)))
        digest.update(data)
    return digest.hexdigest()


def image_tag(context: Path | None = None) -> str:
    """`agentcli-sandbox:<12 hex>`: changes exactly when a file of the build context changes."""
    return f"{IMAGE_REPOSITORY}:{context_digest(context)[:12]}"


def docker_client() -> DockerClient:
    """A client for the engine that answers a ping, or a one-line ComponentUnavailable."""
    try:
        import docker
        from docker.errors import DockerException
    except ImportError:
        raise ComponentUnavailable("the docker Python package is missing: pip install docker") from None
    try:
        client = docker.from_env()
        client.ping()
    except (DockerException, OSError):
        raise ComponentUnavailable(ENGINE_DOWN) from None
    return client


def image_exists(api: APIClient, name: str) -> bool:
    from docker.errors import ImageNotFound

    try:
        api.inspect_image(name)
    except ImageNotFound:
        return False
    return True


def ensure_image(
    offline: bool | None = None,
    progress: Progress | None = None,
    *,
    force: bool = False,
    client: DockerClient | None = None,
    context: Path | None = None,
) -> BuildResult:
    """Make sure the default sandbox image exists; build it only when its tag is missing (or `force`).

    `offline`: None tries the official base and falls back to a debootstrap base when it cannot be
    pulled; True goes straight to the debootstrap base; False never uses it.
    """
    say = progress or _quiet
    context = context or context_dir()
    tag = image_tag(context)
    client = client or docker_client()
    api = client.api
    if not force and image_exists(api, tag):
        return BuildResult(tag=tag, built=False)
    result = BuildResult(tag=tag, built=True)
    result.base = _choose_base(api, offline, say, result.timings)
    started = time.monotonic()
    _build(api, context, tag, result.base, say, nocache=force)
    result.timings["build"] = time.monotonic() - started
    result.size = api.inspect_image(tag).get("Size")
    return result


def _quiet(kind: str, text: str) -> None:
    pass


def _choose_base(api: APIClient, offline: bool | None, say: Progress, timings: dict[str, float]) -> str:
    if offline:
        return ensure_offline_base(api, say, timings)
    if image_exists(api, DEFAULT_BASE):
        return DEFAULT_BASE
    if offline is None and image_exists(api, OFFLINE_BASE):
        return OFFLINE_BASE
    failure = _pull(api, DEFAULT_BASE, say)
    if failure is None:
        return DEFAULT_BASE
    if offline is False:
        raise ComponentUnavailable(f"cannot pull {DEFAULT_BASE}: {failure}")
    say("stage", f"cannot pull {DEFAULT_BASE} ({failure}): building a base with debootstrap instead")
    return ensure_offline_base(api, say, timings)


def _pull(api: APIClient, name: str, say: Progress) -> str | None:
    """Pull `name`; None on success, else the engine's reason in one line."""
    from docker.errors import APIError

    repository, _, tag = name.partition(":")
    say("stage", f"pulling {name}")
    try:
        for chunk in api.pull(repository, tag=tag or "latest", stream=True, decode=True):
            if "error" in chunk:
                return _one_line(chunk["error"])
            if "status" in chunk:
                say("line", " ".join(str(chunk[k]) for k in ("id", "status", "progress") if chunk.get(k)))
    except APIError as e:
        return _one_line(str(e.explanation or e))
    return None


def ensure_offline_base(api: APIClient, say: Progress, timings: dict[str, float] | None = None) -> str:
    """`agentcli-base:bookworm`, made here with debootstrap and `docker import` unless already there."""
    if image_exists(api, OFFLINE_BASE):
        return OFFLINE_BASE
    timings = {} if timings is None else timings
    if os.geteuid() != 0:
        raise ComponentUnavailable(
            f"building the sandbox base offline needs root for debootstrap: run `sudo agentcli sandbox build "
            f"--offline` once, or make {DEFAULT_BASE} available (docker pull or docker load)"
        )
    if not shutil.which("debootstrap"):
        raise ComponentUnavailable(
            f"debootstrap is not installed: apt-get install debootstrap, or make {DEFAULT_BASE} available"
        )
    sources = host_apt_sources()
    mirror = next((uri for uri, suites in sources if SUITE in suites), DEFAULT_MIRROR)
    with tempfile.TemporaryDirectory(prefix="agentcli-base-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        try:
            say("stage", f"debootstrap --variant=minbase {SUITE} from {mirror}")
            started = time.monotonic()
            _run_streaming(["debootstrap", "--variant=minbase", SUITE, str(rootfs), mirror], say)
            _slim_rootfs(rootfs, sources)
            timings["debootstrap"] = time.monotonic() - started

            say("stage", f"docker import as {OFFLINE_BASE}")
            started = time.monotonic()
            tarball = Path(tmp) / "rootfs.tar"
            _run_streaming(["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(tarball), "."], say)
            repository, _, tag = OFFLINE_BASE.partition(":")
            api.import_image(
                src=str(tarball),
                repository=repository,
                tag=tag,
                # An imported tarball has no config: give it what debian:bookworm-slim has.
                changes=[
                    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    'CMD ["bash"]',
                    f"LABEL org.agentcli.base={SUITE}",
                ],
            )
            timings["import"] = time.monotonic() - started
        finally:
            # debootstrap mounts /proc and /sys inside the target; a killed run may leave them there,
            # and deleting the tree must never descend into them.
            _unmount_below(rootfs)
    return OFFLINE_BASE


def host_apt_sources() -> list[tuple[str, set[str]]]:
    """(URI, suites) of this machine's apt sources for the Debian suite we build on; empty elsewhere."""
    entries: list[tuple[str, set[str]]] = []
    apt = Path("/etc/apt")
    files = [apt / "sources.list", *sorted((apt / "sources.list.d").glob("*.list"))]
    for path in files:
        for line in _read_lines(path):
            words = re.sub(r"\[[^]]*\]", " ", line.split("#", 1)[0]).split()
            if len(words) >= 3 and words[0] == "deb":
                entries.append((words[1].rstrip("/"), {words[2]}))
    for path in sorted((apt / "sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", "\n".join(_read_lines(path))):
            fields = dict(
                (key.strip().lower(), value.strip())
                for key, sep, value in (ln.partition(":") for ln in stanza.splitlines() if not ln.startswith("#"))
                if sep
            )
            if "deb" in fields.get("types", "").split():
                entries.extend(
                    (uri.rstrip("/"), set(fields.get("suites", "").split())) for uri in fields.get("uris", "").split()
                )
    return [(uri, suites & _our_suites()) for uri, suites in entries if suites & _our_suites()]


def _our_suites() -> set[str]:
    return {SUITE, f"{SUITE}-updates", f"{SUITE}-security"}


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()
    except OSError:
        return []


def _slim_rootfs(rootfs: Path, sources: list[tuple[str, set[str]]]) -> None:
    """Trim it to what `debian:bookworm-slim` holds, and point apt at the same suites."""
    for relative in _SLIM_PATHS:
        top = rootfs / relative
        if not top.is_dir():
            continue
        for path in sorted(top.rglob("*"), key=lambda p: len(p.parts), reverse=True):
            if path.is_dir() and not path.is_symlink():
                if not any(path.iterdir()):
                    path.rmdir()
            elif path.name not in _SLIM_KEEP:
                path.unlink()
    main = next((uri for uri, suites in sources if SUITE in suites), DEFAULT_MIRROR)
    updates = next((uri for uri, suites in sources if f"{SUITE}-updates" in suites), main)
    security = next((uri for uri, suites in sources if f"{SUITE}-security" in suites), DEFAULT_SECURITY_MIRROR)
    keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
    stanzas = [(main, SUITE), (updates, f"{SUITE}-updates"), (security, f"{SUITE}-security")]
    text = "\n".join(
        f"Types: deb\nURIs: {uri}\nSuites: {suite}\nComponents: main\nSigned-By: {keyring}\n" for uri, suite in stanzas
    )
    (rootfs / "etc/apt/sources.list").unlink(missing_ok=True)
    (rootfs / "etc/apt/sources.list.d").mkdir(parents=True, exist_ok=True)
    (rootfs / "etc/apt/sources.list.d/debian.sources").write_text(text)


def _unmount_below(root: Path) -> None:
    prefix = str(root.resolve()) + "/"
    try:
        mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    except OSError:
        return
    for point in sorted((m for m in mounts if m.startswith(prefix)), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], check=False, capture_output=True)


def _run_streaming(argv: list[str], say: Progress) -> None:
    """Run a command, passing its output lines on; a failure becomes one line with the last output."""
    last = ""
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace") as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip()
            if line:
                last = line
                say("line", line)
    if proc.returncode != 0:
        raise ComponentUnavailable(f"{argv[0]} failed (exit {proc.returncode}): {last}")


def _build(api: APIClient, context: Path, tag: str, base: str, say: Progress, *, nocache: bool) -> None:
    from docker.errors import APIError

    say("stage", f"building {tag} from {base}")
    try:
        stream = api.build(
            path=str(context),
            tag=tag,
            decode=True,
            buildargs={"BASE_IMAGE": base},
            labels={IMAGE_LABEL: "default", CONTEXT_LABEL: context_digest(context)},
            rm=True,
            forcerm=True,  # intermediate containers go even when a step fails
            nocache=nocache,
            pull=False,
            timeout=BUILD_TIMEOUT,
        )
        _follow_build(stream, say)
    except APIError as e:
        raise ComponentUnavailable(f"building {tag} failed: {_one_line(str(e.explanation or e))}") from None


def _follow_build(stream: Iterable[dict[str, Any]], say: Progress) -> None:
    last = ""
    for chunk in stream:
        if "error" in chunk:
            detail = _one_line(chunk["error"])
            raise ComponentUnavailable(f"sandbox image build failed: {detail}" + (f" (after: {last})" if last else ""))
        for line in str(chunk.get("stream", "")).splitlines():
            line = line.rstrip()
            if not line:
                continue
            if line.startswith("Step ") or line.startswith("Successfully "):
                say("stage", line)
            else:
                last = line
                say("line", line)
        if "status" in chunk:
            say("line", " ".join(str(chunk[k]) for k in ("id", "status", "progress") if chunk.get(k)))


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


@contextmanager
def console_progress(verbose: bool = False) -> Iterator[Progress]:
    """A rich display for builds: a spinner on the current stage with its latest output line.

    Stages are printed as they start, so the history stays on screen; without a terminal (CI logs)
    only the stages are printed, or every line too when `verbose`.
    """
    from rich.console import Console
    from rich.markup import escape

    console = Console(stderr=True, highlight=False)
    stage = ""
    status = console.status("", spinner="dots") if console.is_terminal else None

    def show(kind: str, text: str) -> None:
        nonlocal stage
        if kind == "stage":
            stage = text
            console.print(f"[bold]{escape(text)}[/]", soft_wrap=True)
        elif verbose:
            console.print(f"  {escape(text)}", style="dim", soft_wrap=True)
        if status is not None:
            tail = escape(text[: max(10, console.width - len(stage) - 8)]) if kind == "line" else ""
            status.update(f"{escape(stage)}  [dim]{tail}[/]")

    if status is None:
        yield show
        return
    with status:
        yield show
