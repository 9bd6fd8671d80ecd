//! A hung program, for `record -p` on it: a current_thread runtime whose
//! only thread a task blocks for good. Before that, `lost` awaits
//! std::future::pending() (no waker of it is kept anywhere) and `waits`
//! sleeps an hour (its waker in the timer), each polled once; then
//! `blocker` is polled and never returns (std::thread::sleep in a loop, it
//! prints "ready" first), and `queued`, spawned right after it, stays
//! runnable and is never polled. Nothing is polled after "ready": a
//! recorder attached then sees no poll at all. Runs until killed.
use std::time::Duration;

async fn lost() {
    std::future::pending::<()>().await;
}

async fn waits() {
    tokio::time::sleep(Duration::from_secs(3600)).await;
}

async fn blocker() {
    println!("ready");
    loop {
        std::thread::sleep(Duration::from_millis(10));
    }
}

async fn queued() {
    println!("queued ran");
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let _lost = tokio::spawn(lost());
    let _waits = tokio::spawn(waits());
    // both polled once and parked well before this
    tokio::time::sleep(Duration::from_millis(100)).await;
    let _blocker = tokio::spawn(blocker());
    let _queued = tokio::spawn(queued());
    std::future::pending::<()>().await;
}
