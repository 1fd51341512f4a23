//! Machine load for the second half of the `substrates` bench: one busy-looping OS thread per
//! core, unpinned, left to the OS scheduler, stopped by a flag.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::thread::JoinHandle;
use std::time::Instant;

/// Multiply-adds per round of a busy thread, between two looks at the stop flag.
const ROUND: u32 = 10_000;

/// Busy threads, running until [`Load::stop`] (or until dropped, should the bench panic).
#[derive(Debug)]
pub(crate) struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<u64>>,
    started: Instant,
}

impl Load {
    /// Starts `threads` busy threads.
    pub(crate) fn start(threads: usize) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..threads)
            .map(|i| {
                let stop = Arc::clone(&stop);
                std::thread::Builder::new()
                    .name(format!("bench-load-{i}"))
                    .spawn(move || spin(&stop))
                    .expect("the bench could not start a load thread")
            })
            .collect();
        Load {
            stop,
            threads,
            started: Instant::now(),
        }
    }

    /// Stops the threads; returns the rounds per second each did on average, which shows
    /// how much of a core they got.
    pub(crate) fn stop(mut self) -> f64 {
        let elapsed = self.started.elapsed().as_secs_f64();
        let threads = self.threads.len();
        let rounds = self.join();
        rounds as f64 / elapsed / threads.max(1) as f64
    }

    fn join(&mut self) -> u64 {
        self.stop.store(true, Relaxed);
        self.threads
            .drain(..)
            .map(|t| t.join().expect("a load thread panicked"))
            .sum()
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.join();
    }
}

/// Busy work until `stop` is set; returns the rounds done.
fn spin(stop: &AtomicBool) -> u64 {
    let mut rounds = 0;
    let mut x = 1u64;
    while !stop.load(Relaxed) {
        for _ in 0..ROUND {
            x = black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
        rounds += 1;
    }
    rounds
}
