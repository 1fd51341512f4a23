// `async fn` tests: each body is the future a Tokio-shaped runtime runs as the model,
// current-thread by default, with `#[tokio::test]`'s arguments.
use interleave_test::interleave;

#[interleave(iterations = 10)]
async fn asynchronous() {
    interleave_test::future::yield_now().await;
}

#[interleave(flavor = "multi_thread", worker_threads = 2)]
async fn multi_thread() {
    interleave_test_tokio::task::yield_now().await;
}

#[interleave(flavor = "current_thread", start_paused = true)]
async fn paused() {
    interleave_test_tokio::time::sleep(std::time::Duration::from_secs(1)).await;
}

fn main() {}
