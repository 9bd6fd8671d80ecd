//! A task stuck on a lost wakeup, for future-level tracing and `dump`.
//!
//! Task `stuck` awaits `wait_config`, which awaits `wait_signal` (both behind
//! trait objects returning `Pin<Box<dyn Future>>`, so their poll bodies stay
//! out of line), which awaits `Gate`, a hand-written future that returns
//! Pending without storing the waker (the classic lost-wakeup bug). The `ticker` task opens the gate after
//! 200 ms, but nobody wakes `stuck`, so it is polled exactly once and stays
//! parked at the `.await` of the Gate (line printed on stderr) until the
//! program exits. The ticker keeps ticking every 50 ms meanwhile.
//! Multi_thread Tokio runtime with one worker thread. Argument: seconds to run
//! (default 3); then the program exits 0.
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::task::{Context, Poll};
use std::time::Duration;

static GATE_OPEN: AtomicBool = AtomicBool::new(false);
static GATE_POLLS: AtomicU64 = AtomicU64::new(0);
/// The line of each `.await` of the chain, set just before it:
/// [stuck -> wait_config, wait_config -> wait_signal, wait_signal -> Gate].
static AWAIT_LINE: [AtomicU32; 3] = [AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0)];

/// Ready once GATE_OPEN is set. BUG (on purpose): it never registers the
/// waker, so opening the gate does not wake the task that waits on it.
struct Gate {
    name: &'static str,
}

impl Future for Gate {
    type Output = &'static str;

    #[inline(never)]
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<&'static str> {
        GATE_POLLS.fetch_add(1, Relaxed);
        if GATE_OPEN.load(Relaxed) {
            Poll::Ready(self.name)
        } else {
            Poll::Pending
        }
    }
}

/// A boxed, type-erased future, as async-trait style code returns.
type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Services injected as trait objects (so the async fns behind them keep
/// their poll bodies out of line).
trait Signal: Send + Sync {
    fn wait(&self, id: u32) -> BoxFuture<'_, u32>;
}

trait Config: Send + Sync {
    fn load(&self, id: u32) -> BoxFuture<'_, u32>;
}

struct GateSignal;

impl Signal for GateSignal {
    fn wait(&self, id: u32) -> BoxFuture<'_, u32> {
        Box::pin(wait_signal(id))
    }
}

struct RemoteConfig {
    signal: Box<dyn Signal>,
}

impl Config for RemoteConfig {
    fn load(&self, id: u32) -> BoxFuture<'_, u32> {
        Box::pin(wait_config(id, &*self.signal))
    }
}

async fn wait_signal(id: u32) -> u32 {
    AWAIT_LINE[2].store(line!() + 1, Relaxed);
    let name = Gate { name: "config-ready" }.await;
    id + name.len() as u32
}

async fn wait_config(id: u32, signal: &dyn Signal) -> u32 {
    AWAIT_LINE[1].store(line!() + 1, Relaxed);
    let v = signal.wait(id * 2).await;
    v + 1
}

async fn stuck(config: Box<dyn Config>) -> u32 {
    AWAIT_LINE[0].store(line!() + 1, Relaxed);
    let v = config.load(20).await;
    println!("stuck: never reached ({v})");
    v
}

async fn ticker() {
    let mut ticks = 0u64;
    loop {
        tokio::time::sleep(Duration::from_millis(50)).await;
        ticks += 1;
        if ticks == 4 {
            GATE_OPEN.store(true, Relaxed); // no wake: `stuck` stays parked
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 1)]
async fn main() {
    let secs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let config = Box::new(RemoteConfig { signal: Box::new(GateSignal) });
    let stuck_task = tokio::spawn(stuck(config));
    let _ticker = tokio::spawn(ticker());
    tokio::time::sleep(Duration::from_millis(100)).await;
    let file = file!();
    eprintln!(
        "futures_stuck: stuck at {file}:{} (chain: stuck {file}:{} -> wait_config {file}:{} -> wait_signal {file}:{} -> Gate)",
        AWAIT_LINE[2].load(Relaxed),
        AWAIT_LINE[0].load(Relaxed),
        AWAIT_LINE[1].load(Relaxed),
        AWAIT_LINE[2].load(Relaxed)
    );
    tokio::time::sleep(Duration::from_secs(secs)).await;
    eprintln!(
        "futures_stuck: after {secs} s: stuck finished={} gate polls={} (expected false, 1)",
        stuck_task.is_finished(),
        GATE_POLLS.load(Relaxed)
    );
}
