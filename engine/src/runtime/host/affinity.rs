//! Which core the threads of an execution run on.
//!
//! Only one thread of an execution runs at a time, so all of them can share one core. Then a
//! hand-off is a context switch on that core; across cores it is a wake-up of the other core,
//! which on virtual machines costs several times more (an idle virtual CPU has to be woken
//! by the host). So on the OS-thread substrate each driver thread takes a core
//! ([`pin_driver`]), and every OS thread of the executions it runs is pinned to that core.
//! Concurrent explorations take cores round-robin. Coroutines need none of this: they all
//! run on their driver's thread.
//!
//! Where pinning is not available, threads run where the OS puts them, and a thread waiting
//! for the baton may spin before it parks (see `baton.rs`).

use std::cell::Cell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use core_affinity::CoreId;

/// A core of the process, as an index into [`cores`].
pub type Core = usize;

/// The cores the process may run on, as seen by the first exploration.
fn cores() -> &'static [CoreId] {
    static CORES: OnceLock<Vec<CoreId>> = OnceLock::new();
    CORES.get_or_init(|| core_affinity::get_core_ids().unwrap_or_default())
}

/// Whether threads are pinned (then waiting threads never spin: they share the core).
pub(crate) fn pinning() -> bool {
    !cores().is_empty()
}

/// Takes the next core for the calling driver thread and pins it there; the threads of its
/// executions are pinned to the same core (see `ExecConfig::core`). `None` where pinning is
/// not available.
pub fn pin_driver() -> Option<Core> {
    let core = next_core();
    pin(core);
    core
}

/// The next core for a driver thread, round-robin over the process's cores.
fn next_core() -> Option<Core> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = cores().len();
    (n > 0).then(|| NEXT.fetch_add(1, Ordering::Relaxed) % n)
}

thread_local! {
    /// The core this OS thread is pinned to, to skip the system call when it stays there.
    static PINNED: Cell<Option<Core>> = const { Cell::new(None) };
}

/// Pins the calling OS thread to `core` (a no-op if it is there already or `None`).
pub(crate) fn pin(core: Option<Core>) {
    let Some(core) = core else { return };
    if PINNED.get() == Some(core) {
        return;
    }
    if core_affinity::set_for_current(cores()[core]) {
        PINNED.set(Some(core));
    }
}
