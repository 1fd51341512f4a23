//! A primitive written outside the crates, through the engine's public interface only: a
//! counting semaphore, as a user who models their own primitive would write it. It
//! declares its two operations (name, access, what a blocked acquire waits for), keeps its
//! permits in the object table, waits through the engine and tells it who holds a permit.
//! Checked: the reduced search finds what the full search finds, the memory model orders
//! data through it, deadlock reports name it and its operation, and schedules replay.

use std::panic::Location;

use interleave_engine::op::{Operation, Role};
use interleave_engine::runtime::{
    self, Blocked, Loc, ObjId, ObjectHandle, ObjectState, OpKind, Tid, Waits,
};
use interleave_test::cell::UnsafeCell;
use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Builder, FailureKind, Reduction, StrategyKind, thread};

/// `acquire`: takes a permit, waiting while there is none. A write, not `Role::Acquire`:
/// with more than one permit, a thread may take one while another holds one, which an
/// `Acquire` (a lock's, taken by one thread at a time) would tell the search cannot happen.
/// To the memory model a write reads and publishes, as an atomic counter's update does.
const ACQUIRE: OpKind = OpKind::new(
    &Operation::new("semaphore acquire")
        .access(Role::Write)
        .waits("acquire a permit from"),
);
/// `release`: gives a permit back.
const RELEASE: OpKind = OpKind::new(&Operation::new("semaphore release").access(Role::Write));

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
        kind != ACQUIRE || self.free()
    }
}

/// A counting semaphore.
struct Semaphore {
    handle: ObjectHandle,
    permits: usize,
}

impl Semaphore {
    fn new(permits: usize) -> Self {
        Semaphore {
            handle: ObjectHandle::new("Semaphore"),
            permits,
        }
    }

    /// Its state in the running execution, made on first use.
    fn state<'a>(&self, a: &'a mut runtime::Access<'_>, obj: ObjId) -> &'a mut Permits {
        let state = a.obj::<Permits>(obj);
        state.capacity.get_or_insert(self.permits);
        state
    }

    /// Takes a permit, waiting for one.
    #[track_caller]
    fn acquire(&self) {
        let loc = Location::caller();
        let obj: ObjId = runtime::switch_point(ACQUIRE, Some(&self.handle), loc)
            .expect("a switch point on an object returns its id");
        let take = |a: &mut runtime::Access<'_>| {
            let me = a.me();
            let state = self.state(a, obj);
            let free = state.free();
            if free {
                state.taken.push((me, loc));
            }
            free
        };
        while !runtime::with_state("Semaphore::acquire", take) {
            runtime::block(Blocked {
                what: Waits::To(ACQUIRE.waits_to()),
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
        let obj = runtime::switch_point(RELEASE, Some(&self.handle), loc)
            .expect("a switch point on an object returns its id");
        runtime::with_state("Semaphore::release", |a| {
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
    /// The crate's `Mutex`.
    Mutex,
}

/// Two threads each write a cell under `guard`, then the main thread reads it.
fn two_writers(guard: Guard) -> impl Fn() + Sync {
    move || {
        let cell = Arc::new(UnsafeCell::new(0_u32));
        let permits = Arc::new(Semaphore::new(match guard {
            Guard::Permits(n) => n,
            Guard::Mutex => 1,
        }));
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
                    Guard::Permits(_) => {
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
fn the_primitive_is_written_with_no_hidden_item() {
    let this = include_str!("own_primitive.rs");
    let (code, _) = this.split_once("#[test]").unwrap();
    for hidden in ["__private", "__switch", "doc(hidden)"] {
        assert!(!code.contains(hidden), "the primitive names {hidden}");
    }
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
