//! Protocol and encoding version numbers.

use std::fmt;

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
