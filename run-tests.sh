#!/usr/bin/env bash
# The project's one test command: install test dependencies, build, run the
# Rust tests, then every Python test under tests/ (compat, diff, ...).
# Exits non-zero as soon as any step fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

section() { printf '\n==== %s ====\n' "$*"; }

section "install test dependencies (tests/compat/install.sh)"
tests/compat/install.sh

section "cargo build --release"
cargo build --release

section "cargo test --workspace --release"
cargo test --workspace --release

section "pytest tests/ (target: ${VOLLEY_TEST_TARGET:-volley})"
.venv/bin/pytest -q tests/
