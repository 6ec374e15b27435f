//! Build script of each foca build crate: the foca release this binary
//! runs, read from the crate's own lockfile, so the binary can say which target
//! it is (`foca@0.11.0`) without a second place to keep in step.

fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    let lock = std::fs::read_to_string("Cargo.lock").expect("the build crate has a Cargo.lock");
    let mut lines = lock.lines();
    let mut version = None;
    while let Some(line) = lines.next() {
        if line == "name = \"foca\"" {
            version = lines
                .next()
                .and_then(|l| l.strip_prefix("version = \""))
                .and_then(|l| l.strip_suffix('"'))
                .map(str::to_string);
            break;
        }
    }
    let version = version.expect("Cargo.lock lists foca");
    println!("cargo:rustc-env=FOCA_VERSION={version}");
}
