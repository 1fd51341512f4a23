use interleave_test::interleave;

#[interleave]
async fn asynchronous() {}

fn main() {}
