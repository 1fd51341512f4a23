//! A Tokio-style connection pool whose connections leak when a request times out, found,
//! explained and replayed.
//!
//! Run with `cargo run --example connection_pool`.
//!
//! The pool hands out at most `POOL_SIZE` connections (a `Semaphore` of that many
//! permits, a list of idle connections). A request handler checks a connection out, runs
//! its query and gives the connection back; every request runs under a `timeout`. The bug:
//! the handler gives the connection back with a call at its end, so when the timeout
//! cancels the handler during its query (the handler's future is dropped at that
//! `.await`), the connection and its permit are never given back, and the pool shrinks for
//! good. The fix gives the connection back in a guard's `Drop`, which runs on cancellation
//! too.
//!
//! The query takes 4 ms and the timeout is 10 ms, so the bug needs a request to be slowed
//! past its deadline, as a loaded machine does to real ones. Time here is virtual: a timer
//! never fires before its deadline, but it may fire while other tasks could still act (the
//! clock then jumps to it), and that choice is part of the search. A tool whose timers
//! never fire cannot reach the timeout path at all.

use std::time::Duration;

use interleave_test::sync::atomic::{AtomicU32, Ordering};
use interleave_test::sync::{Arc, Mutex};
use interleave_test_tokio::runtime::Builder as Runtime;
use interleave_test_tokio::sync::Semaphore;
use interleave_test_tokio::task::JoinSet;
use interleave_test_tokio::time::{sleep, timeout};

#[path = "support/mod.rs"]
mod support;

const POOL_SIZE: usize = 1;
const QUERY: Duration = Duration::from_millis(4);
const REQUEST_TIMEOUT: Duration = Duration::from_millis(10);

/// A database connection.
struct Conn {
    id: u32,
}

/// At most `POOL_SIZE` connections: a permit per connection checked out, and the idle ones.
struct Pool {
    permits: Semaphore,
    /// Held only for a push or a pop, never across an `.await`: a std-style mutex, as
    /// Tokio's docs advise for short critical sections.
    idle: Mutex<Vec<Conn>>,
    opened: AtomicU32,
}

impl Pool {
    fn new() -> Pool {
        Pool {
            permits: Semaphore::new(POOL_SIZE),
            idle: Mutex::new(Vec::new()),
            opened: AtomicU32::new(0),
        }
    }

    /// Waits for a permit, then takes an idle connection or opens one. The permit is
    /// forgotten here and given back by [`Pool::give_back`].
    async fn check_out(&self) -> Conn {
        let permit = self
            .permits
            .acquire()
            .await
            .expect("the pool is never closed");
        permit.forget();
        let idle = self.idle.lock().unwrap().pop();
        idle.unwrap_or_else(|| Conn {
            id: self.opened.fetch_add(1, Ordering::Relaxed),
        })
    }

    fn give_back(&self, conn: Conn) {
        self.idle.lock().unwrap().push(conn);
        self.permits.add_permits(1);
    }
}

/// Runs `request` on `conn`: a round trip to the database.
async fn query(conn: &Conn, request: u32) -> u32 {
    sleep(QUERY).await;
    request * 10 + conn.id
}

/// The buggy handler: gives the connection back only if it runs to its end.
async fn handle_leaky(pool: &Pool, request: u32) -> u32 {
    let conn = pool.check_out().await;
    let answer = query(&conn, request).await;
    pool.give_back(conn);
    answer
}

/// The fixed handler: a guard gives the connection back when it is dropped, which
/// happens on cancellation too.
async fn handle_guarded(pool: &Pool, request: u32) -> u32 {
    struct Guard<'a>(&'a Pool, Option<Conn>);
    impl Drop for Guard<'_> {
        fn drop(&mut self) {
            if let Some(conn) = self.1.take() {
                self.0.give_back(conn);
            }
        }
    }
    let guard = Guard(pool, Some(pool.check_out().await));
    query(guard.1.as_ref().expect("set above"), request).await
}

/// Two clients send two requests each, each request under `REQUEST_TIMEOUT`; at the end
/// the pool must have all its connections back, whatever timed out.
async fn service<H, F>(handle: H)
where
    H: Fn(Arc<Pool>, u32) -> F,
    F: Future<Output = u32> + Send + 'static,
{
    let pool = Arc::new(Pool::new());
    let mut clients = JoinSet::new();
    for client in 0..2 {
        let requests: Vec<_> = (0..2)
            .map(|n| handle(Arc::clone(&pool), client * 2 + n))
            .collect();
        clients.spawn(async move {
            for request in requests {
                // A timed-out request is an error for the client, not a bug of the pool.
                let _ = timeout(REQUEST_TIMEOUT, request).await;
            }
        });
    }
    clients.join_all().await;
    assert_eq!(
        pool.permits.available_permits(),
        POOL_SIZE,
        "a connection was lost: the pool can hand out {} of its {POOL_SIZE}",
        pool.permits.available_permits(),
    );
}

/// The model: the service on a multi-thread runtime, with the buggy handler.
pub(crate) fn leaky_service() {
    let runtime = Runtime::new_multi_thread().build().unwrap();
    runtime.block_on(service(|pool, request| async move {
        handle_leaky(&pool, request).await
    }));
}

/// The same service with the fixed handler.
pub(crate) fn guarded_service() {
    let runtime = Runtime::new_multi_thread().build().unwrap();
    runtime.block_on(service(|pool, request| async move {
        handle_guarded(&pool, request).await
    }));
}

fn main() {
    support::find_replay_and_check_fix(
        "connection_pool",
        leaky_service,
        guarded_service,
        "with the guard",
    );
}
