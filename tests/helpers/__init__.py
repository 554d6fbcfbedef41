"""Shared test helpers: fixture repositories, attack payloads, scripted API servers."""
