"""The default sandbox image: its tag follows its build context, it builds here, and it runs what tasks need."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from agentcli.sandbox.images import IMAGE_LABEL, context_dir, ensure_image, image_tag

TEST_LABEL = "org.agentcli.test"


def test_tag_is_stable_and_follows_every_context_file(tmp_path: Path) -> None:
    context = tmp_path / "context"
    shutil.copytree(context_dir(), context)
    first = image_tag(context)
    assert first.startswith("agentcli-sandbox:")
    assert len(first.split(":")[1]) == 12
    assert image_tag(context) == first
    assert image_tag(context_dir()) == first  # a copy hashes like the original

    dockerfile = context / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "\n# changed\n")
    changed = image_tag(context)
    assert changed != first

    (context / "extra.txt").write_text("a file the Dockerfile could COPY\n")
    assert image_tag(context) not in (first, changed)


def test_tag_depends_on_file_names_not_only_contents(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for root, name in ((a, "one"), (b, "two")):
        root.mkdir()
        (root / "Dockerfile").write_text("FROM scratch\n")
        (root / name).write_text("same\n")
    assert image_tag(a) != image_tag(b)


@pytest.fixture(scope="module")
def client():
    try:
        import docker
        from docker.errors import DockerException
    except ImportError:
        pytest.skip("the docker Python package is not installed")
    try:
        engine = docker.from_env()
        engine.ping()
    except (DockerException, OSError) as e:
        pytest.skip(f"Docker engine not reachable: {e}")
    yield engine
    leftovers = engine.containers.list(all=True, filters={"label": TEST_LABEL})
    for container in leftovers:
        container.remove(force=True)
    assert not leftovers, "tests left containers behind"
    # Build steps must not leave intermediate containers either (running ones belong to live sessions).
    stopped = [
        c
        for status in ("created", "exited", "dead")
        for c in engine.containers.list(all=True, filters={"label": IMAGE_LABEL, "status": status})
    ]
    assert not stopped, f"stopped sandbox containers remain: {[c.name for c in stopped]}"
    engine.close()


@pytest.fixture(scope="module")
def image(client) -> str:
    result = ensure_image(client=client)
    assert result.tag == image_tag()
    return result.tag


def _run(client, image: str, script: str, **options) -> str:
    output = client.containers.run(
        image,
        ["bash", "-c", script],
        remove=True,
        labels={TEST_LABEL: uuid.uuid4().hex},
        network_disabled=True,
        **options,
    )
    return output.decode()


@pytest.mark.docker
def test_image_exists_with_its_labels(client, image: str) -> None:
    labels = client.images.get(image).labels
    assert labels[IMAGE_LABEL] == "default"
    assert image.endswith(labels["org.agentcli.context"][:12])


@pytest.mark.docker
def test_image_has_the_tools(client, image: str) -> None:
    out = _run(
        client,
        image,
        "set -e; git --version; rg --version; python3 -m venv /tmp/v; /tmp/v/bin/python -c 'print(\"venv ok\")';"
        " gcc --version; make --version; python3 -m pytest --version; jq --version; tree --version; id -u",
    )
    for expected in ("git version", "ripgrep", "venv ok", "gcc", "GNU Make", "jq-", "tree v"):
        assert expected in out
    assert out.split()[-1] == "1000"  # the image's own user, not root


@pytest.mark.docker
def test_image_runs_as_any_uid_with_a_usable_home(client, image: str) -> None:
    out = _run(
        client,
        image,
        "set -e; id -u; id -g; echo $HOME; pwd; touch $HOME/f /workspace/f; git init -q /workspace/r;"
        " git -C /workspace/r status --short; python3 -m venv $HOME/v; $HOME/v/bin/pip --version >/dev/null;"
        " echo 'int main(){return 0;}' > /tmp/m.c && gcc /tmp/m.c -o /tmp/m && /tmp/m && echo compiled",
        user="4321:4321",
    )
    lines = out.split()
    assert lines[:4] == ["4321", "4321", "/home/agent", "/workspace"]
    assert lines[-1] == "compiled"


@pytest.mark.docker
def test_second_ensure_is_a_no_op(client, image: str) -> None:
    before = client.images.get(image).id
    stages: list[str] = []
    result = ensure_image(client=client, progress=lambda kind, text: stages.append(text))
    assert result.built is False
    assert result.tag == image
    assert stages == []  # nothing pulled, bootstrapped or built
    assert client.images.get(image).id == before
