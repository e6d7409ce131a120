//! The HTTP side of [`super::PrometheusEndpoint`]: a deliberately small
//! HTTP/1.x responder on tokio. It reads a request's head (at most
//! [`MAX_HEAD`] bytes, within [`REQUEST_TIMEOUT`]), answers `GET` or
//! `HEAD` of `/metrics` with a scrape of the registry, anything else with
//! 404 or 405, and closes the connection. Nothing runs between scrapes; a
//! client that misbehaves loses its own connection only.

use std::sync::Arc;

use prometheus_client::registry::Registry;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::{encode, CONTENT_TYPE};

/// Bytes of a request's head read at most.
pub const MAX_HEAD: usize = 8 * 1024;

/// How long one connection may take from accept to the response written.
pub const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// What a request gets.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Route {
    /// A scrape (`with_body`: `GET`, not `HEAD`).
    Metrics { with_body: bool },
    /// 404.
    NotFound,
    /// 405.
    MethodNotAllowed,
    /// 400: no `METHOD TARGET HTTP/x` line.
    BadRequest,
}

/// The route of a request line (`GET /metrics?x=y HTTP/1.1`).
pub(super) fn route(request_line: &str) -> Route {
    let mut words = request_line.split_ascii_whitespace();
    let (Some(method), Some(target), Some(version)) = (words.next(), words.next(), words.next())
    else {
        return Route::BadRequest;
    };
    if !version.starts_with("HTTP/1.") {
        return Route::BadRequest;
    }
    let path = target.split('?').next().unwrap_or_default();
    let with_body = match method {
        "GET" => true,
        "HEAD" => false,
        _ => return Route::MethodNotAllowed,
    };
    if path == "/metrics" {
        Route::Metrics { with_body }
    } else {
        Route::NotFound
    }
}

/// Accepts until aborted; one task per connection.
pub(super) async fn serve(listener: TcpListener, registry: Arc<Registry>) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                let registry = registry.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(REQUEST_TIMEOUT, respond(stream, &registry)).await {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => {
                            tracing::debug!(%peer, error = %e, "metrics request failed")
                        }
                        Err(_) => tracing::debug!(%peer, "metrics request timed out"),
                    }
                });
            }
            Err(e) => {
                // Out of descriptors or the like: back off, go on.
                tracing::warn!(error = %e, "metrics endpoint: accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
}

/// Reads the head of one request and answers it.
async fn respond(mut stream: TcpStream, registry: &Registry) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    let end = loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        if head.len() > MAX_HEAD {
            return write(&mut stream, "431 Request Header Fields Too Large", "", "").await;
        }
    };
    let line_end = head[..end].iter().position(|b| *b == b'\n').unwrap_or(end);
    let line = String::from_utf8_lossy(&head[..line_end]);
    match route(line.trim_end()) {
        Route::Metrics { with_body } => match encode(registry) {
            Ok(text) => write_with(&mut stream, "200 OK", CONTENT_TYPE, &text, with_body).await,
            Err(_) => write(&mut stream, "500 Internal Server Error", "", "").await,
        },
        Route::NotFound => {
            let body = "metrics are served on /metrics\n";
            write(&mut stream, "404 Not Found", "text/plain", body).await
        }
        Route::MethodNotAllowed => {
            write(
                &mut stream,
                "405 Method Not Allowed\r\nAllow: GET, HEAD",
                "",
                "",
            )
            .await
        }
        Route::BadRequest => write(&mut stream, "400 Bad Request", "", "").await,
    }
}

/// Writes a whole response and closes the sending side.
async fn write(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &str,
) -> std::io::Result<()> {
    write_with(stream, status, content_type, body, true).await
}

/// Writes a response for `body`, with the body itself or (a `HEAD`)
/// without, and closes the sending side.
async fn write_with(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &str,
    with_body: bool,
) -> std::io::Result<()> {
    let mut response = format!("HTTP/1.1 {status}\r\n");
    if !content_type.is_empty() {
        response.push_str(&format!("Content-Type: {content_type}\r\n"));
    }
    response.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    if with_body {
        response.push_str(body);
    }
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::{route, Route};

    #[test]
    fn routes() {
        let metrics = Route::Metrics { with_body: true };
        assert_eq!(route("GET /metrics HTTP/1.1"), metrics);
        assert_eq!(route("GET /metrics?x=1 HTTP/1.0"), metrics);
        assert_eq!(
            route("HEAD /metrics HTTP/1.1"),
            Route::Metrics { with_body: false }
        );
        assert_eq!(route("GET / HTTP/1.1"), Route::NotFound);
        assert_eq!(route("POST /metrics HTTP/1.1"), Route::MethodNotAllowed);
        assert_eq!(route("GET /metrics"), Route::BadRequest);
        assert_eq!(route("GET /metrics SPDY/3"), Route::BadRequest);
        assert_eq!(route(""), Route::BadRequest);
    }
}
