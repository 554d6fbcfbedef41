#!/usr/bin/env bash
# Install the real Claude Code CLI (`@anthropic-ai/claude-code` from npm) into a local folder and
# print the path of its binary on stdout (nothing else goes to stdout).
#
#   bash .ci/install-claude.sh            # -> .ci/node/node_modules/.bin/claude
#   HOMEFIELD_CLAUDE_VERSION=2.1.328 HOMEFIELD_NODE_PREFIX=/tmp/x bash .ci/install-claude.sh
#
# The claude adapter's tests find the binary through $HOMEFIELD_CLAUDE_BIN or this folder; they are
# skipped (not failed) when neither holds one. Exit status: 0 with a path printed, 1 when npm is
# missing or the install failed (its log goes to stderr).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
prefix="${HOMEFIELD_NODE_PREFIX:-$here/node}"
version="${HOMEFIELD_CLAUDE_VERSION:-2.1.328}"
bin="$prefix/node_modules/.bin/claude"

if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "^${version//./\\.}"; then
    echo "$bin"
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "install-claude: npm not found" >&2
    exit 1
fi
mkdir -p "$prefix"
[ -f "$prefix/package.json" ] || echo '{"name": "homefield-ci-node", "private": true}' > "$prefix/package.json"
npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$version" 1>&2
if ! "$bin" --version >/dev/null 2>&1; then
    echo "install-claude: $bin does not run" >&2
    exit 1
fi
echo "$bin"
