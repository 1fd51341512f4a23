// `crate = path` names the runtime through a re-export, for a crate whose users do not
// depend on interleave-test themselves.
mod reexport {
    pub use interleave_test;
}

use reexport::interleave_test::interleave;

#[interleave(crate = reexport::interleave_test, strategy = "dfs")]
fn through_a_reexport() {}

#[interleave(crate = crate::reexport::interleave_test, strategy = "pct")]
fn through_a_crate_path() {}

fn main() {}
