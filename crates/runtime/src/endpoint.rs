//! [`Endpoint`]: where an object adapter listens and where a proxy
//! connects (tcp, ssl, ws, wss, udp), in Ice's text form (`tcp -h
//! 127.0.0.1 -p 10000 -t 60000 -z`, `ssl -h localhost -p 10001`,
//! `ws -h localhost -p 10002 -r /ice`).
//!
//! Kept deliberately small: host, port, timeout, compress, and the
//! WebSocket resource. The full endpoint model (opaque endpoints too) is
//! floe-wire's `EndpointData`.

use std::fmt;

use crate::error::{Error, Result};

/// The transport of an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Transport {
    /// `tcp`: connection-oriented, validated, replies.
    Tcp,
    /// `udp`: one frame per datagram, oneway only.
    Udp,
    /// `ssl`: TCP with TLS (IceSSL), configured by the `IceSSL.*`
    /// properties.
    Ssl,
    /// `ws`: a WebSocket (IceWS) over TCP.
    Ws,
    /// `wss`: a WebSocket over TLS (`IceSSL.*` as for `ssl`).
    Wss,
}

impl Transport {
    /// Whether the transport is connection-oriented (all but udp).
    pub fn is_stream(self) -> bool {
        self != Transport::Udp
    }

    /// Whether the transport is secure (ssl, wss).
    pub fn is_secure(self) -> bool {
        matches!(self, Transport::Ssl | Transport::Wss)
    }

    /// Whether the transport is a WebSocket (ws, wss).
    pub fn is_websocket(self) -> bool {
        matches!(self, Transport::Ws | Transport::Wss)
    }

    /// The protocol word of the text form.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Udp => "udp",
            Transport::Ssl => "ssl",
            Transport::Ws => "ws",
            Transport::Wss => "wss",
        }
    }
}

/// A TCP or UDP endpoint.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Endpoint {
    /// tcp or udp.
    pub transport: Transport,
    /// Host name or address; empty or `*` / `0.0.0.0` means all interfaces
    /// for a server, loopback for a client.
    pub host: String,
    /// Port; 0 = ephemeral on a server.
    pub port: u16,
    /// Timeout in ms (`-t`), -1 for infinite; TCP only (default 60000).
    pub timeout: i32,
    /// `-z`: compress requests sent through this endpoint.
    pub compress: bool,
    /// `-r`: the HTTP resource of a WebSocket endpoint (default `/`;
    /// unused by other transports).
    pub resource: String,
}

impl Endpoint {
    /// A TCP endpoint with the default timeout.
    pub fn tcp(host: impl Into<String>, port: u16) -> Self {
        Endpoint {
            transport: Transport::Tcp,
            host: host.into(),
            port,
            timeout: 60_000,
            compress: false,
            resource: "/".to_string(),
        }
    }

    /// An SSL endpoint with the default timeout.
    pub fn ssl(host: impl Into<String>, port: u16) -> Self {
        Endpoint {
            transport: Transport::Ssl,
            ..Endpoint::tcp(host, port)
        }
    }

    /// A WebSocket (`ws`, or `wss` when `secure`) endpoint for `resource`.
    pub fn ws(host: impl Into<String>, port: u16, resource: &str, secure: bool) -> Self {
        Endpoint {
            transport: if secure {
                Transport::Wss
            } else {
                Transport::Ws
            },
            resource: resource.to_string(),
            ..Endpoint::tcp(host, port)
        }
    }

    /// A UDP endpoint.
    pub fn udp(host: impl Into<String>, port: u16) -> Self {
        Endpoint {
            transport: Transport::Udp,
            host: host.into(),
            port,
            timeout: -1,
            compress: false,
            resource: "/".to_string(),
        }
    }

    /// Parses one endpoint (`tcp -h H -p P [-t T|infinite] [-z]`,
    /// `ssl` with the same options, `ws`/`wss` with those and
    /// `-r RESOURCE`, `udp -h H -p P [-z]`). A missing protocol word means tcp; a missing
    /// `-h` means `default_host` (from `Ice.Default.Host`), or empty.
    ///
    /// # Errors
    ///
    /// [`floe_wire::Error::EndpointParse`] for unknown protocols, options,
    /// or bad numbers.
    ///
    /// ```
    /// use floe_runtime::Endpoint;
    /// let e = Endpoint::parse("tcp -h 127.0.0.1 -p 10000 -z", None).unwrap();
    /// assert_eq!((e.port, e.compress), (10000, true));
    /// assert_eq!(e.to_string(), "tcp -h 127.0.0.1 -p 10000 -t 60000 -z");
    /// ```
    pub fn parse(text: &str, default_host: Option<&str>) -> Result<Endpoint> {
        let err = |reason: String| {
            Error::Protocol(floe_wire::Error::EndpointParse {
                input: text.to_string(),
                reason,
            })
        };
        let words = split_words(text).map_err(err)?;
        let mut it = words.iter().map(String::as_str).peekable();
        let mut ep = match it.peek() {
            Some(&"tcp") | Some(&"default") => {
                it.next();
                Endpoint::tcp("", 0)
            }
            Some(&"udp") => {
                it.next();
                Endpoint::udp("", 0)
            }
            Some(&"ssl") => {
                it.next();
                Endpoint::ssl("", 0)
            }
            Some(&"ws") => {
                it.next();
                Endpoint::ws("", 0, "/", false)
            }
            Some(&"wss") => {
                it.next();
                Endpoint::ws("", 0, "/", true)
            }
            Some(w) if w.starts_with('-') => Endpoint::tcp("", 0),
            Some(w) => return Err(err(format!("unsupported protocol `{w}`"))),
            None => return Err(err("empty endpoint".into())),
        };
        let mut host = None;
        while let Some(opt) = it.next() {
            let mut arg = |name: &str| {
                it.next()
                    .map(str::to_string)
                    .ok_or_else(|| err(format!("no argument for {name}")))
            };
            match opt {
                "-h" => host = Some(arg("-h")?),
                "-p" => {
                    let p = arg("-p")?;
                    ep.port = p.parse().map_err(|_| err(format!("invalid port `{p}`")))?;
                }
                "-t" if ep.transport.is_stream() => {
                    let t = arg("-t")?;
                    ep.timeout = if t == "infinite" {
                        -1
                    } else {
                        match t.parse::<i32>() {
                            Ok(v) if v >= 1 || v == -1 => v,
                            _ => return Err(err(format!("invalid timeout `{t}`"))),
                        }
                    };
                }
                "-z" => ep.compress = true,
                "-r" if ep.transport.is_websocket() => ep.resource = arg("-r")?,
                "-c" if ep.transport == Transport::Udp => {}
                "--ttl" | "--interface" | "--sourceAddress" => {
                    arg(opt)?;
                }
                other => return Err(err(format!("unknown option `{other}`"))),
            }
        }
        ep.host = host
            .or_else(|| default_host.map(str::to_string))
            .unwrap_or_default();
        Ok(ep)
    }

    /// Parses a `:`-separated endpoint list (as in `A.Endpoints`).
    ///
    /// # Errors
    ///
    /// As [`Endpoint::parse`].
    pub fn parse_list(text: &str, default_host: Option<&str>) -> Result<Vec<Endpoint>> {
        split_endpoints(text)
            .iter()
            .filter(|s| !s.trim().is_empty())
            .map(|s| Endpoint::parse(s, default_host))
            .collect()
    }

    /// The address a client connects to (`*`, `0.0.0.0` and empty become
    /// the loopback address).
    pub fn connect_host(&self) -> &str {
        match self.host.as_str() {
            "" | "*" | "0.0.0.0" => "127.0.0.1",
            "::" => "::1",
            h => h,
        }
    }

    /// The address a server binds (`*` and empty become all interfaces).
    pub fn bind_host(&self) -> &str {
        match self.host.as_str() {
            "" | "*" => "0.0.0.0",
            h => h,
        }
    }
}

impl Endpoint {
    /// The wire-level endpoint data (for proxies marshaled in parameters).
    pub fn to_data(&self) -> floe_wire::EndpointData {
        match self.transport {
            Transport::Tcp => floe_wire::EndpointData::Tcp(self.tcp_data()),
            Transport::Udp => {
                let mut u = floe_wire::UdpEndpoint::new(self.host.clone(), self.port as i32);
                u.compress = self.compress;
                floe_wire::EndpointData::Udp(u)
            }
            Transport::Ssl => floe_wire::EndpointData::Ssl(self.tcp_data()),
            Transport::Ws => floe_wire::EndpointData::Ws(floe_wire::WsEndpoint {
                tcp: self.tcp_data(),
                resource: self.resource.clone(),
            }),
            Transport::Wss => floe_wire::EndpointData::Wss(floe_wire::WsEndpoint {
                tcp: self.tcp_data(),
                resource: self.resource.clone(),
            }),
        }
    }

    fn tcp_data(&self) -> floe_wire::TcpEndpoint {
        floe_wire::TcpEndpoint {
            host: self.host.clone(),
            port: self.port as i32,
            timeout: self.timeout,
            compress: self.compress,
            source_address: None,
        }
    }

    /// The endpoint for wire-level data, `None` for opaque endpoints or
    /// out-of-range ports.
    pub fn from_data(data: &floe_wire::EndpointData) -> Option<Endpoint> {
        use floe_wire::EndpointData as D;
        let stream = |transport, t: &floe_wire::TcpEndpoint, resource: &str| {
            Some(Endpoint {
                transport,
                host: t.host.clone(),
                port: u16::try_from(t.port).ok()?,
                timeout: t.timeout,
                compress: t.compress,
                resource: resource.to_string(),
            })
        };
        match data {
            D::Tcp(t) => stream(Transport::Tcp, t, "/"),
            D::Ssl(t) => stream(Transport::Ssl, t, "/"),
            D::Ws(w) => stream(Transport::Ws, &w.tcp, &w.resource),
            D::Wss(w) => stream(Transport::Wss, &w.tcp, &w.resource),
            D::Udp(u) => Some(Endpoint {
                transport: Transport::Udp,
                host: u.host.clone(),
                port: u16::try_from(u.port).ok()?,
                timeout: -1,
                compress: u.compress,
                resource: "/".to_string(),
            }),
            D::Opaque(_) => None,
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.transport.name())?;
        if !self.host.is_empty() {
            if self.host.contains(':') {
                write!(f, " -h \"{}\"", self.host)?;
            } else {
                write!(f, " -h {}", self.host)?;
            }
        }
        write!(f, " -p {}", self.port)?;
        if self.transport.is_stream() {
            if self.timeout == -1 {
                write!(f, " -t infinite")?;
            } else {
                write!(f, " -t {}", self.timeout)?;
            }
        }
        if self.compress {
            write!(f, " -z")?;
        }
        if self.transport.is_websocket() {
            write!(f, " -r \"{}\"", self.resource)?;
        }
        Ok(())
    }
}

/// Splits on whitespace, honouring double quotes.
fn split_words(text: &str) -> std::result::Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut has = false;
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                has = true;
            }
            c if c.is_whitespace() && !quoted => {
                if has {
                    words.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            c => {
                cur.push(c);
                has = true;
            }
        }
    }
    if quoted {
        return Err("unbalanced quotes".into());
    }
    if has {
        words.push(cur);
    }
    Ok(words)
}

/// Splits an endpoint list on `:` outside double quotes.
pub(crate) fn split_endpoints(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            ':' if !quoted => parts.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    parts.push(cur);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print() {
        let e = Endpoint::parse("tcp -h 127.0.0.1 -p 10000", None).unwrap();
        assert_eq!(e, Endpoint::tcp("127.0.0.1", 10000));
        assert_eq!(e.to_string(), "tcp -h 127.0.0.1 -p 10000 -t 60000");
        let e = Endpoint::parse("udp -h 239.0.0.1 -p 5000 -z", None).unwrap();
        assert_eq!(e.to_string(), "udp -h 239.0.0.1 -p 5000 -z");
        let e = Endpoint::parse("tcp -p 1 -t infinite", Some("h")).unwrap();
        assert_eq!((e.host.as_str(), e.timeout), ("h", -1));
        assert_eq!(e.connect_host(), "h");
        let l = Endpoint::parse_list("tcp -h \"::1\" -p 2:udp -p 3", None).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].host, "::1");
        let e = Endpoint::parse("ssl -h localhost -p 1 -t 500", None).unwrap();
        assert_eq!(e.to_string(), "ssl -h localhost -p 1 -t 500");
        assert!(e.transport.is_secure());
        let data = e.to_data();
        assert_eq!(data.protocol(), "ssl");
        assert_eq!(Endpoint::from_data(&data), Some(e));
        let e = Endpoint::parse("wss -h h -p 2 -r /ice", None).unwrap();
        assert_eq!(e, Endpoint::ws("h", 2, "/ice", true));
        assert_eq!(e.to_string(), "wss -h h -p 2 -t 60000 -r \"/ice\"");
        assert_eq!(Endpoint::from_data(&e.to_data()), Some(e));
        assert_eq!(Endpoint::parse("ws -p 3", None).unwrap().resource, "/");
        assert!(Endpoint::parse("tcp -p 1 -r /x", None).is_err());
        assert!(Endpoint::parse("tcp -x", None).is_err());
        assert!(Endpoint::parse("tcp -p 70000", None).is_err());
        assert!(Endpoint::parse("tcp -p", None).is_err());
    }
}
