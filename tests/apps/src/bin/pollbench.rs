//! Poll-heavy workload for overhead measurements: T tasks each yield Y times
//! (T * (Y + 1) polls in all) on a 2-worker multi-thread runtime. Prints the
//! poll count, elapsed time and polls per second.
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let tasks: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let yields: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(200);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    let start = Instant::now();
    rt.block_on(async move {
        let handles: Vec<_> = (0..tasks)
            .map(|_| {
                tokio::spawn(async move {
                    for _ in 0..yields {
                        tokio::task::yield_now().await;
                    }
                })
            })
            .collect();
        for h in handles {
            h.await.unwrap();
        }
    });
    let secs = start.elapsed().as_secs_f64();
    let polls = tasks * (yields + 1);
    println!("polls {} elapsed_s {:.4} polls_per_s {:.0}", polls, secs, polls as f64 / secs);
}
