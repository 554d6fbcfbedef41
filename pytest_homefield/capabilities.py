"""What an agent can do, as one record every layer reads (docs/contracts.md §5, §8, §9).

Each built-in agent kind declares a :class:`Capabilities` once, in its own module, and names it in its
row of :data:`pytest_homefield.agents.registry.KINDS`; its agents carry it as ``capabilities``. The
sandbox choice, the attempt, ``meta.json``, the plan, the probe and the
ablation all ask :func:`capabilities_of` instead of probing an agent's attributes.

An agent from the ``pytest_homefield_agents`` hook need not know this record: it may declare the
optional attributes of the agent protocol instead (``simulated``, ``hinted``, ``process``,
``runs_commands(allow_shell)``, ``shell_known``, ``reference``), which
:func:`declared_capabilities` reads, here and nowhere else. The hosts an agent's program calls
(``provider_hosts(env)``, every built-in kind has one) are read by :func:`provider_hosts_of`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["Capabilities", "Commands", "capabilities_of", "declared_capabilities", "provider_hosts_of"]

#: Whether an agent can run arbitrary commands: never (it edits files only), only with
#: ``--allow-shell``, or always (it is a shell program).
Commands = Literal["never", "with_shell", "always"]


@dataclass(frozen=True)
class Capabilities:
    """What agents of one kind can do, and how homefield treats them.

    * ``process``: it starts a program that a sandbox can wrap (``ctx.wrap``); in-process agents
      (oracle, ``openai:``) have none, so their sandbox is ``none``;
    * ``commands``: whether it can run arbitrary commands (:data:`Commands`): under ``--sandbox auto``
      such an agent is refused where bubblewrap does not work;
    * ``shell_known``: homefield knows its tools, so the prompt says whether it may run commands
      (a ``cmd:`` program's tools are unknown: the prompt says neither);
    * ``rules_file``: the rules file its client reads at the top of the workspace (``CLAUDE.md``), where
      an ablation puts the variant (``None``: the file at the user's own path);
    * ``hinted``: it is told which files the fix touches (marked in every report);
    * ``simulated``: its results are a simulation, never a real agent's (marked in every report);
    * ``reference``: it is given the whole task record (``ctx.task``);
    * ``modelless``: no model behind it (oracle, noop, ``sim:P``): it spends exactly nothing and has
      no memory, so a plan counts 0 USD and ``--exclude-memorized`` needs no probe of it.
    """

    process: bool = False
    commands: Commands = "never"
    shell_known: bool = True
    rules_file: str | None = None
    hinted: bool = False
    simulated: bool = False
    reference: bool = False
    modelless: bool = False

    def runs_commands(self, allow_shell: bool) -> bool:
        """Whether the agent can run arbitrary commands in a session with ``--allow-shell`` = ``allow_shell``."""
        return self.commands == "always" or (self.commands == "with_shell" and allow_shell)


def declared_capabilities(agent: object) -> Capabilities:
    """The capabilities an agent without a :class:`Capabilities` declares through the optional
    attributes of the agent protocol (module docstring); every one it lacks keeps its default.
    ``runs_commands(allow_shell)`` is asked for both values of ``allow_shell``."""
    runs = getattr(agent, "runs_commands", None)
    commands: Commands = "never"
    if callable(runs):
        commands = "always" if runs(False) else ("with_shell" if runs(True) else "never")
    return Capabilities(
        process=bool(getattr(agent, "process", False)),
        commands=commands,
        shell_known=bool(getattr(agent, "shell_known", True)),
        hinted=bool(getattr(agent, "hinted", False)),
        simulated=bool(getattr(agent, "simulated", False)),
        reference=bool(getattr(agent, "reference", False)),
    )


def capabilities_of(agent: object) -> Capabilities:
    """``agent.capabilities`` when it is a :class:`Capabilities` (every built-in agent, and a wrapper
    that passes its inner agent's on), else :func:`declared_capabilities`."""
    caps = getattr(agent, "capabilities", None)
    return caps if isinstance(caps, Capabilities) else declared_capabilities(agent)


def provider_hosts_of(agent: object, env: Mapping[str, str]) -> list[str]:
    """The hosts the agent's program calls, given the attempt's environment ``env``: its
    ``provider_hosts(env)`` (URLs or ``host[:port]`` strings: the Anthropic API or
    ``ANTHROPIC_BASE_URL`` for claude, the base URL of ``openai:``, each recipe's provider), ``[]`` for
    an agent that declares none (a plain ``cmd:`` program, the reference agents). Under
    ``--sandbox-network allowlist`` these (and ``--allow-host``) are all it can reach."""
    hosts = getattr(agent, "provider_hosts", None)
    return [str(h) for h in hosts(env)] if callable(hosts) else []
