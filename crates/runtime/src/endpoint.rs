//! [`Endpoint`]: where an object adapter listens and where a proxy
//! connects (tcp, ssl, ws, wss, udp), in Ice's text form (`tcp -h
//! 127.0.0.1 -p 10000 -t 60000 -z`, `ssl -h localhost -p 10001`,
//! `ws -h localhost -p 10002 -r /ice`).
//!
//! Kept deliberately small: host, port, timeout, compress, and the
//! WebSocket resource. The full endpoint model (opaque endpoints too) is
//! floe-wire's `EndpointData`.

use std::fmt;

use floe_wire::{EndpointRole, ParseDefaults};

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

    /// Parses one object adapter endpoint (`tcp -h H -p P [-t T|infinite]
    /// [-z]`, `ssl` with the same options, `ws`/`wss` with those and `-r
    /// RESOURCE`, `udp -h H -p P [-c] [-z] [--ttl N] [--interface I]`),
    /// with floe-wire's parser, so that quotes (single or double), escapes
    /// and options follow Ice's rules as for stringified proxies. `default`
    /// means tcp; a missing `-h` means `default_host` (from
    /// `Ice.Default.Host`), or all interfaces; `-h *` is all interfaces.
    ///
    /// # Errors
    ///
    /// [`floe_wire::Error::EndpointParse`] for unknown protocols, options,
    /// or bad values, and for an `opaque` endpoint (an adapter cannot
    /// listen on one).
    ///
    /// ```
    /// use floe_runtime::Endpoint;
    /// let e = Endpoint::parse("tcp -h 127.0.0.1 -p 10000 -z", None).unwrap();
    /// assert_eq!((e.port, e.compress), (10000, true));
    /// assert_eq!(e.to_string(), "tcp -h 127.0.0.1 -p 10000 -t 60000 -z");
    /// let e = Endpoint::parse("ws -h 'local host' -p 1 -r '/a b'", None).unwrap();
    /// assert_eq!((e.host.as_str(), e.resource.as_str()), ("local host", "/a b"));
    /// ```
    pub fn parse(text: &str, default_host: Option<&str>) -> Result<Endpoint> {
        let defaults = parse_defaults(default_host);
        match floe_wire::parse_endpoint(text, &defaults, EndpointRole::ObjectAdapter) {
            Ok(Some(data)) => Endpoint::from_adapter_data(text, &data),
            Ok(None) => Err(parse_error(text, "unsupported protocol")),
            Err(e) => Err(Error::Protocol(e)),
        }
    }

    /// Parses a `:`-separated endpoint list (as in `A.Endpoints`), as Ice
    /// parses an object adapter's endpoints (floe-wire's
    /// [`parse_adapter_endpoints`](floe_wire::parse_adapter_endpoints)):
    /// a `:` inside double quotes belongs to the endpoint; an empty
    /// endpoint between two `:` is an error.
    ///
    /// # Errors
    ///
    /// As [`Endpoint::parse`].
    ///
    /// ```
    /// use floe_runtime::Endpoint;
    /// let l = Endpoint::parse_list("tcp -h \"::1\" -p 2:udp -p 3", None).unwrap();
    /// assert_eq!((l[0].host.as_str(), l[1].port), ("::1", 3));
    /// assert!(Endpoint::parse_list("tcp -p 1::tcp -p 2", None).is_err());
    /// ```
    pub fn parse_list(text: &str, default_host: Option<&str>) -> Result<Vec<Endpoint>> {
        let defaults = parse_defaults(default_host);
        floe_wire::parse_adapter_endpoints(text, &defaults)
            .map_err(Error::Protocol)?
            .iter()
            .map(|data| Endpoint::from_adapter_data(text, data))
            .collect()
    }

    /// [`Endpoint::from_data`] for a parsed adapter endpoint: an opaque one
    /// is an error.
    fn from_adapter_data(text: &str, data: &floe_wire::EndpointData) -> Result<Endpoint> {
        Endpoint::from_data(data).ok_or_else(|| {
            parse_error(
                text,
                "an object adapter cannot listen on an opaque endpoint",
            )
        })
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

/// The defaults of an adapter endpoint: Ice's, with `default_host`.
fn parse_defaults(default_host: Option<&str>) -> ParseDefaults {
    ParseDefaults {
        host: default_host.unwrap_or_default().to_string(),
        ..ParseDefaults::default()
    }
}

fn parse_error(text: &str, reason: &str) -> Error {
    Error::Protocol(floe_wire::Error::EndpointParse {
        input: text.to_string(),
        reason: reason.to_string(),
    })
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

    /// The adapter endpoints follow Ice's syntax, as floe-wire parses
    /// proxies: single quotes, escaped quotes, `-h *`, `default`.
    #[test]
    fn ice_syntax() {
        let e = Endpoint::parse("tcp -h '127.0.0.1' -p '7'", None).unwrap();
        assert_eq!((e.host.as_str(), e.port), ("127.0.0.1", 7));
        let e = Endpoint::parse(r#"ws -p 1 -r "/a \"b\"""#, None).unwrap();
        assert_eq!(e.resource, "/a \"b\"");
        let e = Endpoint::parse("default -h * -p 0", Some("ignored")).unwrap();
        assert_eq!((e.transport, e.bind_host()), (Transport::Tcp, "0.0.0.0"));
        assert_eq!(e.connect_host(), "127.0.0.1");
        let e = Endpoint::parse("udp -h 239.0.0.1 -p 5 --ttl 3 --interface lo -c", None).unwrap();
        assert_eq!((e.transport, e.port), (Transport::Udp, 5));
        // Ice refuses these; so does floe.
        for bad in [
            "tcp -p 1 -t -1",
            "tcp -h 'x -p 1",
            "-h x -p 1",
            "foo -p 1",
            "tcp -p 1 --sourceAddress 127.0.0.1",
            "opaque -t 99 -e 1.0 -v AAAA",
        ] {
            assert!(Endpoint::parse(bad, None).is_err(), "{bad}");
        }
        let l = Endpoint::parse_list("tcp -h \"a:b\" -p 1 : udp -p 2", None).unwrap();
        assert_eq!(
            (l[0].host.as_str(), l[1].transport),
            ("a:b", Transport::Udp)
        );
        assert!(Endpoint::parse_list("tcp -p 1:", None).unwrap().len() == 1);
        assert!(Endpoint::parse_list("", None).unwrap().is_empty());
    }
}
