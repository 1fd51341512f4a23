use interleave_test::interleave;

#[interleave(iterations = "500")]
fn string() {}

#[interleave(seed = -1)]
fn negative() {}

#[interleave(max_steps = 1.5)]
fn float() {}

#[interleave(strategy = "pct", depth = three)]
fn ident() {}

#[interleave(strategy = "dfs", max_preemptions = None)]
fn option() {}

fn main() {}
