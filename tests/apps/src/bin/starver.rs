//! Known truth for the findings (`report`'s FINDINGS block), on a
//! current_thread runtime, where one poll holds every task:
//! - `waiter` awaits a oneshot that a plain thread sends on 20 ms after it
//!   starts: woken ~20 ms in, it is polled only when `hog`'s poll ends
//!   (~300 ms in): starved ~280 ms (runnable, not polled);
//! - `hog` computes on the CPU for 300 ms in one poll without yielding: a
//!   long poll that no off-CPU time explains (it never sleeps);
//! - `spinner` polls a future that wakes its own waker and returns Pending
//!   exactly 2000 times, then Ready: 2000 self wakes, 2001 polls (a spin).
//! Exits when the three are done.
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

async fn waiter() {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        let _ = tx.send(());
    });
    let _ = rx.await;
}

async fn hog() {
    let start = Instant::now();
    let mut x: u64 = 1;
    while start.elapsed() < Duration::from_millis(300) {
        for _ in 0..1000 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
    std::hint::black_box(x);
}

/// Wakes itself `left` times before it is Ready.
struct Spin {
    left: u32,
}

impl Future for Spin {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.left == 0 {
            return Poll::Ready(());
        }
        self.left -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

async fn spinner() {
    Spin { left: 2000 }.await;
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let w = tokio::spawn(waiter());
        let h = tokio::spawn(hog());
        let s = tokio::spawn(spinner());
        let _ = tokio::join!(w, h, s);
    });
    println!("starver done");
}
