//! Task APIs Tokio code uses that the module lacked: `task_local!` whose last key has no
//! `;`, `LocalSet::enter`, and a `JoinHandle` dropped as a statement without a warning
//! (Tokio's is not `#[must_use]`; this file is compiled with that lint denied).
#![deny(unused_must_use)]

use std::cell::Cell;
use std::rc::Rc;

use interleave_test_tokio::task::{self, LocalSet};
use interleave_test_tokio::{self as tokio, runtime};

use crate::support::{every_execution, every_execution_sync};

tokio::task_local! {
    static FIRST: u8;
    static LAST: &'static str
}

tokio::task_local! {
    static ONLY: u32
}

#[test]
fn task_local_keys_may_end_without_a_semicolon() {
    every_execution(|| async {
        let seen = FIRST
            .scope(
                1,
                LAST.scope(
                    "z",
                    ONLY.scope(7, async { (FIRST.get(), LAST.get(), ONLY.get()) }),
                ),
            )
            .await;
        assert_eq!(seen, (1, "z", 7));
    });
}

/// Inside `enter`'s guard, `spawn_local` spawns on the set (before it runs, as Tokio
/// allows); the task runs once the set is driven, and the guard dropped, the set is no
/// longer the context.
#[test]
fn spawn_local_inside_a_set_entered_spawns_on_that_set() {
    every_execution_sync(|| {
        let rt = runtime::Builder::new_current_thread().build().unwrap();
        let local = LocalSet::new();
        let ran = Rc::new(Cell::new(false));
        let guard = local.enter();
        let flag = Rc::clone(&ran);
        let handle = task::spawn_local(async move { flag.set(true) });
        drop(guard);
        assert!(!ran.get(), "ran before the set was driven");
        local.block_on(&rt, async { handle.await.unwrap() });
        assert!(ran.get());
        let outside = std::panic::catch_unwind(|| drop(task::spawn_local(async {})));
        assert!(
            outside.is_err(),
            "the set stayed the context after its guard"
        );
    });
}

/// A `JoinHandle` (and a task `Builder`) left unused is no warning, as in Tokio: this
/// did not compile with `unused_must_use` denied.
#[test]
fn a_join_handle_dropped_as_a_statement_is_no_warning() {
    every_execution(|| async {
        tokio::spawn(async {});
        task::Builder::new();
    });
}
