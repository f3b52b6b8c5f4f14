//! `/metrics` (the Prometheus text format: the core's kube-scheduler metrics and this binary's
//! own), `/healthz` and `/readyz` on one HTTP/1.1 listener.

use std::convert::Infallible;
use std::net::SocketAddr;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use metrics_exporter_prometheus::PrometheusHandle;
use tokio::net::TcpListener;

use crate::health::Health;

/// Binds `address` (an error if it cannot: the port is taken, say) and serves from a task.
pub async fn serve(
    address: SocketAddr,
    health: Health,
    metrics: PrometheusHandle,
) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(address).await?;
    let local = listener.local_addr()?;
    tracing::info!(address = %local, "serving /metrics, /healthz and /readyz");
    tokio::spawn(async move {
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "health endpoint: accept failed");
                    continue;
                }
            };
            let (health, metrics) = (health.clone(), metrics.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let response = respond(&request, &health, &metrics);
                    async move { Ok::<_, Infallible>(response) }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service);
                if let Err(e) = connection.await {
                    tracing::debug!(error = %e, "health endpoint: connection ended");
                }
            });
        }
    });
    Ok(local)
}

fn respond(
    request: &Request<Incoming>,
    health: &Health,
    metrics: &PrometheusHandle,
) -> Response<Full<Bytes>> {
    let reply = |code: StatusCode, body: String| {
        let mut response = Response::new(Full::new(Bytes::from(body)));
        *response.status_mut() = code;
        response
    };
    if request.method() != Method::GET {
        return reply(StatusCode::METHOD_NOT_ALLOWED, "GET only\n".into());
    }
    match request.uri().path() {
        "/metrics" => {
            let mut response = reply(StatusCode::OK, metrics.render());
            response.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("text/plain; version=0.0.4"),
            );
            response
        }
        "/healthz" | "/livez" => reply(StatusCode::OK, "ok\n".into()),
        "/readyz" => match health.not_ready() {
            None => reply(StatusCode::OK, "ok\n".into()),
            Some(why) => reply(StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n")),
        },
        _ => reply(StatusCode::NOT_FOUND, "not found\n".into()),
    }
}
