//! The vocabulary of visible operations, shared by the runtime and the strategies (so it sits
//! below both): ids, locations, what each operation is and how it accesses its object
//! ([`Role`]). Code tells operations apart by their kind, never by their names, which are for
//! people (reports and schedule files).

mod names;

use std::panic::Location;

/// A model thread's index in its execution: 0 is the thread that runs the model closure,
/// spawned threads count up from 1 in spawn order, so ids are the same in every execution.
pub(crate) type Tid = usize;
/// An object's index in its execution's arena.
pub(crate) type ObjId = usize;
/// A caller's location, from `#[track_caller]`.
pub(crate) type Loc = &'static Location<'static>;

/// How an operation accesses the object it acts on, for happens-before and for deciding which
/// operations of different threads conflict.
///
/// Two accesses to one object conflict unless both are *read-like* ([`Role::Read`],
/// [`Role::ReadAcquire`], [`Role::ReadRelease`]): conflicting operations do not commute, or
/// one can enable or disable the other. `Acquire` and `Release` are writes that take and give
/// back a lock; they tell the search which conflicts can never be reversed (a lock cannot be
/// taken before its holder released it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// Reads the object (an atomic load, a failed `try_read`).
    Read,
    /// Changes the object (a store, a send, a `try_lock`).
    Write,
    /// Takes the object exclusively, waiting while another thread holds it (`lock`, `write`,
    /// a join of a thread).
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
    pub(crate) fn read_like(self) -> bool {
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpKind {
    ThreadStart,
    ThreadSpawn,
    /// Joining the thread with this id: it can take effect once that thread finished.
    ThreadJoin(Tid),
    ThreadIsFinished,
    ThreadYield,
    ThreadPark,
    ThreadUnpark,
    ThreadSleep,
    ThreadScope,
    /// Spawning a future as a task.
    TaskSpawn,
    /// A task (or `block_on`) waits for a wake between two polls of its future.
    TaskWait,
    /// Aborting a task.
    TaskAbort,
    SpinLoop,
    MutexLock,
    /// Taking a mutex back after a condvar wait.
    MutexRelock,
    MutexTryLock,
    MutexUnlock,
    RwLockRead,
    RwLockWrite,
    RwLockTryRead,
    RwLockTryWrite,
    RwLockReadUnlock,
    RwLockWriteUnlock,
    CondvarWait,
    CondvarNotifyOne,
    CondvarNotifyAll,
    ChannelSend,
    ChannelTrySend,
    ChannelRecv,
    ChannelRecvTimeout,
    ChannelTryRecv,
    ChannelSenderDrop,
    ChannelReceiverDrop,
    BarrierWait,
    OnceCallOnce,
    OnceCallOnceForce,
    OnceComplete,
    OnceIsCompleted,
    OnceLockGet,
    OnceLockWait,
    OnceLockSet,
    OnceLockGetOrInit,
    OnceLockComplete,
    LazyLockForce,
    LazyLockComplete,
    AtomicLoad,
    AtomicStore,
    AtomicSwap,
    AtomicCompareExchange,
    AtomicCompareExchangeWeak,
    /// A read-modify-write of one operand (`fetch_add`, ...).
    AtomicRmw(Rmw),
    /// The load that starts `fetch_update`, `try_update` or `update`.
    AtomicUpdateLoad(UpdateMethod),
    /// One compare-exchange attempt of those.
    AtomicUpdateExchange(UpdateMethod),
    Fence,
    /// Dropping a strong reference that shares its allocation (`Arc::drop`).
    ArcDrop,
    /// `Arc::try_unwrap` or `Arc::into_inner` of a shared allocation.
    ArcTryUnwrap,
    /// Dropping a weak reference that shares its allocation.
    WeakDrop,
    /// `Weak::upgrade` of a live allocation.
    WeakUpgrade,
}

/// The read-modify-writes of one operand, by method (`Add` is `fetch_add`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Rmw {
    Add,
    Sub,
    And,
    Nand,
    Or,
    Xor,
    Max,
    Min,
    Not,
    PtrAdd,
    PtrSub,
    ByteAdd,
    ByteSub,
}

impl Rmw {
    /// The operation's name in reports and schedule files.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Rmw::Add => "atomic fetch_add",
            Rmw::Sub => "atomic fetch_sub",
            Rmw::And => "atomic fetch_and",
            Rmw::Nand => "atomic fetch_nand",
            Rmw::Or => "atomic fetch_or",
            Rmw::Xor => "atomic fetch_xor",
            Rmw::Max => "atomic fetch_max",
            Rmw::Min => "atomic fetch_min",
            Rmw::Not => "atomic fetch_not",
            Rmw::PtrAdd => "atomic fetch_ptr_add",
            Rmw::PtrSub => "atomic fetch_ptr_sub",
            Rmw::ByteAdd => "atomic fetch_byte_add",
            Rmw::ByteSub => "atomic fetch_byte_sub",
        }
    }
}

/// The update methods of the atomics, each a load then compare-exchange attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum UpdateMethod {
    FetchUpdate,
    TryUpdate,
    Update,
}

impl UpdateMethod {
    /// The method's name.
    pub(crate) fn method(self) -> &'static str {
        match self {
            UpdateMethod::FetchUpdate => "fetch_update",
            UpdateMethod::TryUpdate => "try_update",
            UpdateMethod::Update => "update",
        }
    }

    /// The name of its first load in reports and schedule files.
    fn load_name(self) -> &'static str {
        match self {
            UpdateMethod::FetchUpdate => "atomic fetch_update (load)",
            UpdateMethod::TryUpdate => "atomic try_update (load)",
            UpdateMethod::Update => "atomic update (load)",
        }
    }

    /// The name of one of its compare-exchange attempts.
    fn exchange_name(self) -> &'static str {
        match self {
            UpdateMethod::FetchUpdate => "atomic fetch_update (compare_exchange)",
            UpdateMethod::TryUpdate => "atomic try_update (compare_exchange)",
            UpdateMethod::Update => "atomic update (compare_exchange)",
        }
    }
}

impl OpKind {
    /// The name reports and schedule files show, e.g. `mutex lock`.
    pub(crate) fn name(self) -> &'static str {
        use OpKind::*;
        match self {
            ThreadStart => "thread start",
            ThreadSpawn => "thread spawn",
            ThreadJoin(_) => "thread join",
            ThreadIsFinished => "thread is_finished",
            ThreadYield => "thread yield",
            ThreadPark => "thread park",
            ThreadUnpark => "thread unpark",
            ThreadSleep => "thread sleep",
            ThreadScope => "thread scope",
            TaskSpawn => "task spawn",
            TaskWait => "task wait",
            TaskAbort => "task abort",
            SpinLoop => "spin loop",
            MutexLock => "mutex lock",
            MutexRelock => "mutex lock (after wait)",
            MutexTryLock => "mutex try_lock",
            MutexUnlock => "mutex unlock",
            RwLockRead => "rwlock read",
            RwLockWrite => "rwlock write",
            RwLockTryRead => "rwlock try_read",
            RwLockTryWrite => "rwlock try_write",
            RwLockReadUnlock => "rwlock read unlock",
            RwLockWriteUnlock => "rwlock write unlock",
            CondvarWait => "condvar wait",
            CondvarNotifyOne => "condvar notify_one",
            CondvarNotifyAll => "condvar notify_all",
            ChannelSend => "channel send",
            ChannelTrySend => "channel try_send",
            ChannelRecv => "channel recv",
            ChannelRecvTimeout => "channel recv_timeout",
            ChannelTryRecv => "channel try_recv",
            ChannelSenderDrop => "channel sender drop",
            ChannelReceiverDrop => "channel receiver drop",
            BarrierWait => "barrier wait",
            OnceCallOnce => "once call_once",
            OnceCallOnceForce => "once call_once_force",
            OnceComplete => "once complete",
            OnceIsCompleted => "once is_completed",
            OnceLockGet => "oncelock get",
            OnceLockWait => "oncelock wait",
            OnceLockSet => "oncelock set",
            OnceLockGetOrInit => "oncelock get_or_init",
            OnceLockComplete => "oncelock complete",
            LazyLockForce => "lazylock force",
            LazyLockComplete => "lazylock complete",
            AtomicLoad => "atomic load",
            AtomicStore => "atomic store",
            AtomicSwap => "atomic swap",
            AtomicCompareExchange => "atomic compare_exchange",
            AtomicCompareExchangeWeak => "atomic compare_exchange_weak",
            AtomicRmw(rmw) => rmw.name(),
            AtomicUpdateLoad(update) => update.load_name(),
            AtomicUpdateExchange(update) => update.exchange_name(),
            Fence => "fence",
            ArcDrop => "arc drop",
            ArcTryUnwrap => "arc try_unwrap",
            WeakDrop => "weak drop",
            WeakUpgrade => "weak upgrade",
        }
    }
}

impl OpKind {
    /// How the operation accesses the object it acts on (its `Op::obj`, or for thread
    /// operations the thread, park token or spawn order; see `hb::primary`). `None`: it
    /// accesses nothing another thread can see (a yield, a fence under sequential
    /// consistency, a thread's start, a sleep, whose end is ordered by the clock), or it is
    /// a channel operation, whose code declares the parts of the channel it touches.
    pub(crate) fn role(self) -> Option<Role> {
        use OpKind::*;
        Some(match self {
            ThreadStart | ThreadYield | ThreadSleep | ThreadScope | SpinLoop | Fence
            | ThreadIsFinished | ThreadUnpark => return None,
            // An abort's wake-up is declared by `runtime/tasks.rs`.
            TaskAbort => return None,
            // What they touch is declared by `runtime/arcs.rs`.
            ArcDrop | ArcTryUnwrap | WeakDrop | WeakUpgrade => return None,
            ChannelSend | ChannelTrySend | ChannelRecv | ChannelRecvTimeout | ChannelTryRecv
            | ChannelSenderDrop | ChannelReceiverDrop => return None,
            ThreadJoin(_) | MutexLock | MutexRelock | RwLockWrite => Role::Acquire,
            MutexUnlock | RwLockWriteUnlock => Role::Release,
            RwLockRead => Role::ReadAcquire,
            RwLockReadUnlock => Role::ReadRelease,
            RwLockTryRead | AtomicLoad | AtomicUpdateLoad(_) | OnceIsCompleted | OnceLockGet
            | OnceLockWait => Role::Read,
            // A notification that finds no waiter changes nothing, so two such commute; one
            // that wakes a waiter writes the condvar through the wake-up (`events::waking`).
            CondvarNotifyOne | CondvarNotifyAll => Role::Read,
            ThreadSpawn
            | TaskSpawn
            | TaskWait
            | ThreadPark
            | MutexTryLock
            | RwLockTryWrite
            | CondvarWait
            | BarrierWait
            | OnceCallOnce
            | OnceCallOnceForce
            | OnceComplete
            | OnceLockSet
            | OnceLockGetOrInit
            | OnceLockComplete
            | LazyLockForce
            | LazyLockComplete
            | AtomicStore
            | AtomicSwap
            | AtomicCompareExchange
            | AtomicCompareExchangeWeak
            | AtomicRmw(_)
            | AtomicUpdateExchange(_) => Role::Write,
        })
    }

    /// Whether the operation is on an atomic (or is a fence): the memory model handles it
    /// by its ordering.
    pub(crate) fn is_atomic(self) -> bool {
        use OpKind::*;
        matches!(
            self,
            AtomicLoad
                | AtomicStore
                | AtomicSwap
                | AtomicCompareExchange
                | AtomicCompareExchangeWeak
                | AtomicRmw(_)
                | AtomicUpdateLoad(_)
                | AtomicUpdateExchange(_)
                | Fence
        )
    }

    /// Whether the operation is on a condvar.
    pub(crate) fn is_condvar(self) -> bool {
        use OpKind::*;
        matches!(self, CondvarWait | CondvarNotifyOne | CondvarNotifyAll)
    }

    /// Whether the operation can be unable to take effect until another thread acts (see
    /// the `enabled` of the object states, and joins). Must list every such kind.
    pub(crate) fn can_wait(self) -> bool {
        use OpKind::*;
        matches!(
            self,
            ThreadJoin(_)
                | MutexLock
                | MutexRelock
                | RwLockRead
                | RwLockWrite
                | ChannelRecv
                | ChannelSend
        )
    }
}

/// A visible operation, as reached at a switch point.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Op {
    /// What it does.
    pub(crate) kind: OpKind,
    /// The object it acts on.
    pub(crate) obj: Option<ObjId>,
    /// The user's line.
    pub(crate) loc: Loc,
    /// What reports call it, when its kind does not say: an operation of a Tokio primitive
    /// is a section of the model lock that keeps the primitive's state (kind `mutex lock`),
    /// reported as the operation the program called (`tokio mpsc send`).
    pub(crate) what: Option<&'static OpName>,
}

impl Op {
    /// The first operation of a thread: starting to run at `loc` (where it was spawned).
    pub(crate) fn start(loc: Loc) -> Self {
        Op {
            kind: OpKind::ThreadStart,
            obj: None,
            loc,
            what: None,
        }
    }

    /// What reports call it: its [`OpName`] if it has one, else its kind's name. Schedules
    /// record the kind's name, which replay reads back (`names.rs`).
    pub(crate) fn name(&self) -> &'static str {
        self.what.map_or_else(|| self.kind.name(), |w| w.0)
    }
}

/// The name reports give an operation whose kind is that of the mechanism under it (see
/// [`Op::what`]), e.g. `tokio mpsc send`: a `static` or a promoted constant, so that an
/// [`Op`] carries it as one pointer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct OpName(pub(crate) &'static str);

/// What a decision other than the choice of a thread is about. Option 0 is always the
/// behaviour of a sequentially consistent, spurious-free machine; a depth-first search tries
/// it first, except for the store a load reads ([`PickKind::search_order`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum PickKind {
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
