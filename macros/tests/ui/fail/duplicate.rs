use interleave_test::interleave;

#[interleave(seed = 1, iterations = 10, seed = 2)]
fn seed_twice() {}

#[interleave(strategy = "dfs", strategy = "pct")]
fn strategy_twice() {}

fn main() {}
