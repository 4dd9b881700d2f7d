"""Policy `missing-import`: a standard-library module that a Python file the model changed uses and never
imports is imported beside the file's own imports, and the model is told so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.agent.imports import completed_imports, missing_modules, with_imports
from tests.conftest import committed_repo
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


def test_imports_go_after_the_last_import_else_the_docstring_else_the_top():
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
    assert completed_imports("notes.txt", "os.getenv()") is None
    assert completed_imports("a.py", "import os\nos.getenv()") is None
    new, note = completed_imports("a.py", "os.getenv()\n") or ("", "")
    assert new == "import os\nos.getenv()\n"
    assert note == "added `import os` to a.py: its code uses os and did not import it."


@pytest.mark.parametrize("backend", SANDBOXES)
def test_a_block_and_a_sed_that_use_os_get_its_import(tmp_path: Path, write_replies, backend):
    repo = committed_repo(tmp_path / "repo", {"server.py": SERVER, "tool.py": "x = 1\n"})
    replies = [
        "server.py\n```python\nPORT = int(os.getenv('PORT', 8000))\n```",
        "```bash\nsed -i 's/x = 1/x = sys.argv[1:]/' tool.py\n```",
        "```bash\nPORT=9 python3 -c 'import server; print(server.PORT)' && python3 tool.py\n```",
        "DONE: port from PORT",
    ]
    _, events = solve_json(repo, "use PORT", write_replies(replies), backend)
    assert events[-1]["status"] == "finished"
    assert (repo / "server.py").read_text().startswith(HEAD + "import os\n")
    assert (repo / "tool.py").read_text() == "import sys\nx = sys.argv[1:]\n"
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
