//! Tasks that sleep on tokio's alternative timer (tokio_unstable,
//! Builder::enable_alt_timer, 1.49 and later): task k sleeps 10 ms
//! (k + 1) * 4 times, so the timer wakes it exactly that many times, and
//! nothing else wakes it. Usage: alt_timer [TASKS]
use std::time::Duration;

async fn sleeper(times: u32) {
    for _ in 0..times {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn main() {
    let n: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_alt_timer()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let handles: Vec<_> = (0..n).map(|k| tokio::spawn(sleeper((k + 1) * 4))).collect();
        for h in handles {
            h.await.unwrap();
        }
    });
    println!("alt_timer: done");
}
