//! producer -> relay -> consumer over two channels. The producer sleeps 2 ms
//! before each of N sends, so the relay and the consumer are always waiting
//! when a message arrives: relay is woken by producer and consumer by relay
//! once per message (plus once each when the channel closes).
//! Usage: chain [N] [multi|current]
use std::time::Duration;
use tokio::sync::mpsc;

async fn producer(n: u32, tx: mpsc::Sender<u32>) {
    for i in 0..n {
        tokio::time::sleep(Duration::from_millis(2)).await;
        tx.send(i).await.unwrap();
    }
}

async fn relay(mut rx: mpsc::Receiver<u32>, tx: mpsc::Sender<u32>) {
    while let Some(v) = rx.recv().await {
        tx.send(v).await.unwrap();
    }
}

async fn consumer(mut rx: mpsc::Receiver<u32>) -> u64 {
    let mut sum = 0u64;
    while let Some(v) = rx.recv().await {
        sum += v as u64;
    }
    sum
}

fn main() {
    let n: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(100);
    let flavor = std::env::args().nth(2).unwrap_or_else(|| "multi".into());
    let rt = match flavor.as_str() {
        "current" => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        _ => tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build(),
    }
    .unwrap();
    rt.block_on(async move {
        let (tx1, rx1) = mpsc::channel(16);
        let (tx2, rx2) = mpsc::channel(16);
        let c = tokio::spawn(consumer(rx2));
        let r = tokio::spawn(relay(rx1, tx2));
        let p = tokio::spawn(producer(n, tx1));
        p.await.unwrap();
        r.await.unwrap();
        println!("sum {}", c.await.unwrap());
    });
}
