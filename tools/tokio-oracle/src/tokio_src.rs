//! Where Tokio's test files are: the `tokio` package cargo already downloaded for the
//! repository (the dependency of its member `interleave-tokio`), found through
//! `cargo metadata`; and what the files say about their tests.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The downloaded `tokio` package.
#[derive(Debug)]
pub(crate) struct TokioPackage {
    /// Its version, such as `1.54.1`.
    pub(crate) version: String,
    /// Its edition, which the test crate compiles the files with.
    pub(crate) edition: String,
    /// The directory of its `Cargo.toml`.
    pub(crate) dir: PathBuf,
    /// Its features, each with the features it turns on (dependencies left out), which
    /// the test crate defines as its own: the files test `feature = "sync"` and the like.
    pub(crate) features: BTreeMap<String, Vec<String>>,
}

/// One selected test file of Tokio's `tests/`.
#[derive(Debug, Clone)]
pub(crate) struct TestFile {
    /// The file name without `.rs`, which is also the test target's name.
    pub(crate) name: String,
    /// Its path in cargo's registry copy.
    pub(crate) path: PathBuf,
}

/// Finds the `tokio` 1.x package in the repository's dependency graph.
pub(crate) fn locate(repo: &Path) -> Result<TokioPackage, String> {
    let output = Command::new("cargo")
        .args(["metadata", "--format-version", "1"])
        .current_dir(repo)
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let packages = metadata["packages"].as_array().ok_or("no packages")?;
    let tokio = packages
        .iter()
        .filter(|p| p["name"] == "tokio" && p["version"].as_str().is_some_and(is_one_x))
        .max_by_key(|p| p["version"].as_str().map(version_key))
        .ok_or("no tokio 1.x package in the repository's dependency graph")?;
    let manifest = PathBuf::from(tokio["manifest_path"].as_str().ok_or("no manifest_path")?);
    Ok(TokioPackage {
        version: tokio["version"].as_str().unwrap_or_default().to_string(),
        edition: tokio["edition"].as_str().unwrap_or("2021").to_string(),
        dir: manifest
            .parent()
            .ok_or("manifest has no directory")?
            .to_path_buf(),
        features: features_without_dependencies(&tokio["features"]),
    })
}

/// The feature table, keeping in each list only the names of other features.
fn features_without_dependencies(table: &serde_json::Value) -> BTreeMap<String, Vec<String>> {
    let Some(table) = table.as_object() else {
        return BTreeMap::new();
    };
    table
        .iter()
        .map(|(name, enables)| {
            let enables = enables
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e.as_str());
            let features = enables
                .filter(|e| table.contains_key(*e))
                .map(str::to_string)
                .collect();
            (name.clone(), features)
        })
        .collect()
}

fn is_one_x(version: &str) -> bool {
    version.starts_with("1.")
}

/// `1.54.1` as numbers, for picking the newest.
fn version_key(version: &str) -> Vec<u64> {
    version
        .split(['.', '-'])
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// The test files whose names match `patterns` (`name`, or `prefix*`), sorted by name.
pub(crate) fn select_files(
    tokio: &TokioPackage,
    patterns: &[String],
) -> Result<Vec<TestFile>, String> {
    let tests = tokio.dir.join("tests");
    let entries = std::fs::read_dir(&tests).map_err(|e| format!("{}: {e}", tests.display()))?;
    let mut files: Vec<TestFile> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let path = entry.path();
            let name = path.file_name()?.to_str()?.strip_suffix(".rs")?.to_string();
            matches_any(&name, patterns).then_some(TestFile { name, path })
        })
        .collect();
    files.sort_by(|a, b| a.name.cmp(&b.name));
    if files.is_empty() {
        return Err(format!(
            "no file of {} matches {patterns:?}",
            tests.display()
        ));
    }
    Ok(files)
}

fn matches_any(name: &str, patterns: &[String]) -> bool {
    patterns.iter().any(|p| match p.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == p,
    })
}

/// What a file's source says about its test functions.
#[derive(Debug, Default)]
pub(crate) struct SourceScan {
    /// Names of the `async fn`s: a test of one of these names is a `#[tokio::test]`
    /// (a plain `#[test]` cannot be async).
    pub(crate) async_fns: BTreeSet<String>,
    /// Names of the functions right after a test attribute, for a file that did not
    /// compile and has no baseline listing (macro-generated tests are missed).
    pub(crate) test_fns: Vec<String>,
}

/// Reads `file` for its `async fn`s and the functions under test attributes.
pub(crate) fn scan(file: &TestFile) -> SourceScan {
    let source = std::fs::read_to_string(&file.path).unwrap_or_default();
    let mut scan = SourceScan::default();
    let mut under_test_attr = false;
    for line in source.lines().map(str::trim) {
        if line.starts_with("#[") && line.contains("test") && !line.contains("cfg(test") {
            under_test_attr = true;
        }
        let Some(name) = fn_name(line) else { continue };
        if line.contains("async fn ") {
            scan.async_fns.insert(name.clone());
        }
        if std::mem::take(&mut under_test_attr) {
            scan.test_fns.push(name);
        }
    }
    scan
}

/// The name a line declares with `fn`, if it declares one.
fn fn_name(line: &str) -> Option<String> {
    let (_, rest) = line.split_once("fn ")?;
    let before = &line[..line.len() - rest.len() - 3];
    let only_qualifiers = before
        .split_whitespace()
        .all(|w| matches!(w, "pub" | "pub(crate)" | "async" | "unsafe" | "const"));
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (only_qualifiers && !name.is_empty()).then_some(name)
}
