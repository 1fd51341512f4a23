//! The layer order of `src/` (ARCHITECTURE.md, "Layer order") holds: every top-level module
//! imports only from modules in layers below its own, never from its own layer's others or
//! from above. A `use` that breaks it fails here, naming the file and the import.
//!
//! What counts as an import: a path `crate::<module>` (in `use` or inline), an item of a
//! `use crate::{...}` group, and the crate-root re-exports (`crate::Builder` is `config`'s).
//! Comments and doc links do not count, nor unit-test code (`tests.rs` files and inline
//! `#[cfg(test)] mod` blocks), which may run whole models from any layer.

use std::collections::BTreeSet;
use std::path::Path;

/// Layers from the top; a module may import from any later layer.
const LAYERS: &[&[&str]] = &[
    &["test_support"],
    &["config"],
    &["tokio"],
    &["future", "current"],
    &[
        "driver", "sync", "thread", "cell", "time", "hint", "choose", "rand",
    ],
    &["runtime", "corpus"],
    &["report", "strategy"],
    &["schedule", "memory"],
    &["hb"],
    &["op", "settings", "protocol"],
];

/// The crate root's re-exports, by the module that defines them.
const ROOT_ITEMS: &[(&str, &str)] = &[
    ("Builder", "config"),
    ("check", "config"),
    ("explore", "config"),
    ("replay", "config"),
    ("model", "test_support"),
    ("Choices", "choose"),
    ("DFS_CHOOSE_LIMIT", "choose"),
    ("choose_from", "choose"),
    ("Failure", "report"),
    ("FailureKind", "schedule"),
    ("Holder", "report"),
    ("Limit", "report"),
    ("RecentStep", "report"),
    ("Report", "report"),
    ("SourceLocation", "report"),
    ("ThreadInfo", "report"),
    ("ThreadReport", "report"),
    ("Build", "schedule"),
    ("Decision", "schedule"),
    ("Schedule", "schedule"),
    ("ScheduleError", "schedule"),
    ("Signature", "schedule"),
    ("DEFAULT_PCT_DEPTH", "settings"),
    ("DEFAULT_STACK_SIZE", "settings"),
    ("Reduction", "settings"),
    ("StrategyKind", "settings"),
    ("Substrate", "settings"),
    ("env", "settings"),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The module a root name (`Builder`, `sync`) comes from, if it is one.
fn module_named(name: &str) -> Option<&'static str> {
    let name = name.trim_start_matches("r#");
    if let Some(layer) = LAYERS.iter().find(|l| l.contains(&name)) {
        return layer.iter().copied().find(|m| *m == name);
    }
    ROOT_ITEMS.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
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

#[test]
fn every_module_imports_only_from_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    each_source(&src, &mut files);
    let mut wrong = Vec::new();
    let mut seen = BTreeSet::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let owner = top.trim_end_matches(".rs").to_owned();
        if owner == "lib" || owner == "bin" || rel.ends_with("tests.rs") {
            continue;
        }
        let Some(own) = layer_of(&owner) else {
            wrong.push(format!(
                "{}: module `{owner}` is in no layer",
                rel.display()
            ));
            continue;
        };
        seen.insert(owner.clone());
        let code = code_of(&std::fs::read_to_string(&file).unwrap());
        for name in imports(&code) {
            let Some(target) = module_named(&name) else {
                continue;
            };
            let theirs = layer_of(target).unwrap();
            if target != owner && theirs <= own {
                wrong.push(format!(
                    "{}: `{owner}` (layer {own}) imports `crate::{name}` of `{target}` (layer {theirs})",
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
    let listed: BTreeSet<String> = LAYERS
        .iter()
        .flat_map(|l| l.iter().map(|m| m.to_string()))
        .collect();
    assert_eq!(
        seen, listed,
        "the layer table and src/ list different modules"
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
