#!/usr/bin/env bash
# devlint's placement against accelerate's (issue 25): every fixtures/oracle/<model>/oracle.json
# is what transformers 4.48 + accelerate 1.14 computed for `device_map="auto"` on the self-written
# model package beside it (bench/record_fixture_maps.py); tests/devmap_oracle.py runs `devlint
# devmap` with the same GPUs, budgets and dtype and compares every parameter's device.
# usage: devmap_oracle.sh DEVLINT SOURCE_DIR [--verbose]
set -u
devlint=$(realpath "${1:?usage: devmap_oracle.sh DEVLINT SOURCE_DIR [--verbose]}")
cd "${2:?missing SOURCE_DIR}" || exit 2
export LC_ALL=C
python3 tests/devmap_oracle.py "$devlint" fixtures/oracle tests/data/devmap_oracle_known.txt "${@:3}"
