//! std's concurrency primitives in a normal build, and [interleave-test]'s models of them
//! when the build has `--cfg interleave`: the crate's code names `interleave_std::sync::Mutex`
//! (or `thread::spawn`, `sync::atomic::AtomicUsize`, `cell::UnsafeCell`, ...) once, and the
//! model tests search its interleavings with no shim of its own.
//!
//! ```toml
//! [dependencies]
//! interleave-std = "0.1"
//!
//! [target.'cfg(interleave)'.dev-dependencies]
//! interleave-test = "0.1"
//!
//! [lints.rust]
//! unexpected_cfgs = { level = "warn", check-cfg = ['cfg(interleave)'] }
//! ```
//!
//! ```
//! use interleave_std::sync::atomic::{AtomicUsize, Ordering};
//! use interleave_std::sync::Arc;
//! use interleave_std::thread;
//!
//! pub fn count_twice(n: &Arc<AtomicUsize>) {
//!     let m = Arc::clone(n);
//!     let t = thread::spawn(move || m.fetch_add(1, Ordering::Relaxed));
//!     n.fetch_add(1, Ordering::Relaxed);
//!     t.join().unwrap();
//! }
//! # count_twice(&Arc::new(AtomicUsize::new(0)));
//! ```
//!
//! Run the model tests with `RUSTFLAGS="--cfg interleave" cargo test --release`; a normal
//! build does not even compile interleave-test (it is a dependency under `cfg(interleave)`
//! only), and every item here is then std's own, or a zero-cost wrapper.
//!
//! # What switches
//! - [`sync`]: `Arc`, `Weak`, `Mutex`, `RwLock`, `Condvar`, `Barrier`, `Once`, `OnceLock`,
//!   `LazyLock`, their guards and results; [`sync::atomic`] (the atomic types, `Ordering`,
//!   `fence`, `compiler_fence`); [`sync::mpsc`].
//! - [`thread`]: `spawn`, `scope`, `Builder`, `current`, `yield_now`, `sleep`, `park`,
//!   `park_timeout`, `panicking`, `thread_local!`, and their types.
//! - [`time`]: `Instant` (the execution's virtual clock under the model) and `Duration`.
//! - [`hint::spin_loop`].
//! - [`cell::UnsafeCell`]: the one type std has no model-checkable shape for. It has loom's
//!   API (`with`, `with_mut`, `get`, `get_mut`) in both builds: std's cell behind a
//!   zero-cost wrapper normally, interleave-test's race-checked cell under the model.
//!
//! A method std has and the model lacks fails to compile under `--cfg interleave` only,
//! with the model's type named in the error.
//!
//! # The same auto traits in both builds
//! [`cell::UnsafeCell`] is `Send` when `T` is, and never `Sync` nor `RefUnwindSafe`, as
//! std's is (interleave-test's own cell is `Sync`; this one is not, so that a type that
//! compiles under the model compiles in production too: share it with an
//! `unsafe impl Sync` of your own, as with std). Its pointer guards are neither `Send` nor
//! `Sync`. The crate's tests assert these, and `Send`/`Sync` of the other types, in both
//! builds.
//!
//! [interleave-test]: https://docs.rs/interleave-test

#![forbid(unsafe_code)]

/// Re-exports `items` of `std::<path>` normally, and of `interleave_test::<path>` under
/// `--cfg interleave`.
macro_rules! either {
    ($($path:ident)::+ { $($items:tt)* }) => {
        #[cfg(interleave)]
        pub use interleave_test::$($path)::+::{$($items)*};
        #[cfg(not(interleave))]
        pub use std::$($path)::+::{$($items)*};
    };
}

pub mod cell;

pub mod sync {
    //! `std::sync`, or its model under `--cfg interleave`.

    either!(sync {
        Arc,
        Barrier,
        BarrierWaitResult,
        Condvar,
        LazyLock,
        LockResult,
        Mutex,
        MutexGuard,
        Once,
        OnceLock,
        OnceState,
        PoisonError,
        RwLock,
        RwLockReadGuard,
        RwLockWriteGuard,
        TryLockError,
        TryLockResult,
        WaitTimeoutResult,
        Weak,
    });

    pub mod atomic {
        //! `std::sync::atomic`, or its model under `--cfg interleave`.

        either!(sync::atomic {
            AtomicBool,
            AtomicI8,
            AtomicI16,
            AtomicI32,
            AtomicI64,
            AtomicIsize,
            AtomicPtr,
            AtomicU8,
            AtomicU16,
            AtomicU32,
            AtomicU64,
            AtomicUsize,
            Ordering,
            compiler_fence,
            fence,
        });
    }

    pub mod mpsc {
        //! `std::sync::mpsc`, or its model under `--cfg interleave`.

        either!(sync::mpsc {
            IntoIter,
            Iter,
            Receiver,
            RecvError,
            RecvTimeoutError,
            SendError,
            Sender,
            SyncSender,
            TryIter,
            TryRecvError,
            TrySendError,
            channel,
            sync_channel,
        });
    }
}

pub mod thread {
    //! `std::thread`, or its model under `--cfg interleave`.

    either!(thread {
        AccessError,
        Builder,
        JoinHandle,
        LocalKey,
        Scope,
        ScopedJoinHandle,
        Thread,
        ThreadId,
        current,
        panicking,
        park,
        park_timeout,
        scope,
        sleep,
        spawn,
        yield_now,
    });

    #[cfg(interleave)]
    pub use interleave_test::thread_local;
    #[cfg(not(interleave))]
    pub use std::thread_local;
}

pub mod time {
    //! `std::time::Instant`, or the model's virtual clock under `--cfg interleave`; and
    //! `Duration`, std's in both.

    either!(time { Instant });
    pub use std::time::Duration;
}

pub mod hint {
    //! `std::hint::spin_loop`, or the model's under `--cfg interleave` (a switch point that
    //! lets another thread run).

    either!(hint { spin_loop });
}
