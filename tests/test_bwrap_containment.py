"""The bwrap sandbox shows only an allowlist of the host and denies dangerous system calls; normal work goes on."""

from __future__ import annotations

import errno
import json
import os
import socket
import struct
import tempfile
from pathlib import Path

import pytest

from agentcli.sandbox import seccomp
from agentcli.sandbox.local import TMP_SIZE, BwrapSandbox, bwrap_available

pytestmark = [
    pytest.mark.bwrap,
    pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not installed or cannot run here"),
]

SECRETS = {
    ".git-credentials": "https://user:ghp_secret@github.com\n",
    ".config/gh/hosts.yml": "github.com:\n    oauth_token: gho_secret\n",
    ".pypirc": "[pypi]\npassword = pypi-secret\n",
    ".npmrc": "//registry.npmjs.org/:_authToken=npm_secret\n",
    ".cargo/credentials.toml": '[registry]\ntoken = "cargo_secret"\n',
    ".bash_history": "export AWS_SECRET_ACCESS_KEY=history_secret\n",
    ".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY----- ssh_secret\n",
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    """A fake $HOME full of credentials."""
    home = tmp_path / "home"
    for name, text in SECRETS.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    monkeypatch.setenv("HOME", str(home))
    assert Path.home() == home
    return home


@pytest.fixture
def sandbox(tmp_path: Path, home: Path):
    """Start a bwrap sandbox over `repo` (default: a fresh directory beside the fake home)."""
    boxes = []

    def start(repo: Path | None = None) -> BwrapSandbox:
        repo = repo or tmp_path / "repo"
        repo.mkdir(parents=True, exist_ok=True)
        box = BwrapSandbox(repo, tmp_path / "state" / f"commands{len(boxes)}")
        boxes.append(box)
        box.start()
        return box

    yield start
    for box in boxes:
        box.close()


def run(box: BwrapSandbox, command: str):
    obs = box.run(command, timeout=30)
    assert obs.killed_reason is None, obs.output
    return obs


def test_credentials_in_home_are_not_visible(sandbox, home: Path):
    box = sandbox()
    listing = run(box, 'echo "HOME=$HOME"; ls -A "$HOME"')
    assert listing.exit_code == 0
    assert listing.output.strip() == f"HOME={home}"
    for name in SECRETS:
        obs = run(box, f"cat ~/{name}")
        assert obs.exit_code != 0
        assert "secret" not in obs.output
    # The home is a private tmpfs: writable, and what is written there stays inside.
    assert run(box, "echo scratch > ~/.made-inside && cat ~/.made-inside").output.strip() == "scratch"
    assert not (home / ".made-inside").exists()


def test_a_repository_under_home_is_visible_and_the_rest_of_home_is_not(sandbox, home: Path):
    repo = home / "src" / "project"
    box = sandbox(repo)
    obs = run(box, "pwd; echo made > inside.txt; ls -A ~; ls -A ~/src; cat ~/.git-credentials")
    assert obs.output.splitlines()[:3] == [str(repo), "src", "project"]
    assert "secret" not in obs.output
    assert (repo / "inside.txt").read_text() == "made\n"


def test_only_the_allowlisted_host_directories_exist(sandbox, tmp_path: Path, home: Path):
    box = sandbox()
    (tmp_path / "host-tmp-marker").write_text("host")
    shown = {str(p) for path in (box.repo, home) for p in path.parents}
    absent = [d for d in ("/home", "/root", "/mnt", "/media", "/srv", "/var", "/boot", "/run/user") if d not in shown]
    absent += ["/var/run/docker.sock", "/run/docker.sock", str(tmp_path / "host-tmp-marker")]
    for path in absent:
        obs = run(box, f"ls -A {path}")
        assert obs.exit_code != 0 and "No such file or directory" in obs.output, (path, obs.output)
    obs = run(box, "ls -A /run; ls -A /run/agentcli")
    assert obs.output.split() == ["agentcli", "commands"]
    assert run(box, "touch /run/x /usr/x /etc/x").output.count("Read-only file system") == 3


def test_etc_secrets_are_hidden(sandbox):
    box = sandbox()
    obs = run(box, "cat /etc/shadow")
    assert "root:" not in obs.output
    assert run(box, "cat /etc/passwd").output.startswith("root:")  # the rest of /etc is there
    for directory in ("/etc/ssh", "/etc/sudoers.d", "/etc/docker"):
        if Path(directory).is_dir():
            assert run(box, f"ls -A {directory}").output.strip() == "", directory


def _unreachable_socket(box: BwrapSandbox, directory: Path) -> None:
    """A unix socket that listens at `directory` on the host (and answers there) cannot be reached from the box."""
    path = directory / "agent.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        server.listen(1)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(path))
        connect = f"import socket; socket.socket(socket.AF_UNIX).connect({str(path)!r}); print('CONNECTED')"
        obs = run(box, f'python3 -c "{connect}"')
    path.unlink()
    assert obs.exit_code != 0 and "CONNECTED" not in obs.output, obs.output
    assert "FileNotFoundError" in obs.output


def test_host_unix_sockets_cannot_be_reached(sandbox, tmp_path: Path):
    box = sandbox()
    _unreachable_socket(box, tmp_path)  # under the host's /tmp
    if os.access("/var/tmp", os.W_OK):
        with tempfile.TemporaryDirectory(dir="/var/tmp") as directory:
            _unreachable_socket(box, Path(directory))


def test_tmp_is_a_sized_tmpfs_and_the_network_is_absent(sandbox):
    box = sandbox()
    obs = run(box, "python3 -c 'import os; s = os.statvfs(\"/tmp\"); print(s.f_blocks * s.f_frsize)'")
    assert int(obs.output) == TMP_SIZE
    devices = run(box, "tail -n +3 /proc/net/dev | cut -d: -f1").output.split()
    assert devices == ["lo"]
    obs = run(box, "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), timeout=3)'")
    assert obs.exit_code != 0 and "unreachable" in obs.output, obs.output


@pytest.mark.skipif(seccomp.native_arch() is None, reason="no seccomp filter for this architecture")
def test_seccomp_denies_dangerous_system_calls(sandbox):
    box = sandbox()
    nr = seccomp.SYSCALLS[seccomp.native_arch()]
    calls = {
        "unshare": (nr["unshare"], 0x10000000),
        "setns": (nr["setns"], 0, 0),
        "clone-newuser": (nr["clone"], 0x10000000 | 17, 0, 0, 0, 0),
        "clone3": (nr["clone3"], 0, 0),
        "ptrace": (nr["ptrace"], 0, 0, 0, 0),
        "mount": (nr["mount"], 0, 0, 0, 0, 0),
        "keyctl": (nr["keyctl"], 0, 0),
        "bpf": (nr["bpf"], 0, 0, 0),
        "io_uring_setup": (nr["io_uring_setup"], 1, 0),
        "tiocsti": (nr["ioctl"], 0, seccomp.TIOCSTI, 0),
    }
    script = (
        "import ctypes, json; libc = ctypes.CDLL(None, use_errno=True); libc.syscall.restype = ctypes.c_long; "
        f"calls = {calls!r}; out = {{}}\n"
        "for name, args in calls.items():\n"
        "    ctypes.set_errno(0); rc = libc.syscall(*[ctypes.c_long(a) for a in args])\n"
        "    out[name] = [rc, ctypes.get_errno()]\n"
        "print(json.dumps(out))\n"
    )
    box.write_file("probe.py", script)
    obs = run(box, "python3 probe.py")
    assert obs.exit_code == 0, obs.output
    results = json.loads(obs.output)
    expected = {name: [-1, errno.EPERM] for name in calls}
    expected["clone3"] = [-1, errno.ENOSYS]
    assert results == expected
    obs = run(box, "unshare -U true")
    assert obs.exit_code != 0 and "Operation not permitted" in obs.output, obs.output


def test_normal_work_still_succeeds(sandbox):
    box = sandbox()
    assert run(box, "mkdir -p sub && cd sub && git init -q && export GREETING=hello").exit_code == 0
    obs = run(box, 'pwd; echo "$GREETING"; git status --short --branch')
    assert obs.exit_code == 0, obs.output
    assert obs.output.splitlines()[:2] == [str(box.repo / "sub"), "hello"]
    script = (
        "import subprocess, threading, tempfile; t = threading.Thread(target=print, args=('thread',)); t.start(); "
        "t.join(); print(subprocess.run(['echo', 'child'], capture_output=True, text=True).stdout.strip()); "
        "print(open(tempfile.mkstemp()[1], 'w').write('x'))"
    )
    obs = run(box, f'python3 -c "{script}"; echo made > out.txt')
    assert obs.exit_code == 0, obs.output
    assert obs.output.split() == ["thread", "child", "1"]
    assert (box.repo / "sub" / "out.txt").read_text() == "made\n"
    assert (box.repo / "sub" / ".git").is_dir()


# --- The filter itself, run through a small classic-BPF interpreter for both architectures.


def _evaluate(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    data = struct.pack("<iIQ6Q", nr, arch, 0, *(list(args) + [0] * (6 - len(args))))
    accumulator, pc = 0, 0
    while True:
        code, jt, jf, k = struct.unpack_from("<HBBI", program, pc * 8)
        pc += 1
        if code == seccomp.LD_W_ABS:
            accumulator = struct.unpack_from("<I", data, k)[0]
        elif code == seccomp.RET:
            return k
        else:
            taken = {
                seccomp.JEQ: accumulator == k,
                seccomp.JGE: accumulator >= k,
                seccomp.JSET: bool(accumulator & k),
            }[code]
            pc += jt if taken else jf


@pytest.mark.parametrize("arch", [seccomp.AUDIT_ARCH_X86_64, seccomp.AUDIT_ARCH_AARCH64], ids=["x86_64", "aarch64"])
def test_filter_program(arch: int):
    program = seccomp.program(arch)
    nrs = seccomp.SYSCALLS[arch]
    eperm, allow = seccomp.RET_ERRNO | errno.EPERM, seccomp.RET_ALLOW
    for name in seccomp.DENIED:
        assert _evaluate(program, nrs[name], arch) == eperm, name
    read = 0 if arch == seccomp.AUDIT_ARCH_X86_64 else 63
    assert _evaluate(program, read, arch) == allow
    assert _evaluate(program, nrs["ioctl"], arch, (1, 0xFFFFFFFF_00000000 | seccomp.TIOCSTI)) == eperm
    assert _evaluate(program, nrs["ioctl"], arch, (1, 0x5401)) == allow  # TCGETS
    assert _evaluate(program, nrs["clone"], arch, (0x01200011,)) == allow  # fork's flags
    assert _evaluate(program, nrs["clone"], arch, (0x10000011,)) == eperm  # CLONE_NEWUSER
    assert _evaluate(program, nrs["clone3"], arch) == seccomp.RET_ERRNO | errno.ENOSYS
    other = seccomp.AUDIT_ARCH_AARCH64 if arch == seccomp.AUDIT_ARCH_X86_64 else seccomp.AUDIT_ARCH_X86_64
    assert _evaluate(program, read, other) == seccomp.RET_KILL_PROCESS
    assert _evaluate(program, read, 0x40000003) == seccomp.RET_KILL_PROCESS  # i386 on x86_64
    if arch == seccomp.AUDIT_ARCH_X86_64:
        assert _evaluate(program, seccomp.X32_SYSCALL_BIT | read, arch) == eperm
