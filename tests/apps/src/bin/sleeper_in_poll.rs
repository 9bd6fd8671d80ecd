//! One task blocks its worker thread inside its polls: an async fn calls
//! std::thread::sleep(50 ms), 10 times (one await point between, so each
//! sleep happens in its own poll). Known truth for `record --offcpu`: about
//! 500 ms off CPU inside polls of the task `sleeper_in_poll::blocker`, in
//! the kernel's do_nanosleep / hrtimer_nanosleep; nothing else in the
//! program sleeps inside a poll.
use std::time::Duration;

async fn sleep_blocking(ms: u64) {
    std::thread::sleep(Duration::from_millis(ms));
    tokio::task::yield_now().await;
}

async fn blocker(times: u32) {
    for _ in 0..times {
        sleep_blocking(50).await;
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    tokio::spawn(blocker(10)).await.unwrap();
}
