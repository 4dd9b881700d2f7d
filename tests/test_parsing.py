"""The reply parser on the kinds of replies small local models really write."""

import pytest

from agentcli.agent.parsing import (
    echoed_file,
    echoed_program,
    echoes_own_lines,
    extract_plan,
    find_blocks,
    first_commented_step,
    parse_reply,
    repeating,
    step_report,
    without_plan,
)


def test_plan_then_command():
    reply = (
        "PLAN:\n1. Run the tests.\n2. Fix the bug in calc.py.\n3. Run the tests again.\n\n"
        "Let me start.\n```bash\npython3 -m pytest -q\n```"
    )
    parsed = parse_reply(reply)
    assert parsed.command == "python3 -m pytest -q"
    assert parsed.plan == ["Run the tests", "Fix the bug in calc.py", "Run the tests again"]
    assert not parsed.finished and parsed.error is None


def test_two_commands_runs_first_and_says_so():
    reply = "First:\n```bash\nls -la\n```\nThen:\n```bash\ncat README.md\n```"
    parsed = parse_reply(reply)
    assert parsed.command == "ls -la"
    assert any("other 1 command block" in note for note in parsed.notes)


def test_echoed_observation_is_not_a_command():
    reply = "```\n[exit 0 · 0.1s]\nfoo.py\n```\nNow let me read it.\n```bash\ncat foo.py\n```"
    assert parse_reply(reply).command == "cat foo.py"


def test_unclosed_fence_runs_what_was_written():
    parsed = parse_reply("I'll check.\n```bash\ngrep -rn TODO .")
    assert parsed.command == "grep -rn TODO ."
    assert any("not closed" in note for note in parsed.notes)


def test_explicit_done_marker_with_summary():
    parsed = parse_reply("All good now.\n\nDONE: fixed the off-by-one in range_sum")
    assert parsed.finished and parsed.summary == "fixed the off-by-one in range_sum"


def test_plain_language_ending_is_recognised():
    parsed = parse_reply("I have fixed the bug and all tests pass now. The task is complete.")
    assert parsed.finished
    assert "fixed the bug" in parsed.summary


def test_finish_command_styles():
    for command in ("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "echo 'DONE'", "exit 0"):
        parsed = parse_reply(f"```bash\n{command}\n```")
        assert parsed.finished, command


def test_done_marker_with_command_finishes_only_after_command():
    parsed = parse_reply("```bash\npython3 -m pytest -q\n```\nDONE: tests pass")
    assert parsed.command == "python3 -m pytest -q"
    assert parsed.finish_after_command and parsed.summary == "tests pass"


def test_lowercase_done_in_prose_with_command_does_not_finish():
    parsed = parse_reply("Done reading the file. Now the fix:\n```bash\nsed -i 's/a/b/' x.py\n```")
    assert parsed.command == "sed -i 's/a/b/' x.py"
    assert not parsed.finish_after_command


def test_bare_command_without_fence():
    assert parse_reply("ls -la").command == "ls -la"
    assert parse_reply("$ python3 -m pytest").command == "python3 -m pytest"


def test_console_prompts_are_stripped():
    assert parse_reply("```console\n$ cd src\n$ ls\n```").command == "cd src\nls"


def test_python_block_only_is_a_precise_format_error():
    parsed = parse_reply("Here is the fix:\n```python\ndef add(a, b):\n    return a + b\n```")
    assert parsed.command is None and not parsed.finished
    assert "```python" in parsed.error and "write its path on the line before the block" in parsed.error
    assert parsed.code == ("python", "def add(a, b):\n    return a + b\n")  # for the loop to place


def test_code_with_done_but_no_file_is_not_finished():
    # A small model's "REPLACING:" block and a DONE after it: the block must be placed first.
    parsed = parse_reply("REPLACING:\n```python\ndef add(a, b):\n    return a + b\n```\n\nDONE: fixed add")
    assert not parsed.finished and parsed.code is not None
    assert parsed.finish_after_command and parsed.summary == "fixed add"


def test_prose_without_command_is_a_format_error():
    parsed = parse_reply("I think we should look at the code first.")
    assert parsed.error and "```bash" in parsed.error


def test_think_tags_are_ignored():
    parsed = parse_reply("<think>maybe ```bash\nrm -rf /\n``` no</think>\n```bash\nls\n```")
    assert parsed.command == "ls"


def test_heredoc_command_kept_whole():
    body = "cat > a.py <<'EOF'\nprint('```')\nEOF"
    parsed = parse_reply(f"```bash\n{body}\n```")
    assert parsed.command.startswith("cat > a.py <<'EOF'")


def test_find_blocks_languages():
    blocks = find_blocks("```sh\nls\n```\n```python\nx=1\n```")
    assert [b.language for b in blocks] == ["sh", "python"]


def test_numbered_list_not_starting_at_one_is_not_a_plan():
    assert extract_plan("3. something\n4. other") is None


def test_done_inside_a_command_block_finishes():
    parsed = parse_reply('All good.\n```bash\nDONE: Created hello.txt with the content "hello world"\n```')
    assert parsed.finished and parsed.summary.startswith("Created hello.txt")


def test_a_list_of_inline_commands_runs_the_first_and_ignores_done():
    reply = "PLAN:\n1. Look at `app.py`.\n\nSteps:\n1. `cat -n app.py`\n2. `python3 app.py`\n\nDONE: fixed `app.py`."
    parsed = parse_reply(reply)
    assert parsed.command == "cat -n app.py" and not parsed.finished
    assert any("first command of your list" in note for note in parsed.notes)


def test_thought_lines_inside_the_command_block_are_not_run():
    # The 1.5B copies the prompt's THOUGHT: label into its bash block.
    parsed = parse_reply("```bash\nTHOUGHT: list the files\nls -la\n```")
    assert parsed.command == "ls -la" and "not run" in parsed.notes[0]
    only = parse_reply("PLAN:\n1. Make it\n2. Check it\n\n```bash\nTHOUGHT: Create data/users.csv.\n```")
    assert only.command is None and "held only THOUGHT:/PLAN: lines" in only.error


def test_without_plan_keeps_the_reasoning_and_the_command():
    reply = "PLAN:\n1. Read it\n2. Fix it\n\nNow the fix.\n```bash\nprintf '1. x\\n' > f\n```"
    assert without_plan(reply) == "Now the fix.\n```bash\nprintf '1. x\\n' > f\n```"
    assert without_plan("**PLAN:**\n1. a\n2. b\n") == "**PLAN:**\n1. a\n2. b\n"  # nothing else: kept whole


SCRIPT = "# Look at the test\ncat test_x.py\n\n# Fix it\nsed -i 's/a/b/' x.py\n\n# Test\npytest -q"


def test_a_script_of_commented_steps_runs_its_first_step():
    reply = parse_reply("PLAN:\n1. Look\n2. Fix\n```bash\n" + SCRIPT + "\n```")
    assert reply.command == "# Look at the test\ncat test_x.py"
    assert "script of several commented steps; only the first ran" in reply.notes[0]
    assert reply.history_text == "PLAN:\n1. Look\n2. Fix\n```bash\n# Look at the test\ncat test_x.py\n```"


@pytest.mark.parametrize(
    "script",
    [
        "# list the files\nls\ncat a.py",  # one step
        "for f in *.py; do\n  # show it\n  cat $f\n  # count it\n  wc -l $f\ndone",  # a loop
        "# a\npython3 - <<'EOF'\n# not a step\nprint(1)\nEOF\n# b\nls",  # a here-document first
        "# a\nls &&\n# b\ncat x",  # a continued line
        "#!/bin/bash\n# Usage: count.sh DIR\nset -e\n# count them\nfind . -name '*.py' | wc -l",  # a script
    ],
)
def test_other_scripts_run_whole(script: str):
    assert first_commented_step(script) is None


def test_a_later_steps_here_document_does_not_stop_the_cut():
    script = "# Look\ncat a.py\n# Fix\nsed -i s/x/y/ a.py\n# Test\npython3 - <<'EOF'\n# check\nimport a\nEOF"
    assert first_commented_step(script) == "# Look\ncat a.py"


def test_a_placeholder_in_angle_brackets_is_not_run():
    parsed = parse_reply("PLAN: add the flag\n```bash\n<add '--shout' argument to build_parser function>\n```")
    assert parsed.command is None and not parsed.finished
    assert "description in angle brackets, not a command" in parsed.error
    assert parse_reply("```bash\ncat < in.txt\n```").command == "cat < in.txt"


def test_a_python_block_under_a_data_file_name_is_a_script_not_its_content():
    script = "import csv\nrows = list(csv.reader(open('contacts.csv')))\n"
    reply = f"Remove the duplicates from contacts.csv:\n```python\n{script}```"
    parsed = parse_reply(reply)
    assert parsed.file_write is None and parsed.code is not None and parsed.code[0] == "python"
    named = parse_reply("Here is the new dedupe.py:\n```python\nimport csv\n```")
    assert named.file_write == ("dedupe.py", "import csv\n")
    assert parse_reply("contacts.csv:\n```\nname,email\n```").file_write == ("contacts.csv", "name,email\n")


def test_output_written_after_the_command_in_its_block_is_cut_off():
    reply = "```bash\npython3 -m pytest -q\n[exit 0 · 0.4s]\n..    [100%]\n2 passed in 0.01s\n```"
    parsed = parse_reply(reply)
    assert parsed.command == "python3 -m pytest -q"
    assert any("The lines from `[exit 0 · 0.4s]` on in your block were output you wrote" in n for n in parsed.notes)
    assert parsed.history_text == "```bash\npython3 -m pytest -q\n```"  # the history keeps no invented output


def test_a_copy_of_agentclis_own_notes_is_no_claim_of_being_done():
    parsed = parse_reply(
        "[next: a sentence, then one command in a bash code block. DONE: only when the whole task is done]"
    )
    assert not parsed.finished and parsed.error is not None
    parsed = parse_reply("[note] The folder tests did not exist.\n```bash\nls tests\n```")
    assert parsed.command == "ls tests"


def test_an_unclosed_block_ends_at_the_done_line_after_it():
    reply = "PLAN: 1. Dedupe.\n```python\nimport csv\nprint('deduped')\n\nDONE: Plan completed."
    parsed = parse_reply(reply)
    assert parsed.code == ("python", "import csv\nprint('deduped')\n\n")
    assert parsed.finish_after_command and parsed.summary == "Plan completed."


def test_definitions_echoed_onto_a_python_file_are_meant_as_a_block():
    appended = '# the fix\necho "def add(a, b):" >> calc.py\necho "    return a + b" >> calc.py'
    assert echoed_file(appended) == ("calc.py", "def add(a, b):\n    return a + b\n")
    assert echoed_file('echo "x = 1" >> calc.py\necho "y = 2" >> calc.py') is None  # a plain append
    assert echoed_file('echo "a" >> notes.txt\necho "b" >> notes.txt') is None  # not Python


def test_echoed_lines_are_read_as_written_between_their_outer_quotes():
    # The shell would drop the docstring's quotes (three strings side by side); the model meant them.
    appended = "\n".join(
        f'echo "{line}" >> inventory.py'
        for line in [
            "class Inventory:",
            '    """Counts of items in stock."""',
            "    def __init__(self, stock: dict[str, int] | None = None) -> None:",
            "        self._stock = dict(stock or {})",
            "    def say(self) -> str:",
            '        return \\"hi\\"',
        ]
    )
    path, code = echoed_file(appended)
    assert path == "inventory.py"
    assert code.splitlines()[1] == '    """Counts of items in stock."""'
    assert code.splitlines()[-1] == '        return "hi"'


def test_a_prose_line_said_again_and_again_ends_the_reply():
    assert not repeating("I will run the tests now.\nI will read the code.\n")
    looped = "".join(f"{n}. If the tests pass, the issue is resolved.\n" for n in range(5, 8))
    assert repeating(looped) and not repeating(looped.rsplit("5.", 1)[0] + "```python\n" + looped)
    group = 'cat temp.py | python3 -m pydoc durations | grep -A 1 "def parse_duration"\necho "    raise" >> temp.py\n'
    assert repeating("```bash\n# Step 2\n" + group * 3) and not repeating("```bash\n" + group * 2)
    tests = "".join(f"    assert parse_duration('{n}s') == {n}\n" for n in range(9))  # alike, not the same
    assert not repeating("```python\ndef test_it():\n" + tests)


def test_a_sentence_said_again_and_again_within_one_line_ends_the_reply():
    looped = "5. DONE: The task is complete." + " The task is done. The changes have been committed." * 3
    assert repeating(looped)
    assert not repeating("5. DONE: The task is complete." + " The task is done. The changes have been committed." * 2)
    assert not repeating("Run it. Run it. Run it.")  # too short to be a loop rather than a style
    assert repeating("Done." + " The task is done. The changes have been committed." * 3 + " The task")  # mid-sentence
    steps = ["Edit a.py", "Fix the import in b.py", "Update the README", "Rename c.py"]
    plan = "".join(f"{n}. {step}. Then run the tests again.\n" for n, step in enumerate(steps, 1))
    assert not repeating(plan)  # a sentence said again in each step of a plan is no loop


def test_a_plan_ends_at_a_repeated_step_and_holds_at_most_six():
    repeated = "1. Run the tests\n2. Fix it\n3. Check it\n4. Fix it\n5. Done"
    assert extract_plan(repeated) == ["Run the tests", "Fix it", "Check it"]
    assert extract_plan("".join(f"{n}. step {n}\n" for n in range(1, 10))) == [f"step {n}" for n in range(1, 7)]


@pytest.mark.parametrize(
    "command",
    ["ls", "pwd", "X=1", "cat durations.py", "python3 -m pytest -q", "cat > app.py <<'EOF'\nimport sys\nEOF"],
)
def test_shell_commands_that_python_could_read_stay_commands(command):
    parsed = parse_reply(f"```bash\n{command}\n```")
    assert parsed.command == command and parsed.code is None


def test_a_python_script_in_a_bash_block_is_code():
    script = "import json\nwith open('users.json') as f:\n    print(len(json.load(f)))"
    parsed = parse_reply(f"```bash\n{script}\n```")
    assert parsed.command is None and parsed.code == ("python", script)


@pytest.mark.parametrize(
    ("summary", "is_step"),
    [
        ("Plan 1 completed. Now, let's convert the JSON to CSV.", True),
        ("Step 2 done", True),
        ("Read the file; next I will write the CSV", True),
        ("First, we need to create the test files and write the tests.", True),
        ("I tried running the script again, but the result was the same. Let's try a different approach.", True),
        ("Converted data/users.json to data/users.csv", False),
        ("Fixed all 3 steps of the pipeline", False),
    ],
)
def test_a_done_summary_that_reports_a_step(summary, is_step):
    assert step_report(summary) is is_step


def test_a_plan_step_that_only_finishes_is_left_out():
    plan = "1. Read the log\n2. Find the ERROR line\n3. Copy it to root_cause.txt\n4. Exit"
    assert extract_plan(plan) == ["Read the log", "Find the ERROR line", "Copy it to root_cause.txt"]
    assert extract_plan("1. Fix it\n2. Done.") is None  # one step is no plan


def test_inline_code_in_the_done_line_is_no_command_to_run():
    parsed = parse_reply("DONE: The shebang line in `scripts/wordcount.py` has been changed to use `python3`.")
    assert parsed.finished and parsed.command is None
    assert parse_reply("It uses `python3` now.").command is None
    assert parse_reply("First `ls -la`, then DONE.").command == "ls -la"


def test_an_empty_bash_block_runs_nothing():
    parsed = parse_reply("```bash\n```")
    assert parsed.command is None and parsed.error.startswith("Your ```bash block was empty")


def test_a_comment_line_inside_a_quoted_string_does_not_split_the_block():
    script = 'echo "import pytest\ndef test_it():\n    assert f(1) == 2\n# Run the tests\npython3 -m pytest"\n'
    script += "# Commit\ngit add -A"
    assert first_commented_step(script) is None


@pytest.mark.parametrize(
    ("reply", "write"),
    [
        # fix-shell-quoting: the script's new text in a bash block under a comment naming it.
        (
            'PLAN: 1. Fix it.\n\n```bash\n# backup.sh\n#!/bin/bash\nset -e\nsrc="$1"\n```',
            ("backup.sh", '#!/bin/bash\nset -e\nsrc="$1"\n'),
        ),
        (
            "```bash\n# pager.py\ndef paginate(items):\n    return items\n```",
            ("pager.py", "def paginate(items):\n    return items\n"),
        ),
        (
            '```bash\n# run.sh\nsrc="$1"\nmkdir -p "$src"\necho done\n```',
            ("run.sh", 'src="$1"\nmkdir -p "$src"\necho done\n'),
        ),
    ],
)
def test_a_shell_block_under_a_comment_naming_a_file_is_its_content(reply: str, write: tuple[str, str]):
    parsed = parse_reply(reply)
    assert parsed.file_write == write and parsed.command is None


@pytest.mark.parametrize(
    "reply",
    [
        "```bash\n# pager.py\nsed -i 's/a/b/' pager.py\n```",  # a command about the file it names
        "```bash\n# Update the version numbers\nsed -i 's/a/b/' x.toml\n```",
        "```bash\n# pager.py\nx = 1\n```",  # not Python that a file holds
    ],
)
def test_a_shell_block_under_a_comment_stays_a_command(reply: str):
    parsed = parse_reply(reply)
    assert parsed.file_write is None and parsed.command is not None


def test_one_echo_printing_python_over_several_lines_is_read_as_the_code_it_prints():
    # write-missing-test: the inner quotes of "the cat" end the echo's, and nothing closes it.
    command = (
        '# Create the test file\necho "import pytest\nfrom textstats import top_words\ndef test_top():\n'
        '    assert top_words("a a b", 1) == [("a", 2)]\n# Run the tests\npython3 -m pytest\ngit add tests'
    )
    code, path, rest = echoed_program(command)
    header = "import pytest\nfrom textstats import top_words\n"
    assert code == header + 'def test_top():\n    assert top_words("a a b", 1) == [("a", 2)]\n'
    assert (path, rest) == ("", "python3 -m pytest\ngit add tests")
    # Redirected, with quotes the shell would drop: the file it names, the code as written.
    assert echoed_program('echo "def f():\n    return "1"" > f.py') == ('def f():\n    return "1"\n', "f.py", "")


def test_echoes_the_shell_writes_as_meant_or_that_print_no_code_are_left_alone():
    assert echoed_program('echo "def f():\n    return 1" > f.py\ncat f.py') is None  # the shell writes it right
    assert echoed_program('echo "hello" > notes.txt') is None
    assert echoed_program('echo "first line\nsecond line"') is None  # not Python


def test_code_echoed_into_a_file_among_echoes_of_the_plan_is_that_file_s_edit_not_steps():
    # validate-input: the right class, echoed line by line after four echoes of the plan, then a line
    # for the tests; cut into commented steps, only the plan's echoes ran.
    block = "\n".join(
        [
            "# Add the new Rectangle class with validation",
            'echo "PLAN: 1. Add the new Rectangle class with validation" >> geometry.py',
            'echo "PLAN: 2. Test it" >> geometry.py',
            "# Add the new Rectangle class with validation",
            'echo "class Rectangle:" >> geometry.py',
            'echo "    """An axis-aligned rectangle.""" >> geometry.py',
            'echo "    def __init__(self, width: float) -> None:" >> geometry.py',
            'echo "        if not isinstance(width, (int, float)) or width <= 0:" >> geometry.py',
            "echo \"            raise ValueError('width')\" >> geometry.py",
            'echo "        self.width = width" >> geometry.py',
            "# Test the modified class",
            'echo "python -m unittest test_geometry" >> test_geometry.py',
        ]
    )
    reply = parse_reply(f"PLAN: 1. Add the class\n```bash\n{block}\n```")
    assert reply.command == block and not reply.notes  # not cut into steps
    path, code = echoed_file(block)
    assert path == "geometry.py"
    assert code.startswith('class Rectangle:\n    """An axis-aligned rectangle."""\n    def __init__(')
    assert "PLAN" not in code and code.endswith("        self.width = width\n")


def test_python_blocks_written_a_step_each_are_one_script():
    # deep-merge-json: the inputs read in one block, the merge in the next, the write in a third.
    reply = (
        '```python\nimport json\n\nwith open("a.json") as f:\n    a = json.load(f)\n```\n\n'
        "PLAN: Merge them.\n\n```python\nmerged = {**a}\n```\n\n"
        'PLAN: Write it.\n\n```python\nwith open("m.json", "w") as f:\n    json.dump(merged, f)\n```\n\n'
        "DONE: merged"
    )
    parsed = parse_reply(reply)
    assert parsed.code == (
        "python",
        'import json\n\nwith open("a.json") as f:\n    a = json.load(f)\n\nmerged = {**a}\n\n'
        'with open("m.json", "w") as f:\n    json.dump(merged, f)\n',
    )
    assert "Your ```python blocks ran as one script, in order." in parsed.notes
    assert parsed.finish_after_command


def test_a_script_and_then_a_bash_check_is_the_script():
    # deep-merge-json: the begun script, the merge, the write, then `cat` of the result in a bash block.
    reply = (
        '```python\nimport json\n\nwith open("a.json") as f:\n    a = json.load(f)\n```\n\n'
        '```python\njson.dump(a, open("m.json", "w"))\n```\n\n```bash\n# Check the result\ncat m.json\n```'
    )
    parsed = parse_reply(reply)
    assert parsed.command is None
    assert parsed.code == (
        "python",
        'import json\n\nwith open("a.json") as f:\n    a = json.load(f)\n\njson.dump(a, open("m.json", "w"))\n',
    )
    assert "Your ```bash block after the Python script was not run: send it next, on its own." in parsed.notes
    # a function or an example before a command is no script: the command runs
    assert parse_reply("```python\ndef f():\n    return 1\n```\n```bash\npython3 -c 'print(1)'\n```").command == (
        "python3 -c 'print(1)'"
    )


@pytest.mark.parametrize(
    "reply",
    [
        "[next: step 2 of your plan: Write]",
        "[exit 0 · 0.0s]\nok",
        "```bash\n[next: step 4 of your plan: Move the helpers]\n```",  # the 1.5B, reworded tasks
        "Now the next step.\n```bash\n[exit 0 · 0.0s]\n```",
        "```\n[exit 1 · 0.2s]\nFAILED test_x.py::test_a\n```",  # an observation copied whole
        "```bash\n[note] the file is unchanged\n[next: step 2 of your plan: Check]\n```",
    ],
)
def test_a_reply_that_only_copies_agentcli_s_lines_echoes_them(reply: str):
    assert echoes_own_lines(reply)


@pytest.mark.parametrize(
    "reply",
    [
        "```bash\n[ -f setup.py ] && echo yes\n```",
        "```bash\n[[ -d src ]] || mkdir src\n```",
        "```bash\n[next: step 2 of your plan: Check]\npython3 -m pytest -q\n```",  # a command after the copy
        "pyproject.toml\n```toml\n[project]\nname = 'x'\n```",
        "```\n[exit 0 · 0.1s]\n```\nDONE: the tests pass",  # a finish is an action
        "The note said [exit 1] earlier.\n```bash\nls\n```",
        "[next: step 2 of your plan: Check]\n```bash\npython3 -m pytest -q\n```",  # the copy goes, the command runs
        "```toml\n[tool.ruff]\n```",  # no action, and no line of agentcli's
        "```ini\n[notes]\nkeep = 1\n```",
        "```python\n[next(it) for it in its]\n```",
        "[Next.js](https://nextjs.org) is a framework.",
    ],
)
def test_a_reply_with_an_action_of_its_own_does_not_echo(reply: str):
    assert not echoes_own_lines(reply)
