//! Copies of the fixture crates under `tests/fixtures/`, built by the end-to-end tests.

use std::path::{Path, PathBuf};
use std::process::Command;

/// This repository's root.
pub(crate) fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh copy of `tests/fixtures/<fixture>` at `dest`, its dependencies on this repository's
/// packages (paths starting `../../..`) pointing here, and locked like it (so building it
/// needs no registry).
pub(crate) fn copy(fixture: &str, dest: &Path) -> PathBuf {
    if dest.exists() {
        std::fs::remove_dir_all(dest).unwrap();
    }
    copy_dir(&repo().join("tests/fixtures").join(fixture), dest);
    let manifest = dest.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let dependency = format!("path = \"{}", repo().display());
    let patched = text.replace(r#"path = "../../.."#, &dependency);
    assert_ne!(
        text, patched,
        "the fixture's dependency path changed; update common::fixture::copy"
    );
    std::fs::write(&manifest, patched).unwrap();
    std::fs::copy(repo().join("Cargo.lock"), dest.join("Cargo.lock")).unwrap();
    dest.to_owned()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == "Cargo.lock" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(&name));
        } else {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

/// Runs `cargo test --release` in `root` with `args`, with `--cfg interleave` or not, as a
/// user's shell would (none of this process's settings); exit code and output. Every
/// fixture builds in one directory with the same flags, so they share one build of
/// interleave-test.
pub(crate) fn cargo_test(root: &Path, cfg: bool, args: &[&str]) -> (Option<i32>, String) {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("loop-fixture");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["test", "--release"])
        .args(args)
        .current_dir(root)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    if cfg {
        cmd.env("RUSTFLAGS", "--cfg interleave");
    }
    for (var, _) in std::env::vars_os() {
        if var.to_string_lossy().starts_with("INTERLEAVE_") {
            cmd.env_remove(var);
        }
    }
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}
