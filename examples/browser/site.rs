//! A static HTTP/1.1 server for the page: `GET` (and `HEAD`) of a fixed
//! set of files held in memory, one request per connection. The page
//! then talks to floe over `ws` on the adapter's own port; this server
//! only hands out the files.
//!
//! Requests are read with a size and a time limit, and anything else than
//! a known path gets a 404 or a 400, so a stray client cannot hold a task
//! or memory.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// The longest request head read (request line and headers).
const MAX_HEAD: usize = 8 * 1024;

/// How long a client may take to send its request head.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// One file: its media type and its bytes.
struct File {
    content_type: &'static str,
    body: Vec<u8>,
}

/// The files of the site, by request path.
#[derive(Default)]
pub struct Site {
    files: HashMap<String, File>,
}

impl Site {
    /// Serves `body` at `path` (`/app.js`) as `content_type`.
    pub fn add(&mut self, path: &str, content_type: &'static str, body: impl Into<Vec<u8>>) {
        self.files.insert(
            path.to_owned(),
            File {
                content_type,
                body: body.into(),
            },
        );
    }

    /// Listens on `addr` (`127.0.0.1:0` for a free port) and serves the
    /// files until the returned task is aborted.
    pub async fn serve(self, addr: &str) -> std::io::Result<(SocketAddr, JoinHandle<()>)> {
        let listener = TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        let site = Arc::new(self);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let site = site.clone();
                tokio::spawn(async move {
                    // A client that goes away mid-request is no concern of ours.
                    let _ = site.answer(stream).await;
                });
            }
        });
        Ok((local, task))
    }

    /// Reads one request head from `stream` and writes the response.
    async fn answer(&self, mut stream: TcpStream) -> std::io::Result<()> {
        let head = match tokio::time::timeout(READ_TIMEOUT, read_head(&mut stream)).await {
            Ok(Ok(Some(head))) => head,
            Ok(Ok(None)) => return respond(&mut stream, "400 Bad Request").await,
            Ok(Err(e)) => return Err(e),
            Err(_) => return Ok(()),
        };
        let mut words = head.split(' ');
        let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        let path = target.split('?').next().unwrap_or("");
        let path = if path == "/" { "/index.html" } else { path };
        let status = match (method, self.files.get(path)) {
            ("GET" | "HEAD", Some(file)) => {
                let body = (method == "GET").then_some(&file.body[..]);
                return respond_file(&mut stream, file, body).await;
            }
            ("GET" | "HEAD", None) => "404 Not Found",
            _ => "405 Method Not Allowed",
        };
        respond(&mut stream, status).await
    }
}

/// Reads up to the blank line that ends a request head; returns its first
/// line, or None when the head is too long or not text.
async fn read_head(stream: &mut TcpStream) -> std::io::Result<Option<String>> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() > MAX_HEAD {
            return Ok(None);
        }
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(None);
        }
        head.extend_from_slice(&buf[..n]);
    }
    let Ok(text) = std::str::from_utf8(&head) else {
        return Ok(None);
    };
    Ok(text.lines().next().map(str::to_owned))
}

/// A 200 response for `file`, with its bytes unless the request was `HEAD`.
async fn respond_file(
    stream: &mut TcpStream,
    file: &File,
    body: Option<&[u8]>,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        file.content_type,
        file.body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    if let Some(body) = body {
        stream.write_all(body).await?;
    }
    stream.shutdown().await
}

/// A response without a file: the status line is also the body.
async fn respond(stream: &mut TcpStream, status: &str) -> std::io::Result<()> {
    let text = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{status}",
        status.len()
    );
    stream.write_all(text.as_bytes()).await?;
    stream.shutdown().await
}
