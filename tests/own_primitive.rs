//! A primitive written outside the crates, through the engine's public interface only: a
//! counting semaphore, as a user who models their own primitive would write it. It
//! declares its two operations (name, access, what a blocked acquire waits for), keeps its
//! permits in the object table, waits through the engine and tells it who holds a permit.
//! Checked: the reduced search finds what the full search finds, the memory model orders
//! data through it, deadlock reports name it and its operation, and schedules replay; a
//! `static` one starts afresh in every execution, state a primitive keeps of its own
//! (`PerExecution`) is each execution's, and a wrong declaration is a `Misuse`.

mod common;

use std::panic::Location;
use std::sync::atomic::{AtomicUsize, Ordering};

use interleave_engine::primitive::{
    self, Blocked, Loc, ObjId, ObjectHandle, ObjectState, OpKind, Operation, PerExecution, Role,
    StateRef, Tid, Waits,
};
use interleave_test::cell::UnsafeCell;
use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Builder, FailureKind, Reduction, StrategyKind, Substrate, thread};

/// The standard library's `Arc`, for what the tests count outside the model.
type Arc2<T> = std::sync::Arc<T>;

/// `acquire`: takes a permit, waiting while there is none. A write, not `Role::Acquire`:
/// with more than one permit, a thread may take one while another holds one, which an
/// `Acquire` (a lock's, taken by one thread at a time) would tell the search cannot happen
/// (and the engine reports as a `Misuse` when it sees it can).
/// To the memory model a write reads and publishes, as an atomic counter's update does.
const ACQUIRE: OpKind = OpKind::new(
    &Operation::new("semaphore acquire")
        .access(Role::Write)
        .waits("acquire a permit from"),
);
/// `release`: gives a permit back.
const RELEASE: OpKind = OpKind::new(&Operation::new("semaphore release").access(Role::Write));

/// The operations of a semaphore declared as a lock's, which is right only for one permit.
const LOCKING: (OpKind, OpKind) = (
    OpKind::new(
        &Operation::new("locking acquire")
            .access(Role::Acquire)
            .waits("acquire a permit from"),
    ),
    OpKind::new(&Operation::new("locking release").access(Role::Release)),
);

/// A semaphore's permits in one execution, in the object table.
#[derive(Debug, Default)]
struct Permits {
    /// How many there are: set by the first operation of the execution on the semaphore.
    capacity: Option<usize>,
    /// The permits taken, by whom and where.
    taken: Vec<(Tid, Loc)>,
}

impl Permits {
    fn free(&self) -> bool {
        self.capacity.is_none_or(|n| self.taken.len() < n)
    }
}

impl ObjectState for Permits {
    fn holders(&self) -> Vec<(Tid, Loc)> {
        self.taken.clone()
    }

    fn enabled(&self, kind: OpKind, _me: Tid) -> bool {
        !kind.can_wait() || self.free()
    }
}

/// A counting semaphore.
struct Semaphore {
    handle: ObjectHandle,
    permits: usize,
    /// Its acquire and release.
    ops: (OpKind, OpKind),
}

impl Semaphore {
    fn new(permits: usize) -> Self {
        Semaphore {
            handle: ObjectHandle::new("Semaphore"),
            permits,
            ops: (ACQUIRE, RELEASE),
        }
    }

    /// A semaphore whose operations are declared as a lock's.
    fn locking(permits: usize) -> Self {
        Semaphore {
            ops: LOCKING,
            ..Semaphore::new(permits)
        }
    }

    /// A semaphore that can be a `static`: the object table holds all its state, so the
    /// engine registers it afresh in every execution.
    const fn restorable(permits: usize) -> Self {
        Semaphore {
            handle: ObjectHandle::restorable("Semaphore"),
            permits,
            ops: (ACQUIRE, RELEASE),
        }
    }

    /// A `static` semaphore that does not say so.
    const fn unrestorable(permits: usize) -> Self {
        Semaphore {
            handle: ObjectHandle::new("Semaphore"),
            permits,
            ops: (ACQUIRE, RELEASE),
        }
    }

    /// Its state in the running execution, made on first use.
    fn state<'a>(&self, a: &'a mut primitive::Access<'_>, obj: ObjId) -> &'a mut Permits {
        let state = a.obj::<Permits>(obj);
        state.capacity.get_or_insert(self.permits);
        state
    }

    /// Takes a permit, waiting for one.
    #[track_caller]
    fn acquire(&self) {
        let loc = Location::caller();
        let obj: ObjId = primitive::switch_point(self.ops.0, Some(&self.handle), loc)
            .expect("a switch point on an object returns its id");
        let take = |a: &mut primitive::Access<'_>| {
            let me = a.me();
            let state = self.state(a, obj);
            let free = state.free();
            if free {
                state.taken.push((me, loc));
            }
            free
        };
        while !primitive::with_state("Semaphore::acquire", take) {
            primitive::block(Blocked {
                what: Waits::To(self.ops.0.waits_to()),
                obj: Some(obj),
                thread: None,
                deadline: None,
                loc,
            });
        }
    }

    /// Gives back a permit this thread holds.
    #[track_caller]
    fn release(&self) {
        let loc = Location::caller();
        let obj = primitive::switch_point(self.ops.1, Some(&self.handle), loc)
            .expect("a switch point on an object returns its id");
        primitive::with_state("Semaphore::release", |a| {
            let me = a.me();
            let state = self.state(a, obj);
            let mine = state.taken.iter().position(|(t, _)| *t == me);
            state
                .taken
                .remove(mine.expect("a release of a permit this thread holds"));
            a.wake_all(obj);
        });
    }
}

/// A `static` semaphore, restorable.
static SHARED: Semaphore = Semaphore::restorable(1);

/// A `static` semaphore that is not.
static UNSHARED: Semaphore = Semaphore::unrestorable(1);

/// Two threads each write a cell under the semaphore `sem`.
fn two_writers_under(sem: &'static Semaphore) {
    let cell = Arc::new(UnsafeCell::new(0_u32));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let cell = Arc::clone(&cell);
            thread::spawn(move || {
                sem.acquire();
                cell.with_mut(|_| ());
                sem.release();
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
}

/// A primitive's state outside the object table, one per execution: a count of the
/// operations on it, which replays only if every execution starts from the home state.
static COUNTS: PerExecution<AtomicUsize> = PerExecution::new(AtomicUsize::new(0));

/// DFS with `reduction`, every execution.
fn dfs(reduction: Reduction) -> Builder {
    Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: None,
        })
        .reduction(reduction)
}

/// What guards the shared cell in [`two_writers`].
#[derive(Clone, Copy, Debug)]
enum Guard {
    /// A semaphore of this many permits.
    Permits(usize),
    /// A semaphore of this many permits whose operations are declared as a lock's.
    Locking(usize),
    /// The crate's `Mutex`.
    Mutex,
}

/// Two threads each write a cell under `guard`, then the main thread reads it.
fn two_writers(guard: Guard) -> impl Fn() + Sync {
    move || {
        let cell = Arc::new(UnsafeCell::new(0_u32));
        let permits = Arc::new(match guard {
            Guard::Permits(n) => Semaphore::new(n),
            Guard::Locking(n) => Semaphore::locking(n),
            Guard::Mutex => Semaphore::new(1),
        });
        let mutex = Arc::new(Mutex::new(()));
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let (cell, permits, mutex) =
                    (Arc::clone(&cell), Arc::clone(&permits), Arc::clone(&mutex));
                thread::spawn(move || match guard {
                    Guard::Mutex => {
                        let _held = mutex.lock().unwrap();
                        cell.with_mut(|_| ());
                    }
                    Guard::Permits(_) | Guard::Locking(_) => {
                        permits.acquire();
                        cell.with_mut(|_| ());
                        permits.release();
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        cell.with(|_| ());
    }
}

#[test]
fn the_reduced_search_finds_what_the_full_search_finds_in_fewer_executions() {
    // One permit: the two classes of schedules (who takes it first), in 3 executions of
    // which 1 is redundant (sleep-set blocked), against 39 for the full search.
    for (reduction, executions, redundant) in [(Reduction::Dpor, 3, 1), (Reduction::Off, 39, 0)] {
        let report = dfs(reduction)
            .check(two_writers(Guard::Permits(1)))
            .unwrap_or_else(|f| panic!("{reduction:?}: {f}"));
        assert!(report.exhausted, "{reduction:?}: {report}");
        assert_eq!(report.executions, executions, "{reduction:?}: {report:?}");
        assert_eq!(report.redundant, redundant, "{reduction:?}: {report:?}");
    }
    // Two permits: both searches find the race.
    for reduction in [Reduction::Dpor, Reduction::Off] {
        let failure = dfs(reduction)
            .check(two_writers(Guard::Permits(2)))
            .expect_err("two permits let both threads write at once");
        assert_eq!(
            failure.kind(),
            FailureKind::DataRace,
            "{reduction:?}: {failure}"
        );
    }
    // The crate's own lock, for scale: a lock's acquire cannot be reversed with its
    // release (`Role::Acquire`), which leaves no redundant execution.
    let mutex = dfs(Reduction::Dpor)
        .check(two_writers(Guard::Mutex))
        .unwrap();
    assert_eq!((mutex.executions, mutex.redundant), (2, 0));
}

/// The misuse `model` makes of a semaphore declared as a lock, under DFS with `reduction`
/// on `substrate`: checked to name the operation and what to declare, and to replay.
fn acquire_misuse(model: impl Fn() + Sync, reduction: Reduction, substrate: Substrate) {
    let case = format!("{reduction:?} on {substrate:?}");
    let failure = dfs(reduction)
        .substrate(substrate)
        .check(&model)
        .expect_err("the declaration is wrong, and the search says so");
    assert_eq!(failure.kind(), FailureKind::Misuse, "{case}: {failure}");
    let report = failure.to_string();
    for words in [
        "can `locking acquire` Semaphore #",
        "while thread",
        "declared `Role::Acquire`",
        "as `Role::Write`",
    ] {
        assert!(report.contains(words), "{case}: {words}: {report}");
    }
    let replayed = Builder::new()
        .substrate(substrate)
        .replay(&model, failure.schedule());
    assert_eq!(replayed.unwrap_err(), failure, "{case}");
}

/// A thread takes a permit of a two-permit semaphore declared as a lock and ends holding
/// it; the main thread takes one and gives it back. The first execution passes (the main
/// thread's permit is back before the thread takes one); the search then runs the thread
/// first, and it ends holding its permit while the main thread is about to take one: the
/// check fails the execution as the thread ends, not at a switch point.
fn permit_kept_at_the_end() {
    let sem = Arc::new(Semaphore::locking(2));
    let theirs = Arc::clone(&sem);
    let t = thread::spawn(move || theirs.acquire());
    sem.acquire();
    sem.release();
    t.join().unwrap();
}

#[test]
fn an_acquire_declared_exclusive_that_is_not_is_misuse_not_a_proof() {
    // Two permits let both threads hold one: a lock's `Acquire` promises otherwise, and the
    // reduction, trusting it, would never run the two writes unordered. The full search
    // checks it too (random and PCT, which prove nothing, do not).
    for substrate in [Substrate::Coroutines, Substrate::Threads] {
        for reduction in [Reduction::Dpor, Reduction::Off] {
            acquire_misuse(two_writers(Guard::Locking(2)), reduction, substrate);
            // Seen where the holder ends its life rather than at a switch point of its own.
            acquire_misuse(permit_kept_at_the_end, reduction, substrate);
        }
        // One permit is a lock: the declaration holds, and the reduction explores as for a
        // mutex.
        let report = dfs(Reduction::Dpor)
            .substrate(substrate)
            .check(two_writers(Guard::Locking(1)))
            .unwrap();
        assert_eq!(
            (report.executions, report.redundant),
            (2, 0),
            "{substrate:?}"
        );
    }
}

#[test]
fn a_race_between_the_holders_of_two_permits_replays() {
    let failure = dfs(Reduction::Dpor)
        .check(two_writers(Guard::Permits(2)))
        .expect_err("two permits let both threads write at once");
    assert_eq!(failure.kind(), FailureKind::DataRace, "{failure}");
    let replayed = Builder::new().replay(two_writers(Guard::Permits(2)), failure.schedule());
    assert_eq!(replayed.unwrap_err(), failure);
}

/// Each thread takes one semaphore, then the other.
fn crossed() {
    let (a, b) = (Arc::new(Semaphore::new(1)), Arc::new(Semaphore::new(1)));
    let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
    let t = thread::Builder::new()
        .name("crosser".into())
        .spawn(move || {
            a2.acquire();
            b2.acquire();
            b2.release();
            a2.release();
        })
        .unwrap();
    b.acquire();
    a.acquire();
    a.release();
    b.release();
    t.join().unwrap();
}

#[test]
fn a_deadlock_names_the_semaphore_its_operation_and_who_holds_a_permit() {
    let failure = dfs(Reduction::Dpor)
        .check(crossed)
        .expect_err("the crossed acquires deadlock");
    assert_eq!(failure.kind(), FailureKind::Deadlock, "{failure}");
    let threads = failure.threads();
    assert_eq!(threads.len(), 2, "{failure}");
    for t in threads {
        let waits = t.to_string();
        assert!(
            waits.contains("waits to acquire a permit from Semaphore #"),
            "{waits}"
        );
    }
    let report = failure.to_string();
    assert!(report.contains("held by thread 'crosser' (#1)"), "{report}");
    assert!(report.contains("own_primitive.rs:"), "{report}");
    let decisions = failure.schedule().decisions();
    assert!(
        decisions.iter().any(|d| d.op() == "semaphore acquire"),
        "{decisions:?}"
    );
    let replayed = Builder::new().replay(crossed, failure.schedule());
    assert_eq!(replayed.unwrap_err(), failure);
}

#[test]
fn a_restorable_static_starts_afresh_in_every_execution() {
    // The same counts as a semaphore made inside the model, in the first search of the
    // process and in a second one, whose executions all come after the one that first
    // used it.
    for (round, substrate) in [Substrate::Coroutines, Substrate::Threads]
        .into_iter()
        .enumerate()
    {
        let report = dfs(Reduction::Dpor)
            .substrate(substrate)
            .check(|| two_writers_under(&SHARED))
            .unwrap_or_else(|f| panic!("round {round}: {f}"));
        assert!(report.exhausted, "round {round}: {report}");
        assert_eq!((report.executions, report.redundant), (3, 1), "{round}");
    }
}

#[test]
fn a_static_that_is_not_restorable_is_misuse_in_a_second_execution() {
    let failure = dfs(Reduction::Dpor)
        .check(|| two_writers_under(&UNSHARED))
        .expect_err("the second execution uses the first one's semaphore");
    assert_eq!(failure.kind(), FailureKind::Misuse, "{failure}");
    let report = failure.to_string();
    assert!(
        report.contains("this Semaphore was first used in another execution"),
        "{report}"
    );
    assert!(
        report.contains("static NAME: LazyLock<Semaphore> = LazyLock::new(|| Semaphore::new(..))"),
        "{report}"
    );
}

/// Counts, in `COUNTS`, each decision of an execution that decides twice (the decision
/// makes every execution count as far as the others).
fn count_twice() {
    for _ in 0..2 {
        let _ = interleave_test::choose(2);
        COUNTS
            .lend(|| AtomicUsize::new(0))
            .fetch_add(1, Ordering::SeqCst);
    }
    let seen = COUNTS
        .lend(|| unreachable!("made at the first use"))
        .load(Ordering::SeqCst);
    assert_eq!(seen, 2, "an execution sees only its own counts");
}

#[test]
fn state_a_primitive_keeps_of_its_own_is_each_executions() {
    // Four executions in each search: each later one counts in a state of its own from 0.
    for round in 0..2 {
        let report = dfs(Reduction::Dpor)
            .check(count_twice)
            .unwrap_or_else(|f| panic!("round {round}: {f}"));
        assert_eq!(report.executions, 4, "round {round}: {report}");
    }
    // The home state is the first execution's.
    assert_eq!(COUNTS.home().load(Ordering::SeqCst), 2);
}

/// A state that counts the states made and dropped.
struct Counted(Arc2<(AtomicUsize, AtomicUsize)>);

impl Counted {
    fn new(tally: &Arc2<(AtomicUsize, AtomicUsize)>) -> Self {
        tally.0.fetch_add(1, Ordering::SeqCst);
        Counted(Arc2::clone(tally))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.1.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn lent_states_go_with_their_execution_and_kept_ones_with_the_primitive() {
    for substrate in [Substrate::Coroutines, Substrate::Threads] {
        for parallelism in [1, 2] {
            let (lent, kept) = (Arc2::default(), Arc2::default());
            // Made outside the model closure, as a captured primitive is.
            let lent_states = PerExecution::new(Counted::new(&lent));
            let kept_states = PerExecution::new(Counted::new(&kept));
            let report = Builder::new()
                .iterations(40)
                .parallelism(parallelism)
                .substrate(substrate)
                .check(|| {
                    let _ = interleave_test::choose(2);
                    let first = lent_states.lend(|| Counted::new(&lent));
                    let again = lent_states.lend(|| unreachable!("made once per execution"));
                    assert!(std::ptr::eq(&*first, &*again));
                    let first = kept_states.get(|| Counted::new(&kept));
                    let again = kept_states.get(|| unreachable!("made once per execution"));
                    assert!(std::ptr::eq(first, again));
                    // One at a time, the first execution has both home states, a later one
                    // neither (two at once may claim one each).
                    let home = matches!(lent_states.lend(|| unreachable!()), StateRef::Home(_));
                    if parallelism == 1 {
                        assert_eq!(home, std::ptr::eq(first, kept_states.home()));
                    }
                })
                .unwrap();
            let case = format!("{substrate:?}, parallelism {parallelism}");
            assert_eq!(report.executions, 40, "{case}");
            // The home states and one per later execution; the lent ones are dropped
            // with their executions, the kept ones only with the primitive.
            assert_eq!(lent.0.load(Ordering::SeqCst), 40, "{case}");
            assert_eq!(lent.1.load(Ordering::SeqCst), 39, "{case}");
            assert_eq!(kept.0.load(Ordering::SeqCst), 40, "{case}");
            assert_eq!(kept.1.load(Ordering::SeqCst), 0, "{case}");
            drop((lent_states, kept_states));
            assert_eq!(lent.1.load(Ordering::SeqCst), 40, "{case}");
            assert_eq!(kept.1.load(Ordering::SeqCst), 40, "{case}");
        }
    }
}

#[test]
fn the_primitive_is_written_with_no_hidden_item() {
    common::assert_written_with_public_items(include_str!("own_primitive.rs"));
    let engine = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("engine/src");
    let mut files = vec![engine];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                !text.contains("doc(hidden)"),
                "{} hides an item",
                path.display()
            );
        }
    }
}
