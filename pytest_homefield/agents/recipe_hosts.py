"""The hosts each recipe's client calls (docs/contracts.md §9): under ``--sandbox-network allowlist``
(the default) the only ones it reaches, with ``--allow-host``'s. Sources: the clients' own
documentation of their endpoints and /work/shared/reference/agent-clients.md."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["RECIPE_HOSTS"]


def _aider_hosts(env: Mapping[str, str]) -> list[str]:
    """aider (litellm) calls the provider of its model: every provider whose key the attempt passes,
    ``OPENAI_API_BASE`` instead of api.openai.com when set."""
    hosts = [env["OPENAI_API_BASE"]] if env.get("OPENAI_API_BASE") else (
        ["api.openai.com:443"] if env.get("OPENAI_API_KEY") else [])
    for var, host in (("ANTHROPIC_API_KEY", "api.anthropic.com:443"),
                      ("GEMINI_API_KEY", "generativelanguage.googleapis.com:443"),
                      ("OPENROUTER_API_KEY", "openrouter.ai:443"), ("DEEPSEEK_API_KEY", "api.deepseek.com:443")):
        if env.get(var):
            hosts.append(host)
    return hosts or ["api.openai.com:443"]


def _codex_hosts(env: Mapping[str, str]) -> list[str]:
    """codex calls the OpenAI API, or with a ChatGPT login (``auth.json``) chatgpt.com and the token
    refresh at auth.openai.com, and every base URL its ``config.toml`` names (``$CODEX_HOME``, else
    ``~/.codex``: ``openai_base_url`` and ``model_providers.*.base_url``, a local model server)."""
    hosts = ["api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443"]
    home = env.get("CODEX_HOME") or (str(Path(env["HOME"]) / ".codex") if env.get("HOME") else "")
    if sys.version_info >= (3, 11):  # only for a codex recipe: not at every plugin import (issue 35)
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    try:
        config = tomllib.loads((Path(home) / "config.toml").read_text()) if home else {}
    except (OSError, ValueError):
        config = {}
    urls = [config.get("openai_base_url")]
    providers = config.get("model_providers")
    if isinstance(providers, dict):
        urls += [p.get("base_url") for p in providers.values() if isinstance(p, dict)]
    return hosts + [u for u in urls if isinstance(u, str) and u]


def _gemini_hosts(env: Mapping[str, str]) -> list[str]:
    """gemini calls ``GOOGLE_GEMINI_BASE_URL`` when set, else the Gemini API; with Vertex AI
    (``GOOGLE_GENAI_USE_VERTEXAI``) the location's endpoint; with a Google login the Code Assist API
    and the OAuth token endpoint."""
    if env.get("GOOGLE_GEMINI_BASE_URL"):
        return [env["GOOGLE_GEMINI_BASE_URL"]]
    hosts = ["generativelanguage.googleapis.com:443", "cloudcode-pa.googleapis.com:443",
             "oauth2.googleapis.com:443"]
    if env.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true"):
        hosts.append(f"{env.get('GOOGLE_CLOUD_LOCATION') or 'us-central1'}-aiplatform.googleapis.com:443")
    return hosts


#: Per client executable: the hosts it calls, given the attempt's environment (its provider; under
#: ``--sandbox-network allowlist`` the only ones it reaches, with ``--allow-host``'s).
RECIPE_HOSTS: dict[str, Callable[[Mapping[str, str]], list[str]]] = {
    "aider": _aider_hosts, "codex": _codex_hosts, "gemini": _gemini_hosts}
