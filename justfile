# faultline recipes. `just --list` shows them.

# Run every bundled scenario (the main job).
run:
    cargo run --release -p faultline -- run scenarios/ --report-dir reports/

# Run the test suite.
test:
    cargo test --workspace

# Formatting and lints, as CI checks them.
check:
    cargo fmt --all -- --check
    cargo clippy --all-targets -- -D warnings

# Everything CI runs.
ci:
    .ci/run

# Validate scenario files without running them.
validate *files="scenarios/":
    cargo run --release -p faultline -- validate {{files}}

# Show models, their ops, fail points, invariants and bug keys.
list:
    cargo run --release -p faultline -- list
