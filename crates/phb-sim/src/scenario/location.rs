//! Key paths and where they are in the text.
//!
//! Errors name a key by its dotted path (`links[2].rate`,
//! `qdiscs.bottleneck.max_th`, `classes."a b"`). This module parses such
//! paths, finds a path's line and column in a parsed document (for
//! validation errors), and finds the path at a byte offset (for the `toml`
//! crate's serde errors, which carry a span but not a path).

use std::fmt::Write;
use std::ops::Range;

use toml_edit::{Document, Item, Table, TableLike, Value};

/// One step of a key path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Segment {
    /// A table key, `.rate`; on an array a key made of digits is an index.
    Key(String),
    /// An array index, `[2]`.
    Index(usize),
}

impl Segment {
    /// The index this segment selects in an array, if any.
    pub(super) fn as_index(&self) -> Option<usize> {
        match self {
            Segment::Index(i) => Some(*i),
            Segment::Key(k) if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) => k.parse().ok(),
            Segment::Key(_) => None,
        }
    }
}

/// Parses `links[0].rate`, `links.0.rate` or `classes."a b"`.
pub(super) fn parse_path(path: &str) -> Result<Vec<Segment>, String> {
    let mut segments = Vec::new();
    let mut rest = path.trim();
    let mut expect_key = true;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let (index, tail) = after.split_once(']').ok_or("an index `[` has no closing `]`")?;
            let index = index.trim().parse().map_err(|_| format!("`[{index}]` is not an array index"))?;
            segments.push(Segment::Index(index));
            rest = tail;
            expect_key = false;
        } else if let Some(after) = rest.strip_prefix('.').filter(|_| !expect_key) {
            rest = after;
            expect_key = true;
        } else if let Some(after) = rest.strip_prefix('"').filter(|_| expect_key) {
            let end = after.find('"').ok_or("a quoted key has no closing quote")?;
            segments.push(Segment::Key(after[..end].to_owned()));
            rest = &after[end + 1..];
            expect_key = false;
        } else if expect_key {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            let key = rest[..end].trim();
            if key.is_empty() {
                return Err("a key is empty".into());
            }
            segments.push(Segment::Key(key.to_owned()));
            rest = &rest[end..];
            expect_key = false;
        } else {
            return Err(format!("expected `.` or `[` before `{rest}`"));
        }
    }
    if segments.is_empty() || expect_key {
        return Err("the path is empty or ends with `.`".into());
    }
    Ok(segments)
}

/// Appends `key` to the dotted `path`, quoting it unless it is a bare key.
pub(super) fn join(path: &str, key: &str) -> String {
    let mut out = String::from(path);
    if !out.is_empty() {
        out.push('.');
    }
    if !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        out.push_str(key);
    } else {
        let _ = write!(out, "\"{}\"", key.replace('"', "'"));
    }
    out
}

/// Formats segments the way errors name keys: `links[0].rate`.
pub(super) fn display(segments: &[Segment]) -> String {
    segments.iter().fold(String::new(), |path, segment| match segment {
        Segment::Key(key) => join(&path, key),
        Segment::Index(i) => format!("{path}[{i}]"),
    })
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub(super) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = (0..=offset.min(text.len())).rev().find(|&o| text.is_char_boundary(o)).unwrap_or(0);
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (before.matches('\n').count() + 1, before[line_start..].chars().count() + 1)
}

/// A node of the parsed document: toml_edit hands out tables, items and
/// values depending on how the TOML was written.
#[derive(Clone, Copy)]
enum Node<'a> {
    Item(&'a Item),
    Table(&'a Table),
    Value(&'a Value),
}

impl<'a> Node<'a> {
    fn table_like(self) -> Option<&'a dyn TableLike> {
        match self {
            Node::Item(item) => item.as_table_like(),
            Node::Table(table) => Some(table),
            Node::Value(Value::InlineTable(table)) => Some(table),
            Node::Value(_) => None,
        }
    }

    /// The array elements below this node with their spans.
    fn elements(self) -> Vec<(Node<'a>, Option<Range<usize>>)> {
        match self {
            Node::Item(Item::ArrayOfTables(tables)) => tables.iter().map(|t| (Node::Table(t), t.span())).collect(),
            Node::Item(Item::Value(Value::Array(values))) | Node::Value(Value::Array(values)) => {
                values.iter().map(|v| (Node::Value(v), v.span())).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The children of a table with their spans: the header's for a table
    /// with a header, otherwise the key's.
    fn entries(self) -> Vec<(&'a str, Node<'a>, Option<Range<usize>>)> {
        let Some(table) = self.table_like() else { return Vec::new() };
        table
            .iter()
            .map(|(key, item)| {
                let key_span = table.key(key).and_then(|k| k.span());
                let span = match item {
                    Item::Table(t) => t.span().or(key_span),
                    _ => key_span,
                };
                (key, Node::Item(item), span)
            })
            .collect()
    }

    fn child(self, segment: &Segment) -> Option<(Node<'a>, Option<Range<usize>>)> {
        match segment.as_index() {
            Some(i) if self.table_like().is_none() => self.elements().into_iter().nth(i),
            _ => {
                let Segment::Key(key) = segment else { return None };
                self.entries().into_iter().find(|(k, _, _)| k == key).map(|(_, node, span)| (node, span))
            }
        }
    }
}

/// Line and column of `path` in `doc`: the key (or the array element, or a
/// table's header). A path absent from the document gives the position of
/// its nearest present ancestor; `(0, 0)` if that is the root.
pub(super) fn position(doc: &Document<&str>, path: &str) -> (usize, usize) {
    let mut node = Node::Item(doc.as_item());
    let mut found = None;
    for segment in parse_path(path).unwrap_or_default() {
        let Some((child, span)) = node.child(&segment) else { break };
        node = child;
        found = span.or(found);
    }
    found.map_or((0, 0), |span| line_column(doc.raw(), span.start))
}

/// The path of the deepest key, value or table header whose text contains
/// byte `offset`; the empty path (the root) if none does.
pub(super) fn path_at(doc: &Document<&str>, offset: usize) -> String {
    fn visit(node: Node, path: &str, offset: usize, best: &mut String) {
        let contains = |span: &Option<Range<usize>>| span.as_ref().is_some_and(|s| s.contains(&offset));
        for (key, child, span) in node.entries() {
            let child_path = join(path, key);
            let value_span = match child {
                Node::Item(Item::Value(v)) => v.span(),
                _ => None,
            };
            if contains(&span) || contains(&value_span) {
                best.clone_from(&child_path);
            }
            visit(child, &child_path, offset, best);
        }
        for (i, (child, span)) in node.elements().into_iter().enumerate() {
            let child_path = format!("{path}[{i}]");
            if contains(&span) {
                best.clone_from(&child_path);
            }
            visit(child, &child_path, offset, best);
        }
    }
    let mut best = String::new();
    visit(Node::Item(doc.as_item()), "", offset, &mut best);
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_in_both_index_spellings() {
        let expected = vec![Segment::Key("links".into()), Segment::Index(0), Segment::Key("rate".into())];
        assert_eq!(parse_path("links[0].rate"), Ok(expected));
        assert_eq!(parse_path("links.0.rate").unwrap()[1].as_index(), Some(0));
        assert_eq!(parse_path("classes.\"a b\""), Ok(vec![Segment::Key("classes".into()), Segment::Key("a b".into())]));
        assert!(parse_path("links[x].rate").is_err());
        assert!(parse_path("run.").is_err());
        assert!(parse_path("").is_err());
        assert!(parse_path("a..b").is_err());
        assert_eq!(display(&parse_path("links.0[1].\"a b\"").unwrap()), "links.0[1].\"a b\"");
    }

    #[test]
    fn positions_point_at_keys_elements_and_headers() {
        let text = "a = 1\n[t]\nx = [\"p\", \"q\"]\n[[arr]]\ny = { z = 2 }\n[[arr]]\n";
        let doc = Document::parse(text).unwrap();
        assert_eq!(position(&doc, "a"), (1, 1));
        assert_eq!(position(&doc, "t"), (2, 1));
        assert_eq!(position(&doc, "t.x[1]"), (3, 11));
        assert_eq!(position(&doc, "arr[1]"), (6, 1));
        assert_eq!(position(&doc, "arr[0].y.z"), (5, 7));
        assert_eq!(position(&doc, "arr[1].missing"), (6, 1));
        assert_eq!(position(&doc, "missing"), (0, 0));
        assert_eq!(path_at(&doc, text.find("2").unwrap()), "arr[0].y.z");
        assert_eq!(path_at(&doc, text.find("\"q\"").unwrap()), "t.x[1]");
        assert_eq!(path_at(&doc, text.rfind("[[arr]]").unwrap()), "arr[1]");
    }

    #[test]
    fn columns_count_characters() {
        assert_eq!(line_column("µ = 1\nab", 7), (2, 1));
        assert_eq!(line_column("µab", 3), (1, 3));
    }
}
