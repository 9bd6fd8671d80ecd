//! Known-truth workload on smol 1.3 / async-executor 1.5: task i yields
//! (i % 5) times, so it is polled exactly (i % 5) + 1 times.
//! Usage: smol_yields [global|executor|local] [N]
//!   global:   smol::spawn (smol's global executor, SMOL_THREADS threads, default 1)
//!   executor: an async_executor::Executor run by two threads and main
//!   local:    an async_executor::LocalExecutor on the main thread
use async_executor::{Executor, LocalExecutor};
use smol::future::yield_now;

async fn yielder(i: usize) -> usize {
    for _ in 0..(i % 5) {
        yield_now().await;
    }
    i
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("global").to_string();
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(50);

    let sum: usize = match mode.as_str() {
        "executor" => {
            let ex = Executor::new();
            let (stop, stopped) = async_channel::unbounded::<()>();
            std::thread::scope(|s| {
                for _ in 0..2 {
                    let (ex, stopped) = (&ex, stopped.clone());
                    s.spawn(move || smol::block_on(ex.run(stopped.recv())));
                }
                let sum = smol::block_on(ex.run(async {
                    let handles: Vec<_> = (0..n).map(|i| ex.spawn(yielder(i))).collect();
                    let mut sum = 0;
                    for h in handles {
                        sum += h.await;
                    }
                    sum
                }));
                drop(stop);
                sum
            })
        }
        "local" => {
            let ex = LocalExecutor::new();
            smol::block_on(ex.run(async {
                let handles: Vec<_> = (0..n).map(|i| ex.spawn(yielder(i))).collect();
                let mut sum = 0;
                for h in handles {
                    sum += h.await;
                }
                sum
            }))
        }
        _ => smol::block_on(async {
            let handles: Vec<_> = (0..n).map(|i| smol::spawn(yielder(i))).collect();
            let mut sum = 0;
            for h in handles {
                sum += h.await;
            }
            sum
        }),
    };
    println!("spawned {} tasks, sum {}", n, sum);
    // async-task hands a task's output to its JoinHandle before the worker's
    // run() returns: give the workers a moment so that no run is cut short
    // by the process exiting (a tracer would see a poll that never ends).
    std::thread::sleep(std::time::Duration::from_millis(20));
}
