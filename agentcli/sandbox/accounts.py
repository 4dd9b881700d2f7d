"""A name for the container's user: `/etc/passwd` and `/etc/group` entries for the repository owner's ids.

Commands run as the uid:gid that owns the repository, which the image usually does not know; without
an entry `whoami`, `getpass.getuser()` and ssh fail. The root filesystem is read-only, so the entries
go into copies of the image's own files, bind-mounted over them. The image's files are read once per
image (a container is created, not started, to copy them out) and cached by image id.
"""

from __future__ import annotations

import contextlib
import io
import os
import pwd
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.paths import cache_dir
from agentcli.sandbox.containers import owner_labels, remove_container

if TYPE_CHECKING:
    from docker import APIClient

HOME = "/home/agent"


@dataclass
class Accounts:
    """What to mount over the image's files (None: the image's own will do) and the user's name."""

    name: str
    passwd: str | None
    group: str | None


def image_files(api: APIClient, image_id: str) -> tuple[str, str]:
    """The image's /etc/passwd and /etc/group ("" where missing), from the cache when possible."""
    cache = cache_dir() / "sandbox" / "accounts" / image_id.removeprefix("sha256:")[:32]
    try:
        return (cache / "passwd").read_text(), (cache / "group").read_text()
    except OSError:
        pass
    created = api.create_container(image_id, command=["true"], network_disabled=True, labels=owner_labels("probe"))
    try:
        passwd, group = (_read_file(api, created["Id"], f"/etc/{name}") for name in ("passwd", "group"))
    finally:
        with contextlib.suppress(Exception):
            remove_container(api, created["Id"])
    with contextlib.suppress(OSError):
        cache.mkdir(parents=True, exist_ok=True)
        for name, text in (("passwd", passwd), ("group", group)):
            tmp = cache / f".{name}.{os.getpid()}"
            tmp.write_text(text)
            tmp.replace(cache / name)
    return passwd, group


def _read_file(api: APIClient, container: str, path: str) -> str:
    from docker.errors import NotFound

    try:
        stream, _ = api.get_archive(container, path)
    except NotFound:
        return ""
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        member = tar.next()
        data = tar.extractfile(member) if member is not None else None
        return data.read().decode(errors="replace") if data is not None else ""


def accounts_for(passwd: str, group: str, uid: int, gid: int, gecos: str = "") -> Accounts:
    """Entries for uid:gid added to the image's files, unless the image already has them."""
    users = [line.split(":") for line in passwd.splitlines() if line.count(":") >= 6]
    groups = [line.split(":") for line in group.splitlines() if line.count(":") >= 3]
    existing = next((fields[0] for fields in users if fields[2] == str(uid)), None)
    name = existing or _free_name({fields[0] for fields in users}, uid)
    new_passwd = None
    if existing is None:
        gecos = gecos.replace(":", " ").replace("\n", " ")
        new_passwd = _append(passwd, f"{name}:x:{uid}:{gid}:{gecos}:{HOME}:/bin/bash")
    new_group = None
    if not any(fields[2] == str(gid) for fields in groups):
        taken = {fields[0] for fields in groups}
        new_group = _append(group, f"{name if name not in taken else f'group{gid}'}:x:{gid}:")
    return Accounts(name=name, passwd=new_passwd, group=new_group)


def _free_name(taken: set[str], uid: int) -> str:
    with contextlib.suppress(KeyError):
        host_name = pwd.getpwuid(uid).pw_name
        if host_name not in taken:
            return host_name
    return "agent" if "agent" not in taken else f"user{uid}"


def _append(text: str, line: str) -> str:
    return (text if not text or text.endswith("\n") else text + "\n") + line + "\n"


def write_accounts(accounts: Accounts, directory: Path) -> dict[str, str]:
    """Write the files that differ from the image's into `directory`; {host path: path inside}."""
    mounts = {}
    for name, text in (("passwd", accounts.passwd), ("group", accounts.group)):
        if text is not None:
            path = directory / name
            path.write_text(text)
            path.chmod(0o644)
            mounts[str(path)] = f"/etc/{name}"
    return mounts
