//! The layers of `phb-sim` depend one way (docs/architecture.md, "The
//! simulator's modules"): a top-level module may name (by a `crate::` path,
//! or a `super::` path that climbs to the crate's root) only the modules
//! below it in [`LAYERS`], so no two modules import each other, directly or
//! in a circle. The crate's sources are read with `syn` from `lib.rs`,
//! following its `mod` declarations; test code (`#[cfg(test)]`) is left out,
//! as a test may drive the whole simulator.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use syn::visit::{self, Visit};

/// The top-level modules, lowest layer first: each may use only those
/// listed before it.
const LAYERS: &[&str] = &[
    "scope",
    "engine",
    "measure",
    "tcp",
    "apps",
    "traffic",
    "output",
    "net",
    "trace",
    "scenario",
    "lsp",
    "trace_select",
    "flow",
    "advice",
    "report",
    "sim",
];

/// A module's use of another: the file and the path, for the message.
type Uses = BTreeMap<String, BTreeSet<(String, String)>>;

fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| match &a.meta {
        syn::Meta::List(list) => list.path.is_ident("cfg") && list.tokens.to_string() == "test",
        _ => false,
    })
}

/// The top-level names a file's code reaches through `crate::` (and
/// `super::` climbing to the root), with the path that named each.
struct Collector {
    /// How deep the module being read sits (1: a top-level module).
    depth: usize,
    /// Child modules declared in the file being read (`mod x;`): `(name,
    /// depth)`.
    children: Vec<(String, usize)>,
    found: Vec<(String, String)>,
}

impl Collector {
    fn note(&mut self, segments: &[String]) {
        let ups = segments.iter().take_while(|s| *s == "super").count();
        let top = match segments.first().map(String::as_str) {
            Some("crate") => segments.get(1),
            Some("super") if ups == self.depth => segments.get(ups),
            _ => None,
        };
        if let Some(top) = top {
            self.found.push((top.clone(), segments.join("::")));
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.use_leaf(prefix, n.ident.to_string()),
            syn::UseTree::Rename(r) => self.use_leaf(prefix, r.ident.to_string()),
            syn::UseTree::Glob(_) => self.use_leaf(prefix, "*".to_owned()),
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(prefix, item);
                }
            }
        }
    }

    fn use_leaf(&mut self, prefix: &[String], leaf: String) {
        let mut path = prefix.to_vec();
        path.push(leaf);
        self.note(&path);
    }
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if is_test(&m.attrs) {
            return;
        }
        assert!(
            !m.attrs.iter().any(|a| a.path().is_ident("path")),
            "#[path] on mod {}: this test does not follow it",
            m.ident
        );
        match &m.content {
            None => self.children.push((m.ident.to_string(), self.depth + 1)),
            Some((_, items)) => {
                self.depth += 1;
                for item in items {
                    self.visit_item(item);
                }
                self.depth -= 1;
            }
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test(&f.attrs) {
            visit::visit_item_fn(self, f);
        }
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if !is_test(&i.attrs) {
            visit::visit_item_impl(self, i);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if !is_test(&u.attrs) {
            self.use_tree(&mut Vec::new(), &u.tree);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.note(&segments);
        visit::visit_path(self, p);
    }

    /// A macro's arguments are tokens, not syntax: their `crate::` paths
    /// are found in the text.
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let text = m.tokens.to_string();
        for after in text.split("crate :: ").skip(1) {
            let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            self.found.push((name.clone(), format!("crate::{name} (in a macro)")));
        }
        visit::visit_macro(self, m);
    }
}

fn parse(path: &Path) -> syn::File {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The file of module `name` declared in `parent` (`lib.rs`, `x/mod.rs` or
/// `x.rs`).
fn module_file(parent: &Path, name: &str) -> PathBuf {
    let stem = parent.file_stem().unwrap();
    let dir = match stem.to_str() {
        Some("lib" | "mod") => parent.parent().unwrap().to_path_buf(),
        _ => parent.with_extension(""),
    };
    let file = dir.join(format!("{name}.rs"));
    if file.exists() {
        file
    } else {
        dir.join(name).join("mod.rs")
    }
}

/// Every top-level name a module's files (its own and its submodules')
/// reach, with the file and path.
fn module_uses(root: &Path, file: PathBuf, depth: usize, into: &mut BTreeSet<(String, String)>) {
    let mut collector = Collector { depth, children: Vec::new(), found: Vec::new() };
    collector.visit_file(&parse(&file));
    let shown = file.strip_prefix(root).unwrap().display().to_string();
    for (name, path) in collector.found {
        into.insert((name, format!("{shown}: {path}")));
    }
    for (child, depth) in collector.children {
        module_uses(root, module_file(&file, &child), depth, into);
    }
}

/// The top-level modules of `lib.rs`, and what each name its `pub use`
/// items re-export at the root comes from.
fn crate_root(lib: &Path) -> (Vec<String>, BTreeMap<String, String>) {
    let file = parse(lib);
    let mut modules = Vec::new();
    let mut reexports = BTreeMap::new();
    for item in &file.items {
        match item {
            syn::Item::Mod(m) if !is_test(&m.attrs) => modules.push(m.ident.to_string()),
            syn::Item::Use(u) => {
                if let syn::UseTree::Path(p) = &u.tree {
                    let mut leaves = Vec::new();
                    collect_leaves(&p.tree, &mut leaves);
                    for leaf in leaves {
                        reexports.insert(leaf, p.ident.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    (modules, reexports)
}

fn collect_leaves(tree: &syn::UseTree, into: &mut Vec<String>) {
    match tree {
        syn::UseTree::Path(p) => collect_leaves(&p.tree, into),
        syn::UseTree::Name(n) => into.push(n.ident.to_string()),
        syn::UseTree::Rename(r) => into.push(r.rename.to_string()),
        syn::UseTree::Glob(_) => panic!("lib.rs re-exports with a glob: this test cannot tell what from"),
        syn::UseTree::Group(g) => g.items.iter().for_each(|i| collect_leaves(i, into)),
    }
}

/// Each top-level module's uses of the others, by module.
fn crate_graph(src: &Path) -> BTreeMap<String, Uses> {
    let lib = src.join("lib.rs");
    let (modules, reexports) = crate_root(&lib);
    let mut graph = BTreeMap::new();
    for module in &modules {
        let mut found = BTreeSet::new();
        module_uses(src, module_file(&lib, module), 1, &mut found);
        let mut uses = Uses::new();
        for (name, place) in found {
            let target = match reexports.get(&name) {
                Some(from) => from.clone(),
                None if modules.contains(&name) => name,
                None => panic!("{place}: `{name}` is neither a module nor a re-export of lib.rs"),
            };
            if &target != module {
                let (file, path) = place.split_once(": ").unwrap();
                uses.entry(target).or_default().insert((file.to_owned(), path.to_owned()));
            }
        }
        graph.insert(module.clone(), uses);
    }
    graph
}

/// The uses that point up (or to a module the list does not know).
fn upward_uses(graph: &BTreeMap<String, Uses>) -> Vec<String> {
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut wrong = Vec::new();
    for (module, uses) in graph {
        for (target, places) in uses {
            if rank(target) >= rank(module) {
                let (file, path) = places.first().unwrap();
                wrong.push(format!("{module} -> {target} ({file}: {path}, and {} more)", places.len() - 1));
            }
        }
    }
    wrong
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn every_module_has_a_layer() {
    let (modules, _) = crate_root(&src().join("lib.rs"));
    let layered: BTreeSet<&str> = LAYERS.iter().copied().collect();
    let declared: BTreeSet<&str> = modules.iter().map(String::as_str).collect();
    assert_eq!(declared, layered, "lib.rs's modules and LAYERS differ");
}

#[test]
fn modules_use_only_the_layers_below_them() {
    let wrong = upward_uses(&crate_graph(&src()));
    assert!(wrong.is_empty(), "uses against the layers {LAYERS:?}:\n{}", wrong.join("\n"));
}

/// The reader sees what it must: a use in a submodule's file, through a
/// group, a root re-export or a macro, and not one in test code.
#[test]
fn the_reader_finds_uses_in_every_form() {
    let dir = std::env::temp_dir().join(format!("phb-sim-layers-{}", std::process::id()));
    let write = |path: &str, text: &str| {
        let file = dir.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
    };
    write("lib.rs", "pub mod scope;\npub mod engine;\npub mod sim;\npub use sim::run;\n");
    write("scope.rs", "pub fn f() { crate::run(); }\n#[cfg(test)]\nmod tests { use crate::engine::X; }\n");
    write("engine/mod.rs", "mod wheel;\n");
    write("engine/wheel.rs", "use crate::{scope, sim::Sim};\nfn g() { assert!(super::super::scope::f()); }\n");
    write("sim.rs", "fn h() { format!(\"{}\", crate::engine::N); }\n");
    let graph = crate_graph(&dir);
    fs::remove_dir_all(&dir).unwrap();
    let targets = |m: &str| graph[m].keys().cloned().collect::<Vec<_>>();
    assert_eq!(targets("scope"), ["sim"]);
    assert_eq!(targets("engine"), ["scope", "sim"]);
    assert_eq!(targets("sim"), ["engine"]);
    assert_eq!(upward_uses(&graph).len(), 2, "{:?}", upward_uses(&graph));
}
