//! Known-truth workload on async-std 1.12 (async-global-executor): task i
//! yields (i % 5) times, so it is polled exactly (i % 5) + 1 times. Tasks are
//! spawned one after the other from block_on's future, so their first sight
//! (their first schedule) follows spawn order. Usage: asyncstd_yields [N]

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(50);
    async_std::task::block_on(async move {
        let mut handles = Vec::with_capacity(n);
        for i in 0..n {
            handles.push(async_std::task::spawn(async move {
                for _ in 0..(i % 5) {
                    async_std::task::yield_now().await;
                }
                i
            }));
        }
        let mut sum = 0;
        for h in handles {
            sum += h.await;
        }
        println!("spawned {} tasks, sum {}", n, sum);
    });
    // async-task hands a task's output to its JoinHandle before the worker's
    // run() returns: give the workers a moment so that no run is cut short
    // by the process exiting (a tracer would see a poll that never ends).
    std::thread::sleep(std::time::Duration::from_millis(20));
}
