//! Errors in scenario files: every one with file:line:col and, where we can, what to write instead.

use crate::yaml::Loc;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub file: String,
    pub loc: Loc,
    pub message: String,
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn new(file: &str, loc: Loc, message: impl Into<String>) -> Self {
        Diagnostic {
            file: file.to_string(),
            loc,
            message: message.into(),
            hint: None,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: error: {}",
            self.file, self.loc.line, self.loc.col, self.message
        )?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  help: {hint}")?;
        }
        Ok(())
    }
}

/// All the errors found in one file, in file order.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.0.push(diagnostic);
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn sorted(mut self) -> Self {
        self.0.sort_by_key(|d| d.loc);
        self
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.0 {
            writeln!(f, "{d}")?;
        }
        Ok(())
    }
}
