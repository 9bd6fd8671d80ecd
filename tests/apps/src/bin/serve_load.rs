//! A long-running load with known shares, for `asyncscope serve`: `hot`
//! burns CPU without a pause (one round a poll, a yield between rounds);
//! `warm` burns one round, then sleeps (tokio::time) three times as long as
//! a round took, so it uses about a quarter of what `hot` uses; `blocker`
//! blocks its worker inside its polls: std::thread::sleep(20 ms) (the line
//! marked below: the kernel's do_nanosleep), then a yield, in a loop.
//! Three workers, so that none starves another. Runs SECONDS (default 30),
//! then exits. Usage: serve_load [SECONDS]
use std::hint::black_box;
use std::time::{Duration, Instant};

/// One round: a dependent chain of multiplies no compiler can fold.
#[inline(never)]
fn burn(seed: u64) -> u64 {
    let mut x = seed | 1;
    for _ in 0..400_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    black_box(x)
}

async fn hot(until: Instant) -> u64 {
    let mut acc = 0;
    let mut i = 0u64;
    while Instant::now() < until {
        acc ^= burn(black_box(i));
        i += 1;
        tokio::task::yield_now().await;
    }
    acc
}

async fn warm(until: Instant) -> u64 {
    let mut acc = 0;
    let mut i = 0u64;
    while Instant::now() < until {
        let t = Instant::now();
        acc ^= burn(black_box(i + 7));
        i += 1;
        tokio::time::sleep(t.elapsed() * 3).await;
    }
    acc
}

#[inline(never)]
fn block_here() {
    std::thread::sleep(Duration::from_millis(20)); // serve: blocking culprit
}

async fn blocker(until: Instant) {
    while Instant::now() < until {
        block_here();
        tokio::task::yield_now().await;
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 3)]
async fn main() {
    let secs: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(30);
    let until = Instant::now() + Duration::from_secs(secs);
    let h = tokio::spawn(hot(until));
    let w = tokio::spawn(warm(until));
    let b = tokio::spawn(blocker(until));
    let (a, c) = (h.await.unwrap(), w.await.unwrap());
    b.await.unwrap();
    println!("{}", a ^ c);
}
