//! Blocking done the sanctioned ways next to one done wrong, on a
//! multi-thread runtime with 2 workers:
//!   - spawn_blocking(|| sleep 150 ms): on the blocking pool, no worker held
//!   - a task calling block_in_place(|| sleep 150 ms): Tokio first hands the
//!     worker's queue to a new worker loop (spawned by block_in_place)
//!   - a task calling std::thread::sleep(60 ms) in its poll: its worker held
//! A ticker (interval 10 ms, 60 ticks) runs throughout.
//! Truth: one blocking error (wrong_blocker, the sleep's line), one
//! block_in_place info (in_place, its line), nothing about the pool task;
//! the loop block_in_place started is a runtime worker task.
use std::time::Duration;

async fn wrong_blocker() {
    std::thread::sleep(Duration::from_millis(60)); // WRONG_LINE
}

async fn in_place() {
    tokio::task::block_in_place(|| std::thread::sleep(Duration::from_millis(150))); // IN_PLACE_LINE
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let ticker = tokio::spawn(async {
        let mut iv = tokio::time::interval(Duration::from_millis(10));
        for _ in 0..60 {
            iv.tick().await;
        }
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    tokio::task::spawn_blocking(|| std::thread::sleep(Duration::from_millis(150))) // POOL_LINE
        .await
        .unwrap();
    tokio::spawn(in_place()).await.unwrap();
    tokio::spawn(wrong_blocker()).await.unwrap();
    ticker.await.unwrap();
}
