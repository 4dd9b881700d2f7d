"""Names so common in a language (builtins, methods of its basic types) that a call says nothing.

`list(...)` or `.append(...)` in a Python file is not a use of some project class that happens
to define `list` or `append`; counting such calls as references would hand those classes the rank
of half the repository.
"""

from __future__ import annotations

import builtins
import functools

_JS = """
Array Boolean Date Error JSON Map Math Number Object Promise RegExp Set String Symbol TypeError
apply assign bind call catch concat console entries every filter finally find findIndex forEach
from get has includes indexOf isArray join keys log map parse parseFloat parseInt pop push reduce
reject require resolve set shift slice some sort splice split stringify then toString trim
unshift values warn error info debug setTimeout clearTimeout addEventListener querySelector
length hasOwnProperty toLowerCase toUpperCase replace startsWith endsWith match test exec
"""
_TS = (
    _JS
    + """
string number boolean any unknown void never Record Partial Readonly Pick Omit Array Promise
ReturnType Required Exclude Extract NonNullable T K V
"""
)
_GO = """
append cap close complex copy delete imag len make new panic print println real recover
bool byte complex128 complex64 error float32 float64 int int16 int32 int64 int8 rune string
uint uint16 uint32 uint64 uint8 uintptr any comparable
Errorf Sprintf Printf Println Sprint Fprintf Error String Len Less Swap
"""
_RUST = """
Box Clone Copy Debug Default Err None Ok Option Result Self Some String Vec HashMap HashSet
Rc Arc RefCell Cell
as_ref as_str borrow borrow_mut clone collect contains default expect extend format from get
insert into into_iter is_empty is_none is_some iter iter_mut len map map_err new ok_or panic
println push to_owned to_string unwrap unwrap_or unwrap_or_else vec write writeln eprintln
assert assert_eq assert_ne matches todo unimplemented unreachable
"""
_JAVA = """
Boolean Character Double Exception Float Integer Iterable List Long Map Object Optional
RuntimeException Set String StringBuilder System Override Collection ArrayList HashMap HashSet
T K V E add append contains equals format get hashCode isEmpty iterator of println put remove
size stream toString valueOf
"""
_C = """
NULL abort assert atoi calloc exit fclose fopen fprintf free fwrite fread malloc memcmp memcpy
memmove memset printf puts realloc snprintf sprintf strcat strchr strcmp strcpy strdup strlen
strncmp strncpy size_t uint8_t uint16_t uint32_t uint64_t int8_t int16_t int32_t int64_t FILE bool
"""
_CPP = (
    _C
    + """
std string vector map set unordered_map unordered_set shared_ptr unique_ptr make_shared
make_unique begin end size push_back emplace_back empty find insert erase move forward cout endl
"""
)
_BASH = """
alias bg bind break builtin caller cd command compgen complete continue declare dirs disown echo
enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout
mapfile popd printf pushd pwd read readarray readonly return set shift shopt source suspend test
times trap true type typeset ulimit umask unalias unset wait
cat chmod cp cut date dirname basename find grep head ls mkdir mv rm sed sort tail tee touch tr
uniq wc xargs awk sleep HOME PATH PWD USER IFS
"""


@functools.cache
def _python() -> frozenset[str]:
    """Builtins, and the methods of the types and standard modules nearly every program uses."""
    import datetime
    import io
    import json
    import logging
    import os
    import pathlib
    import re
    import shutil
    import subprocess
    import threading

    names = {n for n in dir(builtins) if not n.startswith("_")}
    for kind in (str, bytes, list, dict, set, frozenset, tuple, int, float, object, io.TextIOWrapper, io.BytesIO):
        names.update(n for n in dir(kind) if not n.startswith("_"))
    for kind in (pathlib.Path, re.Pattern, re.Match, logging.Logger, threading.Thread, datetime.datetime):
        names.update(n for n in dir(kind) if not n.startswith("_"))
    for module in (os, os.path, subprocess, shutil, json):
        names.update(n for n in dir(module) if not n.startswith("_"))
    names.update(("assertEqual", "assertTrue", "assertFalse", "assertIn", "assertIsNone", "assertRaises"))
    return frozenset(names)


_WORDS = {
    "javascript": _JS,
    "typescript": _TS,
    "tsx": _TS,
    "go": _GO,
    "rust": _RUST,
    "java": _JAVA,
    "c": _C,
    "cpp": _CPP,
    "bash": _BASH,
}


@functools.cache
def stop_names(language: str) -> frozenset[str]:
    """The names whose references count for nothing in files of `language`."""
    if language == "python":
        return _python()
    return frozenset(_WORDS.get(language, "").split())
