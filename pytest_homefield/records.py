"""Task and result records (docs/contracts.md §6 and §8) and the outcome vocabulary: the outcomes of an
attempt and the words of an item's skip or xfail reason, which every mode and the terminal share.

Records are plain dicts on disk (one JSON object per line); these dataclasses give them names and
types in code. ``Task.from_dict`` / ``Result.from_dict`` check every known field (presence of the
required ones, JSON type, ``schema_version`` == 1) and raise :class:`RecordError` with one line
naming the field; unknown keys are ignored. :func:`load_tasks` and :func:`load_results` add the file
and line to the message. A result's agent-written text fields (``error``, ``model``, ``agent_version``,
``suspicious_reason``) go through :func:`agent_words` (:func:`one_line`, no API-key shape) whenever a
:class:`Result` is made, read back included, so no terminal, report or page shows an agent's control characters
or an API key it printed.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield.errors import RecordError
from pytest_homefield.key_shapes import redact
from pytest_homefield.store import read_jsonl_lines

__all__ = [
    "SCHEMA_VERSION",
    "OUTCOMES",
    "SCORED_OUTCOMES",
    "UNSCORED_OUTCOMES",
    "NOT_NEEDED",
    "BUDGET_SPENT",
    "RATE_LIMITED",
    "INTERRUPTED",
    "UNSOLVED_PREFIX",
    "REJECTED_PREFIX",
    "Task",
    "Result",
    "display_subject",
    "agent_words",
    "one_line",
    "visible",
    "NAME_CHARS",
    "load_tasks",
    "load_results",
    "tasks_digest",
    "RecordError",
    "check_record",
    "check_meta",
    "split_agent_name",
    "json_type",
    "EMPTY_TREES",
    "MAX_COUNT",
    "reported_usd",
    "reported_count",
    "counts_solved",
    "counts_solved_flagged_failed",
    "flagged_solve",
]

SCHEMA_VERSION = 1
#: The largest token or turn count a record holds (a JSON reader's 64-bit integer): what an agent may report
#: (:func:`reported_count`) and where a report's sums of them stop (``report/compute.py``).
MAX_COUNT = 2**63 - 1


def reported_usd(value: Any) -> float | None:
    """A cost an agent reported (USD), as a float: a finite number >= 0 (``json`` reads ``Infinity``
    and ``NaN``, and ``1e400`` as infinity), else ``None``; never raises."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        usd = float(value)
    except OverflowError:  # an integer past a float's range
        return None
    return usd if math.isfinite(usd) and usd >= 0 else None


def reported_count(value: Any) -> int | None:
    """A token or turn count an agent reported: an integer from 0 to :data:`MAX_COUNT`, else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= MAX_COUNT else None


def counts_solved(record: Result | Mapping[str, Any]) -> bool:
    """Whether a result (a :class:`Result`, or a ``results.jsonl`` line's dict) counts as solved in a rate, a
    comparison, an ablation label or an adaptive look: its outcome ``solved``, flagged ``suspicious`` or not
    (docs/contracts.md §10). The flag is a pattern list's hint, shown beside the solve; no pattern decides a count
    (sus60: ``importlib.import_module(name)``, ``codecs.decode(s, 'unicode_escape')`` and a ``sys.modules`` alias,
    three real fixes, counted unsolved, while a forger spells past the list). A verdict that would change were
    the flagged solves counted failed (:func:`counts_solved_flagged_failed`) is held instead: ``no verdict: it
    rests on flagged solves``."""
    if isinstance(record, Result):
        return record.solved
    return record.get("outcome") == "solved"


def flagged_solve(record: Result | Mapping[str, Any]) -> bool:
    """A solve flagged ``suspicious`` (§10: counted solved, the flag shown; verdicts resting on it held)."""
    if isinstance(record, Result):
        return record.solved and record.suspicious
    return record.get("outcome") == "solved" and bool(record.get("suspicious"))


def counts_solved_flagged_failed(record: Result | Mapping[str, Any]) -> bool:
    """:func:`counts_solved` with a solve flagged ``suspicious`` counted failed: the reading a verdict must
    survive to stand (§10), and the ``--fail-if-worse-than`` gate's count of the candidate's attempts (a
    flagged solve buys no pass, as a claimed retry buys none)."""
    return counts_solved(record) and not flagged_solve(record)


#: The empty tree's ids (SHA-1, SHA-256): the ``parent`` of a task mined from a root commit by a
#: homefield that predates the ``root_commit`` drop (such tasks may still be in a ``tasks.jsonl``).
EMPTY_TREES = frozenset({
    "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
})

#: Scored outcomes of an attempt (docs/contracts.md §8), in report order.
SCORED_OUTCOMES = (
    "solved",
    "tests_failed",
    "regression",
    "empty_patch",
    "missing",
    "timeout",
    "test_timeout",
    "agent_error",
    "budget_exceeded",
    "forged",
)
#: Outcomes that are not scored: retried on resume, reported apart.
UNSCORED_OUTCOMES = ("infra", "rate_limited")
#: ``--adaptive``: an attempt its round did not need (every pair of its agent was settled at an
#: earlier look); neither scored nor retried, never a failure (docs/contracts.md §8).
NOT_NEEDED = "not_needed"
OUTCOMES = SCORED_OUTCOMES + UNSCORED_OUTCOMES + (NOT_NEEDED,)

#: Why an item made no attempt (its skip reason starts with one; docs/contracts.md §8): a run or
#: ablation stopped scheduling (budget, a provider's rate limit) or was interrupted (Ctrl-C).
BUDGET_SPENT = "budget spent"
RATE_LIMITED = "rate limited"
INTERRUPTED = "interrupted"
#: an xdist worker (a remote one: ``--tx ssh=…``) lacks an agent's client: the run stopped at its first item
CLIENT_MISSING = "client missing on worker"
#: The xfail reason of an attempt graded unsolved (``unsolved: <outcome> …``) and the skip reason of a
#: commit mining rejected (``rejected: <reason>``).
UNSOLVED_PREFIX = "unsolved: "
REJECTED_PREFIX = "rejected: "


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v  # not NaN


#: annotation text (``from __future__ import annotations``) -> (check, description)
_CHECKS: dict[str, tuple[Any, str]] = {
    "str": (lambda v: isinstance(v, str), "a string"),
    "str | None": (lambda v: v is None or isinstance(v, str), "a string or null"),
    "int": (_is_int, "an integer"),
    "int | None": (lambda v: v is None or _is_int(v), "an integer or null"),
    "float": (_is_num, "a number"),
    "float | None": (lambda v: v is None or _is_num(v), "a number or null"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "list[str]": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of strings"),
    "list[str] | None": (lambda v: v is None or (isinstance(v, list) and all(isinstance(x, str) for x in v)),
                         "a list of strings or null"),
    "dict[str, str]": (lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
                       "an object of strings"),
    "dict[str, Any]": (lambda v: isinstance(v, dict), "an object"),
    "dict[str, str] | None": (lambda v: v is None or (isinstance(v, dict) and all(isinstance(x, str) for x in
                                                                                  v.values())),
                              "an object of strings or null"),
    "dict[str, Any] | None": (lambda v: v is None or isinstance(v, dict), "an object or null"),
}


def check_record(cls: type, d: dict[str, Any]) -> None:
    """Raise :class:`RecordError` (``"field 'X' …"``) unless ``d`` is a valid ``cls`` record: every
    field without a default present, every known field of its JSON type, ``schema_version`` 1."""
    version = d.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise RecordError(f"field 'schema_version' is {version!r}; this version of homefield reads "
                          f"{SCHEMA_VERSION} only")
    for name, required, fast, check, what in _field_checks(cls):
        if name not in d:
            if required:
                raise RecordError(f"field '{name}' is missing")
            continue
        v = d[name]
        if type(v) in fast and v == v:  # the JSON types json.loads gives (NaN is not a number)
            continue
        if not check(v):
            raise RecordError(f"field '{name}' must be {what}, got {json_type(v)}")


_FIELD_CHECKS: dict[type, tuple[tuple[str, bool, frozenset[type], Any, str], ...]] = {}

#: annotation text -> the exact value types that pass its check at once (the rest go through the check)
_FAST: dict[str, frozenset[type]] = {
    "str": frozenset({str}), "str | None": frozenset({str, type(None)}), "int": frozenset({int}),
    "int | None": frozenset({int, type(None)}), "float": frozenset({int, float}),
    "float | None": frozenset({int, float, type(None)}), "bool": frozenset({bool}),
}


def _field_checks(cls: type) -> tuple[tuple[str, bool, frozenset[type], Any, str], ...]:
    """``(name, required, fast types, check, description)`` of each field of the dataclass ``cls``,
    worked out once per class (a report reads thousands of records: issue 35)."""
    got = _FIELD_CHECKS.get(cls)
    if got is None:
        got = _FIELD_CHECKS[cls] = tuple(
            (f.name, f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
             _FAST.get(str(f.type), frozenset()), *_CHECKS[str(f.type)]) for f in dataclasses.fields(cls))
    return got


_FIELD_NAMES: dict[type, frozenset[str]] = {}


def _field_names(cls: type) -> frozenset[str]:
    """The field names of the dataclass ``cls``, worked out once per class."""
    got = _FIELD_NAMES.get(cls)
    if got is None:
        got = _FIELD_NAMES[cls] = frozenset(name for name, *_ in _field_checks(cls))
    return got


def json_type(v: Any) -> str:
    """The JSON name of ``v``'s type, with a short excerpt: ``number 3``, ``string 'x'``."""
    name = {bool: "boolean", int: "number", float: "number", str: "string", list: "array",
            dict: "object", type(None): "null"}.get(type(v), type(v).__name__)
    text = repr(v)
    return f"{name} {text[:40] + '…' if len(text) > 40 else text}"


@dataclass
class Task:
    """One mined task (docs/contracts.md §6). ``id`` is ``commit[:12]`` and is never shown to an agent."""

    id: str
    commit: str
    parent: str
    committed_at: str
    authored_at: str
    mode: str
    subject: str
    message: str
    prompt: str
    source_files: list[str]
    test_files: list[str]
    test_patch: str
    gold_patch: str
    FAIL_TO_PASS: list[str]
    PASS_TO_PASS: list[str]
    excluded: dict[str, str] = field(default_factory=dict)
    test_cmd: str = "python -m pytest"
    setup_cmd: str | None = None
    env_fingerprint: str = ""
    spec_score: float = 0.0
    well_specified: bool = False
    languages: list[str] = field(default_factory=list)
    diff_lines: int = 0
    verify: dict[str, Any] = field(default_factory=dict)
    prompt_sources: dict[str, Any] | None = None
    red_by_import_error: bool = False
    #: with ``--env uv``: the commit's environment (key, how, python, extras, groups), else ``None``
    env: dict[str, Any] | None = None
    #: the ``services:`` the tests were verified with (their names; docs/contracts.md §2)
    services: list[str] = field(default_factory=list)
    #: canaries the reference fix was checked to fail at mining (``None``: mined before canaries)
    canaries: int | None = None
    #: FAIL_TO_PASS functions (``path::[Class::]name``) whose contradicted copy the reference passed:
    #: grading plants a sentinel for them instead
    canary_sentinels: list[str] = field(default_factory=list)
    #: FAIL_TO_PASS functions whose twins a test process can tell at mining's check (a test the commit
    #: left as the parent has it, sentinels only, none: not drawn past the limit; docs/contracts.md §7); ``[]`` for
    #: tasks mined before it was recorded
    canary_unprotected: list[str] = field(default_factory=list)
    #: FAIL_TO_PASS function → ``after`` / ``before``: the original's fixed place among its canary twins
    #: (the reference fix failed with its twins on the other side: a stateful test); ``None``: mined
    #: before twins (verification version 4: canaries after the original, at most 10 functions)
    canary_order: dict[str, str] | None = None
    #: tcan52: whether mining's check judged the teardown canary (tcan50, docs/contracts.md §7) on the reference fix,
    #: which failed it; ``False`` in tasks mined before it (read so: no re-mine), and where mining planted none:
    #: grading then counts a teardown canary that passed only once the reference fix's runs fail it too
    canary_teardown: bool = False
    #: hidden test ids, test names and test file paths masked out of ``prompt`` at mining
    #: (:func:`pytest_homefield.mine.prompt.mask_hidden_tests`); ``[]``: none named (or mined before)
    prompt_masked: list[str] = field(default_factory=list)
    #: the sealable sites the reference fix passed sealed at mining (``<function id>@<line>``, docs/contracts.md §7
    #: "Sealed sites"); ``None``: not checked at mining (mined before, or the check could not be made): grading
    #: checks them once per task
    sealed_sites: list[str] | None = None
    #: shape37: the version of the sealable-site rules (``seal_sites.SEAL_RULES``) mining checked ``sealed_sites``
    #: under; ``None``: not recorded (mined before shape37). Grading trusts ``sealed_sites`` only when this is the
    #: current version: a site the rules since then seal (a new shape) is in no older record
    sealed_rules: int | None = None
    #: the verification version (``mine.redgreen.VERIFY_VERSION``) the task was mined under; ``None``: mined before it
    #: was recorded (version 28 or earlier). A later rule that old tasks lack can then be told by this number alone
    #: (sand54: nothing told a version-27 task, judged for the teardown canary, from a version-26 one)
    mined_version: int | None = None
    schema_version: int = SCHEMA_VERSION

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Task:
        """Build a task from a record dict; unknown keys are ignored. Raises :class:`RecordError`
        for a missing or mistyped field (:func:`check_record`)."""
        check_record(cls, d)
        names = _field_names(cls)
        if names.issuperset(d):  # no unknown key (the usual case): no filtered copy (issue 35)
            return cls(**d)
        return cls(**{k: v for k, v in d.items() if k in names})

    def to_dict(self) -> dict[str, Any]:
        """The record as written to ``tasks.jsonl`` (``schema_version`` first)."""
        d = dataclasses.asdict(self)
        return {"schema_version": d.pop("schema_version"), **d}


#: Unicode categories :func:`visible` shows escaped: controls (ESC, NUL, BEL), format characters
#: (U+202E right-to-left override, zero-width ones), line and paragraph separators, surrogates (bytes
#: that were not UTF-8), private use and unassigned code points.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


@functools.lru_cache(maxsize=8)
def _suspect(keep: str) -> re.Pattern[str]:
    """The characters :func:`visible` looks at one by one: ASCII controls but those in ``keep``, and every
    non-ASCII character (a regular expression finds them, so ASCII text costs one scan in C)."""
    ascii_controls = "".join(chr(i) for i in range(0x20) if chr(i) not in keep)
    return re.compile(f"[{re.escape(ascii_controls)}\x7f-\U0010ffff]")


_SPACES = str.maketrans("\t\n\r\v\f", "     ")

#: Characters kept of a result's ``model`` and ``agent_version`` (a model id is a few dozen).
NAME_CHARS = 100


def visible(text: str, keep: str = "") -> str:
    """``text`` with every character of :data:`_HIDDEN_CATEGORIES` but those in ``keep`` replaced by its
    Python escape (``\\x1b``, ``\\x00``, ``\\u202e``): visible and inert in a terminal, Markdown or HTML
    (attacker9's F4: an agent's ESC sequences cleared the screen and rewrote the ranking printed above).
    Markup is left to each renderer's escaping."""
    def shown(m: re.Match[str]) -> str:
        c = m.group()
        if c in keep or unicodedata.category(c) not in _HIDDEN_CATEGORIES:
            return c
        return c.encode("unicode_escape").decode("ascii")

    return _suspect(keep).sub(shown, text)


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` as one line of :func:`visible` text: tab, newline, carriage return, vertical tab and form
    feed become a space; cut to ``limit`` characters, the last one ``…``."""
    if not text.isprintable():  # printable text (the usual case) has nothing to change
        text = visible(text.translate(_SPACES))
    if limit is not None and len(text) > limit:
        text = text[:limit - 1] + "…"
    return text


def agent_words(text: str, limit: int | None = None) -> str:
    """An agent's words as every record keeps them (docs/contracts.md §8): each API-key shape its marker
    (:func:`~pytest_homefield.key_shapes.redact`, first: a cut could leave a key's head too short to match),
    then :func:`one_line` cut to ``limit`` characters."""
    return one_line(redact(text), limit)


@dataclass
class Result:
    """One finished attempt (docs/contracts.md §8). Units: USD, tokens, seconds."""

    run_id: str
    task_id: str
    agent: str
    attempt: int
    outcome: str
    variant: str = "base"
    solved: bool = False
    scored: bool = True
    #: an unscored outcome the agent claimed (read from its own output), not one homefield established
    claimed: bool = False
    cost_usd: float | None = None
    cost_partial: bool = False
    exit_code: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    turns: int | None = None
    wall_s: float = 0.0
    test_s: float = 0.0
    #: seconds waited for the machine's phase lock before the agent's work and before its grading, and for the
    #: machine's memory budget before its sandboxes (in neither ``wall_s`` nor ``test_s``; docs/contracts.md §9)
    wait_s: float = 0.0
    #: seconds homefield spent on the attempt outside the agent, its test runs and the waits: the workspace and
    #: pristine copies, the walk and diff of the change, carrying it into the grading copy, the twin runs'
    #: copies, the clean-up (host30: 100,000 empty files cost about 87 s here and showed nowhere); 0 in records
    #: made before it
    host_s: float = 0.0
    #: the machine's 1-minute load average over the CPUs homefield may use (``proccap.load_per_cpu``), the mean
    #: of its readings at the attempt's start and end: what its seconds were measured under (verify's estimate
    #: scales by now over then); ``None`` in records made before it, read as an idle machine
    load_per_cpu: float | None = None
    model: str | None = None
    agent_version: str | None = None
    touched_tests: bool = False
    suspicious: bool = False
    suspicious_reason: str | None = None
    sandbox: str | None = None
    test_sandbox: str | None = None
    started_at: str = ""
    finished_at: str = ""
    error: str | None = None
    similarity: float | None = None
    #: outcome ``forged``: the id of the canary test that passed
    canary: str | None = None
    #: excusable canary twins the change passed exactly beside their failing originals, confirmed
    #: (docs/contracts.md §7, §10 "twin hits"); 0 in records written before
    twin_hits: int = 0
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {self.outcome!r}; expected one of {', '.join(OUTCOMES)}")
        self.solved = self.outcome == "solved"
        self.scored = self.outcome in SCORED_OUTCOMES
        # the agent's numbers, held where the record is made (``agents/base.py`` ``believable``) and again here,
        # where it is read: a record written before that check (a -2000 USD cost, a negative count) is read
        # as unknown, never summed into a report (contracts §8)
        self.cost_usd = reported_usd(self.cost_usd)
        self.input_tokens = reported_count(self.input_tokens)
        self.output_tokens = reported_count(self.output_tokens)
        self.cache_read_tokens = reported_count(self.cache_read_tokens)
        self.cache_write_tokens = reported_count(self.cache_write_tokens)
        self.turns = reported_count(self.turns)
        # the agent's words (its usage line, its client's result text, a file name it chose, a test id its
        # code reported): one line each,
        # no control character (contracts §8)
        # and no API-key shape (``key_shapes.redact``, before a cut could leave a key's head too short to match):
        # an error line is the last of the agent's stderr, which the terminal, every report, the JUnit XML and
        # results.jsonl show (ratk46: a client's "401 invalid x-api-key sk-ant-…" was in all of them)
        if self.error is not None:
            self.error = agent_words(self.error)
        if self.suspicious_reason is not None:
            self.suspicious_reason = agent_words(self.suspicious_reason)
        if self.model is not None:
            self.model = agent_words(self.model, NAME_CHARS)
        if self.agent_version is not None:
            self.agent_version = agent_words(self.agent_version, NAME_CHARS)
        if self.canary is not None:  # a test id the test process reported (atk14 A5)
            self.canary = one_line(self.canary, 500)

    @property
    def key(self) -> tuple[str, str, int, str]:
        """(task_id, agent, attempt, variant): a repeated key means a retry; the last line wins."""
        return (self.task_id, self.agent, self.attempt, self.variant)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Result:
        """Build a result from a record dict; unknown keys are ignored. Raises
        :class:`RecordError` for a missing or mistyped field or an unknown outcome."""
        check_record(cls, d)
        if d["outcome"] not in OUTCOMES:
            raise RecordError(f"field 'outcome' is {d['outcome']!r}; expected one of {', '.join(OUTCOMES)}")
        if d["attempt"] < 1:
            raise RecordError(f"field 'attempt' must be at least 1, got {d['attempt']}")
        names = _field_names(cls)
        if cls is not Result or not names.issuperset(d):
            return cls(**{k: v for k, v in d.items() if k in names})
        # no unknown key (the usual case): the instance's fields set at once, in field order, as __init__
        # would set them (the 31-keyword call was ~8 % of a 1,000-task report, issue 35)
        result = object.__new__(cls)
        values = _RESULT_DEFAULTS.copy()
        values.update(d)
        result.__dict__.update(values)
        result.__post_init__()
        return result

    def to_dict(self) -> dict[str, Any]:
        """The record as appended to ``results.jsonl`` (``schema_version`` first)."""
        d = dataclasses.asdict(self)
        return {"schema_version": d.pop("schema_version"), **d}


#: Every field of :class:`Result` in order, with its default (``None`` for the required ones, which
#: :func:`check_record` has found in the record): what :meth:`Result.from_dict` starts an instance from.
_RESULT_DEFAULTS: dict[str, Any] = {
    f.name: None if f.default is dataclasses.MISSING else f.default for f in dataclasses.fields(Result)}


def load_tasks(path: Path) -> list[Task]:
    """All task records of a ``tasks.jsonl`` file, in file order (newest commit first).

    Every line must be a valid task (tasks.jsonl is written whole, atomically: nothing in it may be
    torn). Raises :class:`RecordError` ``"<path>: line N: field 'X' …"`` for the first bad line, and
    for two records with one id."""
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for n, d in read_jsonl_lines(path, strict=True):
        try:
            task = Task.from_dict(d)
        except RecordError as exc:
            raise RecordError(f"{path}: line {n}: {exc}") from None
        if task.id in seen:
            raise RecordError(f"{path}: line {n}: field 'id': task {task.id!r} is also on line {seen[task.id]}")
        seen[task.id] = n
        tasks.append(task)
    return tasks


def load_results(path: Path) -> list[Result]:
    """All result records of a ``results.jsonl`` file in file order (every line, retries included).

    A line that is not valid JSON is a torn write (docs/contracts.md §4) and is skipped; any other
    bad line raises :class:`RecordError` ``"<path>: line N: field 'X' …"``."""
    out: list[Result] = []
    for n, d in read_jsonl_lines(path):
        try:
            out.append(Result.from_dict(d))
        except RecordError as exc:
            raise RecordError(f"{path}: line {n}: {exc}") from None
    return out


#: ``meta.json`` fields (docs/contracts.md §4) that a resume and a report rely on.
_META_FIELDS: dict[str, str] = {"run_id": "str", "created_at": "str", "attempts": "int", "tasks_digest": "str",
                                "task_ids": "list[str]"}


def check_meta(meta: Any, fields: dict[str, str] | None = None) -> None:
    """Raise :class:`RecordError` (``"field 'X' …"``) unless ``meta`` is a valid ``meta.json``
    document: an object with ``schema_version`` 1, ``fields`` (default :data:`_META_FIELDS`: what
    a resume needs; a report needs none of them) of their types, and ``agents`` a list of
    ``{"name": str, "spec": str, …}``."""
    if not isinstance(meta, dict):
        raise RecordError(f"must be a JSON object, got {json_type(meta)}")
    version = meta.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise RecordError(f"field 'schema_version' is {version!r}; this version of homefield reads "
                          f"{SCHEMA_VERSION} only")
    for name, kind in (_META_FIELDS if fields is None else fields).items():
        if name not in meta:
            raise RecordError(f"field '{name}' is missing")
        check, what = _CHECKS[kind]
        if not check(meta[name]):
            raise RecordError(f"field '{name}' must be {what}, got {json_type(meta[name])}")
    if fields is not None and "agents" not in meta:
        return  # a partial check (the fields asked for): agents are checked where a run is resumed
    agents = meta.get("agents")
    if not isinstance(agents, list) or not all(
            isinstance(a, dict) and isinstance(a.get("name"), str) and isinstance(a.get("spec"), str) for a in agents):
        raise RecordError(f"field 'agents' must be a list of {{name, spec}} objects, got {json_type(agents)}")


def split_agent_name(spec: str) -> tuple[str | None, str]:
    """``(NAME, SPEC)`` of an ``--agent`` value ``spec`` (``NAME=SPEC``, the two stripped), ``(None, spec stripped)``
    without a name: a leading ``NAME=`` only when its ``=`` comes before the first ``:``, since an ``=`` after the
    kind's ``:`` belongs to the argument (ratk54: ``cmd:python agent.py --context=oracle``). The one rule of the
    registry's parser (``agents/registry.parse_spec``, which checks the name) and the report's reading of a spec's
    kind (``report/family.spec_kind``, which may not import the agent kinds); ``NAME`` may be empty."""
    text = spec.strip()
    eq, colon = text.find("="), text.find(":")
    if eq >= 0 and (colon < 0 or eq < colon):
        return text[:eq].strip(), text[eq + 1:].strip()
    return None, text


def tasks_digest(path: Path) -> str:
    """SHA-256 (first 16 hex digits) of the tasks file's bytes; ``""`` when it does not exist.

    A run's ``meta.json`` stores it so that ``--homefield-resume`` can refuse a changed task set.
    """
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except FileNotFoundError:
        return ""


def display_subject(task: Task) -> str:
    """What a report calls a task: its cleaned title, the first line of its prompt (the subject
    without PR/issue references, URLs and shas: ``Fix rounding (closes #822)`` → ``Fix rounding``;
    for a merge commit, whose generated subject "Merge pull request #12 from a/b" says nothing, the PR
    title). The raw subject when the prompt is empty."""
    first = next((ln.strip() for ln in task.prompt.splitlines() if ln.strip()), "")
    return first or task.subject
