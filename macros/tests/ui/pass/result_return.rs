// A test may return `Result<(), E>` with `E: Debug`, sync or async, through an alias too;
// `?` returns from the body.
use interleave_test::interleave;

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[interleave]
fn plain() -> Result<(), String> {
    Err::<(), _>("never".to_string()).or(Ok(()))
}

#[interleave]
fn alias() -> TestResult {
    let _: u32 = "1".parse()?;
    Ok(())
}

#[interleave(flavor = "multi_thread")]
async fn asynchronous() -> std::io::Result<()> {
    interleave_test_tokio::spawn(async {}).await?;
    Ok(())
}

#[interleave_test_tokio::test]
async fn under_tokios_name() -> Result<(), interleave_test_tokio::task::JoinError> {
    interleave_test_tokio::spawn(async {}).await
}

fn main() {}
