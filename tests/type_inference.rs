//! Linking interleave-test changes no user's type inference: the fixture
//! `tests/fixtures/inference_fixture` compares a `Vec<u32>` with `vec![]` and compiles.
//!
//! Regression: the crate depended on serde_json, whose `impl PartialEq<Value> for u32` (and
//! for the other primitives and `str`) reaches every crate that links it, so that
//! `assert_eq!(v, vec![])` on a `Vec<u32>` stopped compiling ("type annotations needed").
//! The crate now reads and writes JSON with its own `protocol::json`.

mod common;

use std::path::Path;
use std::process::Command;

use common::fixture;

#[test]
fn a_vec_of_u32_still_compares_with_an_empty_vec() {
    let dest = Path::new(env!("CARGO_TARGET_TMPDIR")).join("inference-fixture");
    let root = fixture::copy("inference_fixture", &dest);
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("inference-fixture");
    let out = Command::new(env!("CARGO"))
        .args(["check", "--lib"])
        .current_dir(&root)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("Checking inference-fixture"), "{stderr}");
    assert!(
        !stderr.contains("serde_json"),
        "serde_json is built again: {stderr}"
    );
}
