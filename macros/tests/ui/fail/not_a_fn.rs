use interleave_test::interleave;

#[interleave]
struct Model {
    threads: usize,
}

#[interleave(strategy = "dfs")]
mod models {}

#[interleave]
const LIMIT: u32 = 3;

fn main() {}
