"""Outcome checks for fix-path-traversal."""

import importlib
import os
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
sys.dont_write_bytecode = True
SECRET = b"TOP-SECRET-42"


def load(name):
    sys.path.insert(0, str(WORKDIR))
    try:
        sys.modules.pop(name, None)
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(WORKDIR))


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    (root / "docs").mkdir(parents=True)
    (root / "index.html").write_bytes(b"<h1>home</h1>")
    (root / "docs" / "index.html").write_bytes(b"<h1>docs</h1>")
    (root / "docs" / "guide.txt").write_bytes(b"guide")
    (root / "docs" / "my notes.txt").write_bytes(b"notes")
    (tmp_path / "secret.txt").write_bytes(SECRET)
    (tmp_path / "site-private").mkdir()
    (tmp_path / "site-private" / "key.txt").write_bytes(SECRET)
    return root


def test_files_inside_the_root_are_served(site):
    handle = load("fileserver").handle
    root = str(site)
    assert handle("/", root=root) == (200, b"<h1>home</h1>")
    assert handle("/docs/guide.txt", root=root) == (200, b"guide")
    assert handle("/docs/guide.txt?v=2", root=root) == (200, b"guide")
    assert handle("/docs/", root=root) == (200, b"<h1>docs</h1>")
    assert handle("/docs/my%20notes.txt", root=root) == (200, b"notes")
    assert handle("/missing.txt", root=root)[0] == 404


@pytest.mark.parametrize(
    "url",
    [
        "/../secret.txt",
        "/docs/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/..%2fsecret.txt",
        "/docs/..%2F..%2Fsecret.txt",
        "/../site-private/key.txt",
        "/../site-private/",
    ],
)
def test_nothing_outside_the_root(site, url):
    handle = load("fileserver").handle
    status, body = handle(url, root=str(site))
    assert status in (400, 403, 404), f"{url} -> {status}"
    assert SECRET not in body


def test_absolute_paths_stay_blocked(site):
    handle = load("fileserver").handle
    secret = site.parent / "secret.txt"
    for url in ("/" + quote(str(secret)), "//" + str(secret).lstrip("/")):
        status, body = handle(url, root=str(site))
        assert status in (400, 403, 404) and SECRET not in body, url
