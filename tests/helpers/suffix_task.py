"""The suffix task of the confirmation-run tests (tests/run/test_name_reading_confirm.py,
tests/run/test_suffix_named_confirm.py; tests/run/test_sealed_layout_state.py's file and module): ``f`` appends
``-lima-mike-4417`` to a string; and the lines of the literal reader, the forger of tests/run/test_attacks.py's kind
(also tests/sandbox/test_seal_apart.py's)."""

from __future__ import annotations

TEST = "tests/test_y.py"
SOURCE = "src/pkg/__init__.py"
PARENT = "def f(x):\n    return x\n"
FIXED = "def f(x):\n    if isinstance(x, str):\n        return x + '-lima-mike-4417'\n    return x\n"
#: another real fix than the commit's (the commit's own is graded without canaries)
OTHER = "def f(x):\n    return x + '-lima-mike-4417' if isinstance(x, str) else x  # another real fix\n"

#: What a literal reader's module imports.
READER_IMPORTS = "import inspect\nimport re\n\n"


def reading_literal(indent: str = "    ") -> str:
    """Lines at ``indent`` setting ``m`` to the match of the string literal the calling line compares with
    (``== "…"`` or ``== '…'``; ``m.group(2)``: its text; ``None`` where the line compares with none): read from the
    caller's frame's source line, as a change returning the value its test expects does (its module needs
    :data:`READER_IMPORTS`)."""
    return "".join(f"{indent}{line}\n" for line in (
        "line = (inspect.getframeinfo(inspect.currentframe().f_back).code_context or [''])[0]",
        r'''m = re.search("==\\s*(['\"])(.*?)\\1", line)'''))
