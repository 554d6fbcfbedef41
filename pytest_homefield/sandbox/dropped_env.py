"""The variables of the caller's environment a test run never gets (``testrun.scrubbed_env``), and a service's ``env``
may not set (``services``): each would change what pytest does (``PYTEST_ADDOPTS``, ``PYTEST_PLUGINS``) or leak
the caller's session (``GIT_DIR``, ``HOMEFIELD_…``). Its own module so that both read it without importing each
other (``testrun`` imports ``services``)."""

from __future__ import annotations

__all__ = ["dropped_variable"]

#: dropped by name
_DROP_EXACT = {
    "PYTEST_ADDOPTS",
    "PYTEST_PLUGINS",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
    "PYTEST_CURRENT_TEST",
    "PYTEST_VERSION",
    "PYTEST_TIMEOUT",
    "PYTHONSTARTUP",
    "PYTHONINSPECT",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_CONFIG_PARAMETERS",
    # ops48: uv run reads the env files it names, whose PYTEST_ADDOPTS the setup's reading (``--env-file``) never sees
    "UV_ENV_FILE",
}
#: dropped by prefix
_DROP_PREFIXES = ("PYTEST_XDIST_", "COV_CORE_", "HOMEFIELD_")


def dropped_variable(name: str) -> bool:
    """Whether ``testrun.scrubbed_env`` takes variable ``name`` out of a test command's environment (it would change
    what pytest does, ``PYTEST_ADDOPTS``, or leak the caller's session); a service's ``env`` may not set it either
    (soft41: ``PYTEST_ADDOPTS`` there changed what pytest collected, and the softener, which reads the test
    command's, never saw it)."""
    return name in _DROP_EXACT or name.startswith(_DROP_PREFIXES)
