//! The layer order (ARCHITECTURE.md, "Crates") holds, between the workspace's crates
//! and inside each: every crate depends only on crates below it, and every top-level module
//! of the facade (`src/`) and of the engine (`engine/src/`) imports only from modules in
//! layers below its own, never from its own layer's others or from above. A dependency or a
//! `use` that breaks it fails here, naming the manifest or the file and the import.
//!
//! What counts as an import: a path `crate::<module>` (in `use` or inline), an item of a
//! `use crate::{...}` group, and the crate-root re-exports (`crate::Builder` is `config`'s).
//! Comments and doc links do not count, nor unit-test code (`tests.rs` files and inline
//! `#[cfg(test)] mod` blocks), which may run whole models from any layer.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One crate's layer table: its top-level modules from the top; a module may import from
/// any later layer.
struct Tree {
    /// The crate's folder, from the workspace root.
    dir: &'static str,
    layers: &'static [&'static [&'static str]],
    /// The crate root's re-exports, by the module that defines them.
    root_items: &'static [(&'static str, &'static str)],
    /// Test-only modules (unit tests that run whole models from any layer).
    tests: &'static [&'static str],
}

/// The std-shaped facade, `interleave-test`. The engine's modules it names as its own
/// (`crate::runtime`) are below every layer here.
const FACADE: Tree = Tree {
    dir: "src",
    layers: &[
        &["test_support"],
        &["config"],
        &["future", "current"],
        &[
            "driver", "sync", "thread", "cell", "time", "hint", "choose", "rand",
        ],
        &["corpus", "summary", "protocol"],
    ],
    root_items: &[
        ("Builder", "config"),
        ("check", "config"),
        ("explore", "config"),
        ("replay", "config"),
        ("model", "test_support"),
        ("Choices", "choose"),
        ("DFS_CHOOSE_LIMIT", "choose"),
        ("choose_from", "choose"),
        ("Limit", "summary"),
        ("Report", "summary"),
    ],
    tests: &[],
};

/// The engine, `interleave-engine`.
const ENGINE: Tree = Tree {
    dir: "engine/src",
    layers: &[
        &["primitive", "threads", "run"],
        &["runtime"],
        &["report", "strategy"],
        &["schedule", "memory"],
        &["hb"],
        &["op", "settings", "json"],
    ],
    root_items: &[],
    tests: &[],
};

impl Tree {
    fn layer_of(&self, module: &str) -> Option<usize> {
        self.layers.iter().position(|l| l.contains(&module))
    }

    /// The module of this crate a root name (`Builder`, `sync`) comes from, if it is one.
    fn module_named(&self, name: &str) -> Option<&'static str> {
        let name = name.trim_start_matches("r#");
        if let Some(layer) = self.layers.iter().find(|l| l.contains(&name)) {
            return layer.iter().copied().find(|m| *m == name);
        }
        self.root_items
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| *m)
    }
}

/// `text` without comments, and cut at an inline `#[cfg(test)] mod <name> {` (unit tests
/// come last in a file).
fn code_of(text: &str) -> String {
    let code: Vec<&str> = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect();
    let tests = code.windows(2).position(|w| {
        w[0].trim() == "#[cfg(test)]"
            && w[1].trim_start().starts_with("mod ")
            && w[1].ends_with('{')
    });
    code[..tests.unwrap_or(code.len())].join("\n")
}

/// The root names `code` imports: after `crate::`, and inside `use crate::{...}` groups.
fn imports(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let first = item.trim().split("::").next().unwrap_or("").trim();
                names.insert(first.trim_start_matches('{').to_owned());
            }
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '#')
            .collect();
        names.insert(name);
    }
    names
}

fn each_source(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            each_source(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every source file under `src`: its path, its path from `src`, and the top-level module
/// it belongs to (`lib` for the crate root).
fn modules_of(src: &Path) -> Vec<(PathBuf, PathBuf, String)> {
    let mut files = Vec::new();
    each_source(src, &mut files);
    files
        .into_iter()
        .map(|file| {
            let rel = file.strip_prefix(src).unwrap().to_path_buf();
            let top = rel.components().next().unwrap().as_os_str();
            let owner = top.to_string_lossy().trim_end_matches(".rs").to_owned();
            (file, rel, owner)
        })
        .collect()
}

/// The imports of `tree` against its layer order, and whether its table lists exactly its
/// modules.
fn check(tree: &Tree) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(tree.dir);
    let mut wrong = Vec::new();
    let mut seen = BTreeSet::new();
    for (file, rel, owner) in modules_of(&src) {
        let rel = rel.as_path();
        let test_only = tree.tests.contains(&owner.as_str()) || rel.ends_with("tests.rs");
        if owner == "lib" || owner == "bin" || test_only {
            continue;
        }
        let Some(own) = tree.layer_of(&owner) else {
            wrong.push(format!(
                "{}/{}: module `{owner}` is in no layer",
                tree.dir,
                rel.display()
            ));
            continue;
        };
        seen.insert(owner.clone());
        let code = code_of(&std::fs::read_to_string(&file).unwrap());
        for name in imports(&code) {
            let Some(target) = tree.module_named(&name) else {
                continue;
            };
            let theirs = tree.layer_of(target).unwrap();
            if target != owner && theirs <= own {
                wrong.push(format!(
                    "{}/{}: `{owner}` (layer {own}) imports `crate::{name}` of `{target}` (layer {theirs})",
                    tree.dir,
                    rel.display()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layer order:\n{}",
        wrong.join("\n")
    );
    let listed: BTreeSet<String> = tree
        .layers
        .iter()
        .flat_map(|l| l.iter().map(|m| m.to_string()))
        .collect();
    assert_eq!(
        seen, listed,
        "the layer table and {}/ list different modules",
        tree.dir
    );
}

#[test]
fn every_module_of_the_facade_imports_only_from_the_layers_below_it() {
    check(&FACADE);
}

#[test]
fn every_module_of_the_engine_imports_only_from_the_layers_below_it() {
    check(&ENGINE);
}

/// Which of the engine's modules each part of the facade may name: its primitives (an
/// `ObjectHandle`, operations, waits) only the interface for primitives, threads and futures
/// also that of threads and tasks, the entry points also that of executions. The engine's
/// `runtime` is private; these are its three interfaces (`engine/src/lib.rs`).
const ENGINE_USE: &[(&[&str], &[&str])] = &[
    (
        &["sync", "cell", "hint", "time", "choose", "rand", "current"],
        &["primitive"],
    ),
    (&["thread", "future"], &["primitive", "threads"]),
    (
        &["config", "driver"],
        &[
            "primitive",
            "run",
            "report",
            "schedule",
            "settings",
            "strategy",
        ],
    ),
    (
        &["test_support", "corpus", "summary", "protocol"],
        &["report", "schedule", "settings", "json"],
    ),
];

#[test]
fn each_part_of_the_facade_names_only_its_interfaces_of_the_engine() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let engine: BTreeSet<&str> = ENGINE
        .layers
        .iter()
        .flat_map(|l| l.iter().copied())
        .collect();
    let mut wrong = Vec::new();
    for (file, rel, owner) in modules_of(&src) {
        let test_only = FACADE.tests.contains(&owner.as_str()) || rel.ends_with("tests.rs");
        if owner == "lib" || owner == "bin" || test_only {
            continue;
        }
        let Some((_, allowed)) = ENGINE_USE.iter().find(|(m, _)| m.contains(&owner.as_str()))
        else {
            wrong.push(format!(
                "src/{}: `{owner}` has no row in ENGINE_USE",
                rel.display()
            ));
            continue;
        };
        let code = code_of(&std::fs::read_to_string(&file).unwrap());
        for name in imports(&code) {
            if engine.contains(name.as_str()) && !allowed.contains(&name.as_str()) {
                wrong.push(format!(
                    "src/{}: `{owner}` names `crate::{name}`",
                    rel.display()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the facade names the engine beyond its interfaces:\n{}",
        wrong.join("\n")
    );
}

/// The Tokio crate is a layer over the facade's public interface and the engine's
/// interfaces for primitives and threads: it names no other module of the engine, and
/// nothing of the facade that is not public API (`__private`, `__switch`, ...).
#[test]
fn the_tokio_crate_uses_only_public_interfaces_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("interleave-test-tokio/src");
    let mut wrong = Vec::new();
    for (file, rel, _) in modules_of(&src) {
        let code = code_of(&std::fs::read_to_string(&file).unwrap());
        for (i, _) in code.match_indices("interleave_engine::") {
            let rest = &code[i + "interleave_engine::".len()..];
            // `interleave_engine::{primitive, threads}` names each module of the group.
            let ident = |n: &str| {
                let n = n.trim();
                n[..n
                    .find(|c: char| !c.is_alphanumeric() && c != '_')
                    .unwrap_or(n.len())]
                    .to_owned()
            };
            let names: Vec<String> = match rest.strip_prefix('{') {
                Some(group) => group[..group.find('}').unwrap_or(group.len())]
                    .split(',')
                    .map(ident)
                    .collect(),
                None => vec![ident(rest)],
            };
            for name in names.iter().map(String::as_str) {
                if !["primitive", "threads"].contains(&name) {
                    wrong.push(format!(
                        "{}: names `interleave_engine::{name}`",
                        rel.display()
                    ));
                }
            }
        }
        for (i, _) in code.match_indices("interleave_test::__") {
            let path: String = code[i..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            wrong.push(format!("{}: names `{path}`", rel.display()));
        }
    }
    assert!(
        wrong.is_empty(),
        "the Tokio crate names what is not a public interface:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_checker_sees_an_upward_import() {
    let code = code_of(
        "use crate::config::Builder;\n// crate::driver in a comment\nfn f() { crate::Builder::new(); }\n",
    );
    assert_eq!(
        imports(&code),
        BTreeSet::from(["Builder".to_owned(), "config".to_owned()])
    );
    let grouped = imports("use crate::{report::Failure, sync::Mutex, Schedule};");
    assert_eq!(
        grouped,
        BTreeSet::from([
            "Schedule".to_owned(),
            "report".to_owned(),
            "sync".to_owned()
        ])
    );
    let without_tests = code_of(
        "use crate::op::Tid;\n#[cfg(test)]\nmod tests {\n    use crate::config::Builder;\n}\n",
    );
    assert_eq!(imports(&without_tests), BTreeSet::from(["op".to_owned()]));
}

/// The workspace's crates from the top, by folder and package name: a crate may depend
/// (outside its dev-dependencies) only on crates of later rows.
const CRATES: &[&[(&str, &str)]] = &[
    &[("compare", "interleave-compare")],
    &[
        ("interleave-std", "interleave-std"),
        ("interleave-tokio", "interleave-tokio"),
    ],
    &[("interleave-test-tokio", "interleave-test-tokio")],
    &[(".", "interleave-test")],
    &[
        ("engine", "interleave-engine"),
        ("macros", "interleave-test-macros"),
    ],
];

/// The path dependencies of the manifest `text` outside its dev-dependencies, by the
/// folder they point at (relative to the manifest's).
fn path_dependencies(text: &str) -> BTreeSet<String> {
    let mut deps = BTreeSet::new();
    let mut in_deps = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line.trim_end_matches(']').ends_with("dependencies")
                && !line.contains("dev-dependencies");
            continue;
        }
        let Some(at) = line.find("path = \"").filter(|_| in_deps) else {
            continue;
        };
        let rest = &line[at + "path = \"".len()..];
        deps.insert(rest[..rest.find('"').unwrap()].to_owned());
    }
    deps
}

#[test]
fn every_crate_depends_only_on_the_crates_below_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The row and package name of the crate in folder `dir`.
    let place = |dir: &Path| {
        let dir = dir.canonicalize().unwrap();
        CRATES
            .iter()
            .enumerate()
            .find_map(|(row, crates)| {
                let same = |(d, _): &&(&str, &str)| root.join(d).canonicalize().unwrap() == dir;
                crates.iter().find(same).map(|(_, name)| (row, *name))
            })
            .unwrap_or_else(|| panic!("{} is in no row of CRATES", dir.display()))
    };
    let mut edges = BTreeSet::new();
    for (row, crates) in CRATES.iter().enumerate() {
        for (dir, name) in crates.iter() {
            let manifest = std::fs::read_to_string(root.join(dir).join("Cargo.toml")).unwrap();
            assert!(
                manifest.contains(&format!("name = \"{name}\"")),
                "{dir}/Cargo.toml is not the package {name}"
            );
            for dep in path_dependencies(&manifest) {
                let (theirs, dep_name) = place(&root.join(dir).join(&dep));
                assert!(
                    theirs > row,
                    "{name} (row {row}) depends on {dep_name} (row {theirs}), which is not below it"
                );
                edges.insert((*name, dep_name));
            }
        }
    }
    // The graph ARCHITECTURE.md draws.
    assert_eq!(
        edges,
        BTreeSet::from([
            ("interleave-std", "interleave-test"),
            ("interleave-tokio", "interleave-test-tokio"),
            ("interleave-test-tokio", "interleave-test"),
            ("interleave-test-tokio", "interleave-engine"),
            ("interleave-test-tokio", "interleave-test-macros"),
            ("interleave-test", "interleave-engine"),
            ("interleave-test", "interleave-test-macros"),
        ])
    );
}

#[test]
fn the_crate_checker_reads_path_dependencies_outside_dev_dependencies() {
    let manifest = "[package]\nname = \"x\"\n[dependencies]\na = { path = \"../a\", version = \"1\" }\nb = \"1\"\n[target.'cfg(unix)'.dependencies]\nc = { path = \"c\" }\n[dev-dependencies]\nd = { path = \"d\" }\n";
    assert_eq!(
        path_dependencies(manifest),
        BTreeSet::from(["../a".to_owned(), "c".to_owned()])
    );
}
