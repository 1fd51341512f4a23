use interleave_test::interleave;

#[interleave(strategy = "pct", depth = 4_294_967_296)]
fn depth_too_large() {}

#[interleave(seed = 18_446_744_073_709_551_616)]
fn seed_too_large() {}

#[interleave(iterations = 5u32)]
fn wrong_suffix() {}

fn main() {}
