use interleave_test::interleave;

#[interleave(strategy = pct)]
fn not_a_string() {}

#[interleave(strategy = "bfs")]
fn unknown_strategy() {}

#[interleave(strategy = "PCT", depth = 2)]
fn unknown_strategy_with_depth() {}

fn main() {}
