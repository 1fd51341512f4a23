use interleave_test::interleave;

#[interleave(depth = 2)]
fn depth_without_strategy() {}

#[interleave(strategy = "dfs", depth = 2)]
fn depth_with_dfs() {}

#[interleave(max_preemptions = 2)]
fn bound_without_strategy() {}

#[interleave(strategy = "pct", max_preemptions = 2)]
fn bound_with_pct() {}

#[interleave(strategy = "random", depth = 2, max_preemptions = 1)]
fn both_with_random() {}

fn main() {}
