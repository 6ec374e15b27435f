//! Shell completions and man pages, generated from the clap definitions in
//! [`super::Cli`] (so they cannot drift from the real flags): `faultline
//! completions bash|zsh|fish|elvish|powershell` and `faultline man [--out-dir DIR]`;
//! and the JSON Schemas made from the library's types (`faultline schema scenario`).

use super::exit;
use super::term;
use super::Cli;
use crate::base::text::printable;
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
/// subcommand as well (`faultline-sweep.1`, ...), written there. The directory is
/// treated like a report directory: no writing through a symlink inside it.
pub fn man(out_dir: Option<&Path>) -> u8 {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let Some(dir) = out_dir else {
        let mut page = Vec::new();
        return match clap_mangen::Man::new(cmd).render(&mut page) {
            Ok(()) => write_stdout(&page),
            Err(e) => {
                term::error(format!("rendering the man page: {e}"));
                exit::BAD_INPUT
            }
        };
    };
    let mut pages = vec![cmd.clone()];
    pages.extend(cmd.get_subcommands().filter(|c| !c.is_hide_set()).cloned());
    for page in pages {
        let man = clap_mangen::Man::new(page);
        let name = man.get_filename();
        let mut roff = Vec::new();
        if let Err(e) = man.render(&mut roff) {
            term::error(format!("rendering {name}: {e}"));
            return exit::BAD_INPUT;
        }
        match crate::base::fsio::tree_write(dir, Path::new(&name), &roff) {
            Ok(path) => println!("wrote {}", printable(&path.display().to_string())),
            Err(e) => {
                term::error(e);
                return exit::BAD_INPUT;
            }
        }
    }
    exit::OK
}

/// Print a JSON Schema (`faultline schema scenario`).
pub fn schema(what: super::SchemaKind) -> u8 {
    let text = match what {
        super::SchemaKind::Scenario => crate::lang::scenario::schema::scenario_text(),
    };
    write_stdout(text.as_bytes())
}

fn write_stdout(bytes: &[u8]) -> u8 {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => exit::OK,
        Err(e) => {
            term::error(format!(
                "writing to stdout: {}",
                crate::base::fsio::io_text(&e)
            ));
            exit::BAD_INPUT
        }
    }
}
