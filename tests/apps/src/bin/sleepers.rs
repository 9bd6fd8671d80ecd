//! Tasks that sleep known durations in a loop: 20 ms x 30, 50 ms x 12,
//! 100 ms x 6 (about 0.6 s each). Tokio's timer has a 1 ms tick and rounds
//! a sleep up to it, so no sleep is shorter than 20 ms: the rounding stays
//! well inside 10%. Their idle times (poll end to wake) should
//! show those durations.
use std::time::Duration;

async fn sleeper(ms: u64, times: u32) {
    for _ in 0..times {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let a = tokio::spawn(sleeper(20, 30));
    let b = tokio::spawn(sleeper(50, 12));
    let c = tokio::spawn(sleeper(100, 6));
    a.await.unwrap();
    b.await.unwrap();
    c.await.unwrap();
}
