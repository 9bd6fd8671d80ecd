//! Wake-heavy workload for the cost of wake probes: T tasks each yield Y
//! times (T * Y wakes, T * (Y + 1) polls) on a current-thread runtime (the
//! default: every wake goes through the current-thread scheduler's
//! `Schedule::schedule`) or a 2-worker multi-thread one. Prints the counts
//! and the elapsed time. Usage: wakebench [T] [Y] [current|multi]
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let tasks: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let yields: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(200);
    let rt = match args.get(3).map(String::as_str) {
        Some("multi") => tokio::runtime::Builder::new_multi_thread().worker_threads(2).build(),
        _ => tokio::runtime::Builder::new_current_thread().build(),
    }
    .unwrap();
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
    println!("wakes {} polls {} elapsed_s {:.4}", tasks * yields, tasks * (yields + 1), secs);
}
