"""Scripted model API servers on 127.0.0.1 for driving real agent clients in tests.

:mod:`.server` holds the threaded server and the script format; one module per wire protocol
renders turns (:mod:`.anthropic`, :mod:`.openai_chat`, :mod:`.openai_responses`, :mod:`.gemini`).
"""

from .anthropic import anthropic_server
from .gemini import gemini_server
from .openai_chat import openai_chat_server
from .openai_responses import openai_responses_server
from .server import Reply, Request, ScriptedServer

__all__ = [
    "Reply",
    "Request",
    "ScriptedServer",
    "anthropic_server",
    "gemini_server",
    "openai_chat_server",
    "openai_responses_server",
]
