//! Text forms of endpoints (`tcp -h 127.0.0.1 -p 10000 -t 60000`), parsed
//! and printed exactly as Ice 3.7 does (§6.1).
//!
//! Parsing splits the text into whitespace-separated words (quotes group
//! words and are removed), takes the first as the protocol and reads the
//! options. A word starting with `-` never serves as an option's argument,
//! which is why timeouts are written `-t infinite` rather than `-t -1`.
//! Missing values come from [`ParseDefaults`] (`Ice.Default.*`). An opaque
//! endpoint of a known type becomes that type.
//!
//! Printing always gives the port, the timeout of stream endpoints and every
//! option that differs from its default, quoting hosts that hold a `:`.

mod print;
mod words;

use std::net::IpAddr;
use std::str::FromStr;

use bytes::Bytes;

use crate::base64;
use crate::endpoint::{EndpointData, TcpEndpoint, UdpEndpoint, WsEndpoint, DEFAULT_TIMEOUT};
use crate::error::{Error, Result};
use crate::version::{parse_int, EncodingVersion, ENCODING_1_0, ENCODING_1_1};

pub use print::endpoint_to_string;
pub(crate) use words::find_endpoint_end;
pub use words::{split_endpoints, split_words};

/// The configuration that fills in what a stringified proxy or endpoint
/// leaves out (Ice's `Ice.Default.*` properties).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseDefaults {
    /// `Ice.Default.Host`: the host of endpoints without `-h` (empty: none).
    pub host: String,
    /// `Ice.Default.Timeout`: the timeout of endpoints without `-t` (ms).
    pub timeout: i32,
    /// `Ice.Default.Protocol`: what the protocol name `default` stands for.
    pub protocol: String,
    /// `Ice.Default.EncodingVersion`: the encoding of proxies without `-e`.
    pub encoding: EncodingVersion,
    /// `Ice.Default.SourceAddress`: the source address of client endpoints
    /// without `--sourceAddress`.
    pub source_address: Option<IpAddr>,
}

impl Default for ParseDefaults {
    /// Ice's defaults: no host, 60000 ms, `tcp`, encoding 1.1, no source address.
    fn default() -> Self {
        ParseDefaults {
            host: String::new(),
            timeout: DEFAULT_TIMEOUT,
            protocol: "tcp".to_string(),
            encoding: ENCODING_1_1,
            source_address: None,
        }
    }
}

/// Whether an endpoint is parsed for a proxy or for an object adapter.
/// They differ in `-h *` (all interfaces: adapters only) and
/// `--sourceAddress` (proxies only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndpointRole {
    /// An endpoint a client connects to.
    Proxy,
    /// An endpoint an object adapter listens on.
    ObjectAdapter,
}

fn parse_error(input: &str, reason: impl Into<String>) -> Error {
    Error::EndpointParse {
        input: input.to_string(),
        reason: reason.into(),
    }
}

/// Parses one endpoint. Returns `Ok(None)` for an unknown protocol (Ice
/// drops such endpoints from a proxy when others are known).
///
/// ```
/// use floe_wire::{parse_endpoint, EndpointRole, ParseDefaults};
/// let d = ParseDefaults::default();
/// assert!(parse_endpoint("tcp -h h -p 70000", &d, EndpointRole::Proxy).is_err());
/// let ep = parse_endpoint("tcp -h \"::1\" -p 1 -z", &d, EndpointRole::Proxy).unwrap().unwrap();
/// assert_eq!(ep.to_string(), "tcp -h \"::1\" -p 1 -t 60000 -z");
/// assert!(parse_endpoint("foo -h h", &d, EndpointRole::Proxy).unwrap().is_none());
/// ```
///
/// # Errors
///
/// [`Error::EndpointParse`] for malformed text, unknown options or bad
/// values; an opaque endpoint of a known type whose bytes do not decode
/// gives that decoding error (as Ice raises `UnmarshalOutOfBoundsException`).
pub fn parse_endpoint(
    text: &str,
    defaults: &ParseDefaults,
    role: EndpointRole,
) -> Result<Option<EndpointData>> {
    let words = split_words(text)?;
    let Some((protocol, args)) = words.split_first() else {
        return Err(parse_error(text, "value has no non-whitespace characters"));
    };
    let protocol = if protocol == "default" {
        defaults.protocol.as_str()
    } else {
        protocol.as_str()
    };
    let ep = match protocol {
        "tcp" | "ssl" | "ws" | "wss" => {
            let mut tcp = TcpEndpoint {
                timeout: defaults.timeout,
                ..TcpEndpoint::new("", 0)
            };
            let ws = matches!(protocol, "ws" | "wss");
            let mut resource = "/".to_string();
            let mut host = String::new();
            let mut source = None;
            let unknown = parse_options(args, |option, arg| {
                if ip_option(text, option, arg, &mut host, &mut tcp.port, &mut source)? {
                    return Ok(true);
                }
                // Ice matches the TCP, WS and opaque options on their second
                // character only (`-tfoo 5` is `-t 5`); `parse_options` only
                // passes options of two bytes or more.
                match option.as_bytes()[1] {
                    b't' => {
                        let arg = required(text, option, arg)?;
                        tcp.timeout = if arg == "infinite" {
                            -1
                        } else {
                            match parse_int(arg) {
                                Some(t) if t >= 1 => t,
                                _ => {
                                    return Err(parse_error(
                                        text,
                                        format!("invalid timeout value `{arg}'"),
                                    ))
                                }
                            }
                        };
                    }
                    b'z' => {
                        no_argument(text, option, arg)?;
                        tcp.compress = true;
                    }
                    b'r' if ws => resource = required(text, option, arg)?.to_string(),
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
            check_unknown(text, &unknown)?;
            tcp.host = finish_host(text, host, defaults, role)?;
            tcp.source_address = finish_source(text, source, defaults, role)?;
            match protocol {
                "tcp" => EndpointData::Tcp(tcp),
                "ssl" => EndpointData::Ssl(tcp),
                "ws" => EndpointData::Ws(WsEndpoint { tcp, resource }),
                _ => EndpointData::Wss(WsEndpoint { tcp, resource }),
            }
        }
        "udp" => {
            let mut udp = UdpEndpoint::new("", 0);
            let mut host = String::new();
            let mut source = None;
            let unknown = parse_options(args, |option, arg| {
                if ip_option(text, option, arg, &mut host, &mut udp.port, &mut source)? {
                    return Ok(true);
                }
                match option {
                    "-c" => {
                        no_argument(text, option, arg)?;
                        udp.connect = true;
                    }
                    "-z" => {
                        no_argument(text, option, arg)?;
                        udp.compress = true;
                    }
                    "-v" | "-e" => {
                        // Deprecated protocol/encoding options: checked, then ignored.
                        let arg = required(text, option, arg)?;
                        arg.parse::<EncodingVersion>().map_err(|e| {
                            parse_error(text, format!("invalid version `{arg}': {e}"))
                        })?;
                    }
                    "--ttl" => {
                        let arg = required(text, option, arg)?;
                        let ttl = parse_int(arg).ok_or_else(|| {
                            parse_error(text, format!("invalid TTL value `{arg}'"))
                        })?;
                        udp.ttl = Some(ttl);
                    }
                    "--interface" => {
                        udp.interface = Some(required(text, option, arg)?.to_string());
                    }
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
            check_unknown(text, &unknown)?;
            udp.host = finish_host(text, host, defaults, role)?;
            udp.source_address = finish_source(text, source, defaults, role)?;
            EndpointData::Udp(udp)
        }
        "opaque" => parse_opaque(text, args)?,
        _ => return Ok(None),
    };
    Ok(Some(ep))
}

/// Reads `-t type -e major.minor -v base64`, then turns an endpoint of a
/// known type into that type by decoding its bytes.
fn parse_opaque(text: &str, args: &[String]) -> Result<EndpointData> {
    // Ice keeps the type in an int16 initialised to -1 and treats any
    // negative value as "not given", so 32768..=65535 wrap and are lost.
    let mut endpoint_type: i16 = -1;
    let mut encoding = ENCODING_1_0;
    let mut raw: Vec<u8> = Vec::new();
    let unknown = parse_options(args, |option, arg| {
        // Second character only, as for TCP (options have two bytes or more).
        match option.as_bytes()[1] {
            b't' => {
                if endpoint_type > -1 {
                    return Err(parse_error(text, "multiple -t options"));
                }
                let arg = required(text, option, arg)?;
                let t = parse_int(arg)
                    .ok_or_else(|| parse_error(text, format!("invalid type value `{arg}'")))?;
                if !(0..=65535).contains(&t) {
                    return Err(parse_error(
                        text,
                        format!("type value `{arg}' out of range"),
                    ));
                }
                endpoint_type = t as u16 as i16;
            }
            b'v' => {
                if !raw.is_empty() {
                    return Err(parse_error(text, "multiple -v options"));
                }
                let arg = required(text, option, arg)?;
                if let Some(c) = arg
                    .chars()
                    .find(|c| !c.is_ascii() || !base64::is_base64(*c as u8))
                {
                    return Err(parse_error(
                        text,
                        format!("invalid base64 character `{c}' (ordinal {})", c as u32),
                    ));
                }
                raw = base64::decode(arg);
            }
            b'e' => {
                let arg = required(text, option, arg)?;
                encoding = arg.parse().map_err(|e| {
                    parse_error(text, format!("invalid encoding version `{arg}': {e}"))
                })?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    check_unknown(text, &unknown)?;
    if endpoint_type < 0 {
        return Err(parse_error(text, "no -t option"));
    }
    if raw.is_empty() {
        return Err(parse_error(text, "no -v option"));
    }
    EndpointData::from_encapsulation(endpoint_type, encoding, Bytes::from(raw))
}

/// Ice's generic option loop. Each word starting with `-` (and at least two
/// characters long) is an option; the next word is its argument unless it
/// also starts with `-`. `handle` returns whether it knew the option; the
/// words it did not know are returned.
fn parse_options(
    args: &[String],
    mut handle: impl FnMut(&str, Option<&str>) -> Result<bool>,
) -> Result<Vec<&str>> {
    let mut unknown = Vec::new();
    let mut n = 0;
    while n < args.len() {
        let option = args[n].as_str();
        n += 1;
        if option.len() < 2 || !option.starts_with('-') {
            unknown.push(option);
            continue;
        }
        let mut arg = None;
        if let Some(next) = args.get(n) {
            if !next.starts_with('-') {
                arg = Some(next.as_str());
                n += 1;
            }
        }
        if !handle(option, arg)? {
            unknown.push(option);
            unknown.extend(arg);
        }
    }
    Ok(unknown)
}

fn check_unknown(text: &str, unknown: &[&str]) -> Result<()> {
    match unknown.first() {
        Some(word) => Err(parse_error(text, format!("unrecognized argument `{word}'"))),
        None => Ok(()),
    }
}

fn required<'a>(text: &str, option: &str, arg: Option<&'a str>) -> Result<&'a str> {
    arg.ok_or_else(|| parse_error(text, format!("no argument provided for {option} option")))
}

fn no_argument(text: &str, option: &str, arg: Option<&str>) -> Result<()> {
    match arg {
        Some(a) => Err(parse_error(
            text,
            format!("unexpected argument `{a}' provided for {option} option"),
        )),
        None => Ok(()),
    }
}

/// The options every IP endpoint understands (exact names): `-h`, `-p`,
/// `--sourceAddress`.
fn ip_option(
    text: &str,
    option: &str,
    arg: Option<&str>,
    host: &mut String,
    port: &mut i32,
    source: &mut Option<IpAddr>,
) -> Result<bool> {
    match option {
        "-h" => *host = required(text, option, arg)?.to_string(),
        "-p" => {
            let arg = required(text, option, arg)?;
            let p = parse_int(arg)
                .ok_or_else(|| parse_error(text, format!("invalid port value `{arg}'")))?;
            if !(0..=65535).contains(&p) {
                return Err(parse_error(
                    text,
                    format!("port value `{arg}' out of range"),
                ));
            }
            *port = p;
        }
        "--sourceAddress" => {
            let arg = required(text, option, arg)?;
            let addr = arg.parse::<IpAddr>().map_err(|_| {
                parse_error(
                    text,
                    "invalid IP address provided for --sourceAddress option",
                )
            })?;
            *source = Some(addr);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn finish_host(
    text: &str,
    host: String,
    defaults: &ParseDefaults,
    role: EndpointRole,
) -> Result<String> {
    if host.is_empty() {
        return Ok(defaults.host.clone());
    }
    if host == "*" {
        return match role {
            EndpointRole::ObjectAdapter => Ok(String::new()),
            EndpointRole::Proxy => Err(parse_error(text, "`-h *' not valid for proxy endpoint")),
        };
    }
    Ok(host)
}

fn finish_source(
    text: &str,
    source: Option<IpAddr>,
    defaults: &ParseDefaults,
    role: EndpointRole,
) -> Result<Option<IpAddr>> {
    match (source, role) {
        (Some(_), EndpointRole::ObjectAdapter) => Err(parse_error(
            text,
            "`--sourceAddress' not valid for object adapter endpoint",
        )),
        (Some(a), EndpointRole::Proxy) => Ok(Some(a)),
        (None, EndpointRole::Proxy) => Ok(defaults.source_address),
        (None, EndpointRole::ObjectAdapter) => Ok(None),
    }
}

/// Parses the endpoints of an object adapter (`Ice.Adapter.Endpoints`
/// style: `tcp -h * -p 0:udp -p 0`). Unlike in a proxy, an unknown protocol
/// or an empty endpoint is an error.
///
/// # Errors
///
/// [`Error::EndpointParse`] as for [`parse_endpoint`], and for an empty or
/// unknown endpoint.
pub fn parse_adapter_endpoints(text: &str, defaults: &ParseDefaults) -> Result<Vec<EndpointData>> {
    let mut endpoints = Vec::new();
    let blank = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let mut end = 0;
    while end < text.len() {
        let Some(beg) = text
            .bytes()
            .skip(end)
            .position(|b| !blank(b))
            .map(|p| p + end)
        else {
            if !endpoints.is_empty() {
                return Err(parse_error(text, "invalid empty object adapter endpoint"));
            }
            break;
        };
        end = find_endpoint_end(text, beg);
        if end == beg {
            return Err(parse_error(text, "invalid empty object adapter endpoint"));
        }
        let one = &text[beg..end];
        match parse_endpoint(one, defaults, EndpointRole::ObjectAdapter)? {
            Some(ep) => endpoints.push(ep),
            None => {
                return Err(parse_error(
                    text,
                    format!("invalid object adapter endpoint `{one}'"),
                ))
            }
        }
        end += 1;
    }
    Ok(endpoints)
}

impl FromStr for EndpointData {
    type Err = Error;

    /// Parses a proxy endpoint with Ice's default configuration
    /// ([`ParseDefaults::default`]); an unknown protocol is an error.
    fn from_str(s: &str) -> Result<Self> {
        parse_endpoint(s, &ParseDefaults::default(), EndpointRole::Proxy)?
            .ok_or_else(|| parse_error(s, "unknown endpoint protocol"))
    }
}

#[cfg(test)]
mod tests;
