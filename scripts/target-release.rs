//! Build script of every target build crate (`openraft/alpha25`, `foca/v0_12`,
//! ...): the release of the library under test that this binary runs, read from
//! the crate's own lockfile, so the binary can say which target it is
//! (`openraft@0.10.0-alpha.24`, `foca@0.11.0`) without a second place to keep in
//! step. The library is named by the crate's own name, `faultline-LIBRARY-BUILD`;
//! the release reaches the binary as `TARGET_RELEASE`.

fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    let crate_name = std::env::var("CARGO_PKG_NAME").expect("cargo names the crate");
    let library = crate_name
        .strip_prefix("faultline-")
        .and_then(|rest| rest.split('-').next())
        .unwrap_or_else(|| panic!("a target build crate is named faultline-LIBRARY-BUILD, not {crate_name}"));
    let lock = std::fs::read_to_string("Cargo.lock").expect("the build crate has a Cargo.lock");
    let mut lines = lock.lines();
    let mut version = None;
    let wanted = format!("name = \"{library}\"");
    while let Some(line) = lines.next() {
        if line == wanted {
            version = lines
                .next()
                .and_then(|l| l.strip_prefix("version = \""))
                .and_then(|l| l.strip_suffix('"'))
                .map(str::to_string);
            break;
        }
    }
    let version = version.unwrap_or_else(|| panic!("Cargo.lock lists {library}"));
    println!("cargo:rustc-env=TARGET_RELEASE={version}");
}
