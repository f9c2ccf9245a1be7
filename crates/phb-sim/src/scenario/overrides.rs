//! Command-line overrides: `--set path.to.key=value` applied to the document.
//!
//! The path uses the syntax of error messages (`links[0].rate`, also
//! `links.0.rate`). The value is parsed as a TOML value (`42`, `0.1`, `true`,
//! `"x"`, `[1, 2]`) and, if it is not one, taken as a plain string, so
//! `links[0].rate=10Mbps` needs no quotes. An override may replace any value
//! or add a key to an existing table (it is then validated like the file, so
//! unknown keys still fail); it cannot create tables, index past the end of
//! an array, or replace a whole table.
//!
//! `~path` (Hydra's spelling) removes a key holding a value, so that the
//! scenario's default, or the backend's own behaviour, applies: e.g.
//! `~traffic[1].granularity`. It refuses a key that is not there and a
//! table.

use toml_edit::{DocumentMut, Item, Table, Value};

use super::location::{display, parse_path, Segment};
use super::ScenarioError;

/// Applies one `path=value` assignment to `doc`; returns the path as errors
/// name it (`links[0].rate`).
pub(super) fn apply(doc: &mut DocumentMut, assignment: &str) -> Result<String, ScenarioError> {
    let fail = |message: String| ScenarioError::Override { assignment: super::shown(assignment, 80), message };
    if let Some(path) = assignment.strip_prefix('~') {
        return remove(doc, path).map_err(fail);
    }
    let (path, text) =
        assignment.split_once('=').ok_or_else(|| fail("expected path=value, e.g. links[0].rate=10Mbps".into()))?;
    let segments = parse_path(path).map_err(|m| fail(format!("bad path `{}`: {m}", path.trim())))?;
    let (last, parents) = segments.split_last().expect("parse_path returns at least one segment");

    let mut node = Node::Item(doc.as_item_mut());
    let mut resolved = Vec::with_capacity(segments.len());
    for segment in parents {
        let here = display(&resolved);
        let (child, step) = node.child(segment).map_err(|m| fail(describe(&here, segment, m)))?;
        node = child;
        resolved.push(step);
    }
    let here = display(&resolved);
    let step = node.set(last, parse_value(text)).map_err(|m| fail(describe(&here, last, m)))?;
    resolved.push(step);
    Ok(display(&resolved))
}

/// Removes the key at `path` (`~path`); returns the path as errors name it.
fn remove(doc: &mut DocumentMut, path: &str) -> Result<String, String> {
    let segments = parse_path(path).map_err(|m| format!("bad path `{}`: {m}", path.trim()))?;
    let (last, parents) = segments.split_last().expect("parse_path returns at least one segment");
    let mut node = Node::Item(doc.as_item_mut());
    let mut resolved = Vec::with_capacity(segments.len());
    for segment in parents {
        let here = display(&resolved);
        let (child, step) = node.child(segment).map_err(|m| describe(&here, segment, m))?;
        node = child;
        resolved.push(step);
    }
    let here = display(&resolved);
    let Segment::Key(key) = last else {
        return Err(format!("`{}` is an entry of an array; only a key can be removed", display(&segments)));
    };
    let table = match node {
        Node::Item(item) => item.as_table_like_mut(),
        Node::Table(table) => Some(table as &mut dyn toml_edit::TableLike),
        Node::Value(Value::InlineTable(table)) => Some(table as &mut dyn toml_edit::TableLike),
        Node::Value(_) => None,
    };
    let parent_name = if here.is_empty() { "the top level".to_owned() } else { format!("`{here}`") };
    let table = table.ok_or_else(|| format!("{parent_name} is not a table, so it has no key `{key}`"))?;
    match table.get(key) {
        Some(Item::Value(_)) => {
            table.remove(key);
            resolved.push(last.clone());
            Ok(display(&resolved))
        }
        Some(_) => Err(format!(
            "`{}` is a table; only a key holding a value can be removed",
            display_child(&here, last.clone())
        )),
        None => Err(format!("{parent_name} has no key `{key}` to remove")),
    }
}

/// The value as TOML, or as a plain string when it is not TOML.
fn parse_value(text: &str) -> Value {
    let text = text.trim();
    text.parse::<Value>().unwrap_or_else(|_| Value::from(text))
}

/// Why a step of the path failed.
enum Miss {
    NoKey,
    PastEnd(usize),
    NotTable,
    NotArray,
    /// Setting would replace a table (given as the resolved step).
    IsTable(Segment),
}

fn describe(parent: &str, segment: &Segment, miss: Miss) -> String {
    let target = display(std::slice::from_ref(segment));
    let parent_name = if parent.is_empty() { "the top level".to_owned() } else { format!("`{parent}`") };
    match miss {
        Miss::NoKey => format!(
            "{parent_name} has no table `{target}`; an override can add a key to an existing table but not create tables"
        ),
        Miss::PastEnd(len) => format!("`{parent}` has {len} entries; index {target} is past its end"),
        Miss::NotTable => format!("{parent_name} is not a table, so it has no key `{target}`"),
        Miss::NotArray => format!("`{parent}` is not an array, so it cannot be indexed"),
        Miss::IsTable(step) => format!("`{}` is a table; set its keys one by one", display_child(parent, step)),
    }
}

fn display_child(parent: &str, segment: Segment) -> String {
    let mut segments = parse_path(parent).unwrap_or_default();
    segments.push(segment);
    display(&segments)
}

/// A mutable node of the document (see `location::Node`).
enum Node<'a> {
    Item(&'a mut Item),
    Table(&'a mut Table),
    Value(&'a mut Value),
}

impl<'a> Node<'a> {
    /// Steps into `segment`; returns the child and the step as resolved
    /// (digits on an array become an index).
    fn child(self, segment: &Segment) -> Result<(Node<'a>, Segment), Miss> {
        match (self, segment.as_index()) {
            (Node::Item(Item::ArrayOfTables(tables)), Some(i)) => {
                let len = tables.len();
                tables.get_mut(i).map(|t| (Node::Table(t), Segment::Index(i))).ok_or(Miss::PastEnd(len))
            }
            (Node::Item(Item::Value(Value::Array(values))) | Node::Value(Value::Array(values)), Some(i)) => {
                let len = values.len();
                values.get_mut(i).map(|v| (Node::Value(v), Segment::Index(i))).ok_or(Miss::PastEnd(len))
            }
            (
                Node::Item(Item::ArrayOfTables(_))
                | Node::Item(Item::Value(Value::Array(_)))
                | Node::Value(Value::Array(_)),
                None,
            ) => Err(Miss::NotTable),
            (node, _) => {
                let Segment::Key(key) = segment else { return Err(Miss::NotArray) };
                let child = match node {
                    Node::Item(item) => item.as_table_like_mut().ok_or(Miss::NotTable)?.get_mut(key).map(Node::Item),
                    Node::Table(table) => table.get_mut(key).map(Node::Item),
                    Node::Value(Value::InlineTable(table)) => table.get_mut(key).map(Node::Value),
                    Node::Value(_) => return Err(Miss::NotTable),
                };
                child.map(|c| (c, segment.clone())).ok_or(Miss::NoKey)
            }
        }
    }

    /// Sets `segment` of this node to `value`, keeping the formatting
    /// (comments, spacing) of a value it replaces.
    fn set(self, segment: &Segment, value: Value) -> Result<Segment, Miss> {
        let replace = |old: &mut Value, mut value: Value| {
            *value.decor_mut() = old.decor().clone();
            *old = value;
        };
        match (self, segment.as_index()) {
            (Node::Item(Item::Value(Value::Array(values))) | Node::Value(Value::Array(values)), Some(i)) => {
                let len = values.len();
                replace(values.get_mut(i).ok_or(Miss::PastEnd(len))?, value);
                Ok(Segment::Index(i))
            }
            (Node::Item(Item::ArrayOfTables(tables)), Some(i)) if i >= tables.len() => Err(Miss::PastEnd(tables.len())),
            (Node::Item(Item::ArrayOfTables(_)), Some(i)) => Err(Miss::IsTable(Segment::Index(i))),
            (node, _) => {
                let Segment::Key(key) = segment else { return Err(Miss::NotArray) };
                let table = match node {
                    Node::Item(item) => item.as_table_like_mut().ok_or(Miss::NotTable)?,
                    Node::Table(table) => table,
                    Node::Value(Value::InlineTable(table)) => table,
                    Node::Value(_) => return Err(Miss::NotTable),
                };
                match table.get_mut(key) {
                    Some(Item::Value(old)) => replace(old, value),
                    Some(_) => return Err(Miss::IsTable(segment.clone())),
                    None => {
                        table.insert(key, Item::Value(value));
                    }
                }
                Ok(segment.clone())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str, assignment: &str) -> Result<String, String> {
        let mut doc: DocumentMut = text.parse().unwrap();
        match apply(&mut doc, assignment) {
            Ok(_) => Ok(doc.to_string()),
            Err(ScenarioError::Override { message, .. }) => Err(message),
            Err(other) => panic!("unexpected {other:?}"),
        }
    }

    const DOC: &str = "[run]\nseed = 1 # the seed\n\n[[links]]\nbetween = [\"a\", \"b\"]\nrate = \"1Mbps\"\n";

    #[test]
    fn values_are_toml_or_else_strings_and_keep_their_comments() {
        assert_eq!(set(DOC, "run.seed=42").unwrap(), DOC.replace("1 #", "42 #"));
        assert_eq!(set(DOC, "links[0].rate=5Mbps").unwrap(), DOC.replace("1Mbps", "5Mbps"));
        assert_eq!(set(DOC, "links.0.between[1]=c").unwrap(), DOC.replace("\"b\"", "\"c\""));
        assert!(set(DOC, "run.warmup = \"2s\"").unwrap().contains("warmup = \"2s\""));
        assert!(set(DOC, "run.flag=true").unwrap().contains("flag = true"));
    }

    #[test]
    fn impossible_paths_are_errors() {
        assert!(set(DOC, "links[1].rate=1Mbps").unwrap_err().contains("past its end"));
        assert!(set(DOC, "links.0.between[2]=x").unwrap_err().contains("past its end"));
        assert!(set(DOC, "qdiscs.x.kind=fifo").unwrap_err().contains("not create tables"));
        assert!(set(DOC, "run.seed.x=1").unwrap_err().contains("not a table"));
        assert!(set(DOC, "run[0]=1").unwrap_err().contains("not an array"));
        assert!(set(DOC, "run=1").unwrap_err().contains("is a table"));
        assert!(set(DOC, "links.0=1").unwrap_err().contains("`links[0]` is a table"));
        assert!(set(DOC, "links.rate=1").unwrap_err().contains("not a table"));
        assert!(set(DOC, "run.seed").unwrap_err().contains("expected path=value"));
        assert!(set(DOC, "run..seed=1").unwrap_err().contains("bad path"));
    }

    #[test]
    fn a_tilde_removes_a_key_holding_a_value() {
        assert_eq!(set(DOC, "~links[0].rate").unwrap(), DOC.replace("rate = \"1Mbps\"\n", ""));
        assert!(!set(DOC, "~run.seed").unwrap().contains("seed"));
        assert!(set(DOC, "~links[0].delay").unwrap_err().contains("`links[0]` has no key `delay` to remove"));
        assert!(set(DOC, "~run").unwrap_err().contains("`run` is a table"));
        assert!(set(DOC, "~links[0]").unwrap_err().contains("only a key can be removed"));
        assert!(set(DOC, "~links[0].between[1]").unwrap_err().contains("only a key can be removed"));
        assert!(set(DOC, "~links[1].rate").unwrap_err().contains("past its end"));
        assert!(set(DOC, "~run.seed.x").unwrap_err().contains("not a table"));
    }
}
