"""The repository map: tags per language, ranking, the disk cache, skipped files, the token budget."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from agentcli.cli.map_cmd import map_command
from agentcli.errors import UsageError
from agentcli.models.base import estimate_tokens
from agentcli.repo.mapcache import FORMAT, cache_path
from agentcli.repo.ranking import code_identifiers, mentioned_files, pagerank, rank_tags
from agentcli.repo.repomap import MapStats, build_repo_map, collect_tags, list_files
from agentcli.repo.tags import extract_tags, language_for


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "cache"
    monkeypatch.setenv("AGENTCLI_CACHE_DIR", str(home))
    return home


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "T"}
    env["GIT_COMMITTER_EMAIL"] = "t@e"
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)


# (language, file name, source, a name it defines, a name it references)
SAMPLES = [
    (
        "python",
        "m.py",
        "from .util import helper\nMAX_SIZE = 3\n\nclass Parser:\n    def parse(self, text: str) -> int:\n"
        "        return helper(text)\n",
        ["Parser", "parse", "MAX_SIZE"],
        ["helper"],
    ),
    (
        "javascript",
        "m.js",
        "import { helper } from './util';\nexport const LIMIT = 3;\n"
        "export class Parser { run() { return tokenize(this.text); } }\n"
        "const handler = (x) => helper(x);\nfunction parse(t) { return new Parser(t); }\n",
        ["Parser", "run", "handler", "parse", "LIMIT"],
        ["tokenize", "helper", "Parser"],
    ),
    (
        "typescript",
        "m.ts",
        "export interface Shape { area(): number; }\nexport type Id = string;\n"
        "export function build(s: Shape): Thing { return makeThing(s.area()); }\n",
        ["Shape", "Id", "build"],
        ["Thing", "makeThing"],
    ),
    (
        "tsx",
        "m.tsx",
        "type Props = { title: string };\n"
        "export const App = (p: Props) => <Header title={p.title} onClick={() => track(p)} />;\n",
        ["Props", "App"],
        ["Header", "track", "Props"],
    ),
    (
        "go",
        "m.go",
        "package shapes\n\nconst MaxSides = 8\n\ntype Square struct{ Side float64 }\n\n"
        "func (s *Square) Area() float64 { return s.Side * s.Side }\n\n"
        "func Describe(s Shape) string { return format(s.Area()) }\n",
        ["Square", "Area", "Describe", "MaxSides"],
        ["Shape", "format", "Area"],
    ),
    (
        "rust",
        "m.rs",
        "pub const MAX: usize = 3;\npub struct Point { x: i32 }\npub trait Area { fn area(&self) -> f64; }\n"
        "impl Area for Point {\n    fn area(&self) -> f64 { helper(self.x) }\n}\n",
        ["Point", "Area", "area", "MAX"],
        ["helper", "Point"],
    ),
    (
        "java",
        "M.java",
        "public class Registry extends Base {\n    public static final int MAX_ITEMS = 10;\n"
        "    public Item find(String name) { return Lookup.byName(name); }\n}\n",
        ["Registry", "find", "MAX_ITEMS"],
        ["Base", "Item", "byName"],
    ),
    (
        "c",
        "m.c",
        '#include "util.h"\n#define MAX_LEN 64\ntypedef struct node { int v; } node_t;\n'
        "static int\ncompute(node_t *n)\n{\n    return helper(n->v);\n}\n",
        ["compute", "node_t", "MAX_LEN"],
        ["helper", "node_t"],
    ),
    (
        "cpp",
        "m.cpp",
        "namespace geo {\nclass Shape : public Base {\npublic:\n    void draw() { render(area()); }\n};\n"
        "double Shape::area() const { return util::compute(1); }\n}\n",
        ["geo", "Shape", "draw", "area"],
        ["Base", "render", "compute"],
    ),
    (
        "bash",
        "m.sh",
        '#!/usr/bin/env bash\nVERSION="1.0"\nbuild() {\n    make_all "$VERSION"\n}\nbuild\n',
        ["build", "VERSION"],
        ["make_all", "VERSION"],
    ),
]


@pytest.mark.parametrize(("language", "name", "source", "defines", "uses"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_tags_per_language(language: str, name: str, source: str, defines: list[str], uses: list[str]):
    assert language_for(name) == language
    tags = extract_tags(source.encode(), language)
    found = {d.name for d in tags.definitions}
    assert set(defines) <= found, f"missing definitions: {set(defines) - found}"
    assert set(uses) <= set(tags.references), f"missing references: {set(uses) - set(tags.references)}"
    assert tags.language == language and tags.lines == source.count("\n") + 1


def test_imports_and_impls_are_not_taken_for_definitions():
    js = extract_tags(b"const path = require('path');\nconst LIMIT = 3;\n", "javascript")
    assert [d.name for d in js.definitions] == ["LIMIT"] and "path" in js.references
    rust = extract_tags(b"impl<'a> IntoIterator for &'a Seq {\n    type Item = u8;\n}\ntype Top = u32;\n", "rust")
    assert [(d.name, d.kind) for d in rust.definitions] == [("Seq", "impl"), ("Top", "type")]


def test_signatures_are_one_line_with_indentation_and_parents():
    source = (
        "import functools\n\n\nclass Parser:\n    @functools.cache\n    def parse(\n        self,\n"
        "        text: str,  # raw model reply\n    ) -> int:\n        return 1\n"
    )
    tags = extract_tags(source.encode(), "python")
    cls, method = tags.definitions
    assert cls.signature == "class Parser:" and cls.parent == -1
    assert method.signature == "    def parse(self, text: str) -> int:"
    assert method.parent == 0 and method.line == 5


def test_pagerank_favours_the_node_everyone_points_at():
    # 1, 2 and 3 all point at 0; 0 points at 1.
    ranks = pagerank([{1: 1.0}, {0: 1.0}, {0: 1.0}, {0: 1.0}])
    assert abs(sum(ranks) - 1.0) < 1e-6
    assert ranks[0] == max(ranks) and ranks[1] > ranks[2]
    # All the random jumps to node 3: it now outranks 2, its twin.
    biased = pagerank([{1: 1.0}, {0: 1.0}, {0: 1.0}, {0: 1.0}], [0, 0, 0, 1])
    assert biased[3] > biased[2]


PROJECT = {
    "app/core.py": "class Engine:\n    def start(self) -> None:\n        pass\n\n\ndef make_engine() -> Engine:\n"
    "    return Engine()\n",
    "app/cli.py": "from app.core import Engine, make_engine\n\ndef main():\n    make_engine().start()\n",
    "app/server.py": "from app.core import make_engine\n\ndef serve():\n    return make_engine()\n",
    "app/jobs.py": "from app.core import Engine\n\ndef run_jobs(e: Engine):\n    e.start()\n",
    "app/extra/helpers.py": "def slugify(text: str) -> str:\n    return text.lower()\n",
    "web/ui.ts": "export function render(view: View): string { return view.name; }\n",
}


def test_most_referenced_file_comes_first(tmp_path: Path):
    root = write(tmp_path / "p", PROJECT)
    text = build_repo_map(root, token_budget=1000)
    assert text.splitlines()[0] == "app/core.py:"
    assert "│class Engine:" in text and "│    def start(self) -> None:" in text


def test_files_named_in_the_task_come_first(tmp_path: Path):
    root = write(tmp_path / "p", PROJECT)
    text = build_repo_map(root, token_budget=1000, mentioned="Make slugify in app/extra/helpers.py keep dashes.")
    lines = text.splitlines()
    assert lines[0] == "app/extra/helpers.py:"
    assert lines[1] == "│def slugify(text: str) -> str:"
    # By base name too, and a file the task names with no definitions still heads the map.
    write(root, {"app/empty.py": "# nothing here\n"})
    assert build_repo_map(root, token_budget=1000, mentioned="see ui.ts").startswith("web/ui.ts:")
    assert build_repo_map(root, token_budget=1000, mentioned="fill in empty.py").startswith("app/empty.py:\n")


def test_a_long_named_file_leaves_room_for_the_rest(tmp_path: Path):
    long_file = "".join(f"def step_{k}(state):\n    return state\n\n" for k in range(200))
    root = write(tmp_path / "p", {**PROJECT, "app/pipeline.py": long_file})
    tags = collect_tags(root)
    ranking = rank_tags(tags, focus_files={"app/pipeline.py"})
    assert ranking.files()[0] == "app/pipeline.py"
    assert all(path == "app/pipeline.py" for _, path, _ in ranking.definitions[:200])
    capped = rank_tags(tags, focus_files={"app/pipeline.py"}, focus_limit=10)
    assert capped.files()[:2] == ["app/pipeline.py", "app/core.py"]
    text = build_repo_map(root, token_budget=600, mentioned="speed up app/pipeline.py")
    assert text.startswith("app/pipeline.py:\n") and "app/core.py:\n│class Engine:" in text
    assert 10 < text.count("def step_") < 200


def test_mentioned_files_matching():
    paths = ["a/b/models.py", "c/models.py", "d/models.py", "e/models.py", "tools/run.sh"]
    assert mentioned_files("edit ./tools/run.sh.", paths) == {"tools/run.sh"}
    assert mentioned_files("in b/models.py line 3", paths) == {"a/b/models.py"}
    assert mentioned_files("fix models.py", paths) == set()  # four files share the name: too vague
    assert mentioned_files("run.sh", paths) == {"tools/run.sh"}
    assert code_identifiers("call `slugify` or parse_reply, makeEngine() and run() in the Engine") == {
        "slugify",
        "parse_reply",
        "makeEngine",
        "run",
    }


def test_budget_is_respected(tmp_path: Path):
    files = {
        f"pkg/mod{i}.py": "".join(
            f"def func_{i}_{j}(alpha, beta):\n    return func_{(i + 1) % 40}_{j}(alpha, beta)\n\n" for j in range(10)
        )
        for i in range(40)
    }
    root = write(tmp_path / "p", files)
    full = build_repo_map(root, token_budget=100_000)
    assert full.count("│def ") == 400
    for budget in (20, 64, 256, 1000):
        text = build_repo_map(root, token_budget=budget)
        assert text and estimate_tokens(text) <= budget
        assert text.count("│") < 400
    # A caller's own token counter is the one that decides.
    by_words = build_repo_map(root, token_budget=200, count_tokens=lambda t: len(t.split()))
    assert len(by_words.split()) <= 200 < estimate_tokens(by_words)
    assert build_repo_map(root, token_budget=0) == ""
    assert build_repo_map(root, token_budget=3) == ""  # not even one file fits


def test_empty_or_codeless_directory_gives_empty_map(tmp_path: Path):
    assert build_repo_map(tmp_path) == ""
    write(tmp_path, {"README.md": "# hi\n", "data.csv": "a,b\n"})
    assert build_repo_map(tmp_path) == ""


def test_cache_parses_only_changed_files(tmp_path: Path, cache_home: Path):
    root = write(tmp_path / "p", PROJECT)
    first = MapStats()
    before = build_repo_map(root, stats=first)
    assert first.parsed == len(PROJECT) and first.cached == 0
    assert cache_path(root).is_file() and cache_path(root).is_relative_to(cache_home / "repomap")

    second = MapStats()
    assert build_repo_map(root, stats=second) == before
    assert second.parsed == 0 and second.cached == len(PROJECT)

    (root / "app/server.py").write_text("from app.core import make_engine\n\ndef serve_forever():\n    pass\n")
    (root / "app/new.go").write_text("package app\n\nfunc Added() {}\n")
    (root / "app/jobs.py").unlink()
    third = MapStats()
    after = build_repo_map(root, stats=third)
    assert third.parsed == 2 and third.cached == len(PROJECT) - 2
    assert "serve_forever" in after and "def serve()" not in after and "func Added()" in after
    assert "app/jobs.py" not in after

    uncached = MapStats()
    assert build_repo_map(root, stats=uncached, cache=False) == after
    assert uncached.parsed == len(PROJECT) and uncached.cached == 0


def test_cache_keeps_only_the_latest_repositories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr("agentcli.repo.mapcache.MAX_REPOSITORIES", 2)
    roots = [write(tmp_path / f"r{k}", {"a.py": f"def f{k}():\n    pass\n"}) for k in range(3)]
    for k, root in enumerate(roots):
        build_repo_map(root)
        os.utime(cache_path(root), ns=(k * 10**9, k * 10**9))  # written in this order
    build_repo_map(write(tmp_path / "r3", {"b.py": "def g():\n    pass\n"}))
    kept = sorted(p.name for p in cache_path(roots[0]).parent.iterdir())
    assert kept == sorted([cache_path(roots[2]).name, cache_path(tmp_path / "r3").name])


def test_corrupt_cache_is_rebuilt(tmp_path: Path):
    root = write(tmp_path / "p", PROJECT)
    cache_path(root).parent.mkdir(parents=True)
    cache_path(root).write_text('{"format": "' + FORMAT + '", "files": {"app/core.py": [1, 2')
    stats = MapStats()
    assert "class Engine" in build_repo_map(root, stats=stats)
    assert stats.parsed == len(PROJECT)


def test_binary_huge_broken_and_minified_files_are_skipped(tmp_path: Path):
    root = write(
        tmp_path / "p",
        {
            **PROJECT,
            "app/blob.py": b"def looks_like_code():\n    pass\n\x00\x01\x02binary",
            "app/latin.py": b"def caf\xe9_menu():\n    return '\xff\xfe'\n",
            "app/garbage.py": "def (((:\n  class ]]] ::\n\treturn return\n",
            "app/big.py": "def big_function():\n    pass\n" + "# padding\n" * 3000,
            "web/bundle.js": "function minifiedThing(){return 1}" + ";var a=1" * 500,
            "web/lib.min.js": "function minFile() { return 2; }\n",
        },
    )
    (root / "app/dir.py").mkdir()
    (root / os.fsdecode(b"app/bad\xffname.py")).write_text("def weird_name():\n    pass\n")
    (root / "app/dangling.py").symlink_to(root / "missing.py")
    stats = MapStats()
    text = build_repo_map(root, token_budget=5000, stats=stats, max_file_bytes=10_000)
    for skipped in ("looks_like_code", "big_function", "minifiedThing", "minFile", "weird_name"):
        assert skipped not in text
    assert "│def caf\ufffd_menu():" in text  # undecodable bytes do not cost the file its tags
    assert "class Engine" in text
    assert stats.skipped == 4
    assert stats.parsed == len(PROJECT) + 2  # latin.py and garbage.py (partial tags, no crash)


def test_gitignore_and_walk_exclusions(tmp_path: Path):
    repo = write(
        tmp_path / "repo",
        {
            **PROJECT,
            ".gitignore": "build/\n",
            "build/generated.py": "def generated_code():\n    pass\n",
            "scripts/deploy": "#!/bin/bash\ndeploy_all() {\n  echo go\n}\n",
            "scripts/notes": "just text\n",
        },
    )
    git(repo, "init", "-q")
    git(repo, "add", "app")
    git(repo, "commit", "-qm", "init")
    listed = list_files(repo)
    assert "build/generated.py" not in listed and "web/ui.ts" in listed  # untracked but not ignored
    text = build_repo_map(repo, token_budget=5000)
    assert "generated_code" not in text
    assert "scripts/deploy:\n│deploy_all()" in text  # a script without extension, by its #! line

    plain = write(
        tmp_path / "plain",
        {
            "main.py": "def entry():\n    pass\n",
            ".hidden/secret.py": "def hidden():\n    pass\n",
            "node_modules/dep/index.js": "function dep() {}\n",
            "env/pyvenv.cfg": "home = /usr\n",
            "env/lib/site.py": "def venv_code():\n    pass\n",
        },
    )
    assert list_files(plain) == ["main.py"]
    tags = collect_tags(plain)
    assert list(tags) == ["main.py"]


def test_map_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = write(tmp_path / "p", PROJECT)
    app = typer.Typer()
    app.command("map")(map_command)
    app.command("other")(lambda: None)  # two commands, so `map` is a subcommand as in agentcli
    runner = CliRunner()

    result = runner.invoke(app, ["map", str(root), "--tokens", "60"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("app/core.py:\n")
    assert estimate_tokens(result.output) <= 60

    focused = runner.invoke(app, ["map", str(root), "--focus", "rename `slugify` to make_slug"])
    assert focused.output.startswith("app/extra/helpers.py:\n")

    monkeypatch.setenv("AGENTCLI_REPO_MAP_TOKENS", "0")
    assert runner.invoke(app, ["map", str(root)]).output == ""

    missing = runner.invoke(app, ["map", str(tmp_path / "nope")])
    assert isinstance(missing.exception, UsageError) and missing.exception.exit_code == 2
    assert "no such directory" in str(missing.exception)
