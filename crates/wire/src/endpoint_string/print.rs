//! Printing an endpoint as Ice's `Endpoint::toString` does.

use std::fmt::{self, Write as _};
use std::net::IpAddr;

use crate::base64;
use crate::endpoint::{EndpointData, OpaqueEndpoint, TcpEndpoint};

/// Writes ` option value`, quoting the value if it holds a `:`.
fn write_quoted_option(out: &mut String, option: &str, value: &str) {
    out.push(' ');
    out.push_str(option);
    if value.contains(':') {
        let _ = write!(out, " \"{value}\"");
    } else {
        let _ = write!(out, " {value}");
    }
}

fn write_ip_options(out: &mut String, host: &str, port: i32, source: Option<IpAddr>) {
    if !host.is_empty() {
        write_quoted_option(out, "-h", host);
    }
    let _ = write!(out, " -p {port}");
    if let Some(addr) = source {
        write_quoted_option(out, "--sourceAddress", &addr.to_string());
    }
}

fn write_tcp_options(out: &mut String, t: &TcpEndpoint) {
    write_ip_options(out, &t.host, t.port, t.source_address);
    if t.timeout == -1 {
        out.push_str(" -t infinite");
    } else {
        let _ = write!(out, " -t {}", t.timeout);
    }
    if t.compress {
        out.push_str(" -z");
    }
}

/// Prints an endpoint as Ice's `Endpoint::toString` does.
///
/// ```
/// use floe_wire::{EndpointData, UdpEndpoint};
/// let ep = EndpointData::Udp(UdpEndpoint { ttl: Some(5), ..UdpEndpoint::new("239.255.1.1", 10000) });
/// assert_eq!(ep.to_string(), "udp -h 239.255.1.1 -p 10000 --ttl 5");
/// ```
pub fn endpoint_to_string(ep: &EndpointData) -> String {
    let mut out = ep.protocol().to_string();
    match ep {
        EndpointData::Tcp(t) | EndpointData::Ssl(t) => write_tcp_options(&mut out, t),
        EndpointData::Ws(w) | EndpointData::Wss(w) => {
            write_tcp_options(&mut out, &w.tcp);
            if !w.resource.is_empty() {
                write_quoted_option(&mut out, "-r", &w.resource);
            }
        }
        EndpointData::Udp(u) => {
            write_ip_options(&mut out, &u.host, u.port, u.source_address);
            if let Some(interface) = u.interface.as_deref().filter(|i| !i.is_empty()) {
                write_quoted_option(&mut out, "--interface", interface);
            }
            if let Some(ttl) = u.ttl {
                let _ = write!(out, " --ttl {ttl}");
            }
            if u.connect {
                out.push_str(" -c");
            }
            if u.compress {
                out.push_str(" -z");
            }
        }
        EndpointData::Opaque(o) => write_opaque_options(&mut out, o),
    }
    out
}

fn write_opaque_options(out: &mut String, o: &OpaqueEndpoint) {
    if o.endpoint_type > -1 {
        let _ = write!(out, " -t {}", o.endpoint_type);
    }
    let _ = write!(out, " -e {}", o.encoding);
    if !o.bytes.is_empty() {
        let _ = write!(out, " -v {}", base64::encode(&o.bytes));
    }
}

impl fmt::Display for EndpointData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&endpoint_to_string(self))
    }
}
