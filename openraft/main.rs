//! The faultline command line with the openraft model built in, for the openraft
//! release this build crate pins (see scripts/target-release.rs).

fn main() -> std::process::ExitCode {
    faultline_openraft::main(env!("TARGET_RELEASE"))
}
