"""The sandbox chooses between tries: pytest's verdicts read, the best candidate kept, each candidate
applied to the work tree and taken back in turn, and `agentcli solve --candidates` with real tests."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from agentcli.agent.checking import runs_check
from agentcli.agent.loop import Agent
from agentcli.agent.outcome import RunLimits
from agentcli.agent.parsing import parse_reply
from agentcli.agent.selection import Verdict, best, pytest_verdict, temperatures, with_check
from agentcli.events import CandidateScored, Event, EventBus, ModelPrompt
from agentcli.models.scripted import ScriptedModel
from agentcli.policies import Policies
from agentcli.repo import checkpoint as cp
from agentcli.sandbox.local import HostSandbox, bwrap_available
from tests.conftest import channel_for, committed_repo, smol_model
from tests.test_solve import agentcli


@pytest.mark.parametrize(
    ("exit_code", "output", "verdict"),
    [
        (0, "...\n3 passed in 0.01s", Verdict(0, 3)),
        (1, "F.\nFAILED t.py::a\n1 failed, 1 passed in 0.02s", Verdict(1, 1)),
        # Broken so that no test ran: worse than any run with tests failing.
        (2, "E\n!!! Interrupted: 1 error during collection !!!\n1 error in 0.05s", None),
        (1, "2 failed, 1 passed, 1 error in 0.3s", Verdict(3, 1)),
        (5, "no tests ran in 0.01s", None),
        (1, "", None),
    ],
)
def test_pytest_verdicts(exit_code: int, output: str, verdict: Verdict | None):
    assert pytest_verdict(exit_code, output) == verdict


def test_a_timed_out_check_says_nothing():
    assert pytest_verdict(1, "1 failed in 30s", timed_out=True) is None


def test_extra_candidates_are_never_sampled_at_the_first_replys_temperature():
    assert temperatures(3, None) == [0.7, 0.8, 0.9]
    assert temperatures(3, 0.7) == [0.8, 0.9, 1.0]
    assert len(set(temperatures(12, 0.0))) == 12


def test_the_best_verdict_wins_and_ties_go_to_the_first():
    assert best([Verdict(1, 0), Verdict(0, 1), Verdict(0, 1)]) == 1
    assert best([None, Verdict(2, 0)]) == 1
    assert best([Verdict(0, 2), Verdict(0, 2)]) == 0
    assert best([None, None]) == 0
    assert best([Verdict(1, 3), Verdict(1, 1)]) == 0  # as many failing: more passing


WRONG = "calc.py\n```python\ndef add(a, b):\n    return a * b\n```"
ELSEWHERE = "notes.txt\n```\nadd() is wrong\n```"
RIGHT = "calc.py\n```python\ndef add(a, b):\n    return a + b\n```"


def _run(root: Path, replies: list[str], policies: Policies, candidates: int) -> tuple[list[Event], list[str]]:
    seen: list[Event] = []
    checked: list[str] = []  # calc.py as each check found it

    def verifier() -> Verdict:
        text = (root / "calc.py").read_text()
        checked.append(text)
        return Verdict(0, 1) if "a + b" in text else Verdict(1, 0)

    with HostSandbox(root, channel_for(root)) as box:
        agent = Agent(
            ScriptedModel(replies),
            box,
            EventBus([seen.append]),
            limits=RunLimits(candidates=candidates),
            policies=policies,
            tree_kept=lambda: cp.tree_kept(root),
        )
        agent.ctx.facts.verifier, agent.ctx.facts.takes_back = verifier, True
        agent.run("Fix add in calc.py")
    return seen, checked


def test_the_check_chooses_between_candidates_each_applied_and_taken_back(tmp_path: Path):
    root = committed_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a - b\n"})
    seen, checked = _run(root, [WRONG, ELSEWHERE, RIGHT, "DONE: fixed"], Policies.every(), candidates=3)
    scored = [e for e in seen if isinstance(e, CandidateScored)]
    # The tests, and whether the Python file changed still parses (notes.txt is no Python).
    assert [(e.index, e.failed, e.passed, e.chosen) for e in scored] == [
        (0, 1, 1, False),
        (1, 1, 0, False),
        (2, 0, 2, True),
    ]
    # The second candidate was checked on calc.py as it was: the first one's write had been taken back.
    assert checked == ["def add(a, b):\n    return a * b\n", "def add(a, b):\n    return a - b\n", RIGHT_TEXT]
    assert (root / "calc.py").read_text() == RIGHT_TEXT
    assert not (root / "notes.txt").exists()


RIGHT_TEXT = "def add(a, b):\n    return a + b\n"


def test_a_sample_that_repeats_a_candidate_is_dropped_and_another_drawn(tmp_path: Path):
    root = committed_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a - b\n"})
    repeated = WRONG.replace("\n", "\n ", 1)  # the same reply but for spacing
    seen, checked = _run(root, [WRONG, repeated, RIGHT, "DONE: fixed"], Policies.every(), candidates=2)
    scored = [(e.index, e.failed, e.chosen) for e in seen if isinstance(e, CandidateScored) and not e.repeated]
    assert scored == [(0, 1, False), (1, 0, True)] and len(checked) == 2
    # The draw dropped is journaled with what it cost (a resumed run counts it), against the one it repeated.
    (dropped,) = [e for e in seen if isinstance(e, CandidateScored) and e.repeated]
    assert dropped.index == 0 and dropped.failed is None and dropped.completion_tokens > 0
    assert (root / "calc.py").read_text() == RIGHT_TEXT


def test_no_choosing_while_the_policy_is_off(tmp_path: Path):
    root = committed_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a - b\n"})
    seen, checked = _run(root, [WRONG, "DONE: changed"], Policies.chosen("small-local", ["select=off"]), 3)
    assert not [e for e in seen if isinstance(e, CandidateScored)] and not checked
    assert "a * b" in (root / "calc.py").read_text()


def test_solve_with_candidates_keeps_the_one_the_repository_tests_pass(failing_repo: Path, tmp_path: Path):
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([WRONG, RIGHT, "```bash\npython3 -m pytest -q\n```", "DONE: add adds"]))
    result = agentcli(
        "solve", "Fix add in calc.py.", "--model", f"scripted:{replies}", "--sandbox", "host", "--json",
        "--candidates", "2", cwd=failing_repo,
    )  # fmt: skip
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 0, result.stdout + result.stderr
    scored = [(e["index"], e["failed"], e["passed"], e["chosen"]) for e in events if e["type"] == "candidate_scored"]
    assert scored == [(0, 1, 1, False), (1, 0, 2, True)]  # the tests, and calc.py parses
    assert (failing_repo / "calc.py").read_text() == RIGHT_TEXT
    assert events[-1]["status"] == "finished"


@pytest.mark.llamacpp
def test_candidates_share_the_evaluated_prompt():
    """A candidate sampled for the same prompt evaluates (almost) none of it again: the KV cache holds it."""
    model = smol_model()
    messages = [{"role": "system", "content": "Reply with one shell command."}, {"role": "user", "content": "list"}]
    model.load().reset()
    first = model.complete(messages, max_tokens=24)
    second = model.complete(messages, max_tokens=24, temperature=0.9)
    assert first.usage.prompt_evaluated == first.usage.prompt_tokens
    assert second.usage.prompt_evaluated is not None and second.usage.prompt_evaluated <= 1


def test_a_candidate_that_rewrites_a_test_is_not_judged(tmp_path: Path):
    root = committed_repo(
        tmp_path / "repo",
        {"calc.py": "def add(a, b):\n    return a - b\n", "test_calc.py": "def test_x():\n    pass\n"},
    )
    gamed = "test_calc.py\n```python\ndef test_x():\n    assert True\n```"
    seen, checked = _run(root, [WRONG, gamed, "DONE: changed"], Policies.every(), candidates=2)
    scored = [(e.index, e.failed, e.chosen) for e in seen if isinstance(e, CandidateScored)]
    assert scored == [(0, 1, True), (1, None, False)] and len(checked) == 1


def test_the_models_own_check_counts_beside_the_tests():
    assert with_check(None, True) == Verdict(0, 1)
    assert with_check(None, False) == Verdict(1, 0)
    assert with_check(Verdict(1, 4), False) == Verdict(2, 4)


@pytest.mark.parametrize(
    ("command", "check"),
    [
        ("python3 app.py", True),
        ("cd src && python3 -m pytest -q", True),
        ("python3 report.py data.csv | tail -5", True),
        ("./run.sh", True),
        ("bash ci.sh", True),
        ("python3 -m unittest", True),
        # Not a run of the code as it is: it writes, installs, runs a snippet or changes first.
        ("python3 app.py > out.txt", False),
        ("python3 -c 'import app'", False),
        ("python3 -m pip install requests", False),
        ("python3 - <<'EOF'\nimport app\nEOF", False),
        ("sed -i 's/a/b/' app.py && python3 app.py", False),
        ("python3 app.py | tee log", False),
        ("python3 app.py & rm -rf data", False),
        ("diff <(python3 a.py) expected.txt", False),
        ("bash -lc 'rm -rf data'", False),
        ("python -Bc 'import app'", False),
        ("node -e 'require(1)'", False),
        ("python3 app.py | sort -o app.py", False),
        ("python -I -m pip install requests", False),
        ("python3 -m pytest -rfE", True),
        ("python3 app.py 2>&1 | tail -5", True),
        ("git status", False),
        ("cat app.py", False),
    ],
)
def test_what_counts_as_a_check_of_the_models(command: str, check: bool):
    assert runs_check(command) is check


BROKEN_APP = "def total(xs):\n    return sum(xs) +\n\nprint(total([1, 2]))\n"
RUN_APP = "```bash\npython3 app.py\n```"
SED_WRONG = "```bash\nsed -i 's/sum(xs) +/sum(xs) -/' app.py\n```"  # still a syntax error
SED_RIGHT = "```bash\nsed -i 's/sum(xs) +$/sum(xs)/' app.py\n```"


def _own_check_run(root: Path, replies: list[str], takes_back: bool = True) -> list[Event]:
    seen: list[Event] = []
    with HostSandbox(root, channel_for(root)) as box:
        agent = Agent(
            ScriptedModel(replies),
            box,
            EventBus([seen.append]),
            limits=RunLimits(candidates=2),
            policies=Policies.every(),
            tree_kept=lambda: cp.tree_kept(root),
        )
        agent.ctx.facts.takes_back = takes_back
        agent.run("app.py does not run: make it print the total")
    return seen


def test_sed_candidates_are_judged_by_the_program_the_model_ran_that_failed(tmp_path: Path):
    root = committed_repo(tmp_path / "repo", {"app.py": BROKEN_APP})
    seen = _own_check_run(root, [RUN_APP, SED_WRONG, SED_RIGHT, RUN_APP, "DONE: it prints 3"])
    scored = [(e.index, e.failed, e.passed, e.chosen) for e in seen if isinstance(e, CandidateScored)]
    assert scored == [(0, 2, 0, False), (1, 0, 2, True)]  # app.py parses, and the model's check passes
    assert "return sum(xs)\n" in (root / "app.py").read_text()
    # The check is journaled with each prompt after it ran, for a resumed run to judge by it too.
    prompts = [e for e in seen if isinstance(e, ModelPrompt)]
    assert prompts[0].progress["own_check"] == "" and prompts[1].progress["own_check"] == "python3 app.py"


def test_no_candidates_without_a_check_or_where_a_change_cannot_be_taken_back(tmp_path: Path):
    root = committed_repo(tmp_path / "repo", {"notes.md": "teh app\n"})
    fix = "```bash\nsed -i 's/teh/the/' notes.md\n```"
    seen = _own_check_run(root, [fix, fix, "DONE: fixed"])  # no tests, no check ran, no Python changed
    assert not [e for e in seen if isinstance(e, CandidateScored)]
    root = committed_repo(tmp_path / "other", {"app.py": BROKEN_APP})
    seen = _own_check_run(root, [RUN_APP, SED_WRONG, SED_RIGHT, RUN_APP, "DONE: fixed"], takes_back=False)
    assert not [e for e in seen if isinstance(e, CandidateScored)]


def test_a_candidate_that_leaves_python_unparsable_loses_without_any_other_check(tmp_path: Path):
    root = committed_repo(tmp_path / "repo", {"app.py": "def total(xs):\n    return 0\n"})
    broken = "app.py\n```python\ndef total(xs):\n    return sum(xs\n```"
    whole = "app.py\n```python\ndef total(xs):\n    return sum(xs)\n```"
    seen = _own_check_run(root, [broken, whole, "DONE: sums"])
    scored = [(e.index, e.failed, e.passed, e.chosen) for e in seen if isinstance(e, CandidateScored)]
    assert scored == [(0, 1, 0, False), (1, 0, 1, True)]
    assert (root / "app.py").read_text() == "def total(xs):\n    return sum(xs)\n"


@pytest.mark.parametrize(
    "change",
    [
        "```bash\nsed -i 's/sum(xs) +$/sum(xs)/w /tmp/leak' app.py\n```",  # writes another file
        "```bash\nsed -i '1e touch /tmp/ran' app.py\n```",  # runs a command
        "```bash\nsed -i 's/sum(xs) +$/sum(xs)/' ../app.py\n```",  # outside the work tree
    ],
)
def test_a_candidate_that_could_reach_past_the_work_tree_is_not_judged(tmp_path: Path, change: str):
    root = committed_repo(tmp_path / "repo", {"app.py": BROKEN_APP})
    seen = _own_check_run(root, [RUN_APP, change, SED_RIGHT, RUN_APP, "DONE: fixed"])
    scored = [(e.index, e.failed, e.chosen) for e in seen if isinstance(e, CandidateScored)]
    assert scored == [(0, None, False), (1, 0, True)]


@pytest.mark.parametrize(
    ("broken", "whole"),
    [
        (
            "```bash\nsed -i 's/return 0/return sum(xs/' app.py\n```",  # from where the shell is
            "```bash\nsed -i 's/return 0/return sum(xs)/' app.py\n```",
        ),
        (
            "src/app.py\n```python\ndef total(xs):\n    return sum(xs\n```",  # a block's: from the root
            "src/app.py\n```python\ndef total(xs):\n    return sum(xs)\n```",
        ),
    ],
    ids=["sed", "block"],
)
def test_the_python_check_reads_the_file_the_change_made(tmp_path: Path, broken: str, whole: str):
    root = committed_repo(tmp_path / "repo", {"src/app.py": "def total(xs):\n    return 0\n", "app.py": "x = (\n"})
    seen = _own_check_run(root, ["```bash\ncd src\n```", broken, whole, "DONE: sums"])
    scored = [(e.index, e.failed, e.passed, e.chosen) for e in seen if isinstance(e, CandidateScored)]
    # src/app.py is judged (./app.py, which never parses, is not where the shell is).
    assert scored == [(0, 1, 0, False), (1, 0, 1, True)], seen
    assert "return sum(xs)\n" in (root / "src" / "app.py").read_text()


NEEDS_BWRAP = [pytest.mark.bwrap, pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot run here")]


@pytest.mark.parametrize("sandbox", ["host", pytest.param("bwrap", marks=NEEDS_BWRAP)])
def test_a_candidate_that_writes_an_ignored_file_is_not_judged(failing_repo: Path, tmp_path: Path, sandbox: str):
    # Ignored by the user's global rules only, which the sandbox's git (another home) does not read; a
    # snapshot holds no ignored file, so the change could not be taken back.
    (tmp_path / "xdg" / "git").mkdir(parents=True)
    (tmp_path / "xdg" / "git" / "ignore").write_text("local_settings.py\n")
    ignored = "local_settings.py\n```python\nDEBUG = True\n```"
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([ignored, RIGHT, "```bash\npython3 -m pytest -q\n```", "DONE: add adds"]))
    result = agentcli(
        "solve", "Fix add in calc.py.", "--model", f"scripted:{replies}", "--sandbox", sandbox, "--json",
        "--candidates", "2", cwd=failing_repo, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")},
    )  # fmt: skip
    events = [json.loads(line) for line in result.stdout.splitlines()]
    scored = [(e["index"], e["failed"], e["chosen"]) for e in events if e["type"] == "candidate_scored"]
    assert scored == [(0, None, False), (1, 0, True)], result.stdout + result.stderr
    assert not (failing_repo / "local_settings.py").exists()
    assert (failing_repo / "calc.py").read_text() == RIGHT_TEXT


def test_no_candidates_where_the_time_left_cannot_pay_for_the_replies(tmp_path: Path):
    root = committed_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a - b\n"})
    with HostSandbox(root, channel_for(root)) as box:
        agent = Agent(ScriptedModel([]), box, EventBus([]), limits=RunLimits(candidates=3, timeout=300))
        agent.ctx.facts.verifier, agent.ctx.facts.takes_back = (lambda: Verdict(0, 1)), True
        agent.ctx.state.started = time.monotonic()
        change = parse_reply(RIGHT)
        assert agent.candidates.wanted(change, reply_seconds=20)  # 60 + 2 x 20 + 3 x 30 s: 190 s of 300
        assert not agent.candidates.wanted(change, reply_seconds=80)  # 60 + 2 x 80 + 90 s: past the limit
