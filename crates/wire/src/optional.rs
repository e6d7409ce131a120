//! Optional values (§4.9): formats, and how a type chooses its format.

/// The wire format of an optional value, the low 3 bits of its tag byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum OptionalFormat {
    /// 1 byte: bool, byte.
    F1 = 0,
    /// 2 bytes: short.
    F2 = 1,
    /// 4 bytes: int, float.
    F4 = 2,
    /// 8 bytes: long, double.
    F8 = 3,
    /// A size: enums.
    Size = 4,
    /// A size then that many bytes: strings, 1-byte sequences, fixed-size
    /// structs and sequences/dictionaries of fixed-size elements.
    VSize = 5,
    /// An int32 length then that many bytes: variable-size values and proxies.
    FSize = 6,
    /// A class instance reference.
    Class = 7,
}

impl OptionalFormat {
    /// The format named by the low 3 bits of a tag byte.
    pub fn from_bits(bits: u8) -> Self {
        match bits & 0x07 {
            0 => OptionalFormat::F1,
            1 => OptionalFormat::F2,
            2 => OptionalFormat::F4,
            3 => OptionalFormat::F8,
            4 => OptionalFormat::Size,
            5 => OptionalFormat::VSize,
            6 => OptionalFormat::FSize,
            _ => OptionalFormat::Class,
        }
    }
}

/// How a type is written when it is an optional value: the format, and
/// whether a length must be written in front of the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionalKind {
    /// Written as is after the tag (`F1`..`F8`, `Size`, `Class`, and `VSize`
    /// for strings and 1-byte-element sequences whose own size is their
    /// byte length).
    Plain(OptionalFormat),
    /// `VSize` preceded by a size holding the byte length of the value
    /// (fixed-size structs; sequences and dictionaries of fixed-size
    /// elements wider than one byte).
    VSizeLength,
    /// `FSize`: an int32 byte length, then the value.
    FSizeLength,
}

impl OptionalKind {
    /// The format code written in the tag byte.
    pub fn format(self) -> OptionalFormat {
        match self {
            OptionalKind::Plain(f) => f,
            OptionalKind::VSizeLength => OptionalFormat::VSize,
            OptionalKind::FSizeLength => OptionalFormat::FSize,
        }
    }
}
