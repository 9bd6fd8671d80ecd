//! Tokio's chat example (tokio-util's LinesCodec over TCP, a shared map of
//! per-peer mpsc senders, tokio::select!) with known counts, server and
//! clients in one program on 127.0.0.1: the server task `chat::server`
//! accepts N clients and spawns one task per peer; N client tasks
//! `chat::client` each connect, read their welcome, wait at a Barrier until
//! all have joined, send K lines, then read the (N - 1) * K lines the others
//! sent and close. The peer task is `chat::Peer`: the handler future inside
//! a wrapper that counts its polls; it relays each line of its client to
//! every other peer's channel and delivers to its client what the others
//! relay. When a peer's client closes, it prints its truth on stderr, from
//! inside its last poll:
//!   truth peer=ID relayed=K delivered=D polls=P
//! and each client "truth client=ID received=R". Wakes: a peer task is woken
//! by the I/O driver (its socket) or by another peer task (its channel), a
//! client by the I/O driver or by the last client at the Barrier; no timer
//! anywhere.
//! Usage: chat [N] [K]
use futures::{SinkExt, StreamExt};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, Barrier};
use tokio_util::codec::{Framed, LinesCodec};

type Peers = Arc<Mutex<HashMap<usize, mpsc::UnboundedSender<String>>>>;

/// One peer's task: the handler, with its polls counted.
struct Peer {
    id: usize,
    polls: u32,
    inner: Pin<Box<dyn Future<Output = (usize, usize)> + Send>>,
}

impl Future for Peer {
    type Output = usize;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        self.polls += 1;
        match self.inner.as_mut().poll(cx) {
            Poll::Ready((relayed, delivered)) => {
                eprintln!("truth peer={} relayed={} delivered={} polls={}", self.id, relayed, delivered, self.polls);
                Poll::Ready(delivered)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Welcomes the client, then relays its lines to the other peers and
/// delivers theirs to it, until it closes: (lines relayed, lines delivered).
async fn serve_peer(peers: Peers, stream: TcpStream, id: usize) -> (usize, usize) {
    let mut lines = Framed::new(stream, LinesCodec::new());
    let (tx, mut rx) = mpsc::unbounded_channel();
    peers.lock().unwrap().insert(id, tx);
    lines.send(format!("welcome {id}")).await.expect("welcome");
    let (mut relayed, mut delivered) = (0, 0);
    loop {
        tokio::select! {
            Some(msg) = rx.recv() => {
                lines.send(msg).await.expect("deliver");
                delivered += 1;
            }
            line = lines.next() => match line {
                Some(Ok(line)) => {
                    for (&other, tx) in peers.lock().unwrap().iter() {
                        if other != id {
                            tx.send(format!("{id}: {line}")).expect("relay");
                        }
                    }
                    relayed += 1;
                }
                _ => break,
            },
        }
    }
    peers.lock().unwrap().remove(&id);
    (relayed, delivered)
}

async fn server(listener: TcpListener, n: usize) -> usize {
    let peers: Peers = Arc::new(Mutex::new(HashMap::new()));
    let mut tasks = Vec::with_capacity(n);
    for id in 0..n {
        let (stream, _) = listener.accept().await.expect("accept");
        tasks.push(tokio::spawn(Peer { id, polls: 0, inner: Box::pin(serve_peer(peers.clone(), stream, id)) }));
    }
    let mut delivered = 0;
    for t in tasks {
        delivered += t.await.expect("join");
    }
    delivered
}

async fn client(addr: std::net::SocketAddr, id: usize, n: usize, k: usize, barrier: Arc<Barrier>) -> usize {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let mut lines = Framed::new(stream, LinesCodec::new());
    let welcome = lines.next().await.expect("welcome").expect("line");
    assert!(welcome.starts_with("welcome "));
    barrier.wait().await;
    for j in 0..k {
        lines.send(format!("message {j}")).await.expect("send");
    }
    let mut received = 0;
    while received < (n - 1) * k {
        lines.next().await.expect("open").expect("line");
        received += 1;
    }
    eprintln!("truth client={id} received={received}");
    received
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(4);
    let k: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()
        .expect("runtime");
    let (delivered, received) = rt.block_on(async move {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let srv = tokio::spawn(server(listener, n));
        let barrier = Arc::new(Barrier::new(n));
        let clients: Vec<_> = (0..n).map(|id| tokio::spawn(client(addr, id, n, k, barrier.clone()))).collect();
        let mut received = 0;
        for c in clients {
            received += c.await.expect("join");
        }
        (srv.await.expect("join"), received)
    });
    assert_eq!(delivered, n * (n - 1) * k);
    println!("chat: {n} peers, {k} lines each, {delivered} delivered, {received} received");
}
