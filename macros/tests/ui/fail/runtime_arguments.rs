// The runtime's arguments, checked as `#[tokio::test]` checks them.
use interleave_test::interleave;

#[interleave(worker_threads = 2)]
async fn workers_without_multi_thread() {}

#[interleave(flavor = "multi_thread", start_paused = true)]
async fn paused_multi_thread() {}

#[interleave(flavor = "single")]
async fn unknown_flavor() {}

#[interleave(flavor = "multi_thread")]
fn not_async() {}

fn main() {}
