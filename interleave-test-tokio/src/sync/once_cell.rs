//! [`OnceCell`], as `tokio::sync::OnceCell`: a value set once, by an async initializer.

use std::convert::Infallible;
use std::future::Future;
use std::panic::Location;
use std::sync::OnceLock;

use super::sem::{self, Acquire, AcquireNames, Sem, SemLock};
use interleave_engine::primitive::{Loc, Operation, PerExecution};
use interleave_test::sync::PoisonError;

/// What reports call `get_or_init` (and `get_or_try_init`): its look at the cell and its
/// wait for the initializer's permit, and the drop of that wait or of a running initializer.
const INIT: &AcquireNames = &[
    interleave_test::sync::section("tokio OnceCell get_or_init"),
    interleave_test::sync::section("tokio OnceCell get_or_init dropped"),
];

/// What a deadlock report says a task waits to do to the cell: its initializer's permit.
const INIT_WORDS: &str = "initialize";

/// Why [`OnceCell::set`] did not set the value; the value comes back, as
/// `tokio::sync::SetError`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetError<T> {
    /// The cell already holds a value.
    AlreadyInitializedError(T),
    /// An initializer is running (in `get_or_init` or `get_or_try_init`).
    InitializingError(T),
}

impl<T> SetError<T> {
    /// Whether the cell already held a value.
    pub fn is_already_init_err(&self) -> bool {
        matches!(self, SetError::AlreadyInitializedError(_))
    }

    /// Whether an initializer was running.
    pub fn is_initializing_err(&self) -> bool {
        matches!(self, SetError::InitializingError(_))
    }
}

impl<T> std::fmt::Display for SetError<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetError::AlreadyInitializedError(_) => f.write_str("cell already initialized"),
            SetError::InitializingError(_) => f.write_str("cell is being initialized"),
        }
    }
}

impl<T: std::fmt::Debug> std::error::Error for SetError<T> {}

/// A cell set at most once, as `tokio::sync::OnceCell`: [`get_or_init`](Self::get_or_init)
/// runs one initializer at a time, in arrival order (a fair semaphore of one permit);
/// when the running one is cancelled (its future dropped), fails or panics, the next
/// waiter runs its own, and once one sets the value every waiter returns it. Reading and
/// setting are switch points.
///
/// ```
/// use interleave_test::sync::Arc;
/// use interleave_test_tokio::{self as tokio, sync::OnceCell};
///
/// interleave_test::check_async(|| async {
///     let cell = Arc::new(OnceCell::new());
///     let other = Arc::clone(&cell);
///     let task = tokio::spawn(async move { *other.get_or_init(|| async { 1 }).await });
///     let mine = *cell.get_or_init(|| async { 2 }).await;
///     assert_eq!(task.await.unwrap(), mine, "one initializer won for both");
/// })
/// .unwrap();
/// ```
///
/// A `static` cell (made by [`const_new`](Self::const_new)) starts empty in every
/// execution:
///
/// ```
/// use interleave_test_tokio::sync::OnceCell;
///
/// static CONFIG: OnceCell<u32> = OnceCell::const_new();
///
/// interleave_test::check_async(|| async {
///     assert!(!CONFIG.initialized(), "each execution starts with an empty cell");
///     assert_eq!(*CONFIG.get_or_init(|| async { 7 }).await, 7);
/// })
/// .unwrap();
/// ```
///
/// # Differences from Tokio
/// - A cell used by several executions (a `static`, or one made outside the model
///   closure) is, in each execution, a cell of that execution's own: empty at its start,
///   or holding the value the cell was made with. What an execution sets is kept (not
///   dropped) until the cell is, since the program may borrow it for as long as the cell
///   lives: a `static` cell keeps a small state, and its value if set, per execution that
///   used it, until the process exits.
/// - `SetError`'s `Display` messages are lowercase sentences.
pub struct OnceCell<T> {
    /// The cell of each execution that uses it (one, for a cell made inside a model).
    cells: PerExecution<Cell<T>>,
    /// Whether the cell was made holding a value (in the home cell, or `constant`), which
    /// it then holds in every execution.
    preset: bool,
    /// The value of a cell made by [`const_new_with`](Self::const_new_with).
    constant: Option<T>,
}

/// The cell of one execution.
struct Cell<T> {
    /// One permit, held by the running initializer. Closed once the value is set: closing
    /// is the "initialized" flag, under the model lock, and it wakes every waiter.
    sem: SemLock,
    /// Set only by the permit's holder, just before it closes `sem`.
    value: OnceLock<T>,
}

impl<T> Cell<T> {
    /// An empty cell, or, if `set`, one that holds its value elsewhere (a `preset` cell's
    /// later executions read the home cell's).
    const fn new(set: bool) -> Self {
        let sem = match set {
            true => Sem::new_closed(1, INIT_WORDS),
            false => Sem::new(1, INIT_WORDS),
        };
        Cell {
            sem: sem::new_lock(sem, "tokio OnceCell", None),
            value: OnceLock::new(),
        }
    }
}

impl<T> OnceCell<T> {
    /// An empty cell.
    pub fn new() -> Self {
        OnceCell::new_with(None)
    }

    /// An empty cell, usable as a `static`: each execution starts with it empty.
    pub const fn const_new() -> Self {
        OnceCell {
            cells: PerExecution::new(Cell::new(false)),
            preset: false,
            constant: None,
        }
    }

    /// A cell holding `value`, usable as a `static`: it holds `value` in every execution.
    pub const fn const_new_with(value: T) -> Self {
        OnceCell {
            cells: PerExecution::new(Cell::new(true)),
            preset: true,
            constant: Some(value),
        }
    }

    /// A cell holding `value`, or an empty one for `None`.
    pub fn new_with(value: Option<T>) -> Self {
        let preset = value.is_some();
        let home = Cell::new(preset);
        if let Some(value) = value {
            let _ = home.value.set(value);
        }
        OnceCell {
            cells: PerExecution::new(home),
            preset,
            constant: None,
        }
    }

    /// The calling execution's cell.
    fn cell(&self) -> &Cell<T> {
        self.cells.get(|| Cell::new(self.preset))
    }

    /// The value `cell` holds (a `preset` cell's is `home`'s, or the constant).
    fn value<'a>(&'a self, cell: &'a Cell<T>) -> Option<&'a T> {
        let preset = || {
            let home = self.cells.home().value.get();
            self.preset
                .then(|| home.or(self.constant.as_ref()))
                .flatten()
        };
        cell.value.get().or_else(preset)
    }

    /// Whether the value is set.
    #[track_caller]
    pub fn initialized(&self) -> bool {
        let what = const { &interleave_test::sync::section("tokio OnceCell initialized") };
        sem::lock(&self.cell().sem, Location::caller(), what).is_closed()
    }

    /// The value, if it is set.
    #[track_caller]
    pub fn get(&self) -> Option<&T> {
        self.get_at(
            self.cell(),
            Location::caller(),
            const { &interleave_test::sync::section("tokio OnceCell get") },
        )
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

    /// The value, mutably, if it is set (no switch point: the borrow is exclusive).
    pub fn get_mut(&mut self) -> Option<&mut T> {
        self.cells
            .home_mut()
            .value
            .get_mut()
            .or(self.constant.as_mut())
    }

    /// Sets the value unless it is set (`AlreadyInitializedError`) or an initializer is
    /// running (`InitializingError`).
    #[track_caller]
    pub fn set(&self, value: T) -> Result<(), SetError<T>> {
        let cell = self.cell();
        let mut sem = sem::lock(
            &cell.sem,
            Location::caller(),
            const { &interleave_test::sync::section("tokio OnceCell set") },
        );
        match sem.try_acquire(1) {
            Ok(()) => {
                fill(cell, &mut sem, value);
                Ok(())
            }
            Err(true) => Err(SetError::AlreadyInitializedError(value)),
            Err(false) => Err(SetError::InitializingError(value)),
        }
    }

    /// The value, running `f` to make it when it is not set: only one initializer runs
    /// at a time; a caller that waited for another's returns that one's value. If the
    /// running initializer is cancelled or panics, the next waiter runs its own.
    ///
    /// (An `async fn` in Tokio, as is `get_or_try_init`; here functions that return the
    /// future, so that reports show where the program called them.)
    #[track_caller]
    pub fn get_or_init<F, Fut>(&self, f: F) -> impl Future<Output = &T>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = T>,
    {
        let loc = Location::caller();
        async move {
            let init = || async { Ok::<T, Infallible>(f().await) };
            match self.get_or_try_init_at(init, loc).await {
                Ok(value) => value,
                Err(never) => match never {},
            }
        }
    }

    /// As [`get_or_init`](Self::get_or_init) with a fallible initializer: on `Err` the
    /// cell stays empty, the error is returned, and the next waiter runs its own.
    #[track_caller]
    pub fn get_or_try_init<E, F, Fut>(&self, f: F) -> impl Future<Output = Result<&T, E>>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        self.get_or_try_init_at(f, Location::caller())
    }

    async fn get_or_try_init_at<E, F, Fut>(&self, f: F, loc: Loc) -> Result<&T, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let cell = self.cell();
        if let Some(value) = self.get_at(cell, loc, &INIT[0]) {
            return Ok(value);
        }
        if Acquire::new(&cell.sem, 1, loc, INIT).await.is_err() {
            // Closed: another initializer set the value while this one waited.
            return Ok(self.value(cell).expect("the cell is closed only once set"));
        }
        let permit = Permit {
            sem: &cell.sem,
            loc,
        };
        let value = f().await?;
        std::mem::forget(permit);
        let mut sem = sem::lock(
            &cell.sem,
            loc,
            const { &interleave_test::sync::section("tokio OnceCell initialized by get_or_init") },
        );
        fill(cell, &mut sem, value);
        Ok(cell.value.get().expect("just set"))
    }

    /// The value, if it is set (the first execution's, for a cell several used).
    pub fn into_inner(self) -> Option<T> {
        self.cells.into_home().value.into_inner().or(self.constant)
    }

    /// Takes the value out, leaving the cell empty (no switch point: the borrow is
    /// exclusive).
    pub fn take(&mut self) -> Option<T> {
        let home = self.cells.home_mut();
        let value = home.value.take().or(self.constant.take());
        *home.sem.get_mut().unwrap_or_else(PoisonError::into_inner) = Sem::new(1, INIT_WORDS);
        self.preset = false;
        value
    }
}

/// Sets `cell`'s value and closes its semaphore; the caller holds its permit.
fn fill<T>(cell: &Cell<T>, sem: &mut Sem, value: T) {
    debug_assert!(!sem.is_closed(), "only the permit's holder sets the value");
    if cell.value.set(value).is_err() {
        unreachable!("the value is set once, by the permit's holder");
    }
    sem.close();
}

/// The initializer's permit: given back when it is dropped before the value is set (the
/// initializer was cancelled, failed or panicked), which lets the next waiter run.
struct Permit<'a> {
    sem: &'a SemLock,
    /// Where the program asked for the value.
    loc: Loc,
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        sem::lock(self.sem, self.loc, &INIT[1]).release(1);
    }
}

impl<T> Default for OnceCell<T> {
    fn default() -> Self {
        OnceCell::new()
    }
}

impl<T> From<T> for OnceCell<T> {
    fn from(value: T) -> Self {
        OnceCell::new_with(Some(value))
    }
}

impl<T: Clone> Clone for OnceCell<T> {
    fn clone(&self) -> Self {
        OnceCell::new_with(self.get().cloned())
    }
}

impl<T: PartialEq> PartialEq for OnceCell<T> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl<T: Eq> Eq for OnceCell<T> {}

impl<T: std::fmt::Debug> std::fmt::Debug for OnceCell<T> {
    /// Shows the value without a switch point: the first execution's, if it set one.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnceCell")
            .field(
                "value",
                &self.cells.home().value.get().or(self.constant.as_ref()),
            )
            .finish()
    }
}
