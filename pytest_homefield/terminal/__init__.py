"""What a person watching the terminal sees while mining or running: the live status line (``progress``,
plain and testable without pytest) and the controller-side hooks that feed it (``hooks``)."""
