use interleave_test::interleave;

#[interleave]
const fn constant() {}

#[interleave]
unsafe fn not_safe() {}

#[interleave]
extern "C" fn foreign() {}

fn main() {}
