// An `async fn` test: its body is the future `block_on` runs as the model.
use interleave_test::interleave;

#[interleave(iterations = 10)]
async fn asynchronous() {
    interleave_test::future::yield_now().await;
}

fn main() {}
