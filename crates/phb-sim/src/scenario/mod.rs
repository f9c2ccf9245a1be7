//! Scenario files: TOML in, a validated [`Scenario`] out.
//!
//! Parsing is in two steps (STYLE.md §7): [`raw`] mirrors the file with serde
//! (unknown keys rejected), then validation expands the `[[generators]]`
//! into ordinary nodes, links and traffic and converts human units ([`units`]),
//! resolves names to indices and rejects impossible values, producing
//! [`model`]'s types. Every error names the key and its line and column in
//! the file. Command-line overrides (`--set path.to.key=value`) are applied
//! to the document before either step, so they are validated like the file
//! itself.
//!
//! Files:
//! - `mod.rs` — [`load`] and [`ScenarioError`]: parse, override, deserialise,
//!   validate.
//! - [`model`] — the validated types the engine accepts.
//! - [`raw`] — the serde structs mirroring the file.
//! - [`units`] — rates, times, sizes and queue limits written with units.
//! - `validate/` — raw to model (`generators.rs` expands the generators
//!   first, `budget.rs` checks the memory budget last).
//! - `overrides.rs` — applying `--set` assignments to the document.
//! - `location.rs` — key paths and their line and column in the text.
//! - [`backend`] — what the simulator and the emulator can each run.
//!
//! The format is documented in `docs/scenario-format.md`.

pub mod backend;
mod location;
pub mod model;
mod overrides;
pub mod raw;
pub mod units;
mod validate;

pub use backend::Backend;
pub use model::*;

/// What went wrong reading a scenario. Always fatal for the run.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ScenarioError {
    /// The text is not valid TOML.
    #[error("{source_name}:{line}:{column}: {message}")]
    Syntax { source_name: String, line: usize, column: usize, message: String },
    /// A key is unknown, missing, of the wrong type or has an impossible value.
    /// `key` is the dotted path (`links[2].rate`); `line` and `column` (1-based)
    /// point at it in the file, or, when the key is absent, at the header of
    /// the table that lacks it (0 and 0 if that is the top level).
    #[error("{source_name}:{line}:{column}: {key}: {message}")]
    Invalid { source_name: String, key: String, line: usize, column: usize, message: String },
    /// A `--set` override is malformed or names a path that cannot exist.
    #[error("--set {assignment}: {message}")]
    Override { assignment: String, message: String },
}

/// Reads scenario `text` (named `source_name` in messages, e.g. its path),
/// applies `overrides` (`"path.to.key=value"`), and validates it.
///
/// With no overrides, error positions refer to `text`. Overrides edit the
/// parsed document, which is then re-serialised and deserialised, so
/// positions refer to the edited text: the same as `text` except where an
/// override added a key (a new line) or changed a value's length. An error
/// about an overridden key says so.
pub fn load(text: &str, source_name: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    load_for(text, source_name, overrides, Backend::Simulate)
}

/// [`load`] for `backend`: a scenario that `backend` cannot run (its
/// [`backend::unsupported`] key) is refused like an invalid value.
pub fn load_for(
    text: &str,
    source_name: &str,
    overrides: &[String],
    backend: Backend,
) -> Result<Scenario, ScenarioError> {
    let syntax = |source: &str, error: toml_edit::TomlError| {
        let (line, column) = location::line_column(source, error.span().map_or(0, |s| s.start));
        ScenarioError::Syntax {
            source_name: source_name.to_owned(),
            line,
            column,
            message: error.message().trim_end().to_owned(),
        }
    };
    let edited;
    let mut overridden = Vec::new();
    let text = if overrides.is_empty() {
        text
    } else {
        let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e| syntax(text, e))?;
        for assignment in overrides {
            overridden.push(overrides::apply(&mut doc, assignment)?);
        }
        edited = doc.to_string();
        &edited
    };
    let doc = toml_edit::Document::parse(text).map_err(|e| syntax(text, e))?;
    let result = match toml::from_str::<raw::File>(text) {
        Ok(file) => validate::validate(file, &doc, source_name, backend),
        Err(error) => Err(serde_error(&doc, source_name, &error)),
    };
    result.map_err(|error| match error {
        ScenarioError::Invalid { source_name, key, line, column, message } if overridden.contains(&key) => {
            ScenarioError::Invalid {
                source_name,
                key,
                line,
                column,
                message: format!("{message} (value set by --set)"),
            }
        }
        other => other,
    })
}

/// An error from deserialising [`raw::File`]: the `toml` crate gives a span
/// and a message, from which the key path is recovered.
fn serde_error(doc: &toml_edit::Document<&str>, source_name: &str, error: &toml::de::Error) -> ScenarioError {
    let message = error.message().trim_end();
    let mut key = match error.span() {
        Some(span) if !span.is_empty() => location::path_at(doc, span.start),
        _ => String::new(),
    };
    // A missing key is reported at the table that lacks it.
    if let Some(missing) = message.strip_prefix("missing field `").and_then(|m| m.split('`').next()) {
        key = location::join(&key, missing);
    }
    let (line, column) = location::position(doc, &key);
    ScenarioError::Invalid { source_name: source_name.to_owned(), key, line, column, message: message.to_owned() }
}

#[cfg(test)]
mod tests;
