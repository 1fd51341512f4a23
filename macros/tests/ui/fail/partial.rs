use interleave_test::interleave;

#[interleave(strategy = "dfs", partial = 1)]
fn a_number() {}

#[interleave(partial = "yes")]
fn a_string() {}

fn main() {}
