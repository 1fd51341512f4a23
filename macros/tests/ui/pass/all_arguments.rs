// Every argument, each strategy with and without its parameter, and the forms numbers may
// take (underscores, the field's own suffix); an explicit `-> ()` and a raw identifier.
use interleave_test::interleave;

#[interleave(
    iterations = 500,
    seed = 7,
    strategy = "pct",
    depth = 3,
    max_steps = 10_000,
    crate = ::interleave_test,
)]
fn pct_with_everything() {}

#[interleave(strategy = "pct")]
fn pct_default_depth() {}

#[interleave(strategy = "dfs", max_preemptions = 0)]
fn dfs_bounded() {}

#[interleave(strategy = "dfs")]
fn dfs_unbounded() {}

#[interleave(strategy = "random", seed = 18_446_744_073_709_551_615, iterations = 5u64)]
fn random_max_seed() {}

#[interleave(strategy = "pct", depth = 2u32, crate = "interleave_test")]
fn suffixes_and_string_crate() -> () {}

#[interleave]
fn r#match() {}

#[interleave(clock = "paused", flavor = "multi_thread", worker_threads = 2)]
async fn paused_clock_on_many_threads() {}

#[interleave(clock = "loaded")]
fn loaded_clock() {}

fn main() {}
