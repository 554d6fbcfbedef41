"""The command a stopped session names to go on (issue 35, wording): a run resumes, a verify run (which
has no ``--resume``: each starts a new ``verify-…`` run) is the verify command again."""

from __future__ import annotations

from types import SimpleNamespace

from pytest_homefield.run.run_plugin import RunPlugin


def _plugin(run_id: str, attacks: bool = False) -> SimpleNamespace:
    plugin = SimpleNamespace(session=SimpleNamespace(run_id=run_id), settings=SimpleNamespace(attacks=attacks))
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
