//! Shell completions and man pages, generated from the clap definitions in
//! [`crate::cli`] (so they cannot drift from the real flags): `faultline
//! completions bash|zsh|fish|elvish|powershell` and `faultline man [--out-dir DIR]`.

use crate::cli::{Cli, EXIT_BAD_INPUT, EXIT_OK};
use clap::CommandFactory;
use std::io::Write;
use std::path::Path;

/// Print the completion script for `shell` to stdout.
pub fn completions(shell: clap_complete::Shell) -> u8 {
    let mut cmd = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "faultline", &mut script);
    write_stdout(&script)
}

/// The man page of `faultline` (section 1), and with `out_dir` one page per
/// subcommand as well (`faultline-sweep.1`, ...), written there.
pub fn man(out_dir: Option<&Path>) -> u8 {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let Some(dir) = out_dir else {
        let mut page = Vec::new();
        return match clap_mangen::Man::new(cmd).render(&mut page) {
            Ok(()) => write_stdout(&page),
            Err(e) => {
                eprintln!("error: rendering the man page: {e}");
                EXIT_BAD_INPUT
            }
        };
    };
    let mut pages = vec![cmd.clone()];
    pages.extend(cmd.get_subcommands().filter(|c| !c.is_hide_set()).cloned());
    for page in pages {
        let man = clap_mangen::Man::new(page);
        let path = dir.join(man.get_filename());
        let mut roff = Vec::new();
        let written = man
            .render(&mut roff)
            .and_then(|()| crate::report::atomic_write(&path, &roff));
        if let Err(e) = written {
            eprintln!("error: writing {}: {e}", path.display());
            return EXIT_BAD_INPUT;
        }
        println!("wrote {}", path.display());
    }
    EXIT_OK
}

fn write_stdout(bytes: &[u8]) -> u8 {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("error: writing to stdout: {e}");
            EXIT_BAD_INPUT
        }
    }
}
