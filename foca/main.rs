//! The faultline command line with the foca model built in, for the foca
//! release this build crate pins (see scripts/target-release.rs).

fn main() -> std::process::ExitCode {
    faultline_foca::main(env!("TARGET_RELEASE"))
}
