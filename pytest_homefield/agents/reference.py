"""Reference agents: ``oracle`` (applies the real fix), ``noop`` (changes nothing) and ``sim:P``
(applies the real fix with probability P; marked simulated in every output). Asked a plain prompt
(the memorization probe), ``oracle`` answers with the gold added lines and ``noop`` with nothing.

They bound every comparison: oracle solving a task proves the task and environment are sound; noop
solving one proves the task is broken. ``sim:P`` lets the statistics and report be exercised with a
known true pass rate, without any model.
"""

from __future__ import annotations

import random
import time
import zlib

from pytest_homefield import __version__
from pytest_homefield.agents.base import AgentContext, AgentResult, Capable, Completion
from pytest_homefield.capabilities import Capabilities
from pytest_homefield.errors import PatchError
from pytest_homefield.sandbox.snapshot import apply_patch
from pytest_homefield.spelling import spell

__all__ = ["ORACLE", "NOOP", "SIM", "OracleAgent", "NoopAgent", "SimAgent", "sim_seed", "same_change_line"]

#: In-process, no model: they spend nothing and remember nothing. ``sim:P`` is marked simulated.
ORACLE = NOOP = Capabilities(modelless=True)
SIM = Capabilities(modelless=True, simulated=True)


class _Reference(Capable):
    def __init__(self, *, name: str, spec: str) -> None:
        self.name = name
        self.spec = spec

    def version(self) -> str | None:
        return f"pytest-homefield {__version__}"


class OracleAgent(_Reference):
    """Applies ``ctx.gold_patch`` (the commit's non-test changes). Cost 0 USD."""

    capabilities = ORACLE

    def run(self, ctx: AgentContext) -> AgentResult:
        try:
            apply_patch(ctx.workspace, ctx.gold_patch)
        except PatchError as exc:
            return AgentResult(outcome="infra", exit_code=1, cost_usd=0.0, error=f"gold patch: {exc}",
                               established=True)
        return AgentResult(exit_code=0, cost_usd=0.0)

    def complete(self, prompt: str, *, timeout_s: float, gold_answer: str = "") -> Completion:
        """Answers with ``gold_answer`` (the gold added lines): a perfect memoriser. Cost 0 USD."""
        return Completion(text=gold_answer, cost_usd=0.0)


class NoopAgent(_Reference):
    """Changes nothing (its attempts are ``empty_patch``). Cost 0 USD."""

    capabilities = NOOP

    def run(self, ctx: AgentContext) -> AgentResult:
        return AgentResult(exit_code=0, cost_usd=0.0)

    def complete(self, prompt: str, *, timeout_s: float, gold_answer: str = "") -> Completion:
        """Answers nothing. Cost 0 USD."""
        return Completion(text="", cost_usd=0.0)


def sim_seed(task_key: str, agent: str, attempt: int) -> int:
    """Deterministic seed from (task, agent, attempt): crc32, never Python's salted ``hash()``."""
    return zlib.crc32(f"{task_key}\0{agent}\0{attempt}".encode())


class SimAgent(_Reference):
    """Applies the gold patch with probability ``p`` (0..1), seeded by ``ctx.seed``.

    Simulated (:data:`SIM`): its numbers are a simulation, never a real agent's.
    """

    capabilities = SIM

    def __init__(self, *, name: str, spec: str, p: float, delay_s: float = 0.0) -> None:
        super().__init__(name=name, spec=spec)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"sim:P needs 0 <= P <= 1, got {p}")
        self.p = p
        self.delay_s = delay_s

    def run(self, ctx: AgentContext) -> AgentResult:
        rng = random.Random(ctx.seed)
        if self.delay_s:
            time.sleep(self.delay_s)
        if rng.random() < self.p:
            try:
                apply_patch(ctx.workspace, ctx.gold_patch)
            except PatchError as exc:
                return AgentResult(outcome="infra", exit_code=1, cost_usd=0.0, error=f"gold patch: {exc}",
                                   established=True)
        return AgentResult(exit_code=0, cost_usd=0.0)


def same_change_line(names: list[str], attempts: int) -> str | None:
    """One line for a run's header (or ``homefield plan``) whose every agent makes the same change on every
    attempt (``names``: its ``oracle`` and ``noop`` agents) at ``attempts`` (``--attempts``) above 1: the attempts
    after the first only grade that change again, so ``--attempts 1`` is the sanity check (nu32: more-itertools'
    oracle and noop at the default 3 attempts had an ETA of 2 h 32 m, 9 m 18 s with one), the option spelled as
    the front end in use spells it (:func:`~pytest_homefield.spelling.spell`: ``--homefield-attempts`` under
    pytest, ux65). ``None`` at 1 attempt or without names."""
    if attempts <= 1 or not names:
        return None
    verb = "makes" if len(names) == 1 else "make"  # nu35: "Oracle make the same change" in a plan of oracle alone
    return (f"{' and '.join(names)} {verb} the same change on every attempt: the {attempts - 1} after the first "
            f"only repeat it (a flaky test alone tells them apart); {spell('attempts')} 1 is the sanity check at "
            f"1/{attempts} of the grading time")
