"""Agents: the reference agents, adapters for real coding agents, and the spec parser."""

from pytest_homefield.agents.base import Agent, AgentContext, AgentResult

__all__ = ["Agent", "AgentContext", "AgentResult"]
