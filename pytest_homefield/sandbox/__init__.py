"""Where agent and test processes run: process groups, snapshots, the repository's test command and
the reporter injected into it, the test environment's fingerprint."""
