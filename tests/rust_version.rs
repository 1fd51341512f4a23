//! `rust-version` is what the crates really need, derived from the lock file: no older Rust
//! can build the dependencies the lock file resolves (`cargo metadata` gives each package's
//! own `rust-version`), so each package of the workspace declares the newest of those among
//! the packages it builds with (normal and build dependencies, on this platform, through the
//! lock file; dev-dependencies are not the users' concern), or a newer one. An older
//! toolchain cannot be installed here, so what the crates' own code needs is not checked (it
//! builds with the toolchain CI has); a dependency update that needs a newer Rust fails this
//! test until `rust-version` follows.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

/// A Rust version as `(major, minor)`.
type Version = (u64, u64);

fn parse(version: &str) -> Version {
    let mut parts = version.split('.').map(|p| p.parse::<u64>().unwrap());
    (parts.next().unwrap(), parts.next().unwrap_or(0))
}

/// `cargo metadata` of the workspace, resolved through the lock file for this platform.
fn metadata() -> Value {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let rustc = Command::new("rustc").arg("-vV").output().unwrap();
    let info = String::from_utf8(rustc.stdout).unwrap();
    let host = info
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host");
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--filter-platform",
        ])
        .arg(host)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// For each package of the workspace: its declared `rust-version`, and the newest one among
/// the packages it builds with (itself excluded), with that package's name.
fn needs(m: &Value) -> BTreeMap<String, (Version, (Version, String))> {
    let packages: BTreeMap<&str, &Value> = m["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p))
        .collect();
    let nodes: BTreeMap<&str, &Value> = m["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let version = |id: &str| packages[id]["rust_version"].as_str().map(parse);
    let mut out = BTreeMap::new();
    for member in m["workspace_members"].as_array().unwrap() {
        let member = member.as_str().unwrap();
        let (mut seen, mut todo) = (BTreeSet::new(), vec![member]);
        while let Some(id) = todo.pop() {
            if !seen.insert(id) {
                continue;
            }
            for dep in nodes[id]["deps"].as_array().unwrap() {
                let built = dep["dep_kinds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|k| k["kind"].is_null() || k["kind"] == "build");
                if built {
                    todo.push(dep["pkg"].as_str().unwrap());
                }
            }
        }
        let newest = seen
            .iter()
            .filter(|id| **id != member)
            .filter_map(|id| version(id).map(|v| (v, packages[id]["name"].to_string())))
            .max()
            .unwrap_or(((1, 0), "none".to_owned()));
        let name = packages[member]["name"].as_str().unwrap().to_owned();
        let declared = version(member).unwrap_or_else(|| panic!("{name} declares no rust-version"));
        out.insert(name, (declared, newest));
    }
    out
}

#[test]
fn each_package_declares_the_rust_its_dependencies_need() {
    let needs = needs(&metadata());
    assert!(needs.contains_key("interleave-test"), "{needs:?}");
    for (name, (declared, (newest, by))) in &needs {
        // Edition 2024 needs 1.85 whatever the dependencies.
        let needed = (*newest).max((1, 85));
        assert!(
            *declared >= needed,
            "{name} declares rust-version {declared:?}, but what it builds with needs \
             {needed:?} ({by} needs {newest:?}); set rust-version to that"
        );
    }
}
