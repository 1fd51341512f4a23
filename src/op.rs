//! The vocabulary of visible operations, shared by the runtime and the strategies (so it sits
//! below both): ids, locations and what each operation is. Code tells operations apart by
//! their kind, never by their names, which are for people (reports and schedule files).

use std::panic::Location;

/// A model thread's index in its execution: 0 is the thread that runs the model closure,
/// spawned threads count up from 1 in spawn order, so ids are the same in every execution.
pub(crate) type Tid = usize;
/// An object's index in its execution's arena.
pub(crate) type ObjId = usize;
/// A caller's location, from `#[track_caller]`.
pub(crate) type Loc = &'static Location<'static>;

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
    /// A read-modify-write named by its method (`atomic fetch_add`, ...).
    AtomicRmw(&'static str),
    /// The load that starts `fetch_update`, `try_update` or `update` (named).
    AtomicUpdateLoad(&'static str),
    /// One compare-exchange attempt of those (named).
    AtomicUpdateExchange(&'static str),
    Fence,
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
            AtomicRmw(name) | AtomicUpdateLoad(name) | AtomicUpdateExchange(name) => name,
            Fence => "fence",
        }
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
}

impl Op {
    /// The first operation of a thread: starting to run at `loc` (where it was spawned).
    pub(crate) fn start(loc: Loc) -> Self {
        Op {
            kind: OpKind::ThreadStart,
            obj: None,
            loc,
        }
    }
}
