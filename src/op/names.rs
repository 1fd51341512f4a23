//! Operation names read back: a schedule file records each decision's operation by its name
//! (for people, and stable across versions); replay turns the names into kinds once and
//! compares kinds.

use super::{OpKind, Rmw, UpdateMethod};

/// Every kind without a payload, and a join (whose thread a file does not record).
const PLAIN: [OpKind; 55] = {
    use OpKind::*;
    [
        ThreadStart,
        ThreadSpawn,
        ThreadJoin(0),
        ThreadIsFinished,
        ThreadYield,
        ThreadPark,
        ThreadUnpark,
        ThreadSleep,
        ThreadScope,
        TaskSpawn,
        TaskWait,
        TaskAbort,
        SpinLoop,
        MutexLock,
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
        Fence,
        ArcDrop,
        ArcTryUnwrap,
        WeakDrop,
        WeakUpgrade,
    ]
};

/// Every read-modify-write.
const RMWS: [Rmw; 13] = {
    use Rmw::*;
    [
        Add, Sub, And, Nand, Or, Xor, Max, Min, Not, PtrAdd, PtrSub, ByteAdd, ByteSub,
    ]
};

/// Every update method.
const UPDATES: [UpdateMethod; 3] = [
    UpdateMethod::FetchUpdate,
    UpdateMethod::TryUpdate,
    UpdateMethod::Update,
];

/// Every kind there is, as a schedule file can name it.
fn every_kind() -> impl Iterator<Item = OpKind> {
    PLAIN
        .into_iter()
        .chain(RMWS.map(OpKind::AtomicRmw))
        .chain(UPDATES.map(OpKind::AtomicUpdateLoad))
        .chain(UPDATES.map(OpKind::AtomicUpdateExchange))
}

impl OpKind {
    /// The kind named `name` in a schedule file (a join, of thread 0), or `None` for a name
    /// this crate does not know: replay then meets no operation like it.
    pub(crate) fn from_name(name: &str) -> Option<OpKind> {
        every_kind().find(|kind| kind.name() == name)
    }

    /// Whether this operation is the one a schedule file recorded as `recorded` (read by
    /// [`OpKind::from_name`]): the same kind, a join of any thread.
    pub(crate) fn is_recorded_as(self, recorded: OpKind) -> bool {
        match (self, recorded) {
            (OpKind::ThreadJoin(_), OpKind::ThreadJoin(_)) => true,
            _ => self == recorded,
        }
    }
}

/// Fails to compile when a kind is added without being listed in [`PLAIN`], [`RMWS`] or
/// [`UPDATES`] here (the match must name it; list it above too).
#[allow(dead_code, reason = "a compile-time check only")]
fn listed(kind: OpKind) {
    use OpKind::*;
    match kind {
        ThreadStart
        | ThreadSpawn
        | ThreadJoin(_)
        | ThreadIsFinished
        | ThreadYield
        | ThreadPark
        | ThreadUnpark
        | ThreadSleep
        | ThreadScope
        | TaskSpawn
        | TaskWait
        | TaskAbort
        | SpinLoop
        | MutexLock
        | MutexRelock
        | MutexTryLock
        | MutexUnlock
        | RwLockRead
        | RwLockWrite
        | RwLockTryRead
        | RwLockTryWrite
        | RwLockReadUnlock
        | RwLockWriteUnlock
        | CondvarWait
        | CondvarNotifyOne
        | CondvarNotifyAll
        | ChannelSend
        | ChannelTrySend
        | ChannelRecv
        | ChannelRecvTimeout
        | ChannelTryRecv
        | ChannelSenderDrop
        | ChannelReceiverDrop
        | BarrierWait
        | OnceCallOnce
        | OnceCallOnceForce
        | OnceComplete
        | OnceIsCompleted
        | OnceLockGet
        | OnceLockWait
        | OnceLockSet
        | OnceLockGetOrInit
        | OnceLockComplete
        | LazyLockForce
        | LazyLockComplete
        | AtomicLoad
        | AtomicStore
        | AtomicSwap
        | AtomicCompareExchange
        | AtomicCompareExchangeWeak
        | Fence
        | ArcDrop
        | ArcTryUnwrap
        | WeakDrop
        | WeakUpgrade => {}
        AtomicRmw(rmw) => match rmw {
            Rmw::Add
            | Rmw::Sub
            | Rmw::And
            | Rmw::Nand
            | Rmw::Or
            | Rmw::Xor
            | Rmw::Max
            | Rmw::Min
            | Rmw::Not
            | Rmw::PtrAdd
            | Rmw::PtrSub
            | Rmw::ByteAdd
            | Rmw::ByteSub => {}
        },
        AtomicUpdateLoad(update) | AtomicUpdateExchange(update) => match update {
            UpdateMethod::FetchUpdate | UpdateMethod::TryUpdate | UpdateMethod::Update => {}
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_name_reads_back_as_its_kind_and_no_two_kinds_share_one() {
        let mut names = HashSet::new();
        for kind in every_kind() {
            assert!(
                names.insert(kind.name()),
                "two kinds are named {:?}",
                kind.name()
            );
            assert_eq!(OpKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(names.len(), PLAIN.len() + RMWS.len() + 2 * UPDATES.len());
    }

    #[test]
    fn a_join_is_recorded_without_its_thread_and_payloads_tell_kinds_apart() {
        let join = OpKind::from_name("thread join").unwrap();
        assert!(OpKind::ThreadJoin(3).is_recorded_as(join));
        let add = OpKind::from_name("atomic fetch_add").unwrap();
        assert!(OpKind::AtomicRmw(Rmw::Add).is_recorded_as(add));
        assert!(!OpKind::AtomicRmw(Rmw::Sub).is_recorded_as(add));
        let load = OpKind::from_name("atomic update (load)").unwrap();
        assert!(!OpKind::AtomicUpdateExchange(UpdateMethod::Update).is_recorded_as(load));
        assert_eq!(OpKind::from_name("mutex lok"), None);
    }
}
