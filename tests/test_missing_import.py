"""Policy `missing-import`: a standard-library module that a Python file the model changed uses and never
imports is imported beside the file's own imports, and the model is told so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.agent.loop import Agent
from agentcli.agent.missing_imports import completed_imports, missing_modules, with_imports
from agentcli.agent.outcome import Decision
from agentcli.events import EventBus
from agentcli.models.scripted import ScriptedModel
from agentcli.policies import Policies
from agentcli.repo.tree_changes import TreeChanges
from agentcli.sandbox.local import HostSandbox
from tests.conftest import channel_for, committed_repo
from tests.test_changes_shown import told
from tests.test_solve import SANDBOXES, agentcli, solve_json

HEAD = '"""Serve files."""\n\nfrom http.server import ThreadingHTTPServer\n'
SERVER = HEAD + "\nPORT = 8000\n\n\ndef port():\n    return PORT\n"


def test_only_unbound_standard_library_names_used_as_modules():
    assert missing_modules("PORT = int(os.getenv('PORT', 8000))\nprint(sys.argv, json.dumps(1))\n") == [
        "json",
        "os",
        "sys",
    ]
    # Bound in the file in any way, the name is no module to import.
    bound = (
        "import os.path\nfrom re import compile as re\ndef f(json): return json.loads('1')\n"
        "for sys in []: sys.x\nclass string: pass\nstring.x\ntry: pass\nexcept Exception as csv: csv.x\n"
        "os.path.join('a')\nre.x\n"
    )
    assert missing_modules(bound) == []
    assert missing_modules("from os import *\npath.join('a')\nsys.exit()\n") == []  # `*` may bind anything
    assert missing_modules("self.os.getenv()\nnumpy.array([])\nprint.x\n") == []  # not stdlib, or a builtin
    assert missing_modules("def f(:\n    os.getenv()\n") == []  # does not parse


def test_imports_go_after_the_first_imports_else_the_docstring_else_the_top():
    fixed = with_imports(SERVER.replace("8000", "int(os.getenv('PORT', 8000))"), ["os"])
    assert fixed == SERVER.replace("ThreadingHTTPServer\n", "ThreadingHTTPServer\nimport os\n").replace(
        "8000", "int(os.getenv('PORT', 8000))"
    )
    assert with_imports('"""Doc."""\nx = os.sep\n', ["os"]) == '"""Doc."""\nimport os\nx = os.sep\n'
    assert with_imports("#!/usr/bin/env python3\nprint(sys.argv)", ["sys"]) == (
        "#!/usr/bin/env python3\nimport sys\nprint(sys.argv)"
    )
    assert with_imports("import re\nx = os.sep\nprint(sys.argv)", ["os", "sys"]) == (
        "import re\nimport os\nimport sys\nx = os.sep\nprint(sys.argv)"
    )
    # Not past a `#!` line and an encoding cookie; in the file's own line endings; below the first imports.
    assert with_imports("# -*- coding: latin-1 -*-\nx = os.sep\n", ["os"]) == (
        "# -*- coding: latin-1 -*-\nimport os\nx = os.sep\n"
    )
    assert with_imports("import re\r\nx = os.sep\r\n", ["os"]) == "import re\r\nimport os\r\nx = os.sep\r\n"
    code = "import sys\nsys.path.insert(0, os.sep)\nimport lib\n"
    assert with_imports(code, ["os"]) == "import sys\nimport os\nsys.path.insert(0, os.sep)\nimport lib\n"
    assert with_imports("import re", ["os"]) == "import re\nimport os\n"
    # Code on the imports' last line would run before an import placed after it.
    assert with_imports("import re; x = os.sep\n", ["os"]) == "import os\nimport re; x = os.sep\n"
    assert with_imports('"""Doc."""\nimport re\nimport sys; x = os.sep\n', ["os"]) == (
        '"""Doc."""\nimport os\nimport re\nimport sys; x = os.sep\n'
    )
    assert with_imports("from __future__ import annotations; x = os.sep\n", ["os"]) is None  # future first
    # A form feed is no line end to Python: the import still goes after the docstring, not into it.
    doc = '"""Doc.\x0c\nmore."""\n'
    assert with_imports(doc + "x = os.sep\n", ["os"]) == doc + "import os\nx = os.sep\n"


def test_only_what_the_change_left_missing_is_added():
    assert completed_imports("notes.txt", "os.getenv()", None) is None
    assert completed_imports("a.py", "import os\nos.getenv()", None) is None
    new, note = completed_imports("a.py", "os.getenv()\n", None) or ("", "")
    assert new == "import os\nos.getenv()\n"
    assert note == "added `import os` to a.py: its code uses os and did not import it."
    # Missing before the change: the file's own business (a linter's test data, the task's bug).
    assert completed_imports("a.py", "os.getenv()\nx = 2\n", "os.getenv()\nx = 1\n") is None
    fixed = completed_imports("a.py", "os.getenv()\nsys.exit()\n", "os.getenv()\n")
    assert fixed is not None and fixed.text == "import sys\nos.getenv()\nsys.exit()\n"
    # Text read with bytes that are no UTF-8 would be written back changed.
    assert completed_imports("a.py", "s = '\ufffd'\nos.getenv()\n", None) is None


@pytest.mark.parametrize("backend", SANDBOXES)
def test_a_block_and_a_sed_that_use_os_get_its_import(tmp_path: Path, write_replies, backend):
    repo = committed_repo(tmp_path / "repo", {"server.py": SERVER, "tool.py": "x = 1\n"})
    # A file outside the repository that a link the model makes points to: never read or written through it.
    outside = tmp_path / "outside.py"
    outside.write_text("x = os.sep\n")
    replies = [
        f"```bash\nln -s {outside} lib.py\n```",
        "server.py\n```python\nPORT = int(os.getenv('PORT', 8000))\n```",
        "```bash\nsed -i 's/x = 1/x = sys.argv[1:]/' tool.py\n```",
        "```bash\nPORT=9 python3 -c 'import server; print(server.PORT)' && python3 tool.py\n```",
        "DONE: port from PORT",
    ]
    _, events = solve_json(repo, "use PORT", write_replies(replies), backend)
    assert events[-1]["status"] == "finished"
    assert (repo / "server.py").read_text().startswith(HEAD + "import os\n")
    assert (repo / "tool.py").read_text() == "import sys\nx = sys.argv[1:]\n"
    assert outside.read_text() == "x = os.sep\n"
    messages = told(repo, events)
    assert any("added `import os` to server.py" in m and "+import os" in m for m in messages)
    assert any("added `import sys` to tool.py" in m for m in messages)
    assert not any("NameError" in m for m in messages)  # the run that uses both modules works


def test_switched_off_nothing_is_added(tmp_path: Path, write_replies):
    repo = committed_repo(tmp_path / "repo", {"server.py": SERVER})
    replies = ["server.py\n```python\nPORT = int(os.getenv('PORT', 8000))\n```", "DONE: port"]
    result = agentcli(
        "solve", "use PORT", "--model", write_replies(replies), "--sandbox", "host", "--json",
        "--policy", "missing-import=off", cwd=repo,
    )  # fmt: skip
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert "import os" not in (repo / "server.py").read_text()
    assert not any(e.get("name") == "missing-import" for e in events if e["type"] == "policy_fired")


def _run_on_host(repo: Path, replies: list[str], approve=None) -> tuple[ScriptedModel, list[str]]:
    fired: list[str] = []
    policies = Policies.every()
    policies.on_fired = fired.append
    model = ScriptedModel(replies)
    with HostSandbox(repo, channel_for(repo)) as box:
        agent = Agent(model, box, EventBus(), policies=policies, approve=approve)
        agent.ctx.facts.tree_changes = TreeChanges(repo)
        agent.run("use PORT")
    return model, fired


def test_the_command_that_failed_before_the_import_may_run_again(tmp_path: Path):
    repo = committed_repo(tmp_path / "repo", {"server.py": SERVER})
    change = "sed -i 's/PORT = 8000/PORT = int(os.getenv(\"PORT\", 8000))/' server.py && python3 server.py"
    model, fired = _run_on_host(repo, [f"```bash\n{change}\n```"] * 2)
    told = [call[-1]["content"] for call in model.calls]
    assert "NameError" in told[1] and "added `import os` to server.py" in told[1]
    assert "missing-import" in fired and "repeat-refusal" not in fired
    assert told[-1].startswith("[exit 0")
    assert (repo / "server.py").read_text().startswith(HEAD + "import os\n")


def test_where_the_user_approves_commands_nothing_is_written_unasked(tmp_path: Path):
    repo = committed_repo(tmp_path / "repo", {"server.py": SERVER})
    change = "sed -i 's/PORT = 8000/PORT = int(os.getenv(\"PORT\", 8000))/' server.py"
    replies = [f"```bash\n{change}\n```", "DONE: ok", "DONE: ok"]
    _, fired = _run_on_host(repo, replies, approve=lambda command: Decision())
    assert "import os" not in (repo / "server.py").read_text() and "missing-import" not in fired
