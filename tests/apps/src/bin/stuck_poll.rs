//! A task that never returns from its poll: it blocks its worker for good
//! (a loop of 1 ms std::thread::sleep), while the other worker keeps
//! polling tasks that yield in a loop. Runs until killed. For how a
//! recorder detaches while a return probe of a poll is still pending.
use std::time::Duration;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let _stuck = tokio::spawn(async {
        loop {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    let busy: Vec<_> = (0..4)
        .map(|_| {
            tokio::spawn(async {
                loop {
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    for h in busy {
        h.await.unwrap();
    }
}
