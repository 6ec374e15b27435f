//! `faultline new MODEL [-o FILE] [--force]`: a commented starting scenario for
//! a model ([`crate::lang::starter`]), checked as `validate` checks a file before it is
//! printed or written.

use super::exit;
use super::term;
use crate::base::text::printable;
use std::io::Write;
use std::path::Path;

pub fn new(model: &str, out: Option<&Path>, force: bool) -> u8 {
    let Some(found) = crate::base::models::find(model) else {
        term::error(unknown_model(model, out));
        return exit::BAD_INPUT;
    };
    let info = found.info();
    let name = out
        .and_then(|p| p.file_stem())
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| format!("{}-start", info.name));
    let text = crate::lang::starter::scenario(info, found.release(), &name);
    let shown = out
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| format!("{}-start.yaml", info.name));
    // What is written must load: a model whose declarations do not make a valid
    // scenario (an op example naming a node it has no role for) says so here,
    // not in the user's first `run`.
    if let Err(e) = crate::lang::scenario::load_text(&shown, &text) {
        term::error(format!(
            "the starting scenario for model `{}` does not validate (its declarations \
             do not fit together; this is a defect of the model or of `faultline new`):",
            printable(info.name)
        ));
        if let crate::lang::scenario::LoadError::Invalid(diagnostics) = &e {
            anstream::eprint!("{}", crate::lang::diag::render(diagnostics, Some(&text)));
        } else {
            term::error(format!("{e:?}"));
        }
        return exit::BAD_INPUT;
    }
    let Some(path) = out else {
        let mut stdout = std::io::stdout().lock();
        return match stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
        {
            Ok(()) => exit::OK,
            Err(e) => {
                term::error(format!(
                    "writing to stdout: {}",
                    crate::base::fsio::io_text(&e)
                ));
                exit::BAD_INPUT
            }
        };
    };
    let path_text = printable(&path.display().to_string()).into_owned();
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            term::error(format!(
                "{path_text}: is a directory; give the scenario file to write"
            ));
            return exit::BAD_INPUT;
        }
        Ok(_) if !force => {
            term::error(format!(
                "{path_text}: already exists; not overwriting it (add --force to replace it, \
                 or give another file)"
            ));
            return exit::BAD_INPUT;
        }
        _ => {}
    }
    match crate::base::fsio::atomic_write(path, text.as_bytes()) {
        Ok(()) => {
            eprintln!(
                "wrote {path_text}: a starting scenario for `{}`; next: `faultline run {}`",
                printable(info.name),
                crate::base::text::shell_quote(&path.display().to_string())
            );
            exit::OK
        }
        Err(e) => {
            term::error(e);
            exit::BAD_INPUT
        }
    }
}

/// "no model named `raftvk`; did you mean `raftkv`? the models are: ...", and
/// where a model of a target build runs when the name is one.
fn unknown_model(model: &str, out: Option<&Path>) -> String {
    let known = crate::base::models::names();
    let mut message = format!("no model named `{}`", printable(model));
    // Models of target builds (`faultline-targets.yaml`) run in their binaries.
    let manifest = crate::lang::targets::manifest_for(out.unwrap_or(Path::new("new.yaml")));
    let builds = manifest
        .and_then(|m| crate::lang::targets::read_manifest(&m).ok())
        .unwrap_or_default();
    let build_models: Vec<String> = builds
        .iter()
        .filter_map(|b| crate::lang::targets::parse(&b.target).ok())
        .map(|(name, _)| name.to_string())
        .filter(|name| !known.contains(&name.as_str()))
        .collect();
    if let Some(build) = builds
        .iter()
        .find(|b| crate::lang::targets::parse(&b.target).is_ok_and(|(name, _)| name == model))
    {
        message.push_str(&format!(
            " in this binary; `{}` runs in its builds' binaries (faultline-targets.yaml): \
             `{} new {}` (build it with `{}`)",
            printable(model),
            printable(&build.binary.display().to_string()),
            printable(model),
            printable(&build.build)
        ));
        return message;
    }
    let mut candidates: Vec<&str> = known.clone();
    candidates.extend(build_models.iter().map(String::as_str));
    if let Some(best) = crate::lang::yaml::nearest(model, candidates) {
        message.push_str("; ");
        message.push_str(&crate::base::text::did_you_mean(model, best));
    }
    message.push_str(&format!("; the models are: {}", known.join(", ")));
    message
}
