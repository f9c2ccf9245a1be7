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
//! - `routes.rs` — each traffic group's route ([`group_routes`]).
//! - [`backend`] — what the simulator and the emulator can each run.
//! - [`linux_tcp`] — which TCP keys Linux's TCP honours under emulation.
//!
//! The format is documented in `docs/scenario-format.md`.

pub mod backend;
pub mod linux_tcp;
mod location;
pub mod model;
mod overrides;
pub mod raw;
mod routes;
pub mod units;
mod validate;

pub use backend::Backend;
pub use model::*;
pub use routes::{group_routes, GroupRoute};

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
            message: syntax_message(source, &error),
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
    let result = match shape_error(&doc, source_name) {
        Some(error) => Err(error),
        None => match toml::from_str::<raw::File>(text) {
            Ok(file) => validate::validate(file, &doc, source_name, backend),
            Err(error) => Err(serde_error(&doc, text, source_name, &error)),
        },
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

/// `text` as a message shows it: control characters escaped (`\u{1b}`),
/// and cut after `limit` characters with `…` (a 100 KB value or name is not
/// echoed whole).
pub(crate) fn shown(text: &str, limit: usize) -> String {
    let mut out = String::new();
    for c in text.chars().take(limit) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if text.chars().nth(limit).is_some() {
        out.push('…');
    }
    out
}

/// The parser's message, made to name what it is about: a duplicate key
/// or table is named, and too deep a nesting says what is too deep.
fn syntax_message(source: &str, error: &toml_edit::TomlError) -> String {
    let message = error.message().trim_end();
    let at = error.span().and_then(|span| source.get(span)).unwrap_or("").trim();
    match message {
        "duplicate key" if !at.is_empty() => {
            format!("duplicate key `{}`: a key (or table) is given once", shown(at.trim_matches(['[', ']']), 60))
        }
        "recursion limit" => "the keys, arrays or inline tables nest deeper than the parser allows (more than a \
                              hundred levels); no scenario key is that deep"
            .to_owned(),
        _ => message.to_owned(),
    }
}

/// The top-level keys that must be tables, and those that must be arrays
/// of tables: given another way (`run = [...]`), serde would read the
/// array as the table's fields in order and complain about the first.
const TABLES: [&str; 6] = ["run", "classes", "nodes", "qdiscs", "conditioners", "lsps"];
const ARRAYS_OF_TABLES: [&str; 3] = ["links", "traffic", "generators"];

/// A top-level key of the wrong shape, named with what it should be.
fn shape_error(doc: &toml_edit::Document<&str>, source_name: &str) -> Option<ScenarioError> {
    let wrong = |key: &str, expected: &str| {
        let (line, column) = location::position(doc, key);
        Some(ScenarioError::Invalid {
            source_name: source_name.to_owned(),
            key: key.to_owned(),
            line,
            column,
            message: expected.to_owned(),
        })
    };
    for key in TABLES {
        match doc.get(key) {
            Some(item) if item.as_table_like().is_none() => {
                return wrong(key, &format!("`{key}` is a table: [{key}] with its keys below it, or {key} = {{ ... }}"))
            }
            _ => {}
        }
    }
    for key in ARRAYS_OF_TABLES {
        match doc.get(key) {
            Some(item)
                if !item.is_array_of_tables()
                    && !item.as_array().is_some_and(|a| a.iter().all(|v| v.is_inline_table())) =>
            {
                return wrong(key, &format!("`{key}` is a list of tables: one [[{key}]] section per entry"))
            }
            _ => {}
        }
    }
    None
}

/// An error from deserialising [`raw::File`]: the `toml` crate gives a span
/// and a message, from which the key path is recovered.
fn serde_error(
    doc: &toml_edit::Document<&str>,
    text: &str,
    source_name: &str,
    error: &toml::de::Error,
) -> ScenarioError {
    let message = error.message().trim_end();
    let mut key = match error.span() {
        Some(span) if !span.is_empty() => location::path_at(doc, span.start),
        _ => String::new(),
    };
    // A missing key is reported at the table that lacks it.
    if let Some(missing) = message.strip_prefix("missing field `").and_then(|m| m.split('`').next()) {
        key = location::join(&key, missing);
    }
    let message = if message == "wanted string or table" { choices(text, &key) } else { message.to_owned() };
    let (line, column) = location::position(doc, &key);
    ScenarioError::Invalid { source_name: source_name.to_owned(), key, line, column, message }
}

/// What the key at `key` (one that names a choice, such as `framing` or
/// `codec`) takes, for a value of the wrong type: found by asking again
/// with a name that is none of them, whose message lists them.
fn choices(text: &str, key: &str) -> String {
    let listed = text.parse::<toml_edit::DocumentMut>().ok().and_then(|mut doc| {
        overrides::apply(&mut doc, &format!("{key}=\"\u{1}\"")).ok()?;
        let error = toml::from_str::<raw::File>(&doc.to_string()).err()?;
        error.message().split_once("expected ").map(|(_, expected)| expected.trim_end().to_owned())
    });
    match listed {
        Some(expected) => format!("expected a string, {expected}"),
        None => "expected a string naming one of this key's choices".to_owned(),
    }
}

#[cfg(test)]
mod tests;
