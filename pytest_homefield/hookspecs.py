"""Hook specifications for extending pytest-homefield from a ``conftest.py`` or a plugin.

Registered always (even when the plugin is inert), so a conftest implementing them never fails
with "unknown hook". Implement them in the repository's root ``conftest.py`` or an installed plugin;
a conftest that must also work without pytest-homefield installed should mark its implementations
``@pytest.hookimpl(optionalhook=True)``. W = called on xdist workers (and in-process runs),
C = called on the controller only.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookspec
def pytest_homefield_agents(config: pytest.Config) -> Any:
    """(W+C) Contribute agents: return a dict ``{name: agent}`` or a list of agent objects.

    Each agent implements :class:`pytest_homefield.agents.Agent` (attributes ``name``, ``spec``,
    ``simulated``, ``hinted``; methods ``version()`` and ``run(ctx)``). What else it can do (a program
    to sandbox, commands, …) it says with a ``capabilities`` attribute
    (:class:`pytest_homefield.capabilities.Capabilities`) or the optional attributes that
    :func:`pytest_homefield.capabilities.declared_capabilities` reads. A registered agent is used
    when ``--homefield-agent NAME`` names it. Results of all implementations are merged; two agents
    with one name are a usage error.
    """


@pytest.hookspec
def pytest_homefield_modify_tasks(tasks: list[Any], config: pytest.Config) -> None:
    """(W+C) Filter or reorder the list of :class:`pytest_homefield.records.Task` in place before
    run items are collected. Must be deterministic: every xdist worker must end with the same list.
    """


@pytest.hookspec(firstresult=True)
def pytest_homefield_setup_command(task: Any, config: pytest.Config) -> str | None:
    """(W, firstresult) The shell command run once in each fresh snapshot before the agent starts and
    before tests run (e.g. create a venv and ``pip install -e .``). ``None`` = use ``setup_cmd``."""


@pytest.hookspec(firstresult=True)
def pytest_homefield_test_command(task: Any, config: pytest.Config) -> str | None:
    """(W, firstresult) The test command for grading ``task`` (a string; ``{junit}`` is replaced by a
    JUnit XML path for non-pytest runners). ``None`` = the task's recorded ``test_cmd``."""


@pytest.hookspec
def pytest_homefield_result(result: dict[str, Any], config: pytest.Config) -> None:
    """(C) Called on the controller with each finished attempt's result record (docs/contracts.md §8), e.g. to
    forward it to a dashboard."""


@pytest.hookspec(firstresult=True)
def pytest_homefield_sandbox(argv: list[str], ctx: Any) -> list[str] | None:
    """(W, firstresult) Wrap the argv of an agent's program or of a grading test run in another sandbox
    (docker, podman, a VM, macOS ``sandbox-exec``): return the argv to start instead, or ``None`` to
    leave it to ``--sandbox`` (bubblewrap or none). ``ctx`` is a
    :class:`pytest_homefield.sandbox.backends.SandboxContext`; ``ctx.purpose`` says which:

    * ``"agent"``: ``workspace``, ``tmpdir`` and ``home`` (the only folders to make writable),
      ``ro_paths`` (interpreter, client), ``env`` (the whole environment the program must get; the
      returned command is started with it too), ``network`` (the host's), ``loopback_ports``
      (``--sandbox-network loopback:…``: the host's 127.0.0.1 ports to let through when ``network``
      is false; bubblewrap relays them, a hook must do so itself or give none), ``allowed_hosts``
      (``--sandbox-network allowlist``, the default: the ``host:port`` entries the agent may reach;
      ``network`` is then true, false for an allowlist of nothing; homefield does not enforce them
      behind a hook: enforce them, or return ``None`` to leave the agent to bubblewrap's proxy),
      ``agent``. The attempt records ``sandbox: "hook"``.
    * ``"tests"``: the hidden tests of grading. ``workspace`` is the grading copy (mount it
      read-only), ``out_dir`` the one folder the run writes (outcomes, log, cache; ``tmpdir`` and
      ``home`` are it too), ``ro_paths`` (interpreters, this package, its reporter), ``env``,
      ``network`` false, ``loopback_ports`` (the ports of ``services:`` and ``--test-network``: a
      hook must let them through itself). The attempt records ``test_sandbox: "hook"``.

    See ``conftest_templates/sandbox_container.py`` (podman or docker; it wraps both).
    """
