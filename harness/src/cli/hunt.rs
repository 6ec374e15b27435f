//! `faultline hunt`: the command side of the rediscovery benchmark
//! (`crate::drive::hunt`): flags in, the table out, and the exit code.

use super::exit;
use super::term;
use crate::base::text::printable;
use crate::drive::hunt::compare::KeyCompare;
use crate::drive::hunt::Hunt;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

// `faultline hunt`'s flags, as clap reads them and the command takes them.
#[derive(clap::Args, Debug)]
pub struct HuntArgs {
    /// Where to look for chaos scenarios (default: the bundled ones).
    #[arg(default_value = "scenarios")]
    pub paths: Vec<PathBuf>,
    /// Seeds for each bug key, inclusive: `1..1000`.
    #[arg(long, default_value = "1..1000")]
    pub seeds: String,
    /// Seeds for the all-fixed controls (default: the same as --seeds).
    #[arg(long)]
    pub fixed_seeds: Option<String>,
    /// Worker threads (default: the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Only this bug key (repeatable).
    #[arg(long = "key", value_name = "KEY")]
    pub keys: Vec<String>,
    /// Skip the all-fixed controls.
    #[arg(long)]
    pub no_fixed: bool,
    /// Exit 1 unless these keys are found (repeatable; `all` for every key).
    #[arg(long = "must-find", value_name = "KEY")]
    pub must_find: Vec<String>,
    /// Also write the table here (e.g. docs/exploration.md).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write only this section of --out (its own markers; the rest of the
    /// file is kept), e.g. one model's keys beside the full table.
    #[arg(long, value_name = "NAME")]
    pub section: Option<String>,
    /// Print the table as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Also measure guided search against swarm sampling: cut each key's
    /// seeds into this many blocks and run a guided search on each block's
    /// budget (0: off).
    #[arg(long, default_value_t = 0, value_name = "BLOCKS")]
    pub guided_trials: usize,
    /// Write guided finds here as scenario files (replayable with `faultline run`).
    #[arg(long, value_name = "DIR")]
    pub finds: Option<PathBuf>,
}

pub fn hunt(args: HuntArgs) -> u8 {
    let Some((seeds, fixed_seeds)) = seed_ranges(&args) else {
        return exit::BAD_INPUT;
    };
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let seeds_for_compare = seeds.clone();
    let options = crate::drive::hunt::HuntOptions {
        paths: args.paths,
        seeds,
        fixed_seeds,
        jobs,
        keys: args.keys,
        no_fixed: args.no_fixed,
        quiet: args.json,
    };
    let table = match crate::drive::hunt::hunt(&options) {
        Ok(table) => table,
        Err(crate::drive::hunt::Error::Load(failures)) => {
            term::load_failures(&failures);
            return exit::BAD_INPUT;
        }
        Err(crate::drive::hunt::Error::Other(message)) => {
            term::error(message);
            return exit::BAD_INPUT;
        }
    };
    for skipped in &table.not_run {
        term::warning(skipped.line());
    }
    let compared = if args.guided_trials > 0 {
        if !args.json {
            eprintln!(
                "hunt: guided search on {} block(s) per key",
                args.guided_trials
            );
        }
        match crate::drive::hunt::compare::compare(
            &table,
            &seeds_for_compare,
            args.guided_trials,
            jobs,
        ) {
            Ok(rows) => Some(rows),
            Err(message) => {
                // The hunt's table is already computed: print it before giving up.
                print!("{}", crate::drive::hunt::render::terminal(&table));
                term::error(message);
                return exit::BAD_INPUT;
            }
        }
    } else {
        None
    };
    print_table(args.json, &table, compared.as_deref());
    if let (Some(rows), Some(dir)) = (&compared, &args.finds) {
        match crate::drive::hunt::compare::write_finds(rows, dir) {
            Ok(paths) => eprintln!(
                "hunt: wrote {} guided find(s) under {}",
                paths.len(),
                printable(&dir.display().to_string())
            ),
            Err(e) => {
                term::error(e);
                return exit::BAD_INPUT;
            }
        }
    }
    if let Some(out) = &args.out {
        if !write_out(out, args.section.as_deref(), &table, compared.as_deref()) {
            return exit::BAD_INPUT;
        }
    }
    let false_positives = table.false_positives();
    let missed = table.missed(&args.must_find);
    if false_positives > 0 {
        eprintln!("hunt: {false_positives} failure(s) with every bug fixed: the finds are not attributable");
    }
    if !missed.is_empty() {
        eprintln!("hunt: not found: {}", missed.join(", "));
    }
    if let Some(note) = crate::report::not_run_note(&table.not_run) {
        // Arms that were asked for and not run: incomplete, never green.
        term::warning(format!("incomplete: {note}"));
        return exit::INCOMPLETE;
    }
    if false_positives > 0 || !missed.is_empty() {
        exit::FAILED
    } else {
        exit::OK
    }
}

/// `--section` checked, `--seeds` and `--fixed-seeds` read (the fixed controls'
/// default to the buggy arms'); `None` once an error is printed.
fn seed_ranges(args: &HuntArgs) -> Option<(RangeInclusive<u64>, RangeInclusive<u64>)> {
    if let Some(name) = &args.section {
        if args.out.is_none() {
            term::error("--section names a section of --out: give --out too");
            return None;
        }
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        if name.is_empty() || !name.chars().all(plain) {
            term::error(format!(
                "--section `{}`: a section name is letters, digits, `-` and `_`",
                printable(name)
            ));
            return None;
        }
    }
    let seeds = match crate::drive::sweep::parse_seeds(&args.seeds) {
        Ok(s) => s,
        Err(message) => {
            term::error(format!("--seeds: {message}"));
            return None;
        }
    };
    let fixed_seeds = match args
        .fixed_seeds
        .as_deref()
        .map(crate::drive::sweep::parse_seeds)
    {
        None => seeds.clone(),
        Some(Ok(s)) => s,
        Some(Err(message)) => {
            term::error(format!("--fixed-seeds: {message}"));
            return None;
        }
    };
    Some((seeds, fixed_seeds))
}

/// Write the table to `--out` (the whole file, or only `section` of it), keeping
/// the notes below the marker; `false` once an error is printed.
fn write_out(
    out: &Path,
    section: Option<&str>,
    table: &Hunt,
    compared: Option<&[KeyCompare]>,
) -> bool {
    let command: Vec<String> = std::env::args().skip(1).collect();
    let mut text = crate::drive::hunt::markdown(
        table,
        &format!("faultline {}", command.join(" ")),
        &crate::drive::bench::machine(),
    );
    if let Some(rows) = compared {
        text.push_str(&crate::drive::hunt::compare::markdown(rows));
    }
    // The notes below the marker survive the rewrite; an unreadable file is
    // refused rather than overwritten.
    let old = match crate::base::fsio::read_existing_text(out, crate::drive::hunt::DOC_BYTES_MAX) {
        Ok(old) => old,
        Err(e) => {
            term::error(e);
            return false;
        }
    };
    if let Some(name) = section {
        // One section of the file: its title one level down, the rest kept.
        let body = match text.split_once('\n') {
            Some((_, rest)) => format!("## Exploration: {name}\n{rest}"),
            None => text.clone(),
        };
        text = crate::drive::hunt::render::splice_section(&old, name, &body);
    } else if let Some(at) = old.find(crate::drive::hunt::NOTES_MARKER) {
        text.push('\n');
        text.push_str(&old[at..]);
    } else {
        text.push('\n');
        text.push_str(crate::drive::hunt::NOTES_MARKER);
        text.push('\n');
    }
    if let Err(e) = crate::report::atomic_write(out, text.as_bytes()) {
        term::error(e);
        return false;
    }
    eprintln!("hunt: wrote {}", printable(&out.display().to_string()));
    true
}

/// The table on stdout: one JSON object, or the terminal's table (each with the
/// guided comparison when there is one).
fn print_table(json: bool, table: &Hunt, compared: Option<&[KeyCompare]>) {
    if json {
        let mut value = serde_json::to_value(table).expect("the table serializes");
        if let Some(rows) = compared {
            value["guided"] = serde_json::to_value(rows).expect("the comparison serializes");
        }
        println!("{value}");
    } else {
        print!("{}", crate::drive::hunt::render::terminal(table));
        if let Some(rows) = compared {
            print!("{}", crate::drive::hunt::compare::markdown(rows));
        }
    }
}
