//! Model threads as stackful coroutines, all on the execution's driver thread.
//!
//! A coroutine gives control back with [`suspend`]; the driver's loop ([`drive`]) then
//! resumes whichever thread the scheduler named, setting [`CURRENT`] to that thread's
//! context for the time it runs. A hand-off is two user-space stack switches through the
//! driver (tens of nanoseconds), whatever the machine's load.
//!
//! The `generator` crate carries the `unsafe` code: its `yield_with` reaches the running
//! coroutine from any depth, which is what a switch point deep inside user code needs.
//! Stacks are mapped once and reused: a coroutine that finished goes back to [`POOL`]
//! (thread 0's, which borrows the model, is kept in the driver's [`Stacks`]). A stack
//! overflow hits the stack's guard page; the crate's signal handler then returns control to
//! the driver, which reports it as the thread's failure and never touches that stack again.
//!
//! Architecture invariant: each thread's [`Context`] is kept behind an `Rc` that lives as
//! long as its coroutine, so the reference a suspended coroutine holds stays valid.

#![allow(
    deprecated,
    reason = "generator's `yield_with` is deprecated in favour of a scope parameter that a \
              switch point deep inside user code cannot reach; loom uses it the same way"
)]

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use generator::{Generator, Gn};
use parking_lot::Mutex;

use super::super::Context;
use super::{Body, CURRENT, Hosting, Turn, run_os_thread, take_next};

/// A coroutine that runs a spawned thread: it owns everything it runs, so it can be pooled.
/// It is resumed with whether teardown asks it to unwind.
type Coroutine = Generator<'static, bool, ()>;

/// Stacks of finished coroutines, with their size in bytes, for reuse by any driver.
static POOL: Mutex<Vec<(usize, Coroutine)>> = Mutex::new(Vec::new());

/// The most stacks kept in [`POOL`]; more are unmapped when their coroutine finishes.
const POOL_MAX: usize = 512;

/// Gives control back to the driver; returns when the driver resumes this coroutine, with
/// whether teardown asks it to unwind.
pub(super) fn suspend() -> bool {
    generator::yield_::<bool, ()>(()).unwrap_or(false)
}

/// A driver's own coroutine stacks, kept from one execution to the next: thread 0's (it
/// borrows the model, so it cannot go to the shared pool) and spare ones for spawned
/// threads (so that drivers on other cores do not contend for [`POOL`]; they go back to it
/// when the driver is done).
#[derive(Default)]
pub(crate) struct Stacks<'m> {
    main: Option<(usize, Generator<'m, bool, ()>)>,
    spare: Vec<(usize, Coroutine)>,
}

/// The most spare stacks a driver keeps for itself.
const SPARE_MAX: usize = 64;

impl Drop for Stacks<'_> {
    fn drop(&mut self) {
        let mut pool = POOL.lock();
        let room = POOL_MAX.saturating_sub(pool.len());
        pool.extend(self.spare.drain(..).take(room));
    }
}

impl std::fmt::Debug for Stacks<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stacks")
            .field("main", &self.main.as_ref().map(|(size, _)| size))
            .field("spare", &self.spare.len())
            .finish()
    }
}

impl<'m> Stacks<'m> {
    /// A finished coroutine with at least `bytes` of stack, for thread 0.
    fn take_main(&mut self, bytes: usize) -> (usize, Generator<'m, bool, ()>) {
        match self.main.take() {
            Some((size, coro)) if size >= bytes => (size, coro),
            _ => {
                let (size, coro) = self.take(bytes);
                (size, coro)
            }
        }
    }

    /// A finished coroutine with at least `bytes` of stack, ready for `init_code`: the
    /// smallest fitting spare one, else one of the shared pool, else a new one.
    fn take(&mut self, bytes: usize) -> (usize, Coroutine) {
        if let Some(i) = smallest_fit(&self.spare, bytes) {
            return self.spare.swap_remove(i);
        }
        let mut pool = POOL.lock();
        if let Some(i) = smallest_fit(&pool, bytes) {
            return pool.swap_remove(i);
        }
        drop(pool);
        let words = bytes.div_ceil(std::mem::size_of::<usize>());
        (bytes, Gn::<bool>::new_opt(words, || {}))
    }

    /// Keeps a finished coroutine for reuse.
    fn give_back(&mut self, size: usize, coro: Coroutine) {
        if self.spare.len() < SPARE_MAX {
            return self.spare.push((size, coro));
        }
        let mut pool = POOL.lock();
        if pool.len() < POOL_MAX {
            pool.push((size, coro));
        }
    }
}

/// The index of the smallest stack of at least `bytes` in `stacks`.
fn smallest_fit(stacks: &[(usize, Coroutine)], bytes: usize) -> Option<usize> {
    (0..stacks.len())
        .filter(|&i| stacks[i].0 >= bytes)
        .min_by_key(|&i| stacks[i].0)
}

/// A spawned thread's coroutine and its context.
struct Slot {
    size: usize,
    coro: Option<Coroutine>,
    ctx: Rc<Context>,
}

/// Runs the execution: thread `main` (with `bytes` of stack) runs `model`, then whoever
/// the scheduler names, until it says the execution is over. Coroutines left unfinished
/// then (teardown left their threads behind) are never resumed: their stacks are leaked with
/// what they own.
pub(super) fn drive<'m>(
    main: Context,
    bytes: usize,
    model: &'m (dyn Fn() + Sync),
    stacks: &mut Stacks<'m>,
) {
    let main_ctx = Rc::new(main);
    let guest = main_ctx.host().guest;
    let host = main_ctx.host();
    let (main_size, mut main) = stacks.take_main(bytes);
    main.init_code(move || {
        CURRENT.with(|ctx| {
            ctx.host().guest.run_main(ctx, model);
            ctx.host().guest.finish(ctx);
        });
    });
    let mut main = Some(main);
    let mut slots: Vec<Option<Slot>> = Vec::new();
    let mut turn = take_next(host); // thread 0, to start
    while let Turn::Run {
        thread: t,
        hosting,
        abort,
    } = turn
    {
        turn = if hosting == Hosting::OsThread {
            run_os_thread(host, t);
            take_next(host)
        } else if t == 0 {
            resume(&main_ctx, &mut main, abort)
        } else {
            if slots.get(t).is_none_or(Option::is_none) {
                adopt(&main_ctx, &mut slots, stacks);
            }
            let slot = slots[t].as_mut().expect("a coroutine thread was adopted");
            resume(&slot.ctx, &mut slot.coro, abort)
        };
    }
    let mut left = finish_main(stacks, main_size, main, main_ctx);
    for slot in slots.into_iter().flatten() {
        match slot.coro {
            Some(coro) if coro.is_done() => stacks.give_back(slot.size, coro),
            Some(coro) => {
                left += 1;
                leak(coro.into_raw(), slot.ctx);
            }
            None => leak(std::ptr::null_mut(), slot.ctx), // its stack overflowed
        }
    }
    guest.left_behind(left);
}

std::thread_local! {
    /// The driver's next turn, as the coroutine that gave control back said.
    static TURN: Cell<Option<Turn>> = const { Cell::new(None) };
}

/// Tells the driver of the calling OS thread what to do once the running coroutine gives
/// control back.
pub(super) fn tell_driver(turn: Turn) {
    TURN.set(Some(turn));
}

/// Keeps thread 0's coroutine for the next execution if it finished, leaks it otherwise;
/// returns how many threads that left behind (0 or 1).
fn finish_main<'m>(
    stacks: &mut Stacks<'m>,
    size: usize,
    main: Option<Generator<'m, bool, ()>>,
    ctx: Rc<Context>,
) -> usize {
    match main {
        Some(coro) if coro.is_done() => {
            stacks.main = Some((size, coro));
            0
        }
        Some(coro) => {
            leak(coro.into_raw(), ctx);
            1
        }
        None => {
            leak(std::ptr::null_mut(), ctx); // its stack overflowed
            0
        }
    }
}

/// A coroutine left behind: its stack (already turned into a raw pointer that is never
/// freed), its context and its thread-locals are never dropped, so nothing they refer to
/// dangles and none of their destructors runs.
fn leak(_stack: *mut usize, ctx: Rc<Context>) {
    ctx.host().guest.forget(&ctx);
    std::mem::forget(ctx);
}

/// Takes over the coroutine threads spawned since the last look (`main` is thread 0), each
/// on a stack of its own.
fn adopt(main: &Context, slots: &mut Vec<Option<Slot>>, stacks: &mut Stacks<'_>) {
    let spawned = std::mem::take(&mut *main.host().spawned.lock());
    for (ctx, bytes, body) in spawned {
        let tid = ctx.tid;
        let (size, mut coro) = stacks.take(bytes);
        coro.init_code(move || CURRENT.with(|ctx| thread_body(ctx, body)));
        if slots.len() <= tid {
            slots.resize_with(tid + 1, || None);
        }
        slots[tid] = Some(Slot {
            size,
            coro: Some(coro),
            ctx: Rc::new(ctx),
        });
    }
}

/// What a spawned thread's coroutine runs: the thread, then its end.
fn thread_body(ctx: &Context, body: Body) {
    ctx.host().guest.run(ctx, body);
    ctx.host().guest.finish(ctx);
}

/// Resumes a coroutine until it gives control back. A panic that escapes it (a stack
/// overflow caught by the guard page, or a fault of the runtime) fails the execution; that
/// coroutine is then never touched again.
fn resume<'g>(ctx: &Context, coro: &mut Option<Generator<'g, bool, ()>>, abort: bool) -> Turn {
    let coroutine = coro.as_mut().expect("a coroutine that can run is present");
    let escaped = CURRENT.set(ctx, || {
        catch_unwind(AssertUnwindSafe(|| {
            coroutine.raw_send(Some(abort));
        }))
    });
    match escaped {
        Ok(()) => TURN
            .take()
            .expect("a coroutine that gives control back says who runs"),
        Err(payload) => {
            let stack = coro.take().map(Generator::into_raw);
            let _ = stack; // left as it is: resuming or dropping it would abort
            let turn = escaped_coroutine(ctx, &*payload);
            ctx.host().guest.drop_payload(payload);
            turn
        }
    }
}

/// Whether this "panic" is the coroutine crate's memory-fault handler failing its own check
/// on a thread that runs no coroutine: once a coroutine ran in the process, that handler
/// (installed for the coroutines' guard pages) receives every fault, a stack overflow of an
/// OS thread included, and the process dies right after the panic hook.
pub(crate) fn is_fault_outside_coroutine(info: &std::panic::PanicHookInfo<'_>) -> bool {
    info.payload().downcast_ref::<&str>() == Some(&"assertion failed: is_generator()")
        && info
            .location()
            .is_some_and(|l| l.file().contains("generator"))
}

/// Records the failure of thread `ctx.tid`, whose coroutine let `payload` escape, and lets
/// teardown decide what the driver does next.
fn escaped_coroutine(ctx: &Context, payload: &(dyn std::any::Any + Send)) -> Turn {
    let overflow = payload
        .downcast_ref::<generator::Error>()
        .is_some_and(|e| matches!(e, generator::Error::StackErr));
    TURN.take(); // whatever it said before it failed
    ctx.host().guest.escaped(ctx, overflow, payload)
}
