"""Outcome checks for makefile-test-target.

The Makefile is run with GNU make when it is installed; otherwise with a small
stand-in that understands plain variables, rules, prerequisites and recipes.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

WORKDIR = Path(os.environ["AGENTCLI_TASK_WORKDIR"])
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}

BROKEN = """
def top_words(text, n=3):
    return [("broken", 1)]
"""


def copy_project(tmp_path: Path) -> Path:
    dest = tmp_path / "project"
    shutil.copytree(WORKDIR, dest, ignore=shutil.ignore_patterns(".git", "__pycache__", ".pytest_cache"))
    return dest


def _expand(text: str, variables: dict) -> str:
    pattern = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

    def sub(m):
        if m.group(0) == "$$":
            return "$"
        return _expand(variables.get(m.group(1) or m.group(2), ""), variables)

    return pattern.sub(sub, text)


def _mini_make(cwd: Path, target: str) -> subprocess.CompletedProcess:
    variables = {k: v for k, v in os.environ.items()}
    rules: dict[str, tuple[list[str], list[str]]] = {}
    current = None
    for raw in (cwd / "Makefile").read_text().splitlines():
        if raw.startswith("\t"):
            if current is not None:
                rules[current][1].append(raw[1:])
            continue
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        m = re.match(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\?=|:=|::=|\+=|=)\s*(.*)$", line)
        if m:
            name, op, value = m.groups()
            if op == "?=" and name in variables:
                pass
            elif op == "+=":
                variables[name] = (variables.get(name, "") + " " + value).strip()
            else:
                variables[name] = value
            current = None
            continue
        m = re.match(r"^([^:=]+):(?!=)(.*)$", line)
        if m:
            names, rest = m.groups()
            recipe_inline = None
            if ";" in rest:
                rest, recipe_inline = rest.split(";", 1)
            for name in _expand(names, variables).split():
                rules.setdefault(name, ([], []))
                rules[name][0].extend(_expand(rest, variables).split())
                if recipe_inline is not None:
                    rules[name][1].append(recipe_inline.strip())
            current = _expand(names, variables).split()[0]
            continue
        current = None
    done = set()
    out = []

    def build(name):
        if name in done:
            return 0
        done.add(name)
        if name not in rules:
            if (cwd / name).exists():
                return 0
            out.append(f"make: *** No rule to make target '{name}'.")
            return 2
        for dep in rules[name][0]:
            rc = build(dep)
            if rc:
                return rc
        for line in rules[name][1]:
            cmd = _expand(line, variables).lstrip()
            ignore = False
            while cmd[:1] in ("@", "-", "+"):
                ignore = ignore or cmd[0] == "-"
                cmd = cmd[1:]
            proc = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=60)
            out.append(proc.stdout + proc.stderr)
            if proc.returncode and not ignore:
                return 2
        return 0

    rc = build(target)
    return subprocess.CompletedProcess([target], rc, "".join(out), "")


def make(cwd: Path, target: str) -> subprocess.CompletedProcess:
    if shutil.which("make"):
        return subprocess.run(["make", target], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=60)
    return _mini_make(cwd, target)


def test_make_test_passes(tmp_path):
    proj = copy_project(tmp_path)
    proc = make(proj, "test")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]


def test_make_test_fails_when_the_code_is_broken(tmp_path):
    proj = copy_project(tmp_path)
    assert make(proj, "test").returncode == 0
    (proj / "wordfreq.py").write_text(BROKEN)
    proc = make(proj, "test")
    assert proc.returncode != 0, "make test still succeeds with a broken wordfreq.py: it does not run the tests"


def test_run_target_kept(tmp_path):
    proj = copy_project(tmp_path)
    proc = make(proj, "run")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]
    assert "4 it" in proc.stdout
