use interleave_test::interleave;

#[interleave(iterations = 0)]
fn no_iterations() {}

#[interleave(max_steps = 0)]
fn no_steps() {}

#[interleave(strategy = "pct", depth = 0)]
fn depth_zero() {}

fn main() {}
