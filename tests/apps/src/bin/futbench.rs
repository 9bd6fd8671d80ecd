//! Future-poll-heavy workload for the overhead of `record --futures`: T tasks
//! each run `handler`, which awaits `middle`, which awaits `inner`, which
//! yields Y times; the two inner futures are reached through trait objects
//! (as async-trait code does), so all three poll bodies stay out of line.
//! Every task poll then polls three futures: T * (Y + 1) task polls and
//! 3 * T * (Y + 1) future polls in all, on a 2-worker multi-thread runtime.
//! Prints the counts and the elapsed time.
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

type BoxFut<'a> = Pin<Box<dyn Future<Output = u64> + Send + 'a>>;

trait Stage: Send + Sync {
    fn run(&self, yields: usize) -> BoxFut<'_>;
}

struct Inner;
struct Middle(Arc<dyn Stage>);

async fn inner(yields: usize) -> u64 {
    let mut n = 0u64;
    for _ in 0..yields {
        tokio::task::yield_now().await;
        n += 1;
    }
    n
}

async fn middle(next: &dyn Stage, yields: usize) -> u64 {
    next.run(yields).await + 1
}

impl Stage for Inner {
    fn run(&self, yields: usize) -> BoxFut<'_> {
        Box::pin(inner(yields))
    }
}

impl Stage for Middle {
    fn run(&self, yields: usize) -> BoxFut<'_> {
        Box::pin(middle(&*self.0, yields))
    }
}

async fn handler(stage: Arc<dyn Stage>, yields: usize) -> u64 {
    stage.run(yields).await
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let tasks: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let yields: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(200);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    let stage: Arc<dyn Stage> = Arc::new(Middle(Arc::new(Inner)));
    let start = Instant::now();
    let total = rt.block_on(async move {
        let handles: Vec<_> = (0..tasks)
            .map(|_| tokio::spawn(handler(stage.clone(), yields)))
            .collect();
        let mut total = 0u64;
        for h in handles {
            total += h.await.unwrap();
        }
        total
    });
    let secs = start.elapsed().as_secs_f64();
    let polls = tasks * (yields + 1);
    println!(
        "polls {} future_polls {} elapsed_s {:.4} polls_per_s {:.0} check {}",
        polls,
        3 * polls,
        secs,
        polls as f64 / secs,
        total
    );
}
