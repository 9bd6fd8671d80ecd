//! Two runtimes in one process: a Tokio multi-thread runtime and smol's
//! global executor each run N tasks; task i yields (i % 5) times on either,
//! so it is polled exactly (i % 5) + 1 times. The two sets run one after
//! the other (Tokio first) and have different root futures.
//! Usage: mixed [N]

async fn tokio_yielder(i: usize) -> usize {
    for _ in 0..(i % 5) {
        tokio::task::yield_now().await;
    }
    i
}

async fn smol_yielder(i: usize) -> usize {
    for _ in 0..(i % 5) {
        smol::future::yield_now().await;
    }
    i
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(50);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()
        .expect("runtime");
    let tokio_sum: usize = rt.block_on(async {
        let handles: Vec<_> = (0..n).map(|i| tokio::spawn(tokio_yielder(i))).collect();
        let mut sum = 0;
        for h in handles {
            sum += h.await.expect("join");
        }
        sum
    });
    let smol_sum: usize = smol::block_on(async {
        let handles: Vec<_> = (0..n).map(|i| smol::spawn(smol_yielder(i))).collect();
        let mut sum = 0;
        for h in handles {
            sum += h.await;
        }
        sum
    });
    println!("spawned {} tokio tasks, sum {}; {} smol tasks, sum {}", n, tokio_sum, n, smol_sum);
    // async-task hands a task's output to its JoinHandle before the worker's
    // run() returns: give the workers a moment so that no run is cut short
    // by the process exiting (a tracer would see a poll that never ends).
    std::thread::sleep(std::time::Duration::from_millis(20));
}
