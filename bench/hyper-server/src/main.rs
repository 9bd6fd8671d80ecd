//! Minimal hyper 0.14 HTTP/1 server on 127.0.0.1:PORT (default 18080) with a
//! 2-worker Tokio runtime, for the overhead benchmark under wrk.
use hyper::service::{make_service_fn, service_fn};
use hyper::{Body, Request, Response, Server};
use std::convert::Infallible;

async fn hello(_: Request<Body>) -> Result<Response<Body>, Infallible> {
    Ok(Response::new(Body::from("hello\n")))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let port: u16 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(18080);
    let addr = ([127, 0, 0, 1], port).into();
    let make = make_service_fn(|_| async { Ok::<_, Infallible>(service_fn(hello)) });
    println!("listening on http://{}", addr);
    Server::bind(&addr).serve(make).await.unwrap();
}
