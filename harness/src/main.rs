fn main() -> std::process::ExitCode {
    faultline::cli::main()
}
