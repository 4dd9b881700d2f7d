#!/usr/bin/env bash
# Build agentcli's default Docker sandbox image unless it is already up to date; prints the tag.
# Without a registry (or with --offline) the base is made with debootstrap, which needs root.
# Extra arguments go to `agentcli sandbox build` (--offline, --force, --verbose).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python -m agentcli sandbox build "$@"
