"""``homefield`` subcommands that are more than a pytest session: ``verify``, ``plan``, ``demo``."""
