"""The command a stopped session names to go on (issue 35, wording): a run resumes, a verify run (which
has no ``--resume``: each starts a new ``verify-…`` run) is the verify command again."""

from __future__ import annotations

from types import SimpleNamespace

from pytest_homefield.run.run_plugin import RunPlugin


def _plugin(run_id: str, attacks: bool = False, max_tasks: int | None = None) -> SimpleNamespace:
    plugin = SimpleNamespace(session=SimpleNamespace(run_id=run_id),
                             settings=SimpleNamespace(attacks=attacks, run_max_tasks=max_tasks))
    plugin.verifying = RunPlugin.verifying.fget(plugin)  # type: ignore[attr-defined]
    plugin.resume_hint = lambda: RunPlugin.resume_hint(plugin)  # type: ignore[arg-type]
    return plugin


def test_a_run_resumes_and_a_verify_run_is_verified_again() -> None:
    run = _plugin("20261202-133426-2e5c")
    assert RunPlugin.resume_hint(run) == "homefield run --resume --run-id 20261202-133426-2e5c"  # type: ignore[arg-type]
    assert RunPlugin._continue_line(run, " (same agents and attempts)") == (  # type: ignore[arg-type]
        "Continue the run with: homefield run --resume --run-id 20261202-133426-2e5c (same agents and attempts)")
    verify = _plugin("verify-20261202-133426-2e5c")
    assert RunPlugin.resume_hint(verify) == "homefield verify"  # type: ignore[arg-type]
    assert RunPlugin._continue_line(verify, " (same agents and attempts)") == (  # type: ignore[arg-type]
        "Verify again with: homefield verify")
    assert RunPlugin.resume_hint(_plugin("verify-x", attacks=True)) == "homefield verify --attacks"  # type: ignore[arg-type]


def test_a_verify_of_the_first_n_tasks_is_verified_again_on_those() -> None:
    """nu35 on more-itertools: Ctrl-C of ``verify --attacks --max-tasks 1`` named ``homefield verify --attacks``,
    which grades every task; a run's resume keeps its own task set already."""
    verify = _plugin("verify-x", attacks=True, max_tasks=1)
    assert RunPlugin._continue_line(verify) == "Verify again with: homefield verify --attacks --max-tasks 1"  # type: ignore[arg-type]
    assert RunPlugin.resume_hint(_plugin("r1", max_tasks=3)) == "homefield run --resume --run-id r1"  # type: ignore[arg-type]


def test_a_verify_of_the_tasks_k_chose_is_verified_again_on_those() -> None:
    """nu43 on astanin/python-tabulate: Ctrl-C of ``verify --attacks -k e6a24aa6e00c -n 1`` named ``homefield verify
    --attacks``, which grades all 7 tasks (its own estimate: about 1 h 32 m for the one task under load); the
    ``-k`` and ``-m`` it ran with go into the command, quoted for the shell."""
    verify = _plugin("verify-x", attacks=True)
    verify.config = SimpleNamespace(option=SimpleNamespace(keyword="e6a24aa6e00c", markexpr=""))
    assert RunPlugin._continue_line(verify) == "Verify again with: homefield verify --attacks -k e6a24aa6e00c"  # type: ignore[arg-type]
    both = _plugin("verify-x", max_tasks=2)
    both.config = SimpleNamespace(option=SimpleNamespace(keyword="oracle and not e6a", markexpr="not slow"))
    assert RunPlugin.resume_hint(both) == (  # type: ignore[arg-type]
        "homefield verify --max-tasks 2 -k 'oracle and not e6a' -m 'not slow'")
    run = _plugin("r1")
    run.config = verify.config
    assert RunPlugin.resume_hint(run) == "homefield run --resume --run-id r1"  # type: ignore[arg-type]
