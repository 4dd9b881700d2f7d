"""Shared fixtures: temporary git repositories and sandbox backends."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from agentcli.errors import ComponentUnavailable, UsageError
from agentcli.sandbox.factory import docker_ready as docker_engine_up
from agentcli.sandbox.local import BwrapSandbox, HostSandbox, bwrap_available

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
}


def channel_for(repo: Path) -> Path:
    """A control channel for a sandbox over `repo`: beside it, never inside it."""
    return repo.parent / f".{repo.name}-channel" / "commands"


def git(repo: Path, *args: str, input_text: str | None = None) -> str:
    out = subprocess.run(
        ["git", *args],
        cwd=repo,
        input=input_text,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    return out.stdout


@pytest.fixture(autouse=True)
def private_state(tmp_path: Path, monkeypatch) -> Path:
    """Each test keeps agentcli's state (journals, channels, checkpoint copies) to itself, outside its repositories."""
    state = tmp_path.parent / f".{tmp_path.name}-state"
    monkeypatch.setenv("AGENTCLI_STATE_DIR", str(state))
    return state


def committed_repo(root: Path, files: dict[str, str]) -> Path:
    """A new git repository at `root` holding `files`, all in one first commit."""
    root.mkdir()
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    return root


@pytest.fixture
def failing_repo(tmp_path: Path) -> Path:
    """A small repository whose one test fails because of a bug in calc.py."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    return repo


@pytest.fixture
def write_replies(tmp_path: Path):
    """Write a scripted-model replies file and return the `--model` value for it."""

    def write(replies: list[str]) -> str:
        path = tmp_path / f"replies-{len(list(tmp_path.glob('replies-*')))}.json"
        path.write_text(json.dumps(replies))
        return f"scripted:{path}"

    return write


FIX_REPLIES = [
    "PLAN:\n1. Run the tests.\n2. Fix add in calc.py.\n3. Run the tests again.\n\n```bash\npython3 -m pytest -q\n```",
    "add subtracts instead of adding.\n```bash\nsed -i 's/a - b/a + b/' calc.py\n```",
    "```bash\npython3 -m pytest -q\n```",
    "DONE: add() now returns a + b and the test passes.",
]

BACKENDS = [
    pytest.param(HostSandbox, id="host"),
    pytest.param(
        BwrapSandbox,
        id="bwrap",
        marks=[
            pytest.mark.bwrap,
            pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not installed or cannot run here"),
        ],
    ),
    pytest.param(
        "docker",
        id="docker",
        marks=[
            pytest.mark.docker,
            pytest.mark.skipif(not docker_engine_up(), reason="no Docker engine answers here"),
        ],
    ),
]


def containers_labelled(label: str, value: object) -> list[str]:
    """Ids of containers, in any state, that the engine has with this label and value."""
    import docker

    client = docker.from_env()
    try:
        found = client.api.containers(all=True, filters={"label": f"{label}={value}"})
    finally:
        client.close()
    return [c["Id"] for c in found]


def containers_of_session(session_id: str) -> list[str]:
    """Ids of containers, in any state, that the engine has for this agentcli session."""
    return containers_labelled("org.agentcli.session", session_id)


@pytest.fixture(params=BACKENDS)
def sandbox_factory(request, tmp_path: Path):
    """Make (not start) a sandbox of each backend over a fresh directory; each is closed afterwards
    and, for Docker, the engine is asked that no container of its session remains."""
    made = []

    def make(**kwargs):
        repo = tmp_path / f"work{len(made) or ''}"
        repo.mkdir()
        control = channel_for(repo)
        if request.param == "docker":
            from agentcli.sandbox.docker import DockerSandbox

            box = DockerSandbox(repo, control, **kwargs)
        else:
            box = request.param(repo, control, **kwargs)
        made.append(box)
        return box

    yield make
    for box in made:
        box.close()
        if request.param == "docker":
            assert containers_of_session(box.session_id) == [], "a container of this test was left behind"


@pytest.fixture
def sandbox(sandbox_factory):
    box = sandbox_factory()
    box.start()
    return box


REQUIRED = {c for c in os.environ.get("AGENTCLI_REQUIRE_COMPONENTS", "").split(",") if c}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Where CI installed a component, a test of it that skips is a failure, not a pass."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and REQUIRED & {mark.name for mark in item.iter_markers()}:
        report.outcome = "failed"
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.longrepr = f"skipped although CI installed this component: {reason}"


SMOL = "local/smollm2-135m"


def smol_model(n_ctx: int = 2048):
    """SmolLM2-135M run by llama.cpp (pulled into the user cache once); the test skips where either
    cannot be had here."""
    try:
        import llama_cpp  # noqa: F401
    except Exception as exc:
        pytest.skip(f"llama_cpp cannot be imported: {exc}")
    from agentcli.models import store

    try:
        store.pull(SMOL, progress=False)
    except (ComponentUnavailable, UsageError) as exc:
        pytest.skip(f"SmolLM2-135M cannot be obtained: {exc}")
    from agentcli.models.llamacpp import load_local_model

    return load_local_model(SMOL, n_ctx=n_ctx)


@pytest.fixture(autouse=True)
def _sigint_as_it_was(request):
    """Every test starts with the SIGINT handling the run began with: a handler left behind (SIG_IGN
    above all) is inherited by every child the later tests start, which then ignore Ctrl-C. A test
    that leaves one is named in a warning and the handling put back."""
    import signal
    import warnings

    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)
        warnings.warn(f"{request.node.nodeid} left SIGINT handled by {after!r}; put back", stacklevel=1)


def pytest_configure(config):
    """A test run started in the background by a non-interactive shell (`pytest ... &`) begins with
    SIGINT ignored, and every child inherits that through exec, so the Ctrl-C tests' agentcli would
    ignore Ctrl-C. A handler, unlike SIG_IGN, is reset to the default in a child: install Python's."""
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def processes_with(text: str) -> list[int]:
    """Live processes (no zombies, not this one) whose command line mentions `text`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if text in cmdline and int(entry.name) != os.getpid() and state != "Z":
            found.append(int(entry.name))
    return found
