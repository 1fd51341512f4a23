//! [`SetOnce`], as `tokio::sync::SetOnce`: a value set once, which tasks can wait for.

use std::future::Future;
use std::panic::Location;
use std::sync::OnceLock;

use super::sem::{self, Acquire, AcquireNames, Sem, SemLock};
use interleave_engine::primitive::{Loc, Operation, PerExecution};

/// What reports call `wait`: its look at the cell and its wait, and the drop of that wait.
const WAIT: &AcquireNames = &[
    interleave_test::sync::section("tokio SetOnce wait"),
    interleave_test::sync::section("tokio SetOnce wait dropped"),
];

/// Why [`SetOnce::set`] did not set the value: it was already set. The value comes back,
/// as `tokio::sync::SetOnceError`.
#[derive(Debug, PartialEq, Eq)]
pub struct SetOnceError<T>(pub T);

impl<T> std::fmt::Display for SetOnceError<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SetOnceError")
    }
}

impl<T: std::fmt::Debug> std::error::Error for SetOnceError<T> {}

/// A value set at most once, which tasks can wait for, as `tokio::sync::SetOnce` (an
/// event that carries a value): [`set`](Self::set) fills it if nobody did, and every task
/// in [`wait`](Self::wait) then returns it. Looking at it, setting it and waiting are
/// switch points, so the search orders a `set` against every look and wait.
///
/// ```
/// use interleave_test::sync::Arc;
/// use interleave_test_tokio::{self as tokio, sync::SetOnce};
///
/// interleave_test::check_async(|| async {
///     let ready = Arc::new(SetOnce::new());
///     let setter = Arc::clone(&ready);
///     tokio::spawn(async move { setter.set(5) });
///     assert_eq!(*ready.wait().await, 5, "the waiter sees the value once it is set");
///     assert!(ready.set(6).is_err(), "set once only");
/// })
/// .unwrap();
/// ```
///
/// # Differences from Tokio
/// - A `SetOnce` used by several executions (a `static` made by
///   [`const_new`](Self::const_new), or one made outside the model closure) is, in each
///   execution, one of that execution's own, as [`OnceCell`](super::OnceCell) is: empty at
///   its start, or holding the value it was made with; what an execution sets is kept until
///   the `SetOnce` is dropped (for a `static`, until the process exits). Outside a model
///   each OS thread is an execution of its own, so two plain threads do not share a
///   `static` `SetOnce`.
/// - `wait` is a function that returns the future (an `async fn` in Tokio), so that reports
///   show where the program called it.
pub struct SetOnce<T> {
    /// The cell of each execution that uses it (one, for a `SetOnce` made inside a model).
    cells: PerExecution<Cell<T>>,
    /// Whether it was made holding a value (in the home cell, or `constant`), which it
    /// then holds in every execution.
    preset: bool,
    /// The value of one made by [`const_new_with`](Self::const_new_with).
    constant: Option<T>,
}

/// The cell of one execution.
struct Cell<T> {
    /// No permits: waiters queue on it until it is closed. Closing is the "set" flag,
    /// under the model lock, and it wakes every waiter.
    sem: SemLock,
    /// Set under `sem`'s lock, just before it is closed.
    value: OnceLock<T>,
}

impl<T> Cell<T> {
    /// An empty cell, or, if `set`, one that holds its value elsewhere (a `preset` one's
    /// later executions read the home cell's, or the constant).
    const fn new(set: bool) -> Self {
        let sem = match set {
            true => Sem::new_closed(0, "wait for the value of"),
            false => Sem::new(0, "wait for the value of"),
        };
        Cell {
            sem: sem::new_lock(sem, "tokio SetOnce", None),
            value: OnceLock::new(),
        }
    }
}

impl<T> SetOnce<T> {
    /// An empty `SetOnce`.
    pub fn new() -> Self {
        SetOnce::new_with(None)
    }

    /// An empty `SetOnce`, usable as a `static`: each execution starts with it empty.
    pub const fn const_new() -> Self {
        SetOnce {
            cells: PerExecution::new(Cell::new(false)),
            preset: false,
            constant: None,
        }
    }

    /// A `SetOnce` holding `value`, or an empty one for `None`.
    pub fn new_with(value: Option<T>) -> Self {
        let preset = value.is_some();
        let home = Cell::new(preset);
        if let Some(value) = value
            && home.value.set(value).is_err()
        {
            unreachable!("a new cell is empty");
        }
        SetOnce {
            cells: PerExecution::new(home),
            preset,
            constant: None,
        }
    }

    /// A `SetOnce` holding `value`, usable as a `static`: it holds `value` in every
    /// execution.
    pub const fn const_new_with(value: T) -> Self {
        SetOnce {
            cells: PerExecution::new(Cell::new(true)),
            preset: true,
            constant: Some(value),
        }
    }

    /// The calling execution's cell.
    fn cell(&self) -> &Cell<T> {
        self.cells.get(|| Cell::new(self.preset))
    }

    /// The value `cell` holds (a `preset` one's is the home cell's, or the constant).
    fn value<'a>(&'a self, cell: &'a Cell<T>) -> Option<&'a T> {
        let preset = || {
            let home = self.cells.home().value.get();
            self.preset
                .then(|| home.or(self.constant.as_ref()))
                .flatten()
        };
        cell.value.get().or_else(preset)
    }

    /// Whether the value is set. A switch point.
    #[track_caller]
    pub fn initialized(&self) -> bool {
        let what = const { &interleave_test::sync::section("tokio SetOnce initialized") };
        sem::lock(&self.cell().sem, Location::caller(), what).is_closed()
    }

    /// The value, if it is set. A switch point.
    #[track_caller]
    pub fn get(&self) -> Option<&T> {
        let what = const { &interleave_test::sync::section("tokio SetOnce get") };
        self.get_at(self.cell(), Location::caller(), what)
    }

    fn get_at<'a>(
        &'a self,
        cell: &'a Cell<T>,
        loc: Loc,
        what: &'static Operation,
    ) -> Option<&'a T> {
        match sem::lock(&cell.sem, loc, what).is_closed() {
            true => self.value(cell),
            false => None,
        }
    }

    /// Sets the value and wakes every waiter, unless it is set already: then the value
    /// comes back in the error. A switch point.
    #[track_caller]
    pub fn set(&self, value: T) -> Result<(), SetOnceError<T>> {
        let cell = self.cell();
        let what = const { &interleave_test::sync::section("tokio SetOnce set") };
        let mut sem = sem::lock(&cell.sem, Location::caller(), what);
        if sem.is_closed() {
            return Err(SetOnceError(value));
        }
        if cell.value.set(value).is_err() {
            unreachable!("the value is set once, under the lock, before the close");
        }
        sem.close();
        Ok(())
    }

    /// The value, if it is set (the first execution's, for one several used). No switch
    /// point: it is owned.
    pub fn into_inner(self) -> Option<T> {
        self.cells.into_home().value.into_inner().or(self.constant)
    }

    /// Waits until the value is set and returns it; at once if it is. Cancel-safe.
    #[track_caller]
    pub fn wait(&self) -> impl Future<Output = &T> + '_ {
        let loc = Location::caller();
        async move {
            let cell = self.cell();
            if let Some(value) = self.get_at(cell, loc, &WAIT[0]) {
                return value;
            }
            // No permit is ever given: the wait ends when `set` closes the semaphore.
            let closed = Acquire::new(&cell.sem, 1, loc, WAIT).await;
            debug_assert!(closed.is_err(), "a SetOnce's semaphore has no permits");
            self.value(cell).expect("closed only once set")
        }
    }
}

impl<T> Default for SetOnce<T> {
    fn default() -> Self {
        SetOnce::new()
    }
}

impl<T> From<T> for SetOnce<T> {
    fn from(value: T) -> Self {
        SetOnce::new_with(Some(value))
    }
}

impl<T: Clone> Clone for SetOnce<T> {
    /// A `SetOnce` holding a clone of the value, if it is set (a switch point).
    fn clone(&self) -> Self {
        SetOnce::new_with(self.get().cloned())
    }
}

impl<T: PartialEq> PartialEq for SetOnce<T> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl<T: Eq> Eq for SetOnce<T> {}

impl<T: std::fmt::Debug> std::fmt::Debug for SetOnce<T> {
    /// Shows the value without a switch point: the first execution's, if it set one.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetOnce")
            .field(
                "value",
                &self.cells.home().value.get().or(self.constant.as_ref()),
            )
            .finish()
    }
}
