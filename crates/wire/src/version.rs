//! Protocol and encoding version numbers.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// An encoding version (`major.minor`), carried by every encapsulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EncodingVersion {
    /// Major version (always 1).
    pub major: u8,
    /// Minor version (0 or 1).
    pub minor: u8,
}

/// Encoding 1.0: what a 3.7 peer sends for `-e 1.0` proxies.
pub const ENCODING_1_0: EncodingVersion = EncodingVersion { major: 1, minor: 0 };
/// Encoding 1.1: the default.
pub const ENCODING_1_1: EncodingVersion = EncodingVersion { major: 1, minor: 1 };

impl EncodingVersion {
    /// Whether floe can read and write data in this encoding.
    pub fn is_supported(self) -> bool {
        self.major == 1 && self.minor <= 1
    }
}

impl Default for EncodingVersion {
    fn default() -> Self {
        ENCODING_1_1
    }
}

impl fmt::Display for EncodingVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A protocol version (`major.minor`). Ice 3.7 speaks only 1.0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProtocolVersion {
    /// Major version (always 1).
    pub major: u8,
    /// Minor version (always 0).
    pub minor: u8,
}

/// Protocol 1.0, the only one Ice 3.7 speaks.
pub const PROTOCOL_1_0: ProtocolVersion = ProtocolVersion { major: 1, minor: 0 };

impl Default for ProtocolVersion {
    fn default() -> Self {
        PROTOCOL_1_0
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Reads a decimal int32 the way a C++ `istream >> int` followed by an
/// end-of-input check does (what Ice uses for every number in text forms):
/// leading whitespace and one sign are allowed, nothing may follow the
/// digits, and values outside `i32` fail.
pub(crate) fn parse_int(s: &str) -> Option<i32> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (negative, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut value: i64 = 0;
    for b in digits.bytes() {
        value = value * 10 + i64::from(b - b'0');
        if value > i64::from(i32::MAX) + 1 {
            return None;
        }
    }
    i32::try_from(if negative { -value } else { value }).ok()
}

/// Parses `major.minor` as Ice's `stringToEncodingVersion` and
/// `stringToProtocolVersion` do: both numbers are C++-style integers, major
/// in 1..=255, minor in 0..=255.
fn parse_major_minor(s: &str) -> Result<(u8, u8), Error> {
    let err = |reason: String| Error::VersionParse {
        input: s.to_string(),
        reason,
    };
    let Some((major, minor)) = s.split_once('.') else {
        return Err(err(format!("malformed version value `{s}'")));
    };
    let major =
        parse_int(major).ok_or_else(|| err(format!("invalid major version value `{s}'")))?;
    let minor =
        parse_int(minor).ok_or_else(|| err(format!("invalid minor version value `{s}'")))?;
    if !(1..=255).contains(&major) || !(0..=255).contains(&minor) {
        return Err(err(format!("range error in version `{s}'")));
    }
    // Both ranges were checked just above.
    Ok((major as u8, minor as u8))
}

impl FromStr for EncodingVersion {
    type Err = Error;

    /// Parses `1.1` and the like (any version in range, supported or not).
    fn from_str(s: &str) -> Result<Self, Error> {
        let (major, minor) = parse_major_minor(s)?;
        Ok(EncodingVersion { major, minor })
    }
}

impl FromStr for ProtocolVersion {
    type Err = Error;

    /// Parses `1.0` and the like (any version in range, supported or not).
    fn from_str(s: &str) -> Result<Self, Error> {
        let (major, minor) = parse_major_minor(s)?;
        Ok(ProtocolVersion { major, minor })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_cpp_streams() {
        assert_eq!(parse_int("010"), Some(10));
        assert_eq!(parse_int("+5"), Some(5));
        assert_eq!(parse_int(" 5"), Some(5));
        assert_eq!(parse_int("-2147483648"), Some(i32::MIN));
        assert_eq!(parse_int("2147483648"), None);
        assert_eq!(parse_int("99999999999"), None);
        assert_eq!(parse_int("5 "), None);
        assert_eq!(parse_int("5x"), None);
        assert_eq!(parse_int(""), None);
        assert_eq!(parse_int("+"), None);
        assert_eq!("+1.+0".parse::<EncodingVersion>().unwrap(), ENCODING_1_0);
        assert_eq!(" 1.0".parse::<EncodingVersion>().unwrap(), ENCODING_1_0);
        assert_eq!(
            "1.2".parse::<EncodingVersion>().unwrap(),
            EncodingVersion { major: 1, minor: 2 }
        );
        for bad in ["x", "1", "1.x", "0.1", "256.0", "1.0.0", "1.256"] {
            assert!(bad.parse::<EncodingVersion>().is_err(), "{bad}");
        }
        assert_eq!(
            "2.0".parse::<ProtocolVersion>().unwrap(),
            ProtocolVersion { major: 2, minor: 0 }
        );
    }
}
