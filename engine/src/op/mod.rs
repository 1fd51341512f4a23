//! The vocabulary of visible operations, shared by the runtime and the strategies (so it sits
//! below both): ids, locations, how an operation accesses its object ([`Role`]), how a
//! primitive declares its operations ([`Operation`], `kind.rs`), and the decisions other than
//! a thread's ([`PickKind`]).

pub(crate) mod kind;

pub use kind::{Effect, OpKind, Operation, THREAD_START};

use std::panic::Location;

/// A model thread's index in its execution: 0 is the thread that runs the model closure,
/// spawned threads count up from 1 in spawn order, so ids are the same in every execution.
pub type Tid = usize;
/// An object's index in its execution's arena.
pub type ObjId = usize;
/// A caller's location, from `#[track_caller]`.
pub type Loc = &'static Location<'static>;

/// How an operation accesses the object it acts on, for happens-before and for deciding which
/// operations of different threads conflict.
///
/// Two accesses to one object conflict unless both are *read-like* ([`Role::Read`],
/// [`Role::ReadAcquire`], [`Role::ReadRelease`]): conflicting operations do not commute, or
/// one can enable or disable the other. `Acquire` and `Release` are writes that take and give
/// back a lock; they tell the search which conflicts can never be reversed (a lock cannot be
/// taken before its holder released it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Reads the object (an atomic load, a failed `try_read`).
    Read,
    /// Changes the object (a store, a send, a `try_lock`).
    Write,
    /// Takes the object exclusively, waiting while another thread holds it (`lock`, `write`,
    /// a join of a thread). The reduction relies on it: an operation declared so that could
    /// take effect while another thread holds its object (as the object's
    /// `ObjectState::holders` say) fails a search's execution as a `Misuse`
    /// (`runtime/exclusive.rs`).
    Acquire,
    /// Gives back what `Acquire` took (`unlock`, a thread's end).
    Release,
    /// Takes the object shared, waiting while a writer holds it (`read`).
    ReadAcquire,
    /// Gives back what `ReadAcquire` took.
    ReadRelease,
}

impl Role {
    /// Whether the access commutes with other read-like accesses.
    pub fn read_like(self) -> bool {
        matches!(self, Role::Read | Role::ReadAcquire | Role::ReadRelease)
    }

    /// Whether two accesses to one object, by different threads, conflict.
    pub(crate) fn conflicts(self, other: Role) -> bool {
        !(self.read_like() && other.read_like())
    }

    /// Whether an access `later` that came after the conflicting access `earlier` of another
    /// thread could never have come first: between a release and a blocking acquire of the
    /// same lock (the acquirer waited for that release), and between two operations that
    /// need the lock held by different threads.
    pub(crate) fn never_reversed(earlier: Role, later: Role) -> bool {
        use Role::*;
        let gives = matches!(earlier, Release | ReadRelease);
        let takes = matches!(later, Acquire | ReadAcquire);
        let gives_later = matches!(later, Release | ReadRelease);
        (gives && (takes || gives_later))
            || (matches!(earlier, Acquire | ReadAcquire) && gives_later)
    }

    /// The role of one event that accessed an object twice (`self`, then `other`): a read
    /// adds nothing to another access, two different other accesses make a write.
    pub(crate) fn merge(self, other: Role) -> Role {
        if self == other || other == Role::Read {
            self
        } else if self == Role::Read {
            other
        } else if self.read_like() && other.read_like() {
            Role::Read
        } else {
            Role::Write
        }
    }
}

/// A visible operation, as reached at a switch point.
#[derive(Clone, Copy, Debug)]
pub struct Op {
    /// What it does.
    pub(crate) kind: OpKind,
    /// The object it acts on.
    pub(crate) obj: Option<ObjId>,
    /// The user's line.
    pub(crate) loc: Loc,
}

impl Op {
    /// The first operation of a thread: starting to run at `loc` (where it was spawned).
    pub(crate) fn start(loc: Loc) -> Self {
        Op {
            kind: THREAD_START,
            obj: None,
            loc,
        }
    }

    /// What reports and schedule files call it: its kind's name.
    pub(crate) fn name(&self) -> &'static str {
        self.kind.name()
    }
}

/// What a decision other than the choice of a thread is about. Option 0 is always the
/// behaviour of a sequentially consistent, spurious-free machine; a depth-first search tries
/// it first, except for the store a load reads ([`PickKind::search_order`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PickKind {
    /// Which store an atomic load reads: 0 the newest in modification order, `n` the `n`th
    /// before it.
    ReadFrom,
    /// Which store a compare-and-exchange reads: 0 the newest (it succeeds if that holds the
    /// expected value), `n` the `n`th newest of the older stores it may read whose value is
    /// not the expected one (it fails).
    CasReadFrom,
    /// Where a store goes in modification order: 0 last, `n` before the `n` newest stores
    /// it may go before.
    StoreAt,
    /// Whether a timed wait (`wait_timeout`, `recv_timeout`, `park_timeout`, `sleep`) times
    /// out at once, its deadline passing while other threads could still act: 0 no (it
    /// waits for a wake-up, or for its deadline once no thread can run), 1 yes.
    TimeOut,
    /// Whether a wait (`Condvar::wait`, `park`) returns at once without a wake-up: 0 no, 1
    /// yes.
    SpuriousWake,
    /// Whether a `compare_exchange_weak` that could succeed fails: 0 no, 1 yes.
    SpuriousFailure,
    /// Which waiter a `notify_one` wakes: 0 the one that waited longest, `n` the `n`th
    /// after it.
    Notify,
    /// Which of the futures a thread's `block_on` could poll (its own and the tasks
    /// `spawn_local` gave it, woken and not yet polled) it polls next: 0 the one woken
    /// first, `n` the `n`th after it.
    Poll,
    /// Which value a `choose(n)` (or `choose_from`) yields: `n` options, the value itself
    /// (an index into the values of `choose_from`).
    Choose,
    /// 32 random bits of the model's random number generator (`rand`): `2^32` options.
    Random,
}

impl PickKind {
    /// Every kind, for reading schedules.
    pub(crate) const ALL: [PickKind; 10] = [
        PickKind::ReadFrom,
        PickKind::CasReadFrom,
        PickKind::StoreAt,
        PickKind::TimeOut,
        PickKind::SpuriousWake,
        PickKind::SpuriousFailure,
        PickKind::Notify,
        PickKind::Poll,
        PickKind::Choose,
        PickKind::Random,
    ];

    /// The name in schedule files and reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            PickKind::ReadFrom => "read from",
            PickKind::CasReadFrom => "exchange reads",
            PickKind::StoreAt => "store at",
            PickKind::TimeOut => "time out now",
            PickKind::SpuriousWake => "wake spuriously",
            PickKind::SpuriousFailure => "fail spuriously",
            PickKind::Notify => "notify waiter",
            PickKind::Poll => "poll next",
            PickKind::Choose => "choose",
            PickKind::Random => "random",
        }
    }

    /// The order in which a depth-first search tries the `options` of a decision of this
    /// kind: the oldest store a load may read first (a stale read is what finds a missing
    /// `Acquire`/`Release`, so it comes first, as in loom); for a compare-and-exchange, the
    /// newest first (a stale read that fails usually only sends a spin loop round again,
    /// after which the thread sees the newest store), then the others oldest first; every
    /// other kind from option 0.
    pub(crate) fn search_order(self, options: usize) -> Vec<usize> {
        match self {
            PickKind::ReadFrom => (0..options).rev().collect(),
            PickKind::CasReadFrom => std::iter::once(0).chain((1..options).rev()).collect(),
            _ => (0..options).collect(),
        }
    }

    /// The kind named `name` in a schedule file.
    pub(crate) fn from_name(name: &str) -> Option<PickKind> {
        PickKind::ALL.into_iter().find(|k| k.name() == name)
    }
}
