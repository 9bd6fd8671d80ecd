#!/usr/bin/env bash
# Builds the Rust test programs in tests/apps offline from Debian's crate sources.
set -euo pipefail
export PATH="$HOME/.cargo/bin:$PATH"
cd "$(dirname "$0")/../tests/apps"
cargo build --release --quiet
