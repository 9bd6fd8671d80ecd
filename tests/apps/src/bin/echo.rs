//! An echo server and its clients in one program, on 127.0.0.1 (Tokio's echo
//! example, with known counts): the server task `echo::server` accepts N
//! connections and spawns one task per connection; N client tasks
//! `echo::client` each connect, read the server's greeting, then send M
//! lines one at a time, each after the echo of the previous one, and close.
//! The connection task is `echo::Conn`: the handler future inside a wrapper
//! that counts its polls. When a connection closes, it prints its truth on
//! stderr, from inside its last poll:
//!   truth conn=ID lines=M polls=P
//! Every poll of a connection task but the first follows one wake by the
//! I/O driver (the socket became writable, a line arrived, the client
//! closed); no timer is used anywhere. On the current-thread runtime the
//! lock step makes P = M + 2 or M + 3 (the first write of the greeting may
//! wait once for the new socket's first readiness event).
//! Usage: echo [multi|current] [N] [M]
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// One connection's task: the handler, with its polls counted.
struct Conn {
    id: usize,
    polls: u32,
    inner: Pin<Box<dyn Future<Output = usize> + Send>>,
}

impl Future for Conn {
    type Output = usize;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        self.polls += 1;
        match self.inner.as_mut().poll(cx) {
            Poll::Ready(lines) => {
                eprintln!("truth conn={} lines={} polls={}", self.id, lines, self.polls);
                Poll::Ready(lines)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Greets, then echoes each line until the client closes: the lines echoed.
async fn handle_conn(mut stream: TcpStream) -> usize {
    let (rd, mut wr) = stream.split();
    let mut rd = BufReader::new(rd);
    wr.write_all(b"hello\n").await.expect("greet");
    let mut line = String::new();
    let mut n = 0;
    loop {
        line.clear();
        if rd.read_line(&mut line).await.expect("read") == 0 {
            return n;
        }
        wr.write_all(line.as_bytes()).await.expect("echo");
        n += 1;
    }
}

async fn server(listener: TcpListener, n: usize) -> usize {
    let mut conns = Vec::with_capacity(n);
    for id in 0..n {
        let (stream, _) = listener.accept().await.expect("accept");
        conns.push(tokio::spawn(Conn { id, polls: 0, inner: Box::pin(handle_conn(stream)) }));
    }
    let mut lines = 0;
    for c in conns {
        lines += c.await.expect("join");
    }
    lines
}

async fn client(addr: std::net::SocketAddr, m: usize) -> usize {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let (rd, mut wr) = stream.split();
    let mut rd = BufReader::new(rd);
    let mut line = String::new();
    rd.read_line(&mut line).await.expect("greeting");
    assert_eq!(line, "hello\n");
    for i in 0..m {
        let msg = format!("line {i}\n");
        wr.write_all(msg.as_bytes()).await.expect("send");
        line.clear();
        rd.read_line(&mut line).await.expect("echo");
        assert_eq!(line, msg);
    }
    m
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flavor = args.get(1).map(String::as_str).unwrap_or("multi").to_string();
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(4);
    let m: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(20);
    let rt = match flavor.as_str() {
        "current" => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        _ => tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build(),
    }
    .expect("runtime");
    let (served, sent) = rt.block_on(async move {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let srv = tokio::spawn(server(listener, n));
        let clients: Vec<_> = (0..n).map(|_| tokio::spawn(client(addr, m))).collect();
        let mut sent = 0;
        for c in clients {
            sent += c.await.expect("join");
        }
        (srv.await.expect("join"), sent)
    });
    assert_eq!(served, n * m);
    println!("echo: {n} connections, {m} lines each, {served} echoed, {sent} sent");
}
