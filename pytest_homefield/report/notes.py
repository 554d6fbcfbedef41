"""The report's notes: plain sentences a reader must know before trusting its numbers (unscored
attempts, agents that only errored, missing costs, unequal attempts, unknown tasks, suspicious
solved attempts, tasks left out as memorized or flaky). :mod:`.compute` decides which apply."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import cast

from pytest_homefield.report.family import COST_REPORTED
from pytest_homefield.report.model import AgentSummary, Memorization
from pytest_homefield.settings_table import option
from pytest_homefield.terminal.progress import plural

__all__ = ["agent_notes", "flaky", "forged", "found_flaky", "memorized", "other_variants", "outside_plan",
           "suspicious_solved", "unknown_tasks", "unscored"]


def other_variants(n: int) -> str:
    """``n`` results of ablation variants in the run folders were not reported."""
    return f"{n} result(s) of ablation variants ignored (only `base` is reported)."


def outside_plan(reasons: Sequence[str]) -> str:
    """Results left out as outside their run's plan, with why the first one is (``homefield status`` flags them)."""
    return (f"{len(reasons)} result(s) outside their run's plan left out ({reasons[0]}): lines the run's session "
            "could not have written.")


def unknown_tasks(ids: Sequence[str]) -> str:
    """Task ``ids`` in the results but not in the tasks file (the first five named)."""
    return (f"{len(ids)} task id(s) in the results are not in the tasks file "
            f"({', '.join(ids[:5])}{', …' if len(ids) > 5 else ''}): no subject, language or gold patch.")


def unprotected(ids: Sequence[str], n_functions: int) -> str:
    """The reported tasks ``ids`` hold ``n_functions`` FAIL_TO_PASS functions whose canary twins a test
    process can tell (``canary_unprotected``, docs/contracts.md §7): sentinels only, or twins of a test the parent
    has (ref28 on more-itertools: the note named only the second cause for a new test whose assertion compares
    two calls, ``assertEqual(subfactorial(n), ilen(derangements(...)))``, and got a sentinel). Up to
    :data:`NAMED_TASKS` of them are named in the ``-k`` of the command that names the functions: ``verify
    --attacks`` grades every attack on every task it selects, about 50 gradings a task (nu56 on Suor/funcy: 950
    for the 19 tasks where 4 hold such functions, 10 graded in 13 minutes on a loaded machine)."""
    k = _select(ids)
    return (f"{len(ids)} task(s) hold {n_functions} FAIL_TO_PASS function(s) no canary guards (a sentinel only, "
            "where no expected value could be contradicted, or a test the commit left as the parent has it): "
            f"a forger that no-ops only those is not caught there (homefield verify {option('attacks', 'cli')}{k} "
            "names them).")


def order_only(ids: Sequence[str], n_functions: int) -> str:
    """otw64: solves of the tasks ``ids`` where ``n_functions`` FAIL_TO_PASS functions had the order twin alone
    (:func:`~pytest_homefield.report.runs.order_only_solves`, docs/contracts.md §7): no value twin the parent's code
    does not tell (every value draw told, 9406f9092f78 on the demo; or the expected value beside the test, a hidden
    data file, module constant or fixture, gatk64), so a change returning the expected value is solved as a real fix
    is."""
    k = _select(ids)
    return (f"{len(ids)} task(s) were solved where {n_functions} FAIL_TO_PASS function(s) had only the order twin (the "
            "parent's code tells every value twin, or the expected value is beside the test, in a data file, module or "
            "fixture): a change that returns the expected value without fixing anything is solved there too "
            f"(homefield verify {option('attacks', 'cli')}{k} names them).")


#: The most task ids :func:`unprotected` and :func:`order_only` name in their ``-k``.
NAMED_TASKS = 5


def _select(ids: Sequence[str]) -> str:
    """`` -k 'a or b'`` selecting the task ``ids`` for ``verify --attacks``, ``""`` past :data:`NAMED_TASKS` of them."""
    return f" -k '{' or '.join(ids)}'" if len(ids) <= NAMED_TASKS else ""


def unscored(counts: Counter[str]) -> str:
    """The unscored attempts over every agent, by outcome."""
    parts = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    return (f"{sum(counts.values())} unscored attempt(s) ({parts}) are reported apart and left out of "
            "every rate; resuming the run retries them.")


def partial_tasks(ids: list[str]) -> str:
    """The tasks left out of every rate because some attempt on them (any agent's) was not scored."""
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    return (f"{len(ids)} task(s) with an unscored attempt are left out of the ranking and every rate, for "
            f"every agent, until their attempts are all scored: {shown}.")


def agent_notes(a: AgentSummary) -> list[str]:
    """Plain-language caveats about one agent's numbers."""
    name = a.name
    notes: list[str] = []
    if not a.attempts:
        notes.append(f"{name}: no attempt recorded.")
    elif not a.scored:
        notes.append(f"{name}: no scored attempt; nothing about it can be compared.")
    elif a.scored and a.outcomes.get("agent_error", 0) == a.scored:
        first = f" First error: {a.errors[0][0]}" if a.errors else ""
        notes.append(f"{name}: every scored attempt ended in agent_error ({a.scored}).{first}")
    if a.simulated:
        notes.append(f"{name} is simulated ({a.spec or 'sim'}): its results are not a real agent's.")
    if a.hinted:
        notes.append(f"{name} is hinted: it was told which files the reference fix touched.")
    apt = a.attempts_per_task
    if apt and apt[0] != apt[1]:
        notes.append(
            f"{name}: {apt[0]}–{apt[1]} scored attempts per task; pass@k and pass^k shown for k ≤ {apt[0]}, "
            "pass@1 weights every task equally."
        )
    if a.cost_missing and a.cost_usd is not None:
        notes.append(f"{name}: {a.cost_missing} of {a.attempts} attempt(s) reported no cost; the total understates.")
    if a.cost_partial:
        notes.append(f"{name}: the cost includes estimates from interrupted attempts (marked ~).")
    if a.cost_reported:  # atk23: a cmd: agent claiming $0 won the ranking's cost tie-break
        notes.append(f"{name}: its cost is {COST_REPORTED} (its own output, which homefield cannot check), not "
                     "measured by homefield; it breaks no tie in the ranking.")
    return notes


def suspicious_solved(name: str, n: int) -> str:
    """``n`` of the agent's attempts were scored solved but flagged suspicious."""
    return (f"{name}: {n} attempt(s) scored solved but flagged suspicious are counted as solved (the flag is a "
            "pattern list's hint); a verdict that counting them failed would change is withheld; review them "
            "(flagged attempts, diff.patch).")


def retried_at_its_word(name: str, n: int, claims: int, solved_again: int, solved: int,
                        strict: float | None, cut: int = 0) -> str:
    """``n`` of the agent's scored attempts were tried again after ``claims`` claims of its own (a rate limit,
    an outage its output reported: unscored at its word, docs/contracts.md §8); ``solved_again`` of its
    ``solved`` attempts came on such a retry; ``strict``: its pass@1 (fraction) with those ``n`` attempts
    counted as failed; ``cut``: tries of them that an interrupted session cut short (no result line, made
    again by ``--resume``: atk23 F3)."""
    counted = "" if strict is None else f" Counting them as failed, its pass@1 is {round(100 * strict)}%."
    if cut:
        return (f"{name}: {plural(n, 'attempt')} {'was' if n == 1 else 'were'} tried again after "
                f"{plural(claims, 'claim')} of its own (a rate limit or an outage) and {plural(cut, 'try', 'tries')} "
                f"an interrupted session cut short (no result, made again by {option('resume')}); "
                f"{solved_again} of its {plural(solved, 'solved attempt')} came on such a retry. An agent that "
                "hangs on what it misses has mostly those cut, so its pass@1 may be that of several tries."
                f"{counted} A comparison whose verdict rests on these retries gives none.")
    return (f"{name}: {plural(n, 'attempt')} {'was' if n == 1 else 'were'} tried again after "
            f"{plural(claims, 'claim')} of its own (a rate limit or an outage its output reported, which "
            f"homefield cannot check); {solved_again} of its {plural(solved, 'solved attempt')} came on such "
            f"a retry. Each claim buys an attempt another try (up to {option('max-retries')}), so its pass@1 may be "
            f"that of several tries.{counted} A comparison whose verdict rests on these claims gives none.")


def twin_hits(name: str, n: int, flipped: int, strict: float | None) -> str:
    """``n`` of the agent's scored attempts passed an excusable canary twin exactly beside its failing original
    (confirmed: docs/contracts.md §7); ``flipped`` of its solved attempts are counted as failed for them
    (:mod:`.picks`); ``strict``: its pass@1 (fraction) so counted."""
    counted = "" if strict is None else f" Counting them as failed, its pass@1 is {round(100 * strict)}%."
    return (f"{name}: {plural(n, 'attempt')} passed a contradicted twin of a hidden test exactly (its code gave "
            "the twin's value, beside a failing original). Honest wrong code rarely does; code that passes one "
            "version of each test by content, unable to tell which is real, does so at least as often as it is "
            f"solved by luck, so {plural(flipped, 'solved attempt')} {'is' if flipped == 1 else 'are'} counted as "
            f"failed for them.{counted} A comparison whose verdict rests on these solves gives none.")


def forged(name: str, n: int) -> str:
    """``n`` of the agent's attempts passed a canary test (outcome ``forged``, docs/contracts.md §7)."""
    return (f"{name}: {n} attempt(s) forged: a canary test (a contradicted copy of a hidden test, which a "
            "real fix fails) passed; scored, never solved; the canary is named in the flagged attempts.")


def _fmt2(x: object) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def memorized(memo: Memorization) -> str | None:
    """The tasks the runs left out as memorized (``--exclude-memorized``), with each flagging agent's
    control; ``None`` when no task was left out."""
    if not memo.excluded:
        return None
    why = "; ".join(f"{n}: {len(cast('list[str]', v['tasks']))} flagged (control {v.get('control_n')} "
                    f"{'tasks after ' + str(v['cutoff']) if v.get('cutoff') else 'mismatched pairs'}, "
                    f"95th percentile {_fmt2(v.get('control_p95'))})"
                    for n, v in memo.excluded_by.items() if v["tasks"])
    return (f"{len(memo.excluded)} task(s) were left out as memorized ({option('exclude-memorized')}: a probe "
            f"scored them above its control; {why}): {', '.join(memo.excluded)}.")


def found_flaky(ids: Sequence[tuple[str, str]]) -> str:
    """The note naming ``ids``, the PASS_TO_PASS ids (task id, test id) this report's runs recorded as flaky
    (``.homefield/flaky.jsonl`` lines of their run ids), which later runs leave out of the regression check.
    usr66 on jd/tenacity: oracle's run ended "Check the tasks: oracle solves 96%" over a timing test
    (``test_sleeps``: 2 not less than 1.1) that the run had just recorded, without a word of it."""
    return (f"this run's oracle failed {len(ids)} PASS_TO_PASS id{'s' if len(ids) != 1 else ''} while passing every "
            "FAIL_TO_PASS id, recorded as flaky in .homefield/flaky.jsonl: its regression stands here, later runs "
            f"leave {'it' if len(ids) == 1 else 'them'} out of every agent's regression check: "
            + ", ".join(f"{tid} {test}" for tid, test in ids) + ".")


def flaky(ids: Sequence[tuple[str, str]]) -> str:
    """The PASS_TO_PASS ids (task id, test id) left out of grading as flaky."""
    return (f"{len(ids)} PASS_TO_PASS id{'s' if len(ids) != 1 else ''} left out as flaky (found when "
            "grading oracle; .homefield/flaky.jsonl), for every agent: "
            + ", ".join(f"{tid} {test}" for tid, test in ids) + ".")
