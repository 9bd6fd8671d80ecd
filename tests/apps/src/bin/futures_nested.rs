//! Nested async fns of known shape, for future-level tracing (`record --futures`).
//!
//! A multi_thread Tokio runtime with ONE worker thread runs one spawned task,
//! `handler`, which per round awaits `mid`, which awaits `leaf`, then awaits
//! `child2`, which awaits `Checksum`, a hand-written `impl Future`. `mid`,
//! `leaf` and `child2` are pipeline stages called through a trait object that
//! returns `Pin<Box<dyn Future>>` (as async-trait and tower code do), so their
//! poll bodies stay out of line; `handler` (a task root polled from both
//! Tokio schedulers) and `Checksum::poll` (`#[inline(never)]`) too. Each burns
//! a known wall-clock time (a busy spin on the monotonic clock) and yields
//! (`tokio::task::yield_now`) a known number of times:
//!
//!   handler  5 ms, yield, mid, child2, 5 ms               self 10 ms, 1 own yield
//!   mid      10 ms, yield, leaf, 10 ms                    self 20 ms, 1 own yield
//!   leaf     3 x (10 ms, yield), 10 ms                    self 40 ms, 3 own yields
//!   child2   10 ms, yield, 10 ms, yield, Checksum, 10 ms  self 30 ms, 2 own yields
//!   Checksum 2 ms per poll, Pending 4 times (wakes itself)  self 10 ms, 5 polls
//!
//! Every Pending goes up the whole chain and the task is polled again, so the
//! poll counts per round are: leaf 4, mid 1+1+3 = 5, Checksum 5,
//! child2 1+2+4 = 7, and handler 11 Pendings per round plus its final Ready:
//! 11*R + 1. Self time is the wall time inside a poll minus the polls of the
//! futures it awaits (equal to CPU time while the worker is not preempted).
//! The expected numbers and the measured spin times are printed on stderr.
//! Argument: rounds R (default 12: about 1.3 s).
use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// Nanoseconds actually spun, per future: [handler, mid, leaf, child2, Checksum].
static SPUN_NS: [AtomicU64; 5] = [
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
];
const HANDLER: usize = 0;
const MID: usize = 1;
const LEAF: usize = 2;
const CHILD2: usize = 3;
const CHECKSUM: usize = 4;
static CHECKSUM_POLLS: AtomicU64 = AtomicU64::new(0);

/// Busy work for `ms` milliseconds of wall-clock time, charged to `who`.
#[inline(never)]
fn burn(ms: u64, who: usize) -> u64 {
    let start = Instant::now();
    let end = start + Duration::from_millis(ms);
    let mut x = black_box(0x9e37_79b9_7f4a_7c15u64 ^ ms);
    loop {
        for _ in 0..256 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        let now = Instant::now();
        if now >= end {
            SPUN_NS[who].fetch_add((now - start).as_nanos() as u64, Relaxed);
            return black_box(x);
        }
    }
}

/// A boxed, type-erased future, as async-trait and tower-style code return.
type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A stage of the request pipeline, called through a trait object (so the
/// poll bodies of the async fns behind it stay out of line).
trait Stage: Send + Sync {
    fn run(&self, seed: u64) -> BoxFuture<'_, u64>;
}

/// Calls `mid`, which calls the next stage.
struct MidStage {
    next: Box<dyn Stage>,
}

impl Stage for MidStage {
    fn run(&self, seed: u64) -> BoxFuture<'_, u64> {
        Box::pin(mid(seed, &*self.next))
    }
}

struct LeafStage;

impl Stage for LeafStage {
    fn run(&self, seed: u64) -> BoxFuture<'_, u64> {
        Box::pin(leaf(seed))
    }
}

struct Child2Stage;

impl Stage for Child2Stage {
    fn run(&self, seed: u64) -> BoxFuture<'_, u64> {
        Box::pin(child2(seed))
    }
}

/// A hand-written future: 2 ms of checksum work per poll; Pending (after
/// waking itself) until it has been polled 5 times.
struct Checksum {
    polls_left: u32,
    acc: u64,
}

impl Future for Checksum {
    type Output = u64;

    #[inline(never)]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
        CHECKSUM_POLLS.fetch_add(1, Relaxed);
        self.acc = self.acc.rotate_left(5) ^ burn(2, CHECKSUM);
        if self.polls_left == 0 {
            return Poll::Ready(self.acc);
        }
        self.polls_left -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

async fn leaf(seed: u64) -> u64 {
    let mut acc = seed;
    for i in 0..3u64 {
        acc = acc.wrapping_add(burn(10, LEAF) ^ i);
        tokio::task::yield_now().await;
    }
    acc ^ burn(10, LEAF)
}

async fn mid(seed: u64, next: &dyn Stage) -> u64 {
    let a = burn(10, MID) ^ seed;
    tokio::task::yield_now().await;
    let b = next.run(a).await;
    a.wrapping_mul(31) ^ b ^ burn(10, MID)
}

async fn child2(seed: u64) -> u64 {
    let a = burn(10, CHILD2) ^ seed;
    tokio::task::yield_now().await;
    let b = burn(10, CHILD2);
    tokio::task::yield_now().await;
    let c = Checksum { polls_left: 4, acc: a ^ b }.await;
    c ^ burn(10, CHILD2)
}

async fn handler(rounds: u64, stages: Vec<Box<dyn Stage>>) -> u64 {
    let mut acc = 0u64;
    for round in 0..rounds {
        acc ^= burn(5, HANDLER) ^ round;
        tokio::task::yield_now().await;
        for stage in &stages {
            acc ^= stage.run(acc).await;
        }
        acc ^= burn(5, HANDLER);
    }
    acc
}

#[tokio::main(flavor = "multi_thread", worker_threads = 1)]
async fn main() {
    let rounds: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(12);
    let started = Instant::now();
    // handler -> mid -> leaf, then handler -> child2 -> Checksum
    let stages: Vec<Box<dyn Stage>> = vec![
        Box::new(MidStage { next: Box::new(LeafStage) }),
        Box::new(Child2Stage),
    ];
    let task = tokio::spawn(handler(rounds, stages));
    let out = task.await.unwrap();
    println!("{out}");

    let r = rounds;
    // The nominal numbers hold on an idle machine. Under CPU contention a
    // wall-clock spin can overshoot its deadline (the worker is preempted
    // just before it), so measured_* (the spins' real durations, on
    // CLOCK_MONOTONIC like bpf_ktime_get_ns) is the truth to compare with.
    let ms = |who: usize| SPUN_NS[who].load(Relaxed) as f64 / 1e6;
    let measured_incl = [
        ms(HANDLER) + ms(MID) + ms(LEAF) + ms(CHILD2) + ms(CHECKSUM),
        ms(MID) + ms(LEAF),
        ms(LEAF),
        ms(CHILD2) + ms(CHECKSUM),
        ms(CHECKSUM),
    ];
    // name, index in SPUN_NS, folded stack, polls, self ms, inclusive ms
    let truth: [(&str, usize, &str, u64, u64, u64); 5] = [
        ("handler", HANDLER, "handler", 11 * r + 1, 10 * r, 110 * r),
        ("mid", MID, "handler;mid", 5 * r, 20 * r, 60 * r),
        ("leaf", LEAF, "handler;mid;leaf", 4 * r, 40 * r, 40 * r),
        ("child2", CHILD2, "handler;child2", 7 * r, 30 * r, 40 * r),
        ("Checksum", CHECKSUM, "handler;child2;Checksum", 5 * r, 10 * r, 10 * r),
    ];
    eprintln!(
        "futures_nested: runtime multi_thread worker_threads=1, rounds={r}, ran {:.3} s",
        started.elapsed().as_secs_f64()
    );
    eprintln!("futures_nested: symbols: futures_nested::{{handler,mid,leaf,child2}}::{{{{closure}}}}, <futures_nested::Checksum as core::future::future::Future>::poll");
    for (name, who, stack, polls, self_ms, incl_ms) in truth {
        eprintln!(
            "truth future={name} stack={stack} polls={polls} self_ms={self_ms} inclusive_ms={incl_ms} measured_self_ms={:.1} measured_inclusive_ms={:.1}",
            ms(who),
            measured_incl[who]
        );
    }
    eprintln!("truth checksum_polls_counted={}", CHECKSUM_POLLS.load(Relaxed));
}
