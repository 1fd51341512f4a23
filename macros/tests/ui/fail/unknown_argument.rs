use interleave_test::interleave;

#[interleave(iteration = 5)]
fn misspelled() {}

#[interleave(threads = 2, seed = 1)]
fn unknown() {}

#[interleave("pct")]
fn not_a_key() {}

fn main() {}
