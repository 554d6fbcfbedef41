"""The light option table (:mod:`pytest_homefield.settings_table`, issue lazy29): what it declares without
importing the agents or the sandbox."""

from __future__ import annotations

import pytest

from pytest_homefield.agents.base import OPENAI_MAX_TOKENS as AGENTS_MAX_TOKENS
from pytest_homefield.settings_table import OPENAI_MAX_TOKENS, SETTINGS, _kind


def test_max_tokens_default_is_the_agents_default() -> None:
    """The table keeps its own copy of the agents' ``max_tokens`` default (it imports no agent code): the two
    agree, and it is ``--homefield-max-tokens``'s default."""
    assert OPENAI_MAX_TOKENS == AGENTS_MAX_TOKENS
    (decl,) = [s for s in SETTINGS if s.name == "max_tokens"]
    assert decl.default == AGENTS_MAX_TOKENS and str(AGENTS_MAX_TOKENS) in decl.help


@pytest.mark.parametrize(("annotation", "kind"), [
    ("int", ("int", False)), ("int | None", ("int", True)), ("None | float", ("float", True)),
    ("list[str]", ("list", False)), ("str|None", ("str", True)), ("bool", ("bool", False)),
])
def test_a_settings_annotation_is_read_from_its_text(annotation: str, kind: tuple[str, bool]) -> None:
    assert _kind(annotation) == kind


@pytest.mark.parametrize("annotation", ["tuple[ServiceSpec, ...]", "int | str", "list[int]", "Path", "None",
                                        "Optional[int]", "dict[str, Any]"])
def test_any_other_annotation_is_refused(annotation: str) -> None:
    with pytest.raises(TypeError, match="a setting must be str, int, float, bool or list"):
        _kind(annotation)


def test_only_declared_fields_are_settings() -> None:
    """``root``, ``agent_defs``, ``prices`` and ``services`` are fields, not settings (no flag, no yml key of
    their own): the table never reads their annotations (``services`` names a sandbox type)."""
    names = {s.name for s in SETTINGS}
    assert not {"root", "agent_defs", "prices", "services"} & names
    assert {"since", "max_tokens", "agents", "adaptive_margin"} <= names


def test_an_option_is_spelled_for_the_front_end_in_use() -> None:
    """ux65: a message said ``--attempts 1`` to a user of ``pytest --homefield``, whose option is
    ``--homefield-attempts``. One helper names an option for the front end in use; a flag no setting has raises."""
    from pytest_homefield.settings_table import front_end, option, spelled_for

    assert front_end() == "pytest" and option("attempts") == "--homefield-attempts"
    with spelled_for("cli"):
        assert (option("attempts"), option("max-tasks"), front_end()) == ("--attempts", "--max-tasks", "cli")
    assert option("max-tasks") == "--homefield-max-tasks"
    with pytest.raises(KeyError):
        option("attempt")
    with pytest.raises(ValueError):
        front_end("homefield")


def test_two_threads_in_different_front_ends_each_spell_their_own() -> None:
    """eta46: the front end in use was one module-level dict for the whole process, so a thread inside
    ``spelled_for("cli")`` made another thread, spelling for pytest at the same moment, name ``--attempts``. Each
    thread holds its block open until both are inside it (a barrier), then reads; nested blocks restore the outer."""
    import threading

    from pytest_homefield.settings_table import option, spelled_for

    inside = threading.Barrier(2, timeout=10)
    read = threading.Barrier(2, timeout=10)
    seen: dict[str, list[str]] = {}

    def spell(name: str) -> None:
        with spelled_for(name):
            inside.wait()  # both threads have set their front end
            seen[name] = [option("attempts")]
            with spelled_for("pytest" if name == "cli" else "cli"):
                seen[name].append(option("attempts"))
            seen[name].append(option("attempts"))
            read.wait()

    threads = [threading.Thread(target=spell, args=(n,)) for n in ("cli", "pytest")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"cli": ["--attempts", "--homefield-attempts", "--attempts"],
                    "pytest": ["--homefield-attempts", "--attempts", "--homefield-attempts"]}, seen
    assert option("attempts") == "--homefield-attempts"


def test_a_thread_started_by_the_process_spells_for_the_processs_front_end() -> None:
    """A thread homefield starts (the heartbeat, the twin-run pool) spells as its process: a context variable alone
    would give a new thread the default (``pytest``) under the ``homefield`` script. A block of ``spelled_for``
    stays its own thread's."""
    import threading

    from pytest_homefield.settings_table import front_end, option, spelled_for

    seen: list[str] = []
    before = front_end("cli")
    try:
        with spelled_for("pytest"):
            thread = threading.Thread(target=lambda: seen.append(option("attempts")))
            thread.start()
            thread.join()
            assert option("attempts") == "--homefield-attempts"
    finally:
        assert front_end(before) == "cli"
    assert seen == ["--attempts"] and option("attempts") == "--homefield-attempts"
