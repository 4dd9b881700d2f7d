"""File edits written as a path and a fenced block, the way small models naturally write them.

A reply such as "Here is the fixed calc.py:" followed by a ```python block becomes a write of that
file. When the block holds only some of a Python file's functions or methods (models often write
just the one they changed), those definitions are spliced into the file instead of replacing it.
"""

from __future__ import annotations

import ast
import difflib
import re
import secrets
import shlex
import textwrap

from agentcli.agent.pysource import parse
from agentcli.prompts import render

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


# The end marks of the here-documents agentcli writes files and runs scripts with.
WRITE_MARK = "AGENTCLI_EOF"
SCRIPT_MARK = "AGENTCLI_PYTHON"


def write_command(path: str, content: str) -> str:
    """A shell command that writes `content` to `path` exactly (a here-document with a unique end mark)."""
    mark = WRITE_MARK
    while mark in content:
        mark = f"{WRITE_MARK}_{secrets.token_hex(3)}"
    body = content if content.endswith("\n") else content + "\n"
    directory = path.rsplit("/", 1)[0] if "/" in path else ""
    prefix = f"mkdir -p {shlex.quote(directory)} && " if directory else ""
    return f"{prefix}cat > {shlex.quote(path)} <<'{mark}'\n{body}{mark}"


def python_script_command(script: str) -> str:
    """A shell command that runs `script` with python3: a here-document under a delimiter it does not hold."""
    delimiter = SCRIPT_MARK
    while delimiter in script:
        delimiter += "_"
    return f"python3 - <<'{delimiter}'\n{script.rstrip(chr(10))}\n{delimiter}"


# A file this long is not rewritten by a block of under a third of its lines.
FRAGMENT_MIN_LINES = 8


def new_content(path: str, original: str | None, block: str, *, partial: bool = False) -> tuple[str, str]:
    """What the file should hold after the edit, and how the edit was understood (for the model).

    `partial`: the block holds only the definitions it changes, even if those are all the file has
    (a reply agentcli began with one definition of the file)."""
    if original is None:
        return block, render("notes/block_written", path=path, how="created")
    if path.endswith(".py"):
        merged = merge_python(original, block, partial=partial)
        if merged is not None:
            return merged, render("notes/block_written", path=path, how="merged")
    return block, render("notes/block_written", path=path, how="rewrote")


def replaces_with_fragment(original: str, content: str) -> bool:
    """Whether writing `content` over `original` replaces most of a file by a few of its lines: a block
    quoted from the file (a small model shows "line 15" under the file's name), not its new content."""
    old, new = len(original.splitlines()), len(content.splitlines())
    return old >= FRAGMENT_MIN_LINES and new * 3 < old


# Programs whose `> file` writes a line or two: over a file of several lines, an append gone wrong.
_LINE_WRITERS = frozenset({"echo", "printf"})


def overwrite_loss(original: str, content: str, program: str) -> str | None:
    """How a `program ... > file` that turned `original` into `content` lost what the file held, or None.

    Small models write `>` for `>>` (`echo debug.log > .gitignore`), rewrite a file from memory one
    `echo` at a time, or filter a file into itself (`sort -u f > f`, which the shell empties first).
    """
    kept = [line for line in original.splitlines() if line.strip()]
    if len(kept) < 2:
        return None
    if not content.strip():
        return render("notes/overwrite_loss", emptied=True)
    lines = content.splitlines()
    shorter = len(lines) < len(original.splitlines())
    if replaces_with_fragment(original, content) or (
        program in _LINE_WRITERS and shorter and any(line not in lines for line in kept)
    ):
        before, after = len(original.splitlines()), len(content.splitlines())
        return render("notes/overwrite_loss", emptied=False, lines_before=before, lines_after=after)
    return None


def defined_names(block: str) -> list[str]:
    """The top-level functions and classes a Python block defines, in order; [] if it does not parse."""
    tree = parse(textwrap.dedent(block))
    if tree is None:
        return []
    return [node.name for node in tree.body if isinstance(node, _DEFINITIONS)]


def definition_search(names: list[str]) -> str:
    """A command listing the Python files that define any of `names`, as `./path` lines."""
    alternatives = "|".join(names)
    pattern = rf"^[[:space:]]*(async[[:space:]]+)?(def|class)[[:space:]]+({alternatives})\b"
    return f"grep -rlE --include='*.py' {shlex.quote(pattern)} . 2>/dev/null"


_TOP_LEVEL_DEFINITION = re.compile(r"(?:async\s+)?(?:def|class)\s+(\w+)")


def _merge_by_lines(original: str, new_tree: ast.Module, snippet: str) -> str | None:
    """Splice top-level definitions into a file that does not parse: each replaces the lines from its
    namesake's `def`/`class` line to the next line that starts at column 0. None unless every definition
    of the block has exactly one namesake and the file has other definitions too."""
    nodes = new_tree.body
    if not nodes or not all(isinstance(n, _DEFINITIONS) for n in nodes):
        return None
    lines = original.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    heads = {i: match.group(1) for i, line in enumerate(lines) if (match := _TOP_LEVEL_DEFINITION.match(line))}
    snippet_lines = snippet.splitlines(keepends=True)
    edits: list[tuple[int, int, list[str]]] = []
    for node in nodes:
        named = [i for i, name in heads.items() if name == node.name]
        if len(named) != 1:
            return None
        start = named[0]
        while node.decorator_list and start > 0 and lines[start - 1].startswith("@"):
            start -= 1  # the block's decorators replace the file's; without any, the file's stay
        end = named[0] + 1
        # The definition runs on while lines are blank, indented, or close a signature.
        while end < len(lines) and (not lines[end].strip() or lines[end][0].isspace() or lines[end][0] == ")"):
            end += 1
        while end > named[0] + 1 and not lines[end - 1].strip():
            end -= 1  # the blank lines between definitions stay
        edits.append((start, end, _segment(snippet_lines, node)))
    if len(heads) <= len(nodes):
        return None  # the block is the whole file
    for start, end, text in sorted(edits, reverse=True):
        lines[start:end] = text
    return "".join(lines)


def describe_change(path: str, before: str | None, after: str | None, limit: int = 40) -> str:
    """A short unified diff, so the model sees exactly what its edit did (None: no such file)."""
    if before is None:
        return render("notes/change", path=path, new_file=True, deleted=False, lines=len((after or "").splitlines()))
    if after is None:
        return render("notes/change", path=path, new_file=False, deleted=True)
    diff = list(
        difflib.unified_diff(before.splitlines(), after.splitlines(), f"a/{path}", f"b/{path}", n=1, lineterm="")
    )
    more = max(0, len(diff) - limit)
    return render("notes/change", path=path, new_file=False, deleted=False, diff=diff[:limit], more=more)


def _covers(old_tree: ast.Module, new_nodes: list[ast.stmt]) -> bool:
    """Whether the block is the whole file: it holds every top-level definition of the file, and where
    the file's one definition is a class, every method of it (the class written with only the method
    that changed is an edit of that method)."""
    new_by_name = {n.name: n for n in new_nodes if isinstance(n, _DEFINITIONS)}
    old = [n for n in old_tree.body if isinstance(n, _DEFINITIONS)]
    if any(n.name not in new_by_name for n in old):
        return False
    if len(old) == 1 and isinstance(old[0], ast.ClassDef) and isinstance(new := new_by_name[old[0].name], ast.ClassDef):
        methods = {m.name for m in new.body if isinstance(m, _DEFINITIONS)}
        return all(m.name in methods for m in old[0].body if isinstance(m, _DEFINITIONS))
    return True


def merge_python(original: str, snippet: str, *, partial: bool = False) -> str | None:
    """Splice the definitions of a partial Python block into the file; None when the block is a whole file.

    A block is partial when it holds only definitions, imports and new values of the file's top-level
    names (`PORT = int(os.environ.get("PORT", 8000))`), and the file's `if __name__ == "__main__":`,
    which then replaces the file's, and leaves out some of the file's top-level definitions. Functions
    and classes replace those of the same name (a class's methods merge one by one); new ones go at
    the end; an assignment replaces the file's to the same name; missing imports go after the
    existing ones.
    """
    snippet = textwrap.dedent(snippet)
    new_tree = parse(snippet)
    if new_tree is None:
        return None
    old_tree = parse(original)
    if old_tree is None:
        # Often the file is broken by the model's own earlier edit: splice by lines instead.
        return _merge_by_lines(original, new_tree, snippet)
    new_nodes = new_tree.body
    old_guard = next((n for n in old_tree.body if _is_main_guard(n)), None)
    old_settings = {name: n for n in old_tree.body if (name := _assigned_name(n)) is not None}
    allowed = (*_DEFINITIONS, ast.Import, ast.ImportFrom)

    def rebinds(node: ast.stmt) -> bool:
        return _assigned_name(node) in old_settings

    if not new_nodes or not all(
        isinstance(n, allowed) or (old_guard and _is_main_guard(n)) or rebinds(n) for n in new_nodes
    ):
        return None
    changes = any(isinstance(n, _DEFINITIONS) or rebinds(n) for n in new_nodes)
    if not changes or (not partial and _covers(old_tree, new_nodes)):
        return None
    lines = original.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    snippet_lines = snippet.splitlines(keepends=True)
    edits: list[tuple[int, int, list[str]]] = []  # (start, end) line ranges of `lines`, replaced
    appended: list[str] = []
    for node in new_nodes:
        if old_guard is not None and _is_main_guard(node):
            edits.append(
                (old_guard.lineno - 1, old_guard.end_lineno or old_guard.lineno, _segment(snippet_lines, node))
            )
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            text = _segment(snippet_lines, node)
            if "".join(text).strip() not in original:
                edits.append((_import_insert_at(old_tree), _import_insert_at(old_tree), text))
            continue
        if (name := _assigned_name(node)) is not None:
            setting = old_settings[name]
            edits.append((setting.lineno - 1, setting.end_lineno or setting.lineno, _segment(snippet_lines, node)))
            continue
        target = _find(old_tree.body, node.name)
        if target is None:
            method_owner = _class_with_method(old_tree, node.name) if not isinstance(node, ast.ClassDef) else None
            if method_owner is not None:
                method = _find(method_owner.body, node.name)
                assert method is not None
                indent = " " * method.col_offset
                text = [indent + line if line.strip() else line for line in _segment(snippet_lines, node)]
                edits.append((_start(method), method.end_lineno or method.lineno, text))
            else:
                appended += ["\n", "\n", *_segment(snippet_lines, node)]
            continue
        if isinstance(node, ast.ClassDef) and isinstance(target, ast.ClassDef):
            edits.extend(_merge_class(target, node, snippet_lines))
        else:
            edits.append(
                (_replace_from(target, node), target.end_lineno or target.lineno, _segment(snippet_lines, node))
            )
    for start, end, text in sorted(edits, key=lambda e: e[0], reverse=True):
        lines[start:end] = text
    merged = "".join(lines).rstrip("\n") + "\n" + "".join(appended).rstrip("\n")
    merged = merged.rstrip("\n") + "\n"
    return merged if parse(merged) is not None else None


def _merge_class(old: ast.ClassDef, new: ast.ClassDef, snippet_lines: list[str]) -> list[tuple[int, int, list[str]]]:
    """Methods of `new` replace those of `old` by name; new methods go at the end of `old`."""
    old_methods = {n.name for n in old.body if isinstance(n, _DEFINITIONS)}
    new_methods = [n for n in new.body if isinstance(n, _DEFINITIONS)]
    other = [n for n in new.body if not isinstance(n, _DEFINITIONS) and not _is_docstring(n)]
    if other or not new_methods or old_methods <= {n.name for n in new_methods}:
        return [(_start(old), old.end_lineno or old.lineno, _segment(snippet_lines, new))]
    edits = []
    tail: list[str] = []
    for method in new_methods:
        target = _find(old.body, method.name)
        text = _segment(snippet_lines, method)
        if target is None:
            tail += ["\n", *text]
        else:
            edits.append((_replace_from(target, method), target.end_lineno or target.lineno, text))
    if tail:
        end = old.end_lineno or old.lineno
        edits.append((end, end, tail))
    return edits


def _assigned_name(node: ast.stmt) -> str | None:
    """The one name a top-level `PORT = 8000` (or `PORT: int = 8000`) binds, or None."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id
    return None


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _find(body: list[ast.stmt], name: str) -> Definition | None:
    return next((n for n in body if isinstance(n, _DEFINITIONS) and n.name == name), None)


def _class_with_method(tree: ast.Module, name: str) -> ast.ClassDef | None:
    owners = [n for n in tree.body if isinstance(n, ast.ClassDef) and _find(n.body, name) is not None]
    return owners[0] if len(owners) == 1 else None


def _is_main_guard(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":`, which a block holding the functions it changed often repeats."""
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Compare)
        and isinstance(node.test.left, ast.Name)
        and node.test.left.id == "__name__"
    )


def _start(node: ast.stmt) -> int:
    """The 0-based first line of a definition, decorators included."""
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)]) - 1


def _replace_from(old: ast.stmt, new: ast.stmt) -> int:
    """Where a replacement starts: a block written without decorators keeps the file's decorators."""
    return _start(old) if getattr(new, "decorator_list", None) else old.lineno - 1


def _segment(lines: list[str], node: ast.stmt) -> list[str]:
    text = lines[_start(node) : node.end_lineno]
    if text and not text[-1].endswith("\n"):
        text[-1] += "\n"
    return text


def _import_insert_at(tree: ast.Module) -> int:
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    if imports:
        return imports[-1].end_lineno or imports[-1].lineno
    first = tree.body[0] if tree.body else None
    return (first.end_lineno or 0) if first is not None and _is_docstring(first) else 0


def literal_substitution(command: str) -> tuple[str, str, bool] | None:
    """A lone `sed -i 's/OLD/NEW/[g]' FILE` read as literal text: (old, new, every occurrence).

    Small models write code into sed patterns as it stands in the file (`items[start : end]`,
    `main(argv)`), where brackets, parentheses, dots and stars are special; meant literally, such a
    pattern often matches nothing. None for anything but one plain `s` command.
    """
    try:
        words = shlex.split(without_comment_lines(command))
    except ValueError:
        return None
    scripts = [w for w in words[1:] if w.startswith("s") and len(w) > 3]
    if not words or words[0] != "sed" or len(scripts) != 1 or any(w in ("-e", "-E", "-r", "-f") for w in words):
        return None
    script = scripts[0]
    delimiter = script[1]
    if delimiter.isalnum() or delimiter in "\\\n ":
        return None
    parts = re.split(rf"(?<!\\){re.escape(delimiter)}", script[2:])
    if len(parts) != 3 or not parts[0] or set(parts[2]) - set("gI"):
        return None
    old = re.sub(r"\\(.)", r"\1", parts[0])
    # In the replacement, an unescaped & is the matched text.
    new = old.join(_unescape_replacement(piece) for piece in re.split(r"(?<!\\)&", parts[1]))
    return old, new, "g" in parts[2]


def _unescape_replacement(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def without_comment_lines(command: str) -> str:
    """`command` without its comment and blank lines."""
    return "\n".join(line for line in command.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def sed_targets(command: str) -> list[str]:
    """The files a lone `sed -i` command edits in place (empty for anything else); comment lines around
    it do not count."""
    command = without_comment_lines(command)
    if any(sep in command for sep in ("|", ";", "&&", "||", "\n", "`", "$(")):
        return []
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    if not words or words[0] != "sed" or not any(w == "-i" or w.startswith(("-i", "--in-place")) for w in words):
        return []
    files: list[str] = []
    script_given = False
    args = iter(words[1:])
    for word in args:
        if word in ("-e", "--expression", "-f", "--file"):
            next(args, None)
            script_given = True
        elif word.startswith("-"):
            continue
        elif not script_given:
            script_given = True
        else:
            files.append(word)
    return files
