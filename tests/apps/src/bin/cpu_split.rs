//! Two tasks burn CPU in a known ratio: `heavy` runs 3 times as many
//! rounds of the same work as `light` (each round one poll: a yield
//! between rounds), both spawned on a 2-worker runtime. Known truth for
//! `record --sample`: the samples inside polls of cpu_split::heavy are 3
//! times those of cpu_split::light (75% and 25% of the two), give or take
//! the sampling error. Argument: rounds of `light` (default 80).
use std::hint::black_box;

/// One round: a dependent chain of multiplies no compiler can fold.
#[inline(never)]
fn burn(seed: u64) -> u64 {
    let mut x = seed | 1;
    for _ in 0..2_000_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    black_box(x)
}

async fn heavy(rounds: u32) -> u64 {
    let mut acc = 0;
    for i in 0..rounds * 3 {
        acc ^= burn(black_box(i as u64));
        tokio::task::yield_now().await;
    }
    acc
}

async fn light(rounds: u32) -> u64 {
    let mut acc = 0;
    for i in 0..rounds {
        acc ^= burn(black_box(i as u64 + 7));
        tokio::task::yield_now().await;
    }
    acc
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let rounds: u32 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(80);
    let h = tokio::spawn(heavy(rounds));
    let l = tokio::spawn(light(rounds));
    let (a, b) = (h.await.unwrap(), l.await.unwrap());
    println!("{}", a ^ b);
}
