//! One task blocks its worker with std::thread::sleep(200 ms); one task awaits
//! a future that never wakes it; one task sleeps on a timer in a loop.
//! Runs until killed (or for the seconds given as first argument).
use std::time::Duration;

async fn stuck_forever() {
    std::future::pending::<()>().await;
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let secs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3600);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let blocker = tokio::spawn(async {
        std::thread::sleep(Duration::from_millis(200));
    });
    let _stuck = tokio::spawn(stuck_forever());
    let _ticker = tokio::spawn(async {
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    blocker.await.unwrap();
    println!("blocker done");
    tokio::time::sleep(Duration::from_secs(secs)).await;
}
