#!/usr/bin/env bash
# Integration tests: the real BPF programs trace the real programs of
# tests/apps (built by `make apps`); needs root (CAP_BPF, CAP_PERFMON). Each
# case is a file tests/integ/cases/NAME.case (format: tests/integ/cases/README.md)
# run by tests/integ/run.py, which prints one PASS/FAIL line per case and ends
# with "N passed, N failed".
#   tests/integ/run.sh [-v|--list|--count] [--retries N] [NAME|GLOB|FILE.case ...]
exec python3 "$(dirname "$0")/run.py" "$@"
